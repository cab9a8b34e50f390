//! The whole `lavender bench` run: per-scene rows (wide and scalar on one thread, wide on N
//! threads, Rapier at matched settings), the chain scaling series, and the accuracy-versus-cost
//! sweep, with their plots.

use crate::measure::{run_lavender, BenchRow, RunConfig};
use crate::report::{accuracy_cost_plot, scaling_plot, speedup, table};
use crate::scenes::BenchScene;
use crate::{run_peer, Result};
use lavender_engine::SolverPath;
use std::path::PathBuf;

/// What to run.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// Scenes of the per-scene section.
    pub scenes: Vec<BenchScene>,
    /// Threads of the multi-threaded rows (the other rows use one).
    pub threads: u32,
    /// Timed frames per row (scaling rows use fewer for large sizes).
    pub frames: u32,
    /// Add the rapier3d rows and the accuracy-versus-cost sweep.
    pub peer: bool,
    /// Run the chain scaling series.
    pub scaling: bool,
    /// Chain sizes of the scaling series, joints.
    pub scaling_sizes: Vec<u32>,
    /// Velocity iteration settings of the accuracy-versus-cost sweep.
    pub sweep_iterations: Vec<u32>,
    /// Where the PNG plots go.
    pub plot_dir: PathBuf,
}

impl SuiteOptions {
    /// The default run: every scene, 2 threads, 30 frames, scaling at 1k, 10k and 100k joints
    /// (`full` adds 1M), sweep at 1, 2, 4, 8 and 16 iterations; `quick` runs 5 frames,
    /// scaling at 1k and 10k and a 3-point sweep.
    pub fn new(quick: bool, full: bool) -> SuiteOptions {
        let scenes = crate::scenes::SCENE_NAMES
            .iter()
            .map(|n| BenchScene::by_name(n).expect("known scene"))
            .collect();
        let mut scaling_sizes = if quick {
            vec![1_000, 10_000]
        } else {
            vec![1_000, 10_000, 100_000]
        };
        if full {
            scaling_sizes.push(1_000_000);
        }
        SuiteOptions {
            scenes,
            threads: 2,
            frames: if quick { 5 } else { 30 },
            peer: false,
            scaling: true,
            scaling_sizes,
            sweep_iterations: if quick {
                vec![2, 8, 16]
            } else {
                vec![1, 2, 4, 8, 16]
            },
            plot_dir: PathBuf::from("out/bench"),
        }
    }
}

/// Everything a run measured.
#[derive(Debug, Clone, Default)]
pub struct SuiteReport {
    /// `(section, row)` in measurement order; sections: `scenes`, `scaling`, `accuracy`.
    pub rows: Vec<(&'static str, BenchRow)>,
    /// Human-readable tables and ratios.
    pub text: String,
    /// Plots written.
    pub plots: Vec<PathBuf>,
}

impl SuiteReport {
    fn add(&mut self, section: &'static str, row: BenchRow) -> BenchRow {
        self.rows.push((section, row.clone()));
        row
    }
}

/// Runs the suite, calling `progress` after every measured row.
pub fn run_suite(
    options: &SuiteOptions,
    progress: &mut dyn FnMut(&'static str, &BenchRow),
) -> Result<SuiteReport> {
    let mut report = SuiteReport::default();
    let base = RunConfig {
        frames: options.frames,
        ..RunConfig::default()
    };
    let mut measure = |report: &mut SuiteReport,
                       section: &'static str,
                       row: Result<BenchRow>|
     -> Result<BenchRow> {
        let row = row?;
        progress(section, &row);
        Ok(report.add(section, row))
    };

    // Per scene: wide and scalar on one thread, wide on N threads, Rapier matched.
    let mut scene_rows = Vec::new();
    let mut ratios = String::new();
    for scene in &options.scenes {
        let wide = measure(&mut report, "scenes", run_lavender(scene, &base))?;
        let scalar_cfg = RunConfig {
            path: SolverPath::Scalar,
            ..base
        };
        let scalar = measure(&mut report, "scenes", run_lavender(scene, &scalar_cfg))?;
        let threaded_cfg = RunConfig {
            threads: options.threads,
            ..base
        };
        let threaded = measure(&mut report, "scenes", run_lavender(scene, &threaded_cfg))?;
        ratios += &format!(
            "{:<12} wide/scalar (1 thread) {:.2}x   {} threads/1 thread {:.2}x",
            scene.name(),
            speedup(&scalar, &wide),
            options.threads,
            speedup(&wide, &threaded)
        );
        scene_rows.extend([wide.clone(), scalar, threaded.clone()]);
        if options.peer {
            let rapier = measure(&mut report, "scenes", run_peer(scene, &base))?;
            ratios += &format!(
                "   vs rapier3d: 1 thread {:.2}x, {} threads {:.2}x (max anchor error {:.2e} m vs {:.2e} m)",
                speedup(&rapier, &wide),
                options.threads,
                speedup(&rapier, &threaded),
                wide.max_anchor_error,
                rapier.max_anchor_error
            );
            scene_rows.push(rapier);
        }
        ratios += "\n";
    }
    if !scene_rows.is_empty() {
        report.text += &format!(
            "== scenes: 60 Hz frames, 4 substeps, {} timed frames ==\n{}\n{}\n",
            options.frames,
            table(&scene_rows),
            ratios
        );
    }

    // Scaling: the chain at growing sizes, one thread and N threads.
    if options.scaling && !options.scaling_sizes.is_empty() {
        let mut one = Vec::new();
        let mut many = Vec::new();
        for &joints in &options.scaling_sizes {
            let scene = BenchScene::chain_with_joints(joints);
            // About the same simulated work per size: fewer frames for large chains.
            let frames = (600_000 / joints.max(1)).clamp(3, options.frames.max(3));
            let cfg = RunConfig { frames, ..base };
            one.push(measure(&mut report, "scaling", run_lavender(&scene, &cfg))?);
            let cfg = RunConfig {
                threads: options.threads,
                ..cfg
            };
            many.push(measure(&mut report, "scaling", run_lavender(&scene, &cfg))?);
        }
        let all: Vec<BenchRow> = one.iter().chain(&many).cloned().collect();
        report.text += &format!("== scaling: chain scene ==\n{}\n", table(&all));
        let stem = options.plot_dir.join("scaling");
        report.plots.extend(scaling_plot(
            &stem,
            &vec![
                ("wide, 1 thread".to_string(), one),
                (format!("wide, {} threads", options.threads), many),
            ],
        )?);
    }

    // Accuracy against cost: several iteration settings per engine, chain and grid.
    if options.peer && !options.sweep_iterations.is_empty() {
        let mut panels = Vec::new();
        let mut all = Vec::new();
        for name in ["chain", "grid"] {
            let scene = BenchScene::by_name(name)?;
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            for &iterations in &options.sweep_iterations {
                let cfg = RunConfig {
                    velocity_iterations: iterations,
                    ..base
                };
                ours.push(measure(
                    &mut report,
                    "accuracy",
                    run_lavender(&scene, &cfg),
                )?);
                theirs.push(measure(&mut report, "accuracy", run_peer(&scene, &cfg))?);
            }
            all.extend(ours.iter().chain(&theirs).cloned());
            panels.push((
                name.to_string(),
                vec![
                    ("lavender (wide, 1 thread)".to_string(), ours),
                    ("rapier3d (1 thread)".to_string(), theirs),
                ],
            ));
        }
        report.text += &format!(
            "== accuracy against cost: velocity (Rapier: PGS) iterations {:?} ==\n{}\n",
            options.sweep_iterations,
            table(&all)
        );
        let stem = options.plot_dir.join("accuracy-cost");
        report.plots.extend(accuracy_cost_plot(&stem, &panels)?);
    }
    Ok(report)
}
