//! `lavender tutorial`: the tutorials' experiments, runnable.

use crate::output::{emit, emit_json};
use anyhow::bail;
use lavender_tutorial::{experiments, run, Options};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Run an experiment of a tutorial chapter: it prints what it measured (with the setup used)
/// and writes PNG plots. The experiments, and what --quick changes in each, follow the
/// options.
// (`main` adds that list: `after_help`.)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The chapter: `constraints` (chapter 7).
    chapter: String,
    /// The experiment to run (see --list).
    experiment: Option<String>,
    /// List the chapter's experiments, one line each (with --json: `{"chapter",
    /// "experiments": [{"name", "summary"}]}`).
    #[arg(long)]
    list: bool,
    /// Reduced resolution: coarser sweeps and shorter runs (every experiment finishes in
    /// well under a second either way; the tests use it).
    #[arg(long)]
    quick: bool,
    /// Print one JSON object with every figure the experiment reports.
    #[arg(long)]
    json: bool,
    /// Directory for the plots (default out/tutorial/constraints/<experiment>/).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The text after the options: examples, then every experiment of the chapter with its
/// summary and what `--quick` changes in it (QA: the help named no experiment, and `--quick`
/// means a shorter run in some, a coarser map in one, nothing in others).
pub fn after_help() -> String {
    let mut text = String::from(
        "Examples:\n  lavender tutorial constraints --list\n  lavender tutorial constraints \
         particle-circle --quick\n  lavender tutorial constraints sweep --json --out /tmp/sweep\n\n\
         Plots go to out/tutorial/constraints/<experiment>/ unless --out says otherwise.\n\n\
         Experiments of chapter constraints (README.md, *Tutorial*, has each one's setup and \
         numbers):\n",
    );
    for (name, summary) in experiments() {
        let quick = lavender_tutorial::quick_mode(name).unwrap_or("nothing");
        text.push_str(&format!(
            "  {name}\n      {summary}\n      --quick: {quick}\n"
        ));
    }
    text
}

pub fn main(args: Args) -> anyhow::Result<()> {
    if args.chapter != "constraints" {
        bail!(
            "no tutorial chapter `{}`; the chapters are: constraints",
            args.chapter
        );
    }
    if args.list {
        // `--list` with an experiment lists that one (QA 2026-12-07: the name was ignored).
        let all = experiments();
        let listed: Vec<_> = all
            .iter()
            .filter(|(name, _)| args.experiment.as_deref().is_none_or(|e| e == *name))
            .collect();
        if listed.is_empty() {
            bail!(
                "no experiment `{}` in chapter constraints; `lavender tutorial constraints \
                 --list` lists them",
                args.experiment.as_deref().unwrap_or_default()
            );
        }
        if args.json {
            let list: Vec<_> = listed
                .iter()
                .map(|(name, summary)| serde_json::json!({ "name": name, "summary": summary }))
                .collect();
            return emit_json(
                &serde_json::json!({ "chapter": "constraints", "experiments": list }),
            );
        }
        let mut text = String::new();
        for (name, summary) in listed {
            text.push_str(&format!("{name:<26} {summary}\n"));
        }
        return emit(&text);
    }
    let Some(name) = args.experiment else {
        bail!(
            "name an experiment, or pass --list to see them: lavender tutorial constraints --list"
        );
    };
    if let Some(out) = args.out.as_deref().filter(|o| o.exists() && !o.is_dir()) {
        bail!(
            "--out {} is a file; --out names a directory for the plots (created if missing)",
            out.display()
        );
    }
    let opts = Options {
        quick: args.quick,
        out_dir: args.out,
        progress: std::io::stderr().is_terminal() && !args.json,
    };
    let report = run(&name, &opts)?;
    if args.json {
        // With the plots it wrote, as the text output lists them (QA, 2026-12-06).
        let mut json = report.json.clone();
        if let Some(object) = json.as_object_mut() {
            let files: Vec<String> = (report.files.iter())
                .map(|f| f.display().to_string())
                .collect();
            object.entry("plots").or_insert(serde_json::json!(files));
        }
        emit_json(&json)
    } else {
        let mut text = report.text.clone();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        for f in &report.files {
            text.push_str(&format!("wrote {}\n", f.display()));
        }
        emit(&text)
    }
}
