//! Tables, JSON lines and plots of measured rows.

use crate::measure::BenchRow;
use crate::{BenchError, Result};
use lavender_tutorial::plot::{color, line_charts, Corner, LineChart, RGBColor, Series};
use std::path::{Path, PathBuf};

/// A fixed-width text table of rows.
pub fn table(rows: &[BenchRow]) -> String {
    let mut out = format!(
        "{:<12} {:<9} {:<6} {:>4} {:>7} {:>8} {:>10} {:>12} {:>12} {:>10} {:>8} {:>11}\n",
        "scene",
        "engine",
        "path",
        "simd",
        "threads",
        "joints",
        "ms/step",
        "ns/joint/sub",
        "Mrow-solve/s",
        "iters v/p",
        "B/joint",
        "max err m"
    );
    for r in rows {
        out += &format!(
            "{:<12} {:<9} {:<6} {:>4} {:>7} {:>8} {:>10.3} {:>12.1} {:>12} {:>10} {:>8} {:>11.3e}\n",
            r.scene,
            r.engine,
            r.path,
            r.simd_width,
            r.threads,
            r.joints,
            r.ms_per_step,
            r.ns_per_joint_substep,
            r.row_solves_per_second
                .map(|x| format!("{:.1}", x / 1e6))
                .unwrap_or_else(|| "-".into()),
            r.settings(),
            r.bytes_per_joint
                .map(|b| b.to_string())
                .unwrap_or_else(|| "-".into()),
            r.max_anchor_error,
        );
    }
    out
}

/// `base.ms_per_step / other.ms_per_step`: how many times faster `other` is.
pub fn speedup(base: &BenchRow, other: &BenchRow) -> f64 {
    base.ms_per_step / other.ms_per_step
}

/// Named series of rows (one line of a plot each).
pub type NamedSeries = Vec<(String, Vec<BenchRow>)>;

/// The scaling plot: ns per joint per substep against the joint count on a log axis, one line per series.
pub fn scaling_plot(stem: &Path, series: &NamedSeries) -> Result<Vec<PathBuf>> {
    let chart = LineChart {
        title: "chain scene: cost per joint and substep against size".into(),
        x_label: "joints (log scale)".into(),
        y_label: "ns per joint per substep".into(),
        series: series
            .iter()
            .enumerate()
            .map(|(i, (name, rows))| {
                let points = rows
                    .iter()
                    .map(|r| (r.joints as f64, r.ns_per_joint_substep))
                    .collect();
                Series::new(name.clone(), points, color(i))
            })
            .collect(),
        log_floor: None,
        // Decades labelled as joints (QA 2026-12-07: "log10(joints)" ticks 3.0 to 4.0 left
        // the reader to take the powers).
        log_x: true,
        legend: Corner::UpperRight,
    };
    line_charts(stem, &[chart], (900, 560)).map_err(|e| BenchError::Plot(e.to_string()))
}

/// The line style of an accuracy-sweep series from its rows: one hue per method (Lavender
/// row by row blue, with one bias pass purple, with the chain solve green; Rapier orange and
/// dashed), darker with more position passes, so that twelve lines stay apart.
fn sweep_style(rows: &[BenchRow]) -> (RGBColor, bool) {
    const BLUES: [RGBColor; 3] = [
        RGBColor(107, 174, 214),
        RGBColor(33, 113, 181),
        RGBColor(8, 48, 107),
    ];
    const PURPLES: [RGBColor; 3] = [
        RGBColor(158, 154, 200),
        RGBColor(106, 81, 163),
        RGBColor(63, 0, 125),
    ];
    const GREENS: [RGBColor; 3] = [
        RGBColor(116, 196, 118),
        RGBColor(35, 139, 69),
        RGBColor(0, 68, 27),
    ];
    const ORANGES: [RGBColor; 3] = [
        RGBColor(253, 141, 60),
        RGBColor(217, 72, 1),
        RGBColor(127, 39, 4),
    ];
    let Some(r) = rows.first() else {
        return (color(0), false);
    };
    let shade = (r.position_iterations as usize).min(2);
    match (r.engine, r.chain_solve, r.bias_iterations) {
        ("rapier3d", _, _) => (ORANGES[shade], true),
        (_, true, _) => (GREENS[shade], false),
        (_, false, Some(_)) => (PURPLES[shade], false),
        _ => (BLUES[shade], false),
    }
}

/// The accuracy-versus-cost plot: one panel per scene, max anchor error (log) against ms per
/// step, one line per engine through its iteration settings.
pub fn accuracy_cost_plot(stem: &Path, panels: &[(String, NamedSeries)]) -> Result<Vec<PathBuf>> {
    let charts: Vec<LineChart> = panels
        .iter()
        .map(|(scene, series)| LineChart {
            title: format!("{scene}: max anchor error against time per 60 Hz step"),
            x_label: "ms per step".into(),
            y_label: "max anchor error, m".into(),
            series: series
                .iter()
                .map(|(name, rows)| {
                    let points = rows
                        .iter()
                        .map(|r| (r.ms_per_step, f64::from(r.max_anchor_error)))
                        .collect();
                    let (color, dashed) = sweep_style(rows);
                    let line = Series::new(name.clone(), points, color);
                    if dashed {
                        line.dashed()
                    } else {
                        line
                    }
                })
                .collect(),
            log_floor: Some(1e-7),
            log_x: false,
            legend: Corner::UpperRight,
        })
        .collect();
    let height = 460 * charts.len().max(1) as u32;
    line_charts(stem, &charts, (900, height)).map_err(|e| BenchError::Plot(e.to_string()))
}
