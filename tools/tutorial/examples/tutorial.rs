//! Runs one tutorial experiment without the CLI:
//! `cargo run -p lavender-tutorial --example tutorial -- <experiment> [--quick] [--json] [--out DIR]`.

use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut name = None;
    let mut opts = lavender_tutorial::Options::default();
    let mut json = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => opts.quick = true,
            "--json" => json = true,
            "--progress" => opts.progress = true,
            "--out" => opts.out_dir = args.next().map(PathBuf::from),
            "--list" => {
                for (n, s) in lavender_tutorial::experiments() {
                    println!("{n:24} {s}");
                }
                return;
            }
            _ => name = Some(a),
        }
    }
    let Some(name) = name else {
        eprintln!("usage: tutorial <experiment> [--quick] [--json] [--out DIR] | --list");
        std::process::exit(2);
    };
    match lavender_tutorial::run(&name, &opts) {
        Ok(report) => {
            if json {
                println!("{}", report.json);
            } else {
                println!("{}", report.text);
                for f in &report.files {
                    println!("wrote {}", f.display());
                }
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
