//! `lavender scrub LOG --joint NAME`: one joint's eight diagnostic columns over the run, as a
//! table of extremes, sparklines, its own spikes, JSON arrays and a plot.

use crate::chart;
use crate::output::{count, emit, emit_json, progress};
use crate::scrub::{
    draw_residuals, lg, linear_sparkline, note_skipped, source_text, sparkline, time_row,
    LegendEntry, ResidualCurve,
};
use anyhow::bail;
use lavender_engine::{JointKind, COLUMN_UNITS};
use lavender_replay::format::{
    COL_ANCHOR_ERROR, COL_ANCHOR_SPEED, COL_ANGULAR_ERROR, COL_JOINT_COORDINATE,
    COL_LIMIT_VIOLATION, DIAGNOSTIC_COLUMNS,
};
use lavender_replay::scrub::{JointHistory, Spike, SpikeSource};
use lavender_replay::LogReader;
use std::fmt::Write as _;
use std::path::Path;

/// What `scrub --joint` was asked for.
pub struct Request<'a> {
    pub log: &'a Path,
    /// The joint: a name, or an index.
    pub selector: &'a str,
    pub json: bool,
    pub plot: Option<&'a Path>,
    /// Spikes listed in the text.
    pub top: usize,
}

/// Reads the joint's history (a progress bar on a terminal) and prints it; `spikes` are the
/// log's (all joints), from `source`.
pub fn main(
    reader: &LogReader,
    request: &Request,
    spikes: &[Spike],
    source: SpikeSource,
) -> anyhow::Result<()> {
    let h = reader.header();
    if h.joint_count == 0 {
        bail!(
            "{} has no joints (its scene has none)",
            request.log.display()
        );
    }
    let Some(joint) = h.find_joint(request.selector) else {
        let like = h.joints_like_clause(request.selector, 5);
        let n = h.joint_count;
        bail!(
            "the log has no joint {:?} ({}: give a name as recorded, such as {:?}, or an index \
             from 0 to {}, or from -{n} to -1 counting from the end){}",
            request.selector,
            count(n as u64, "joint"),
            h.joint_name(0),
            n - 1,
            like
        );
    };
    let mut history = JointHistory::new(reader, joint)?;
    let bar = progress(reader.len() as u64, "reading frames");
    for start in (0..reader.len()).step_by(1024) {
        let end = (start + 1024).min(reader.len());
        history.read(reader, start..end, true)?;
        bar.set_position(end as u64);
    }
    bar.finish_and_clear();
    note_skipped(request.log, &history.skipped, "the joint's history");
    if history.substeps.is_empty() {
        bail!(
            "every frame of {} failed its checksum: nothing to show",
            request.log.display()
        );
    }
    let kind = h.joint_kinds().map(|kinds| kinds[joint]);
    let units = units(kind);
    let own: Vec<Spike> = spikes
        .iter()
        .filter(|s| s.joint as usize == joint)
        .cloned()
        .collect();
    if let Some(plot) = request.plot {
        let title = format!(
            "{}: joint {}, {} marked",
            chart::short_name(request.log, 50),
            history.peaks.name,
            count(own.len() as u64, "spike")
        );
        let chart = JointChart {
            title,
            history: &history,
            spikes: &own,
            units,
        };
        chart::save_sized(plot, &chart, (1200, 900))?;
        eprintln!("plot written to {}", plot.display());
    }
    if request.json {
        return emit_json(&json(reader, &history, kind, &own, source));
    }
    emit(&text(request, &history, kind, (&own, spikes.len(), source)))
}

/// The eight columns' units for a joint of `kind` (both where it is not known).
fn units(kind: Option<JointKind>) -> [&'static str; 8] {
    let mut units = COLUMN_UNITS;
    let coordinate = kind.map_or(
        COLUMN_UNITS[COL_JOINT_COORDINATE],
        JointKind::coordinate_unit,
    );
    units[COL_LIMIT_VIOLATION] = coordinate;
    units[COL_JOINT_COORDINATE] = coordinate;
    units
}

fn json(
    reader: &LogReader,
    history: &JointHistory,
    kind: Option<JointKind>,
    spikes: &[Spike],
    source: SpikeSource,
) -> serde_json::Value {
    let units = units(kind);
    let mut columns = serde_json::Map::new();
    let mut stats = serde_json::Map::new();
    let mut unit_map = serde_json::Map::new();
    for (c, name) in DIAGNOSTIC_COLUMNS.iter().enumerate() {
        // Non-finite values are JSON nulls.
        columns.insert((*name).into(), serde_json::json!(history.columns[c]));
        unit_map.insert((*name).into(), units[c].into());
        let range = history.range(c);
        stats.insert(
            (*name).into(),
            serde_json::json!({
                "min": range.map(|r| r.0 .0),
                "min_substep": range.map(|r| r.0 .1),
                "max": range.map(|r| r.1 .0),
                "max_substep": range.map(|r| r.1 .1),
                "last": history.columns[c].last(),
            }),
        );
    }
    serde_json::json!({
        // Frames in the log, as every `scrub --json` says; the arrays hold the frames read
        // (corrupt ones left out and listed in `skipped_frames`).
        "frames": reader.len(),
        "frames_read": history.substeps.len(),
        // The columns in their order (JSON objects have none).
        "column_names": DIAGNOSTIC_COLUMNS,
        "joint": {
            "index": history.peaks.joint,
            "name": history.peaks.name,
            "kind": kind.map(JointKind::name),
        },
        "units": unit_map,
        "substeps": history.substeps,
        "times": history.times,
        "columns": columns,
        "stats": stats,
        "peaks": history.peaks,
        "first_non_finite_substep": history.peaks.first_non_finite_substep,
        "spikes": spikes.iter().map(|s| crate::scrub::spike_json(reader, s)).collect::<Vec<_>>(),
        "source": source,
        "skipped_frames": history.skipped,
        "recovery": reader.recovery(),
    })
}

fn text(
    request: &Request,
    history: &JointHistory,
    kind: Option<JointKind>,
    (spikes, all_spikes, source): (&[Spike], usize, SpikeSource),
) -> String {
    let units = units(kind);
    let (first, last) = (0, history.substeps.len() - 1);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: joint {} (index {}{}), {} (substeps {}..={}, t = {:.4}..{:.4} s)",
        request.log.display(),
        history.peaks.name,
        history.peaks.joint,
        kind.map(|k| format!(", {}", k.name())).unwrap_or_default(),
        count(history.substeps.len() as u64, "frame"),
        history.substeps[first],
        history.substeps[last],
        history.times[first],
        history.times[last],
    );
    let _ = writeln!(
        out,
        "\n  {:<22} {:<5} {:>11} {:>9} {:>11} {:>9} {:>11}",
        "column", "unit", "min", "@substep", "max", "@substep", "last"
    );
    for (c, name) in DIAGNOSTIC_COLUMNS.iter().enumerate() {
        let last = history.columns[c][last];
        match history.range(c) {
            Some(((lo, lo_at), (hi, hi_at))) => {
                let _ = writeln!(
                    out,
                    "  {name:<22} {:<5} {lo:>11.3e} {lo_at:>9} {hi:>11.3e} {hi_at:>9} {last:>11.3e}",
                    units[c]
                );
            }
            None => {
                let _ = writeln!(out, "  {name:<22} {:<5} (no finite value)", units[c]);
            }
        }
    }
    if let Some(s) = history.peaks.first_non_finite_substep {
        let _ = writeln!(out, "  non-finite from substep {s}");
    }
    let width = 72.min(history.substeps.len());
    for c in [
        COL_ANCHOR_ERROR,
        COL_ANGULAR_ERROR,
        COL_LIMIT_VIOLATION,
        COL_ANCHOR_SPEED,
    ] {
        let values = &history.columns[c];
        let _ = writeln!(out, "\n{} ({}, log scale)", DIAGNOSTIC_COLUMNS[c], units[c]);
        if values.iter().all(|&v| v == 0.0) {
            let _ = writeln!(out, "  (zero at every substep)");
        } else {
            let _ = writeln!(out, "  {}", sparkline(values, width));
        }
    }
    let coordinate = &history.columns[COL_JOINT_COORDINATE];
    let times = time_row(history.times[first], history.times[last], width);
    match history.range(COL_JOINT_COORDINATE) {
        Some(((lo, _), (hi, _))) if lo != hi => {
            let _ = writeln!(
                out,
                "\n{} ({}, linear, {lo:.4} to {hi:.4})",
                DIAGNOSTIC_COLUMNS[COL_JOINT_COORDINATE], units[COL_JOINT_COORDINATE]
            );
            let _ = writeln!(out, "  {}", linear_sparkline(coordinate, width));
            out.push_str(&times);
        }
        constant => {
            out.push_str(&times);
            if let Some(((v, _), _)) = constant {
                let _ = writeln!(
                    out,
                    "\n{} ({}): {v:.4} at every substep",
                    DIAGNOSTIC_COLUMNS[COL_JOINT_COORDINATE], units[COL_JOINT_COORDINATE]
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "\n{} of this joint ({} in the log, {}){}",
        count(spikes.len() as u64, "spike"),
        all_spikes,
        source_text(source),
        if spikes.is_empty() || request.top == 0 {
            ""
        } else {
            ":"
        }
    );
    if !spikes.is_empty() && request.top > 0 {
        let _ = writeln!(
            out,
            "  {:>9} {:>11}  {:<21} {:>12} {:>12}",
            "substep", "time s", "column", "value", "baseline"
        );
    }
    for s in spikes.iter().take(request.top) {
        let _ = writeln!(
            out,
            "  {:>9} {:>11.5}  {:<21} {:>12.4e} {:>12.4e}",
            s.substep, s.time, DIAGNOSTIC_COLUMNS[s.column as usize], s.value, s.baseline
        );
    }
    if spikes.len() > request.top && request.top > 0 {
        let _ = writeln!(
            out,
            "  ... {} more (`--top N` lists more; `--json` lists all)",
            spikes.len() - request.top
        );
    }
    out
}

/// The plot: the residual columns on a log axis with the joint's spikes marked, then the
/// anchor's relative speed and the joint coordinate, on one time axis.
struct JointChart<'a> {
    title: String,
    history: &'a JointHistory,
    spikes: &'a [Spike],
    units: [&'static str; 8],
}

impl JointChart<'_> {
    fn x(&self) -> (f64, f64) {
        let t = &self.history.times;
        chart::time_range(t[0], t[t.len() - 1])
    }

    /// One column on a log axis of its own (zeros at the bottom edge, non-finite values at
    /// the top, as above): a run that blows up flattens the rest of a linear one.
    fn draw_log<DB: plotters::prelude::DrawingBackend>(
        &self,
        area: &plotters::drawing::DrawingArea<DB, plotters::coord::Shift>,
        column: usize,
        color: plotters::style::RGBColor,
    ) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let h = self.history;
        let y = chart::log_range(h.columns[column].iter().map(|&v| f64::from(v)), -9.0);
        let y_desc = format!(
            "{} ({}, log scale)",
            DIAGNOSTIC_COLUMNS[column], self.units[column]
        );
        let mut c = chart::time_log_axes(area, "", (self.x(), y), &y_desc)?;
        let points = (h.times.iter().zip(&h.columns[column])).map(|(&t, &v)| (t, lg(v, y.1)));
        chart::draw_curve(&mut c, points, color)
    }

    /// One column on a linear axis (non-finite values left out).
    fn draw_linear<DB: plotters::prelude::DrawingBackend>(
        &self,
        area: &plotters::drawing::DrawingArea<DB, plotters::coord::Shift>,
        column: usize,
        color: plotters::style::RGBColor,
    ) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let h = self.history;
        let (lo, hi) = h.range(column).map_or((0.0, 1.0), |((lo, _), (hi, _))| {
            (f64::from(lo), f64::from(hi))
        });
        // A constant column (a ball joint's coordinate is 0 throughout) gets an axis around
        // its value, not one of +-1e-9.
        let pad = if hi - lo > 1e-12 * hi.abs().max(lo.abs()).max(1.0) {
            (hi - lo) * 0.05
        } else {
            (hi.abs() * 0.05).max(1.0)
        };
        let y_desc = format!("{} ({})", DIAGNOSTIC_COLUMNS[column], self.units[column]);
        let mut c = chart::time_linear_axes(area, (self.x(), (lo - pad, hi + pad)), &y_desc)?;
        let points = (h.times.iter().zip(&h.columns[column]))
            .filter(|(_, v)| v.is_finite())
            .map(|(&t, &v)| (t, f64::from(v)));
        chart::draw_curve(&mut c, points, color)
    }
}

impl chart::Chart for JointChart<'_> {
    fn render<DB: plotters::prelude::DrawingBackend>(
        &self,
        root: plotters::drawing::DrawingArea<DB, plotters::coord::Shift>,
    ) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        use chart::err;
        let h = self.history;
        let residuals = [COL_ANCHOR_ERROR, COL_ANGULAR_ERROR, COL_LIMIT_VIOLATION];
        let color = |k: usize| lavender_tutorial::plot::color(k);
        let (plot_area, legend_area) = chart::panels(&root, 270)?;
        let (top, rest) = plot_area.split_vertically(450);
        let (speed_area, coordinate_area) = rest.split_vertically(225);
        let values = residuals
            .iter()
            .flat_map(|&c| h.columns[c].iter().map(|&v| f64::from(v)));
        let y = chart::log_range(values, -9.0);
        // The shared axis title is longer than this panel is tall (QA 2026-12-08: it ran off
        // the image into the middle panel's); its note goes to the legend.
        let mut c = chart::time_log_axes(&top, &self.title, (self.x(), y), "residual (log scale)")?;
        let curves: Vec<ResidualCurve> = (residuals.iter().enumerate())
            .map(|(k, &column)| ResidualCurve {
                column,
                label: format!("{} ({})", DIAGNOSTIC_COLUMNS[column], self.units[column]),
                color: color(k),
                points: h
                    .times
                    .iter()
                    .copied()
                    .zip(h.columns[column].iter().copied())
                    .collect(),
            })
            .collect();
        let mut entries: Vec<LegendEntry> = [
            "upper: residuals, zeros at the",
            "bottom edge, non-finite at the top",
        ]
        .into_iter()
        .map(|text| (text.to_string(), plotters::style::WHITE, chart::Mark::Text))
        .collect();
        draw_residuals(&mut c, (&curves, self.spikes, y.1), &mut entries)?;
        self.draw_log(&speed_area, COL_ANCHOR_SPEED, color(3))?;
        self.draw_linear(&coordinate_area, COL_JOINT_COORDINATE, color(4))?;
        entries.push((
            format!(
                "middle: {} ({})",
                DIAGNOSTIC_COLUMNS[COL_ANCHOR_SPEED], self.units[COL_ANCHOR_SPEED]
            ),
            color(3),
            chart::Mark::Line,
        ));
        entries.push((
            format!(
                "lower: {} ({})",
                DIAGNOSTIC_COLUMNS[COL_JOINT_COORDINATE], self.units[COL_JOINT_COORDINATE]
            ),
            color(4),
            chart::Mark::Line,
        ));
        chart::legend(&legend_area, &entries)?;
        root.present().map_err(|e| err(&e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_follow_the_joint_type() {
        assert_eq!(
            units(Some(JointKind::Revolute))[COL_JOINT_COORDINATE],
            "rad"
        );
        assert_eq!(units(Some(JointKind::Prismatic))[COL_LIMIT_VIOLATION], "m");
        assert_eq!(units(None)[COL_JOINT_COORDINATE], "rad|m");
        assert_eq!(units(Some(JointKind::Fixed))[COL_ANCHOR_ERROR], "m");
    }
}
