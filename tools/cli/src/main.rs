//! `lavender`: run scenes and tutorials, benchmark, record, export, scrub, diff and resume.
//!
//! The binary is thin: every subcommand parses its flags, calls the libraries and prints.

mod output;
mod run;
mod scenes;
mod tutorial;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// Lavender: a constraint-dynamics engine for long, joint-heavy offline runs.
#[derive(Debug, Parser)]
#[command(
    name = "lavender",
    about = "Lavender: a constraint-dynamics engine for long, joint-heavy offline runs",
    after_help = "Examples:\n  lavender run                      run the default scene (a 100-link chain)\n  lavender run pendulum --json      one shipped scene, summary as JSON\n  lavender scenes                   list the shipped scenes\n  lavender tutorial constraints --list\n\nRUST_LOG=lavender_engine=trace shows the time spent in each step stage."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scene and print a summary of its residuals.
    Run(run::Args),
    /// List the shipped scenes.
    Scenes(scenes::Args),
    /// Run the tutorials' experiments.
    Tutorial(tutorial::Args),
}

fn main() {
    output::init_tracing();
    let version = format!(
        "{} (target features {})",
        lavender_engine::VERSION,
        lavender_engine::target_features()
    );
    let version: &'static str = Box::leak(version.into_boxed_str());
    let matches = Cli::command().version(version).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Run(args) => run::main(args),
        Command::Scenes(args) => scenes::main(args),
        Command::Tutorial(args) => tutorial::main(args),
    };
    output::finish(result);
}
