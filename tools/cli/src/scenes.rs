//! `lavender scenes`: the shipped scenes.

use crate::output::{emit, emit_json};

/// List the scenes shipped in data/scenes (usable by name in `lavender run NAME`).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  lavender scenes\n  lavender scenes --json")]
pub struct Args {
    /// Print a JSON array of {name, description} instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn main(args: Args) -> anyhow::Result<()> {
    let scenes = lavender_engine::builtin_scenes();
    if args.json {
        let list: Vec<_> = scenes
            .iter()
            .map(|(n, d)| serde_json::json!({"name": n, "description": d}))
            .collect();
        return emit_json(&serde_json::Value::Array(list));
    }
    let mut text = String::new();
    for (name, description) in scenes {
        text.push_str(&format!("{name:<18} {description}\n"));
    }
    emit(&text)
}
