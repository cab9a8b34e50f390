//! `lavender`: run scenes and tutorials, benchmark, record, export, scrub, diff and resume.
//!
//! The binary is thin: every subcommand parses its flags, calls the libraries and prints.

mod bench;
mod chart;
mod diff;
mod export;
mod interrupt;
mod output;
mod paths;
mod resume;
mod run;
mod scenes;
mod scrub;
mod scrub_joint;
mod solver_args;
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
    /// Run a scene and print a summary of its residuals and energy.
    Run(run::Args),
    /// List the shipped scenes.
    Scenes(scenes::Args),
    /// Run the tutorials' experiments.
    Tutorial(tutorial::Args),
    /// Benchmark the solver (scenes, scaling, wide vs scalar, threads, optionally rapier3d).
    Bench(bench::Args),
    /// Export a run log to HDF5, or copy it (or a stretch of it) to a finished .lvlog.
    Export(export::Args),
    /// Scrub a run log: residual timeline, worst joints, one frame, one joint, early spikes, live tail.
    Scrub(scrub::Args),
    /// Compare two run logs: first divergent substep and largest deviation (exit 0/1/2).
    Diff(diff::Args),
    /// Continue a recorded run from one of its substeps, bit for bit.
    Resume(resume::Args),
}

/// A subcommand's one-line doc above names it in `lavender --help`; its arguments' doc (what
/// it does, in full) is what `lavender CMD --help` opens with. Clap gives a subcommand the
/// variant's doc alone, so the arguments' is set here (QA 2026-12-07: `diff --help` never
/// said what its exit codes mean, `resume --help` that it keeps the log's settings).
fn with_long_help(cli: clap::Command) -> clap::Command {
    fn long_about<A: clap::Args>() -> Option<clap::builder::StyledStr> {
        let c = A::augment_args(clap::Command::new("args"));
        c.get_long_about().or(c.get_about()).cloned()
    }
    let docs = [
        ("run", long_about::<run::Args>()),
        ("scenes", long_about::<scenes::Args>()),
        ("tutorial", long_about::<tutorial::Args>()),
        ("bench", long_about::<bench::Args>()),
        ("export", long_about::<export::Args>()),
        ("scrub", long_about::<scrub::Args>()),
        ("diff", long_about::<diff::Args>()),
        ("resume", long_about::<resume::Args>()),
    ];
    docs.into_iter().fold(cli, |cli, (name, doc)| match doc {
        Some(doc) => cli.mut_subcommand(name, |c| c.long_about(doc)),
        None => cli,
    })
}

fn main() {
    let version = output::build_identity();
    let version: &'static str = Box::leak(version.into_boxed_str());
    let matches = with_long_help(Cli::command())
        .version(version)
        .mut_subcommand("tutorial", |c| c.after_help(tutorial::after_help()))
        .try_get_matches()
        .unwrap_or_else(|e| output::exit_on_usage_error(e));
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => output::exit_on_usage_error(e),
    };
    output::init_tracing(matches!(&cli.command, Command::Bench(args) if args.stages()));
    // Every subcommand has --json; under it a failure is a JSON object on standard output too.
    let json = match matches.subcommand() {
        Some((name, sub)) if sub.try_get_one::<bool>("json").ok().flatten() == Some(&true) => {
            // Commands whose output is JSON lines end a failure with one more line.
            let lines = name == "bench"
                || (name == "scrub"
                    && sub.try_get_one::<bool>("follow").ok().flatten() == Some(&true));
            if lines {
                output::JsonErrors::Lines
            } else {
                output::JsonErrors::Object
            }
        }
        _ => output::JsonErrors::Off,
    };
    interrupt::install(json);
    let result = match cli.command {
        Command::Run(args) => run::main(args),
        Command::Scenes(args) => scenes::main(args),
        Command::Tutorial(args) => tutorial::main(args),
        Command::Bench(args) => bench::main(args),
        Command::Export(args) => export::main(args),
        Command::Scrub(args) => scrub::main(args),
        Command::Diff(args) => match diff::main(args) {
            // Exit code 1 means "diverged"; errors (unusable input) exit 2 below.
            Ok(true) => std::process::exit(1),
            Ok(false) => Ok(()),
            Err(e) => Err(e),
        },
        Command::Resume(args) => resume::main(args),
    };
    output::finish(result, json);
}
