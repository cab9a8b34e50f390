//! `lavender diff`: where two runs first diverge, and by how much at most.
//!
//! Exit codes: 0 identical within tolerance, 1 diverged, 2 unusable input (unreadable logs,
//! different shapes, or different scenes without `--force`).

use crate::chart;
use crate::output::{emit, emit_json, progress};
use crate::scrub::open_log;
use anyhow::bail;
use lavender_replay::diff::{diff_series, Divergence, Extent, FrameDeviation, Tolerance};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Compare two run logs frame by frame: the first substep where any body pose or velocity
/// or joint diagnostic differs beyond `atol + rtol * max(|a|, |b|)`, naming the body or joint
/// and the field, and the largest deviation over the run. Frames are paired by substep; a log
/// that starts later (a resumed run) is compared from its first substep. A log that ends
/// before the other has diverged there, unless `--overlap` is given. Frames with equal state
/// and diagnostics hashes are identical and not compared value by value (their checksums are
/// still checked). Exit code 0: identical within tolerance; 1: diverged; 2: unusable input
/// (unreadable or corrupt logs, different shapes, no common substep, different scenes
/// without `--force`).
#[derive(Debug, clap::Args)]
#[command(
    allow_negative_numbers = true,
    after_help = "Examples:\n  lavender diff golden.lvlog new.lvlog                 bitwise; exit 0 identical, 1 diverged (or one log\n                                                       ends first), 2 unusable input\n  lavender diff data/golden/chain.lvlog new.lvlog --overlap\n                                                       a longer run against a short golden log\n  lavender diff a.lvlog b.lvlog --atol 1e-6 --rtol 1e-5\n  lavender diff a.lvlog b.lvlog --json                 {\"identical\", \"first_divergent_substep\", \"where\": {\"kind\", \"index\", \"name\", \"field\"}, \"max_deviation\"}\n  lavender diff run.lvlog other-scene.lvlog --force    compare even though the scene hashes differ\n  lavender diff run.lvlog detail.lvlog --overlap       a short resumed run: only the substeps both hold\n  lavender diff golden.lvlog new.lvlog --plot drift.png\n                                                       how the runs drift apart, substep by substep"
)]
pub struct Args {
    /// The reference run log.
    a: PathBuf,
    /// The run log to compare with it.
    b: PathBuf,
    /// Absolute tolerance (raw units: m, rad, m/s, ...).
    #[arg(long, default_value_t = 0.0, value_name = "X", value_parser = crate::output::tolerance)]
    atol: f64,
    /// Relative tolerance.
    #[arg(long, default_value_t = 0.0, value_name = "Y", value_parser = crate::output::tolerance)]
    rtol: f64,
    /// Compare only the substeps both logs record: a log that ends first (a resumed run
    /// with `--steps`, a run cut short) is then not a divergence.
    #[arg(long)]
    overlap: bool,
    /// Compare even when the logs come from scenes with different hashes.
    #[arg(long)]
    force: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// Draw the largest deviation of every substep (body positions, orientations,
    /// velocities, joint diagnostics; log scale) with the first divergence marked, to a
    /// `.png` or `.svg`.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

/// Runs the comparison; `Ok(true)` means the runs diverged (exit code 1).
pub fn main(args: Args) -> anyhow::Result<bool> {
    if !(args.atol.is_finite() && args.atol >= 0.0 && args.rtol.is_finite() && args.rtol >= 0.0) {
        bail!("--atol and --rtol must be finite and >= 0");
    }
    if let Some(plot) = &args.plot {
        crate::paths::check_plot_path(plot, &args.a)?;
        crate::paths::check_plot_path(plot, &args.b)?;
    }
    let a = open_log(&args.a)?;
    // One file named twice is read once: a log still being written, opened twice, held
    // more frames the second time and "diverged" from itself (QA 2026-12-07).
    let same = lavender_replay::files::same_file(&args.a, &args.b);
    let b_read;
    let b = if same {
        eprintln!(
            "note: {} and {} are the same file: it is compared with itself, read once{}",
            args.a.display(),
            args.b.display(),
            if a.is_finished() {
                String::new()
            } else {
                format!(
                    " (as it was then, {}: it has no footer yet)",
                    crate::output::count(a.len() as u64, "frame")
                )
            }
        );
        &a
    } else {
        b_read = open_log(&args.b)?;
        &b_read
    };
    lavender_replay::diff::check_shapes(&a, b)?;
    let (ha, hb) = (a.header(), b.header());
    if ha.scene_hash != hb.scene_hash && !args.force {
        bail!(
            "the logs come from different scenes (scene hash {} vs {}); pass --force to compare \
             them anyway",
            crate::output::hex64(ha.scene_hash),
            crate::output::hex64(hb.scene_hash)
        );
    }
    let tol = Tolerance {
        atol: args.atol,
        rtol: args.rtol,
    };
    // Frames whose hashes agree are only checksummed; the bar counts frames paired.
    let bar = progress(a.len().min(b.len()) as u64, "comparing frames");
    let extent = if args.overlap {
        Extent::Overlap
    } else {
        Extent::Whole
    };
    let (report, series) = diff_series(&a, b, &tol, extent, |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    if let Some(plot) = &args.plot {
        draw(plot, (&args.a, &args.b), &series, &report, &tol)?;
        eprintln!("plot written to {}", plot.display());
    }
    if args.json {
        emit_json(&serde_json::to_value(&report)?)?;
        return Ok(!report.identical);
    }
    let mut out = String::new();
    if report.scene_hash_mismatch {
        let _ = writeln!(
            out,
            "note: the scene hashes differ (compared because of --force)"
        );
    }
    let [sa, sb] = report.substep_lengths;
    if report.substep_lengths_differ {
        let _ = writeln!(
            out,
            "note: the substeps differ in length ({sa:.6e} s and {sb:.6e} s): substep n of one \
             run is compared with substep n of the other, at different times"
        );
    }
    for (h, which) in [(ha, "a"), (hb, "b")] {
        let _ = writeln!(
            out,
            "{which}: {}, engine {} ({}), {} velocity{} / {} position iterations{}",
            crate::output::count(
                if which == "a" {
                    report.frames_a
                } else {
                    report.frames_b
                } as u64,
                "frame"
            ),
            h.engine_version,
            h.target_features,
            h.world.velocity_iterations,
            match h.bias_passes() {
                b if b == h.world.velocity_iterations => String::new(),
                b => format!(" ({b} with a bias pass)"),
            },
            h.world.position_iterations,
            [
                (h.chain_solve(), ", chain solve"),
                (h.sleeping(), ", sleeping"),
                (!h.warm_starting(), ", no warm start"),
                (!h.gyroscopic(), ", no gyroscopic term"),
                (!h.curvature(), ", no curvature offsets"),
                (h.speculative_limits(), ", speculative limits"),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, name)| *name)
            .collect::<String>()
        );
    }
    let common = match (report.first_common_substep, report.last_common_substep) {
        (Some(f), Some(l)) => format!("substeps {f} to {l}"),
        _ => "no substeps".into(),
    };
    match report.first_divergent_substep {
        None => {
            let _ = writeln!(
                out,
                "identical{} over {} ({common}{})",
                if tol == Tolerance::EXACT {
                    " (bit for bit)".to_string()
                } else {
                    format!(" within atol {:e} rtol {:e}", tol.atol, tol.rtol)
                },
                crate::output::count(report.frames_compared as u64, "frame"),
                if report.extent == Extent::Overlap
                    && report.frames_compared < report.frames_a.max(report.frames_b)
                {
                    ", the substeps both logs record"
                } else {
                    ""
                }
            );
        }
        Some(s) => {
            let _ = write!(out, "diverged at substep {s}");
            let time = [&a, b]
                .iter()
                .find_map(|r| r.index_of_substep(s).map(|i| r.index()[i].summary.time));
            if let Some(t) = time {
                let _ = write!(out, " (t = {t:.6} s)");
            }
            match (&report.where_, report.reason) {
                (Some(w), _) => {
                    let kind = match w.kind {
                        lavender_replay::diff::LocationKind::Body => "body",
                        lavender_replay::diff::LocationKind::Joint => "joint",
                    };
                    let _ = writeln!(out, ": {kind} {} `{}`, {}", w.index, w.name, w.field);
                }
                (None, Some(Divergence::LogEnds)) => {
                    let _ = writeln!(
                        out,
                        ": one log ends before it (identical over {}, {common}; \
                         --overlap compares only those)",
                        crate::output::count(report.frames_compared as u64, "frame")
                    );
                }
                (None, Some(Divergence::SubstepNumbering)) => {
                    let _ = writeln!(out, ": the logs stop recording the same substeps there");
                }
                (None, _) => {
                    let _ = writeln!(
                        out,
                        ": the recorded values are equal but the state hashes differ \
                         (hidden solver state: warm-start impulses, or with sleeping the \
                         bodies' rest timers)"
                    );
                }
            }
        }
    }
    let m = &report.max_deviation;
    if let (Some(s), Some(w)) = (m.substep, &m.location) {
        let _ = writeln!(
            out,
            "largest deviation {:.6e} at substep {s}: {} {} `{}`, {}",
            m.value,
            match w.kind {
                lavender_replay::diff::LocationKind::Body => "body",
                lavender_replay::diff::LocationKind::Joint => "joint",
            },
            w.index,
            w.name,
            w.field
        );
    }
    emit(&out)?;
    Ok(!report.identical)
}

/// log10 of a deviation, floored at 1e-12 (zeros cannot be shown on a log axis); a
/// non-finite deviation goes to the top edge.
fn lg(v: f64, top: f64) -> f64 {
    if v.is_finite() {
        v.max(1e-12).log10()
    } else {
        top
    }
}

/// A deviation curve: legend label, the value it plots.
type Kind = (&'static str, fn(&FrameDeviation) -> f64);

const KINDS: [Kind; 4] = [
    ("body positions (m)", |d| d.position),
    ("body orientations (quaternion)", |d| d.rotation),
    ("body velocities (m/s, rad/s)", |d| d.velocity),
    ("joint diagnostics (m, rad, m/s)", |d| d.diagnostics),
];

/// The deviation series as lines on a log axis against time, the first divergence as a
/// vertical line and the tolerance `atol` (if any) as a horizontal one.
fn draw(
    path: &Path,
    (a, b): (&Path, &Path),
    series: &[FrameDeviation],
    report: &lavender_replay::diff::DiffReport,
    tol: &Tolerance,
) -> anyhow::Result<()> {
    let values = series
        .iter()
        .flat_map(|d| KINDS.map(|(_, get)| get(d)))
        .chain((tol.atol > 0.0).then_some(tol.atol));
    let y = chart::log_range(values, -12.0);
    let x = match (series.first(), series.last()) {
        (Some(f), Some(l)) => chart::time_range(f.time, l.time),
        _ => (0.0, 1.0),
    };
    let first = report
        .first_divergent_substep
        .and_then(|s| series.iter().find(|d| d.substep == s));
    // The names on one line, what the chart shows on the next (each fitted to the width).
    let title = format!(
        "{} vs {}\nlargest deviation per substep{}",
        chart::short_name(a, 40),
        chart::short_name(b, 40),
        match (report.first_divergent_substep, report.reason) {
            (Some(s), Some(Divergence::LogEnds)) => {
                format!(", equal where both record; one log ends before substep {s}")
            }
            (Some(s), _) => format!(", first beyond tolerance at substep {s}"),
            (None, _) => ", identical within tolerance".to_string(),
        }
    );
    let drift = DiffChart {
        title,
        series,
        first,
        atol: tol.atol,
        x,
        y,
    };
    chart::save(path, &drift)
}

struct DiffChart<'a> {
    title: String,
    series: &'a [FrameDeviation],
    first: Option<&'a FrameDeviation>,
    atol: f64,
    x: (f64, f64),
    y: (f64, f64),
}

impl chart::Chart for DiffChart<'_> {
    fn render<DB: plotters::prelude::DrawingBackend>(
        &self,
        root: plotters::drawing::DrawingArea<DB, plotters::coord::Shift>,
    ) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        use chart::err;
        use plotters::prelude::*;
        let ((t0, t1), (y_lo, y_hi)) = (self.x, self.y);
        let (plot_area, legend_area) = chart::panels(&root, 290)?;
        let mut chart = chart::time_log_axes(
            &plot_area,
            &self.title,
            (self.x, self.y),
            "deviation (log scale; equal at the bottom edge)",
        )?;
        let mut entries: Vec<(String, RGBColor, chart::Mark)> = Vec::new();
        // Blue, orange, green, reddish purple: apart even for colour-blind readers.
        for ((name, get), k) in KINDS.iter().zip([0, 1, 2, 4]) {
            let color = lavender_tutorial::plot::color(k);
            let points = self.series.iter().map(|d| (d.time, lg(get(d), y_hi)));
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(1)))
                .map_err(|e| err(&e))?;
            entries.push((name.to_string(), color, chart::Mark::Line));
        }
        if self.atol > 0.0 {
            let yt = self.atol.log10();
            chart
                .draw_series(DashedLineSeries::new(
                    [(t0, yt), (t1, yt)],
                    8,
                    5,
                    BLACK.stroke_width(2),
                ))
                .map_err(|e| err(&e))?;
            entries.push((
                format!("--atol {:e} (dashed)", self.atol),
                BLACK,
                chart::Mark::Line,
            ));
        }
        if let Some(d) = self.first {
            chart
                .draw_series(LineSeries::new(
                    [(d.time, y_lo), (d.time, y_hi)],
                    RED.stroke_width(2),
                ))
                .map_err(|e| err(&e))?;
            entries.push((
                format!("first divergence, substep {}", d.substep),
                RED,
                chart::Mark::Line,
            ));
        }
        // Identical logs put every curve on the bottom edge, one over the other: say so where
        // the eye goes (QA 2026-12-07).
        let all_equal = self
            .series
            .iter()
            .all(|d| KINDS.iter().all(|(_, get)| get(d) == 0.0));
        if all_equal {
            use plotters::style::text_anchor::{HPos, Pos, VPos};
            let style = ("sans-serif", 20)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Center));
            chart
                .plotting_area()
                .draw(&Text::new(
                    "every deviation is 0: the logs are bitwise equal here",
                    ((t0 + t1) / 2.0, (y_lo + y_hi) / 2.0),
                    style,
                ))
                .map_err(|e| err(&e))?;
        }
        chart::legend(&legend_area, &entries)?;
        root.present().map_err(|e| err(&e))?;
        Ok(())
    }
}
