//! `lavender bench`: the benchmark suite of `lavender-bench`, printed as tables or JSON lines.

use crate::output::{build_identity, emit, emit_json};
use anyhow::Context;
use lavender_bench::scenes::BenchScene;
use lavender_bench::suite::{run_suite, SuiteOptions};
use lavender_engine::MAX_THREADS;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Benchmark the solver: per scene (chain, grid, fixed-stack, mixed) the wide path and the
/// scalar reference on one thread, the wide path on N threads and the direct chain solve
/// (`1c/0`: one pass, no projection) on one; the chain at 1k to 100k joints (1M with --full);
/// with --peer, rapier3d at matched settings and an accuracy-versus-cost sweep (both engines
/// at 1 to 16 velocity and 0 to 2 position passes, Lavender also with one bias pass and with
/// the chain solve). 60 Hz frames, 4 substeps, fixed iteration counts.
#[derive(Debug, clap::Args)]
#[command(
    allow_negative_numbers = true,
    after_help = "Examples:\n  lavender bench                     the four scenes (hubs when named), scaling, plots in out/bench\n  lavender bench chain grid --json   two scenes, one JSON object per line\n  lavender bench --quick             a short run (5 frames, small scaling)\n  lavender bench --peer              add rapier3d (build with --features peer)\n  lavender bench chain --no-island-clusters\n                                     the chain without island clusters (same bits, slower)\n  lavender bench chain grid --no-scaling --stages\n                                     time per stage, wide against scalar\n  lavender bench --no-scaling --rounds 5\n                                     five rounds: median rows, ratios with their range\n\nBuild for this machine's full instruction set (AVX2, FMA):\n  RUSTFLAGS=\"-C target-cpu=native\" cargo build --release -p lavender-cli"
)]
pub struct Args {
    /// Scenes to run (default: the first four), benchmark scenes of their own, larger than
    /// the shipped ones `lavender scenes` lists: chain (100 chains of 100 revolute links
    /// released horizontally, 10,000 joints), grid (100 x 100 bodies linked right and down by
    /// ball joints, top row static, 19,701 joints), fixed-stack (5,000 welded joints), mixed
    /// (4,600 joints of all four types, limits active); hubs (100 light hubs, the shipped
    /// `hub` scene side by side) only when named. The scaling series (the chain at 1k to 100k
    /// joints) runs whichever scenes are named, unless --no-scaling.
    scenes: Vec<String>,
    /// One JSON object per measured row instead of tables.
    #[arg(long)]
    json: bool,
    /// Add rapier3d at matched settings and the accuracy-versus-cost sweep (rows `v/p`,
    /// `vb1/p` with one bias pass, `vc/p` with the chain solve).
    #[arg(long)]
    peer: bool,
    /// Threads of the multi-threaded rows: 2 (the default) to 1024, or 0 for one per core.
    /// The other rows always run on 1 thread, so 1 is refused; more threads than cores are
    /// warned about (slower, same results).
    #[arg(long, default_value_t = 2, value_parser = crate::output::whole::<u32>)]
    threads: u32,
    /// A short run: 5 frames per row, scaling at 1k and 10k joints.
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// Add the 1M-joint chain to the scaling series (slow: minutes, about 1 GB).
    #[arg(long, conflicts_with = "no_scaling")]
    full: bool,
    /// Timed frames per row of the scene table (default 30, --quick 5); the scaling rows take
    /// their own count by size (at least 3, fewer for the larger chains).
    #[arg(long, value_parser = crate::output::whole::<u32>)]
    frames: Option<u32>,
    /// Rounds of the per-scene rows (default 1): each scene's configurations run once per
    /// round, one round after another; a row reports the run with the median time, and each
    /// ratio is the median of the rounds' ratios with their range in brackets (JSON:
    /// `ms_per_step_rounds`). Use 3 to 5 on a shared or noisy machine, whose speed drifts
    /// between the minutes one round's runs are taken in.
    #[arg(long, default_value_t = 1, value_parser = crate::output::whole::<u32>)]
    rounds: u32,
    /// Skip the scaling series.
    #[arg(long)]
    no_scaling: bool,
    /// Solve every island through the shared colours, not the small ones in clusters (the
    /// same results bit for bit: this measures what the clusters gain).
    #[arg(long)]
    no_island_clusters: bool,
    /// Also time each stage of the step (integrate velocities, prepare, velocity passes,
    /// integrate positions, projection) on the per-scene rows, from the engine's tracing
    /// spans, and print a table of ms per substep with the scalar path's ratio to the wide
    /// path's, stage by stage (JSON: `stage_ms_per_substep`). The spans cost a little: compare
    /// step times without it.
    #[arg(long)]
    stages: bool,
    /// Directory for the plots (PNG and SVG of each: scaling.png, accuracy-cost.png with --peer).
    #[arg(long, default_value = "out/bench")]
    plot_dir: PathBuf,
}

impl Args {
    /// Whether the stage timing layer is wanted.
    pub fn stages(&self) -> bool {
        self.stages
    }
}

pub fn main(args: Args) -> anyhow::Result<()> {
    let mut options = SuiteOptions::new(args.quick, args.full);
    if !args.scenes.is_empty() {
        // Each scene once, in the order first named (`bench chain chain` ran it twice).
        options.scenes.clear();
        for name in &args.scenes {
            let scene = BenchScene::by_name(name)?;
            if !options.scenes.contains(&scene) {
                options.scenes.push(scene);
            }
        }
    }
    // 0 means one per core, as for `run`; the rows report the number.
    let threads = match args.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        n => n,
    };
    if threads > MAX_THREADS {
        anyhow::bail!(
            "--threads {} is out of range: the multi-threaded rows take 2 to {MAX_THREADS} \
             threads (0: one per core)",
            args.threads
        );
    }
    if threads == 1 {
        anyhow::bail!(
            "--threads {} gives the multi-threaded rows 1 thread, which would repeat the \
             one-thread rows: give 2 to {MAX_THREADS}, or 0 for one per core{}",
            args.threads,
            if args.threads == 0 {
                " (this machine has one core)"
            } else {
                ""
            }
        );
    }
    // As `run` warns (QA 2026-12-08: `bench --threads 999` on 2 cores ran for minutes without
    // a word).
    let threads_warning = lavender_engine::Settings {
        threads,
        ..Default::default()
    }
    .threads_warning();
    if let Some(warning) = threads_warning {
        eprintln!("warning: --threads {}: {warning}", args.threads);
    }
    options.threads = threads;
    if args.rounds == 0 {
        anyhow::bail!("--rounds must be at least 1 (1 runs each row once)");
    }
    options.rounds = args.rounds;
    if args.frames == Some(0) {
        anyhow::bail!("--frames must be at least 1: a row times that many 60 Hz frames");
    }
    options.frames = args.frames.unwrap_or(options.frames);
    options.peer = args.peer;
    options.scaling = !args.no_scaling;
    options.island_clusters = !args.no_island_clusters;
    options.stages = args.stages;
    options.plot_dir = args.plot_dir;
    if args.peer && !lavender_bench::PEER_BUILT {
        return Err(lavender_bench::BenchError::PeerNotBuilt.into());
    }
    if options.scaling || options.peer {
        // Before minutes of timing, not after: the plots go here, and can be written there
        // (QA 2026-12-08: a directory that existed but could not be written failed only
        // after the timing, and lost its tables).
        check_plot_dir(&options.plot_dir)?;
    }
    let verbose = std::io::stderr().is_terminal();
    let json = args.json;
    let report = run_suite(&options, &mut |section, row| {
        if json {
            let mut value = row.json();
            value["section"] = section.into();
            // A closed pipe exits inside emit; other errors surface at the end.
            let _ = emit_json(&value);
        } else if verbose {
            eprintln!(
                "  {section}: {} {} {} x{} threads: {:.2} ms/step",
                row.scene, row.engine, row.path, row.threads, row.ms_per_step
            );
        }
    })
    .context("benchmark failed")?;
    if !json {
        let mut text = format!(
            "lavender {}\non {}\n\n{}",
            build_identity(),
            lavender_bench::measure::host_cpu(),
            report.text
        );
        for plot in &report.plots {
            text += &format!("wrote {}\n", plot.display());
        }
        if report.plots.is_empty() {
            text += "no plots: the scaling plot needs the scaling series (without --no-scaling), \
                     the accuracy-versus-cost plot needs --peer\n";
        }
        emit(&text)?;
    } else {
        // Standard output holds the rows alone; where the plots went goes to stderr (QA
        // 2026-12-08: under --json nothing said).
        for plot in &report.plots {
            eprintln!("wrote {}", plot.display());
        }
    }
    Ok(())
}

/// Creates the plot directory if needed and checks that a file can be written in it.
fn check_plot_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    let another = "choose another with --plot-dir DIR";
    if dir.is_file() {
        anyhow::bail!(
            "the plot directory {} is a file, not a directory; {another}",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create the plot directory {}; {another}",
            dir.display()
        )
    })?;
    let probe = dir.join(format!(".lavender-bench-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| {
        format!(
            "cannot write in the plot directory {}; {another}",
            dir.display()
        )
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}
