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
    /// Rounds of the per-scene section: every configuration of a scene runs once per round,
    /// the rounds one after another, and a row reports the run with the median time; the
    /// ratios are the median of the rounds' ratios, whose range the text shows. On a VM whose
    /// speed drifts from minute to minute, the runs a ratio compares are then seconds apart.
    pub rounds: u32,
    /// Add the rapier3d rows and the accuracy-versus-cost sweep.
    pub peer: bool,
    /// Run the chain scaling series.
    pub scaling: bool,
    /// Chain sizes of the scaling series, joints.
    pub scaling_sizes: Vec<u32>,
    /// Velocity iteration settings of the accuracy-versus-cost sweep.
    pub sweep_iterations: Vec<u32>,
    /// Position iteration settings of the sweep (Rapier: stabilisation iterations), each
    /// crossed with every velocity setting.
    pub sweep_position_iterations: Vec<u32>,
    /// Lavender's bias-pass settings of the sweep (`None`: one per velocity pass), each
    /// crossed with the others (a count above the velocity passes is skipped). Rapier has no
    /// such count and runs once per velocity and position setting.
    pub sweep_bias_iterations: Vec<Option<u32>>,
    /// Velocity pass settings of Lavender's direct chain solve in the sweep (each with every
    /// position setting; empty: none).
    pub sweep_chain_solve_iterations: Vec<u32>,
    /// Lavender's island clusters (default on; off to measure what they gain: the results
    /// are the same bit for bit).
    pub island_clusters: bool,
    /// Time each stage of the step on the per-scene rows (`--stages`; the binary must have
    /// installed [`crate::stages::layer`]) and print a table of them.
    pub stages: bool,
    /// Where the PNG plots go.
    pub plot_dir: PathBuf,
}

impl SuiteOptions {
    /// The default run: every scene, 2 threads, 30 frames, scaling at 1k, 10k and 100k joints
    /// (`full` adds 1M), sweep at 1, 2, 4, 8 and 16 velocity iterations with 0, 1 and 2
    /// position iterations, Lavender also with one bias pass and with the chain solve at 1, 2 and 4
    /// velocity passes; `quick` runs 5 frames, scaling at 1k and 10k and a 3-point sweep.
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
            rounds: 1,
            peer: false,
            scaling: true,
            scaling_sizes,
            sweep_iterations: if quick {
                vec![2, 8, 16]
            } else {
                vec![1, 2, 4, 8, 16]
            },
            sweep_position_iterations: if quick { vec![2] } else { vec![0, 1, 2] },
            sweep_bias_iterations: vec![None, Some(1)],
            sweep_chain_solve_iterations: if quick { vec![1] } else { vec![1, 2, 4] },
            island_clusters: true,
            stages: false,
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
        island_clusters: options.island_clusters,
        ..RunConfig::default()
    };
    // Stages are timed on the per-scene rows only.
    let scene_base = RunConfig {
        stages: options.stages,
        ..base
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
    let mut stage_text = String::new();
    for scene in &options.scenes {
        let scalar_cfg = RunConfig {
            path: SolverPath::Scalar,
            ..scene_base
        };
        let threaded_cfg = RunConfig {
            threads: options.threads,
            ..scene_base
        };
        // The direct chain solve at its cheapest setting (one pass, no projection), against
        // the default row-by-row step.
        let direct_cfg = RunConfig {
            chain_solve: true,
            velocity_iterations: 1,
            position_iterations: 0,
            ..scene_base
        };
        let mut runs: [Vec<BenchRow>; 5] = Default::default();
        for _ in 0..options.rounds.max(1) {
            runs[0].push(run_lavender(scene, &scene_base)?);
            runs[1].push(run_lavender(scene, &scalar_cfg)?);
            runs[2].push(run_lavender(scene, &threaded_cfg)?);
            runs[3].push(run_lavender(scene, &direct_cfg)?);
            if options.peer {
                runs[4].push(run_peer(scene, &base)?);
            }
        }
        let mut row = |k: usize| measure(&mut report, "scenes", Ok(median_run(&runs[k])));
        let (wide, scalar, threaded, direct) = (row(0)?, row(1)?, row(2)?, row(3)?);
        ratios += &format!(
            "{:<12} speed-up of wide over scalar (1 thread) {}   of {} over 1 thread {}",
            scene.name(),
            round_ratio(&runs[1], &runs[0]),
            threads_label(options.threads),
            round_ratio(&runs[0], &runs[2])
        );
        ratios += &format!(
            "   of chain solve {} over the {} step {} (max anchor error {:.2e} m vs {:.2e} m)",
            direct.settings(),
            wide.settings(),
            round_ratio(&runs[0], &runs[3]),
            direct.max_anchor_error,
            wide.max_anchor_error
        );
        if options.stages {
            stage_text += &stage_table(&[&wide, &scalar, &threaded, &direct]);
        }
        scene_rows.extend([wide.clone(), scalar, threaded.clone(), direct]);
        if options.peer {
            let rapier = measure(&mut report, "scenes", Ok(median_run(&runs[4])))?;
            ratios += &format!(
                "   over rapier3d: 1 thread {}, {} {} (max anchor error {:.2e} m vs {:.2e} m)",
                round_ratio(&runs[4], &runs[0]),
                threads_label(options.threads),
                round_ratio(&runs[4], &runs[2]),
                wide.max_anchor_error,
                rapier.max_anchor_error
            );
            scene_rows.push(rapier);
        }
        ratios += "\n";
    }
    if !scene_rows.is_empty() {
        report.text += &format!(
            "== scenes: 60 Hz frames, 4 substeps, {} timed frames{}{} ==\n{}\n{}\n",
            options.frames,
            if options.rounds > 1 {
                format!(
                    ", {} rounds (each row the run with the median time; ratios: the median of \
                     the rounds' ratios, their range in brackets)",
                    options.rounds
                )
            } else {
                String::new()
            },
            if options.island_clusters {
                ""
            } else {
                ", island clusters off"
            },
            table(&scene_rows),
            ratios
        );
        if options.stages {
            report.text += &format!(
                "== stages: ms per substep (means over the timed frames), and the scalar \
                 path's time over the wide path's ==\n{stage_text}\n"
            );
        }
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
                (format!("wide, {}", threads_label(options.threads)), many),
            ],
        )?);
    }

    // Accuracy against cost: several iteration settings per engine, chain and grid.
    if options.peer && !options.sweep_iterations.is_empty() {
        let mut panels = Vec::new();
        let (mut all, mut best) = (Vec::new(), String::new());
        for name in ["chain", "grid"] {
            let scene = BenchScene::by_name(name)?;
            let mut series = Vec::new();
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            for &position_iterations in &options.sweep_position_iterations {
                for &bias_iterations in &options.sweep_bias_iterations {
                    let mut our_line = Vec::new();
                    for &velocity_iterations in &options.sweep_iterations {
                        // One bias pass of one velocity pass is the default setting again.
                        if bias_iterations.is_some_and(|b| b >= velocity_iterations) {
                            continue;
                        }
                        let cfg = RunConfig {
                            velocity_iterations,
                            position_iterations,
                            bias_iterations,
                            ..base
                        };
                        let row = run_lavender(&scene, &cfg);
                        our_line.push(measure(&mut report, "accuracy", row)?);
                    }
                    ours.extend(our_line.iter().cloned());
                    let bias = match bias_iterations {
                        Some(b) => format!(", {b} bias pass{}", if b == 1 { "" } else { "es" }),
                        None => String::new(),
                    };
                    series.push((
                        format!("lavender, {position_iterations} position passes{bias}"),
                        our_line,
                    ));
                }
                if !options.sweep_chain_solve_iterations.is_empty() {
                    let mut our_line = Vec::new();
                    for &velocity_iterations in &options.sweep_chain_solve_iterations {
                        let cfg = RunConfig {
                            velocity_iterations,
                            position_iterations,
                            chain_solve: true,
                            ..base
                        };
                        let row = run_lavender(&scene, &cfg);
                        our_line.push(measure(&mut report, "accuracy", row)?);
                    }
                    ours.extend(our_line.iter().cloned());
                    series.push((
                        format!("lavender chain solve, {position_iterations} position passes"),
                        our_line,
                    ));
                }
                let mut their_line = Vec::new();
                for &velocity_iterations in &options.sweep_iterations {
                    let cfg = RunConfig {
                        velocity_iterations,
                        position_iterations,
                        ..base
                    };
                    their_line.push(measure(&mut report, "accuracy", run_peer(&scene, &cfg))?);
                }
                theirs.extend(their_line.iter().cloned());
                series.push((
                    format!("rapier3d, {position_iterations} stabilisation passes"),
                    their_line,
                ));
            }
            all.extend(ours.iter().chain(&theirs).cloned());
            best += &format!("{name:<12} {}\n", best_at_equal_error(&ours, &theirs));
            best += &format!("{name:<12} {}\n", row_by_row_at_equal_error(&ours, &theirs));
            panels.push((name.to_string(), series));
        }
        report.text += &format!(
            "== accuracy against cost: velocity (Rapier: PGS) iterations {:?} x position (Rapier: \
             stabilisation) iterations {:?}, Lavender's bias passes {}, Lavender's chain solve \
             at {:?}; one thread each (v/p, vbN/p: N bias passes, vc/p: chain solve) \
             ==\n{}\n{}\n",
            options.sweep_iterations,
            options.sweep_position_iterations,
            options
                .sweep_bias_iterations
                .iter()
                .map(|b| b.map_or("one per velocity pass".to_string(), |b| b.to_string()))
                .collect::<Vec<_>>()
                .join(" and "),
            options.sweep_chain_solve_iterations,
            table(&all),
            best
        );
        let stem = options.plot_dir.join("accuracy-cost");
        report.plots.extend(accuracy_cost_plot(&stem, &panels)?);
    }
    Ok(report)
}

/// The run with the median time of one configuration's rounds (the lower of the two middle
/// runs for an even count): a whole measured row, its stage times included.
fn median_run(runs: &[BenchRow]) -> BenchRow {
    let mut sorted: Vec<&BenchRow> = runs.iter().collect();
    sorted.sort_by(|a, b| a.ms_per_step.total_cmp(&b.ms_per_step));
    let mut row = sorted[(sorted.len() - 1) / 2].clone();
    if runs.len() > 1 {
        row.ms_per_step_rounds = runs.iter().map(|r| r.ms_per_step).collect();
    }
    row
}

/// `base / other` per round (`speedup` of the runs of one round), as `2.15x`, and with more
/// than one round the median of the rounds' ratios and their range: `2.15x [2.02x to 2.31x]`.
fn round_ratio(base: &[BenchRow], other: &[BenchRow]) -> String {
    let mut ratios: Vec<f64> = base.iter().zip(other).map(|(b, o)| speedup(b, o)).collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios[(ratios.len() - 1) / 2];
    match (ratios.first(), ratios.last()) {
        (Some(lo), Some(hi)) if ratios.len() > 1 => {
            format!("{median:.2}x [{lo:.2}x to {hi:.2}x]")
        }
        _ => format!("{median:.2}x"),
    }
}

/// Per row with stage times: ms per substep of each stage; after a scalar row, the ratio of
/// each of its stages to the first row's (the wide path on one thread).
fn stage_table(rows: &[&BenchRow]) -> String {
    use crate::stages::STAGES;
    let mut text = format!(
        "{:<12} {:<7} {:>7} {:>8}",
        "scene", "path", "threads", "iters"
    );
    for name in STAGES {
        text += &format!(" {name:>20}");
    }
    text += "\n";
    let cell = |ms: Option<f64>| ms.map_or_else(|| "-".to_string(), |ms| format!("{ms:.3}"));
    let wide = rows
        .first()
        .and_then(|r| r.stages)
        .map(|t| t.ms_per_substep());
    for row in rows {
        let Some(times) = row.stages.map(|t| t.ms_per_substep()) else {
            continue;
        };
        text += &format!(
            "{:<12} {:<7} {:>7} {:>8}",
            row.scene,
            row.path,
            row.threads,
            row.settings()
        );
        for ms in times {
            text += &format!(" {:>20}", cell(ms));
        }
        text += "\n";
        if let (Some(wide), "scalar") = (wide, row.path) {
            text += &format!("{:<12} {:<7} {:>7} {:>8}", row.scene, "ratio", "", "");
            for (scalar, wide) in times.iter().zip(wide) {
                let ratio = match (scalar, wide) {
                    (Some(s), Some(w)) if w > 0.0 => format!("{:.2}x", s / w),
                    _ => "-".to_string(),
                };
                text += &format!(" {ratio:>20}");
            }
            text += "\n";
        }
    }
    text
}

/// The fastest of `ours` (row by row only, with `row_by_row`) whose max anchor error is at
/// most `theirs`'s.
fn fastest_at_or_below<'a>(
    ours: &'a [BenchRow],
    theirs: &BenchRow,
    row_by_row: bool,
) -> Option<&'a BenchRow> {
    ours.iter()
        .filter(|o| !(row_by_row && o.chain_solve))
        .filter(|o| o.max_anchor_error <= theirs.max_anchor_error)
        .min_by(|a, b| a.ms_per_step.total_cmp(&b.ms_per_step))
}

/// `"2.40x (lavender 8/1 1.40e-3 m in 15.0 ms, rapier3d 8/2 2.80e-3 m in 36.0 ms)"`.
fn comparison(ratio: f64, ours: &BenchRow, theirs: &BenchRow) -> String {
    format!(
        "{ratio:.2}x (lavender {} {:.2e} m in {:.1} ms, rapier3d {} {:.2e} m in {:.1} ms)",
        ours.settings(),
        ours.max_anchor_error,
        ours.ms_per_step,
        theirs.settings(),
        theirs.max_anchor_error,
        theirs.ms_per_step
    )
}

/// The largest speedup of Lavender over Rapier at equal or smaller error: for every Rapier
/// setting, the fastest Lavender setting whose max anchor error is at most Rapier's, as a
/// sentence naming both settings.
pub fn best_at_equal_error(ours: &[BenchRow], theirs: &[BenchRow]) -> String {
    let best = theirs
        .iter()
        .filter_map(|t| fastest_at_or_below(ours, t, false).map(|o| (speedup(t, o), o, t)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((ratio, o, t)) => format!(
            "at equal or smaller max anchor error: {}",
            comparison(ratio, o, t)
        ),
        None => "at equal or smaller max anchor error: no Lavender setting reaches any \
                 Rapier setting's error"
            .to_string(),
    }
}

/// Row by row (Lavender's default solver, no chain solve) against every Rapier setting: for
/// each, the fastest Lavender setting at equal or smaller error; the smallest of these
/// speedups and the one at the most accurate Rapier setting matched, as a sentence naming the
/// settings, and the Rapier settings no Lavender setting reaches.
pub fn row_by_row_at_equal_error(ours: &[BenchRow], theirs: &[BenchRow]) -> String {
    let (mut matched, mut unmatched) = (Vec::new(), Vec::new());
    for t in theirs {
        match fastest_at_or_below(ours, t, true) {
            Some(o) => matched.push((speedup(t, o), o, t)),
            None => unmatched.push(t.settings()),
        }
    }
    let lowest = matched.iter().min_by(|a, b| a.0.total_cmp(&b.0));
    let most_accurate =
        (matched.iter()).min_by(|a, b| a.2.max_anchor_error.total_cmp(&b.2.max_anchor_error));
    let (Some(&(r1, o1, t1)), Some(&(r2, o2, t2))) = (lowest, most_accurate) else {
        return "row by row at equal or smaller error: no Lavender setting reaches any Rapier \
                setting's error"
            .to_string();
    };
    let mut text = format!(
        "row by row at equal or smaller error: at least {} against every Rapier setting it \
         matches; at the most accurate of them {}",
        comparison(r1, o1, t1),
        comparison(r2, o2, t2)
    );
    if !unmatched.is_empty() {
        text += &format!("; none reaches rapier3d {}", unmatched.join(", "));
    }
    text
}

/// "1 thread", "2 threads".
fn threads_label(n: u32) -> String {
    if n == 1 {
        "1 thread".into()
    } else {
        format!("{n} threads")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row by row: the chain solve's rows are left out, the smallest speedup over the Rapier
    /// settings and the one at Rapier's most accurate setting are named, and settings no
    /// Lavender row reaches are listed.
    #[test]
    fn row_by_row_names_the_smallest_speedup_and_the_most_accurate_one() {
        let ours = [
            row("lavender", 4, 1, 10.0, 3e-3),
            row("lavender", 8, 1, 15.0, 1.4e-3),
        ];
        let mut chains = row("lavender", 1, 0, 5.0, 1e-6);
        chains.chain_solve = true;
        let all = [ours[0].clone(), ours[1].clone(), chains];
        let theirs = [
            row("rapier3d", 8, 2, 36.0, 2.8e-3),  // 8/1: 36 / 15 = 2.4
            row("rapier3d", 4, 0, 25.0, 3.5e-3),  // 4/1: 25 / 10 = 2.5
            row("rapier3d", 16, 2, 52.5, 1.5e-3), // 8/1: 52.5 / 15 = 3.5
            row("rapier3d", 32, 2, 90.0, 1e-3),   // none (the chain solve does not count)
        ];
        let text = row_by_row_at_equal_error(&all, &theirs);
        assert!(
            text.contains("at least 2.40x (lavender 8/1") && text.contains("rapier3d 8/2"),
            "{text}"
        );
        assert!(
            text.contains("most accurate of them 3.50x (lavender 8/1"),
            "{text}"
        );
        assert!(text.ends_with("none reaches rapier3d 32/2"), "{text}");
        let none = row_by_row_at_equal_error(&all, &theirs[3..]);
        assert!(none.contains("no Lavender setting"), "{none}");
    }

    #[test]
    fn rounds_report_the_median_run_and_the_median_of_the_rounds_ratios() {
        // Three rounds of a wide and a scalar configuration; the machine slowed in round 2.
        let wide: Vec<BenchRow> = [10.0, 20.0, 11.0]
            .map(|ms| row("lavender", 8, 2, ms, 1e-3))
            .to_vec();
        let scalar: Vec<BenchRow> = [30.0, 50.0, 34.0]
            .map(|ms| row("lavender", 8, 2, ms, 1e-3))
            .to_vec();
        let median = median_run(&wide);
        assert_eq!(median.ms_per_step, 11.0);
        assert_eq!(median.ms_per_step_rounds, vec![10.0, 20.0, 11.0]);
        // Per round 3.0, 2.5 and 3.09: the median is round 1's, not 34 / 11 nor 50 / 20.
        assert_eq!(round_ratio(&scalar, &wide), "3.00x [2.50x to 3.09x]");
        // One round: the plain ratio, the row as measured.
        assert_eq!(round_ratio(&scalar[..1], &wide[..1]), "3.00x");
        assert!(median_run(&wide[..1]).ms_per_step_rounds.is_empty());
        // An even count takes the lower of the two middle runs.
        assert_eq!(median_run(&wide[..2]).ms_per_step, 10.0);
    }

    fn row(engine: &'static str, v: u32, p: u32, ms: f64, err: f32) -> BenchRow {
        BenchRow {
            scene: "chain".into(),
            engine,
            path: "wide",
            simd_width: 8,
            target_features: String::new(),
            cpu: String::new(),
            threads: 1,
            bodies: 0,
            joints: 0,
            substeps: 4,
            velocity_iterations: v,
            position_iterations: p,
            bias_iterations: None,
            chain_solve: false,
            island_clusters: engine == "lavender",
            frames: 1,
            ms_per_step: ms,
            ms_per_step_rounds: Vec::new(),
            ns_per_joint_substep: 0.0,
            row_solves_per_second: None,
            bytes_per_joint: None,
            bytes_per_body: None,
            max_anchor_error: err,
            stages: None,
        }
    }

    /// For each Rapier setting the fastest Lavender setting at or below its error; the best
    /// ratio over Rapier settings is reported with both settings named.
    #[test]
    fn best_at_equal_error_picks_the_fastest_setting_that_is_at_least_as_accurate() {
        let ours = [
            row("lavender", 4, 1, 10.0, 3e-3),
            row("lavender", 8, 1, 15.0, 1.4e-3),
            row("lavender", 8, 2, 20.0, 1.2e-3),
        ];
        let theirs = [
            row("rapier3d", 8, 2, 36.0, 2.8e-3), // 8/1 qualifies: 36 / 15 = 2.4
            row("rapier3d", 16, 2, 52.5, 1.5e-3), // 8/1 qualifies: 52.5 / 15 = 3.5
            row("rapier3d", 32, 2, 90.0, 1e-3),  // nothing qualifies
        ];
        let text = best_at_equal_error(&ours, &theirs);
        assert!(text.contains("3.50x"), "{text}");
        assert!(
            text.contains("lavender 8/1") && text.contains("rapier3d 16/2"),
            "{text}"
        );
        let none = best_at_equal_error(&ours, &theirs[2..]);
        assert!(none.contains("no Lavender setting"), "{none}");
        // A setting with fewer bias passes is named with them.
        let mut one_bias = row("lavender", 8, 1, 12.0, 1.45e-3);
        one_bias.bias_iterations = Some(1);
        let text = best_at_equal_error(&[ours[1].clone(), one_bias], &theirs[1..2]);
        assert!(
            text.contains("4.38x") && text.contains("lavender 8b1/1"),
            "{text}"
        );
        // So is one with the chain solve.
        let mut chains = row("lavender", 1, 1, 10.0, 1e-5);
        chains.chain_solve = true;
        let text = best_at_equal_error(&[ours[1].clone(), chains], &theirs[1..2]);
        assert!(
            text.contains("5.25x") && text.contains("lavender 1c/1"),
            "{text}"
        );
    }
}
