//! `lavender scrub`: the residual timeline of a run, its worst joints, one frame's table, the
//! early spikes, a live tail of a log being written, and a plot.

use crate::chart;
use crate::output::count;
use crate::output::{emit, emit_json, progress};
use anyhow::{bail, Context};
use lavender_engine::COLUMN_UNITS;
use lavender_replay::format::{
    COL_ANCHOR_ERROR, COL_ANGULAR_ERROR, COL_LIMIT_VIOLATION, DIAGNOSTIC_COLUMNS,
};
use lavender_replay::recorder::OutputKind;
use lavender_replay::scrub::{self, Spike, SpikeParams, TimelinePoint};
use lavender_replay::LogReader;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Scrub a run log: a timeline of the per-substep largest residuals, the worst joints, one
/// frame's diagnostics (`--at`, `--time`), one joint over the run (`--joint`), the early residual spikes (`--spikes`: the earliest
/// substeps where a joint's residual jumps above its own rolling median + MAD baseline and an
/// absolute threshold, or turns non-finite), a live tail (`--follow`) and a plot (`--plot`).
#[derive(Debug, clap::Args)]
#[command(
    allow_negative_numbers = true,
    after_help = "Examples:\n  lavender scrub run.lvlog                     timeline and worst joints\n  lavender scrub run.lvlog --spikes            early spikes, earliest first\n  lavender scrub run.lvlog --spikes --json     {\"frames\", \"spikes\": [{\"substep\", \"time\", \"joint\", \"column\", \"value\", \"baseline\", \"joint_name\", \"column_name\"}], ...}\n  lavender scrub run.lvlog --at 1000           substep 1000's 10 joints of largest residual\n  lavender scrub run.lvlog --at 1000 --json    {\"frames\", \"frame\": {\"substep\", \"time\", \"total_energy\", \"state_hash\", \"state_hash_hex\", \"joints\": [...]}}\n  lavender scrub run.lvlog --time 0.5 --top 5\n  lavender scrub run.lvlog --joint chain.joint6\n                                               one joint over the run (a name, or an index)\n  lavender scrub run.lvlog --joint -1 --json   the last joint, every frame's values\n  lavender scrub run.lvlog --joint 6 --plot j.png\n                                               its residuals, relative speed and coordinate\n  lavender scrub run.lvlog --plot timeline.png\n  lavender run chain --duration 60 --record live.lvlog &  lavender scrub live.lvlog --follow\n                                               tail a run being recorded (waits for the file)"
)]
pub struct Args {
    /// The run log (written by `lavender run --record`; may still be being written).
    log: PathBuf,
    /// Print the diagnostics of the frame recording this substep: its `--top` joints
    /// (default 10) of largest residual, largest first.
    #[arg(
        long,
        conflicts_with_all = ["time", "spikes", "plot", "k", "threshold", "window"],
        value_name = "SUBSTEP",
        value_parser = crate::output::whole::<u64>,
    )]
    at: Option<u64>,
    /// Print the diagnostics of the frame nearest this time (s; between two frames the
    /// nearer, so a time scrub printed finds its frame), as `--at` does.
    #[arg(
        long,
        conflicts_with_all = ["spikes", "plot", "k", "threshold", "window"],
        value_name = "SECONDS",
        allow_negative_numbers = true
    , value_parser = finite_seconds)]
    time: Option<f64>,
    /// Joints in the frame table (`--at`, `--time`) and in the worst-joints list, in the text
    /// and the JSON alike, and spikes `--joint` lists in the text (its `--json` lists all);
    /// the others are left out.
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = crate::output::count_to_show)]
    top: usize,
    /// List the early residual spikes, earliest first. A finished log recorded by Lavender
    /// carries a spike index for the default --k, --threshold and --window: then only its footer is
    /// read (milliseconds, whatever the log's size); other settings judge every frame.
    #[arg(long)]
    spikes: bool,
    /// Robust score above the rolling median, in scaled MADs, that makes a spike (>= 0).
    #[arg(
        long,
        default_value_t = 8.0,
        value_name = "K",
        allow_negative_numbers = true,
        value_parser = crate::output::number::<f32>
    )]
    k: f32,
    /// Residuals at or below this are never spikes (m or rad; >= 0).
    #[arg(
        long,
        default_value_t = 1e-3,
        value_name = "X",
        allow_negative_numbers = true,
        value_parser = crate::output::number::<f32>
    )]
    threshold: f32,
    /// Substeps in the rolling baseline (>= 2).
    #[arg(long, default_value_t = 32, value_name = "N", value_parser = crate::output::whole::<usize>)]
    window: usize,
    /// Follow a log being written: print spikes as they happen until the writer finishes
    /// (or Ctrl-C). Waits for the file to appear, and says when it stops growing. With
    /// --json, one JSON object per spike as it is found (JSON Lines), then
    /// `{"end": {"finished", "frames", "spikes"}}` (`finished` false: the writer was killed).
    #[arg(long, conflicts_with_all = ["at", "time", "plot"])]
    follow: bool,
    /// Draw the timeline with the spikes marked, and below it the total energy against the
    /// first frame's, to this PNG (or .svg) file; with --joint, that joint's residuals with
    /// its spikes marked, its relative speed and its coordinate.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Show one joint over the run: the extremes of its eight columns, sparklines, its own
    /// spikes (as --spikes finds them); with --json every frame's values. JOINT is a name,
    /// else an index (negative counts from the end).
    #[arg(long, value_name = "JOINT", conflicts_with_all = ["at", "time", "spikes", "follow"])]
    joint: Option<String>,
    /// Print JSON: `{"frames", "spikes", "source", "energy", "first_non_finite_body",
    /// "worst_joints", "skipped_frames", "recovery"}` (the `--top` worst joints); with
    /// `--spikes`, the same without the energy, the body and the worst joints; with
    /// `--at`/`--time`, `{"frames", "frame": {"substep", "time", "total_energy",
    /// "state_hash", "state_hash_hex", "joints"}}` (the `--top` joints of largest residual);
    /// with `--joint`, the joint's columns; with `--follow`, one object per spike, then an
    /// `{"end": ...}` line.
    #[arg(long)]
    json: bool,
}

/// Opens a log for reading, saying on stderr what recovery dropped.
pub fn open_log(path: &Path) -> anyhow::Result<LogReader> {
    // Not in `open_quietly`, which a follower calls at every poll.
    let spinner = crate::output::slow_work_spinner(
        format!(
            "opening {} (a log without its footer index, a killed writer's, is read whole)",
            path.display()
        ),
        std::time::Duration::from_millis(500),
    );
    let reader = open_quietly(path)?;
    drop(spinner);
    if let Some(rec) = reader.recovery() {
        // Which of "still writing, or stopped" it is, where the writer's lock tells (QA
        // 2026-12-07: a dead writer's log was said to be possibly still being written).
        let reason = rec.reason.described(path);
        eprintln!(
            "note: {}: {reason}; recovered {}, dropped {}",
            path.display(),
            count(reader.len() as u64, "complete frame"),
            count(rec.dropped_bytes, "byte")
        );
        for gap in &rec.skipped {
            eprintln!(
                "note: {}: passed over a damaged stretch: {gap}",
                path.display()
            );
        }
    }
    Ok(reader)
}

/// Opens a log for reading, without a note on recovery (a log being written has no footer
/// yet, which is no news to a follower).
pub fn open_quietly(path: &Path) -> anyhow::Result<LogReader> {
    // SAFETY: Lavender's writers only ever append to a log, and `LogReader::open`'s contract
    // (no truncation or in-place modification while mapped) holds for logs written by
    // Lavender. A user who truncates the file while this command runs breaks the contract;
    // the command is short-lived and documents that logs are append-only.
    unsafe { LogReader::open(path) }
        .with_context(|| format!("cannot read the log {}", path.display()))
}

/// The spike tuning of the flags, checked: `--k`, `--threshold`, `--window`.
fn params(args: &Args) -> anyhow::Result<SpikeParams> {
    let params = SpikeParams {
        k: args.k,
        abs_threshold: args.threshold,
        window: args.window,
        ..SpikeParams::default()
    };
    // The flag at fault, in the flags' words (QA 2026-12-07: "--window 1" named the
    // library's min_history, which no flag sets, and all three flags).
    params.check().map_err(|(param, message)| match param {
        "window" => anyhow::anyhow!(
            "--window {} is too short: a value is judged against at least {} earlier values \
             (default window 32)",
            params.window,
            params.min_history
        ),
        "k" => anyhow::anyhow!("{message}; set it with --k"),
        "abs_threshold" => anyhow::anyhow!("{message}; set it with --threshold"),
        _ => anyhow::anyhow!("{message}"),
    })?;
    Ok(params)
}

pub fn main(args: Args) -> anyhow::Result<()> {
    let params = params(&args)?;
    if let Some(plot) = &args.plot {
        crate::paths::check_plot_path(plot, &args.log)?;
    }
    if args.follow {
        return follow(&args, &params);
    }
    let reader = open_log(&args.log)?;
    if reader.is_empty() {
        if reader.is_finished() {
            bail!(
                "{} holds no frames: its run recorded none",
                args.log.display()
            );
        }
        bail!(
            "{} holds no frames yet (its writer has not finished one); `--follow` waits for them",
            args.log.display()
        );
    }
    if args.at.is_some() || args.time.is_some() {
        return frame_table(&reader, &args);
    }
    let (spikes, source, mut skipped) = match reader.spike_index(&params) {
        // A finished log recorded with these parameters: the footer has the onsets.
        Some(indexed) => (indexed.to_vec(), scrub::SpikeSource::Index, Vec::new()),
        None => {
            let (spikes, skipped) = scan_with_progress(&reader, &params.for_frames(reader.len()))?;
            (spikes, scrub::SpikeSource::Scan, skipped)
        }
    };
    if let Some(selector) = &args.joint {
        let request = crate::scrub_joint::Request {
            log: &args.log,
            selector,
            json: args.json,
            plot: args.plot.as_deref(),
            top: args.top,
        };
        note_skipped(&args.log, &skipped, "judging spikes");
        return crate::scrub_joint::main(&reader, &request, &spikes, source);
    }
    let timeline = scrub::timeline(&reader);
    if let Some(plot) = &args.plot {
        draw(plot, &reader, &timeline, &spikes)?;
        eprintln!("plot written to {}", plot.display());
    }
    if args.spikes {
        note_skipped(&args.log, &skipped, "judging spikes");
        return if args.json {
            emit_json(&serde_json::json!({
                "frames": reader.len(),
                "spikes": spikes_json(&reader, &spikes),
                "source": source,
                "skipped_frames": skipped,
                "recovery": reader.recovery(),
            }))
        } else {
            emit(&spikes_text(&reader, &spikes, source))
        };
    }
    // The worst joints read every frame, passing over corrupt ones (said on stderr and in
    // `skipped_frames`): the timeline (footer) and the spikes stand either way.
    let bar = progress(reader.len() as u64, "reading frames");
    let (worst, worst_skipped) =
        scrub::worst_joints_skipping_with_progress(&reader, args.top, &mut |done| {
            bar.set_position(done as u64)
        })?;
    bar.finish_and_clear();
    if skipped.is_empty() {
        skipped = worst_skipped;
    }
    let what = match source {
        scrub::SpikeSource::Index => "the worst joints (the spikes come from the log's index)",
        scrub::SpikeSource::Scan => "the worst joints and spikes",
    };
    note_skipped(&args.log, &skipped, what);
    if args.json {
        return emit_json(&serde_json::json!({
            "frames": reader.len(),
            "spikes": spikes_json(&reader, &spikes),
            "source": source,
            "energy": scrub::EnergySummary::of(&timeline),
            "first_non_finite_body": scrub::first_non_finite_body(&reader),
            "worst_joints": worst,
            "skipped_frames": skipped,
            "recovery": reader.recovery(),
        }));
    }
    let h = reader.header();
    let last = timeline.last().expect("non-empty");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} (substeps {}..={}, t = {:.4}..{:.4} s), {}, {}, engine {} ({})",
        args.log.display(),
        count(reader.len() as u64, "frame"),
        timeline[0].substep,
        last.substep,
        timeline[0].time,
        last.time,
        count(h.body_count as u64, "body"),
        count(h.joint_count as u64, "joint"),
        h.engine_version,
        h.target_features
    );
    let width = 72;
    for (name, unit, get) in [
        (
            "max anchor error",
            "m",
            (|p: &TimelinePoint| p.max_anchor_error) as fn(&TimelinePoint) -> f32,
        ),
        ("max angular error", "rad", |p| p.max_angular_error),
        // The limit column's unit (rad for a hinge, m for a slider), from the engine.
        ("max limit violation", COLUMN_UNITS[5], |p| {
            p.max_limit_violation
        }),
    ] {
        let values: Vec<f32> = timeline.iter().map(get).collect();
        let peak = values
            .iter()
            .copied()
            .fold(0.0f32, |a, b| if b.is_nan() || b > a { b } else { a });
        let _ = writeln!(out, "\n{name} (peak {peak:.3e} {unit}, log scale)");
        if values.iter().all(|&v| v == 0.0) {
            let _ = writeln!(out, "  (zero at every substep)");
        } else {
            let _ = writeln!(out, "  {}", sparkline(&values, width));
        }
    }
    out.push_str(&time_row(
        timeline[0].time,
        last.time,
        width.min(timeline.len()),
    ));
    if let Some(e) = scrub::EnergySummary::of(&timeline) {
        let _ = writeln!(
            out,
            "\ntotal energy {:.6e} J after the first frame, {:.6e} J after the last{}",
            e.first,
            e.last,
            e.rise_text("the first")
        );
    }
    // Where the state blew up, which the joints' columns need not show (a free body).
    if let Some(b) = scrub::first_non_finite_body(&reader) {
        let _ = writeln!(
            out,
            "\nnon-finite from substep {} (t = {:.4} s): body `{}` (index {}) is the first with \
             a non-finite pose or velocity",
            b.substep, b.time, b.name, b.index
        );
    }
    if reader.header().joint_count == 0 {
        // QA 2026-12-07: a heading over an empty table.
        let _ = writeln!(out, "\nno joints: the run has bodies only");
    } else {
        let _ = writeln!(out, "\nworst joints (by peak anchor error):");
        let _ = writeln!(
            out,
            "  {:<24} {:>12} {:>9} {:>12} {:>9} {:>12} {:>9}",
            "joint", "anchor m", "@substep", "angular rad", "@substep", "limit", "@substep"
        );
    }
    // A peak of zero has no substep to name.
    let at = |substep: Option<u64>| substep.map_or("-".to_string(), |s| s.to_string());
    for w in &worst {
        let _ = writeln!(
            out,
            "  {:<24} {:>12} {:>9} {:>12} {:>9} {:>12} {:>9}{}",
            w.name,
            peak(w.peak_anchor_error),
            at(w.anchor_error_substep),
            peak(w.peak_angular_error),
            at(w.angular_error_substep),
            peak(w.peak_limit_violation),
            at(w.limit_violation_substep),
            w.first_non_finite_substep
                .map(|s| format!("  non-finite from substep {s}"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        out,
        "\n{}{}",
        count(spikes.len() as u64, "spike"),
        if spikes.is_empty() {
            String::new()
        } else {
            format!(
                "; the first at substep {} (t = {:.4} s); `--spikes` lists them",
                spikes[0].substep, spikes[0].time
            )
        }
    );
    emit(&out)
}

/// A joint's peak as the worst-joints table prints it: `-` where the column never held a
/// finite value (the peak's -inf start; the JSON's null), as its substep column does (QA
/// 2026-12-07: `-inf` for a run non-finite from its first substep).
pub(crate) fn peak(value: f32) -> String {
    if value == f32::NEG_INFINITY {
        "-".into()
    } else {
        format!("{value:.3e}")
    }
}

/// The line under sparklines of `cells` cells: the first time at its left end, the last at its
/// right (for fewer than 24 cells, where both do not fit under it, the two side by side).
pub(crate) fn time_row(first: f64, last: f64, cells: usize) -> String {
    let first = format!("{first:.4} s");
    if cells < 24 {
        format!("  {first} to {last:.4} s\n")
    } else {
        format!("  {first:<w$}{last:>10.4} s\n", w = cells - 10)
    }
}

/// The heights of a sparkline's cells.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The cell at `t`, from 0 (the chart's bottom) to 1 (its top).
fn bar(t: f64) -> char {
    BARS[((t * 7.0).round() as usize).min(7)]
}

/// `values` cut into `width` buckets in order (at most one per value, none empty), each
/// reduced by `reduce`.
fn buckets<T>(values: &[f32], width: usize, reduce: impl Fn(&[f32]) -> T) -> Vec<T> {
    let (n, width) = (values.len(), width.min(values.len()).max(1));
    (0..width)
        .map(|b| {
            let lo = b * n / width;
            reduce(&values[lo..((b + 1) * n / width).max(lo + 1)])
        })
        .collect()
}

/// A one-line chart of `values` on a log scale, `width` cells, the maximum of each bucket
/// (non-finite buckets drawn as `!`).
pub fn sparkline(values: &[f32], width: usize) -> String {
    if values.is_empty() {
        return String::new();
    }
    let buckets = buckets(values, width, |bucket| {
        bucket.iter().copied().fold(f32::NEG_INFINITY, |a, v| {
            if !v.is_finite() || a.is_nan() {
                f32::NAN
            } else {
                a.max(v)
            }
        })
    });
    let logs: Vec<f32> = buckets
        .iter()
        .filter(|v| v.is_finite() && **v > 0.0)
        .map(|v| v.log10())
        .collect();
    let (lo, hi) = logs
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    buckets
        .iter()
        .map(|&v| {
            if v.is_nan() {
                '!'
            } else if v <= 0.0 || logs.is_empty() {
                ' '
            } else if hi - lo < 1e-6 {
                BARS[3]
            } else {
                bar(f64::from((v.log10() - lo) / (hi - lo)))
            }
        })
        .collect()
}

/// A one-line chart of a signed `values` on a linear scale between their finite extremes
/// (the range the text states), `width` cells, each the mean of its bucket (`!` for a bucket
/// holding a non-finite value).
pub fn linear_sparkline(values: &[f32], width: usize) -> String {
    if values.is_empty() {
        return String::new();
    }
    let means = buckets(values, width, |bucket| {
        if bucket.iter().any(|v| !v.is_finite()) {
            f64::NAN
        } else {
            bucket.iter().map(|&v| f64::from(v)).sum::<f64>() / bucket.len() as f64
        }
    });
    // The values' extremes, not the means': a bucket's mean can sit far inside them (QA
    // 2026-12-07: a slider at rest drew near the top of a range its means did not reach).
    let finite = (values.iter().filter(|v| v.is_finite())).map(|&v| f64::from(v));
    let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    means
        .iter()
        .map(|&v| {
            if v.is_nan() {
                '!'
            } else if hi - lo <= 0.0 {
                BARS[3]
            } else {
                bar((v - lo) / (hi - lo))
            }
        })
        .collect()
}

/// Says on stderr which corrupt frames `what` passed over (nothing when none).
pub(crate) fn note_skipped(log: &std::path::Path, skipped: &[scrub::SkippedFrame], what: &str) {
    if skipped.is_empty() {
        return;
    }
    let listed: Vec<String> = (skipped.iter().take(10))
        .map(|f| format!("frame {} (substep {})", f.index, f.substep))
        .collect();
    let more = skipped.len().saturating_sub(listed.len());
    eprintln!(
        "warning: {}: {} corrupt frame(s) failed their checksums and were left out of {what}: \
         {}{}; the file was damaged or modified after recording",
        log.display(),
        skipped.len(),
        listed.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    );
}

/// Judges every frame that passes its checksum, with a progress bar on a terminal; the
/// corrupt frames passed over.
fn scan_with_progress(
    reader: &LogReader,
    params: &SpikeParams,
) -> anyhow::Result<(Vec<Spike>, Vec<scrub::SkippedFrame>)> {
    let bar = progress(reader.len() as u64, "scanning frames");
    let mut finder = scrub::SpikeFinder::new(reader, params)?;
    finder.skip_corrupt(true);
    let mut spikes = Vec::new();
    for end in (0..reader.len())
        .step_by(1024)
        .skip(1)
        .chain([reader.len()])
    {
        finder.scan_until(reader, end, &mut spikes)?;
        bar.set_position(end as u64);
    }
    bar.finish_and_clear();
    Ok((spikes, finder.skipped().to_vec()))
}

/// A spike as JSON: the library's fields plus the joint's and the column's names (as
/// Python's `Log.spikes` gives them).
pub(crate) fn spike_json(reader: &LogReader, s: &Spike) -> serde_json::Value {
    let mut v = serde_json::to_value(s).expect("a spike serialises");
    v["joint_name"] = reader.header().joint_name(s.joint as usize).into();
    v["column_name"] = DIAGNOSTIC_COLUMNS[s.column as usize].into();
    v
}

fn spikes_json(reader: &LogReader, spikes: &[Spike]) -> Vec<serde_json::Value> {
    spikes.iter().map(|s| spike_json(reader, s)).collect()
}

/// How the spikes were found, as the text says it.
pub(crate) fn source_text(source: scrub::SpikeSource) -> &'static str {
    match source {
        scrub::SpikeSource::Index => "from the log's spike index",
        scrub::SpikeSource::Scan => "every frame judged",
    }
}

fn spikes_text(reader: &LogReader, spikes: &[Spike], source: scrub::SpikeSource) -> String {
    let h = reader.header();
    let mut out = format!(
        "{} in {}, earliest first ({})\n",
        count(spikes.len() as u64, "spike"),
        count(reader.len() as u64, "frame"),
        source_text(source)
    );
    if spikes.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "{:>9} {:>11}  {:<24} {:<21} {:>12} {:>12}",
        "substep", "time s", "joint", "column", "value", "baseline"
    );
    for s in spikes {
        let _ = writeln!(
            out,
            "{:>9} {:>11.5}  {:<24} {:<21} {:>12.4e} {:>12.4e}",
            s.substep,
            s.time,
            h.joint_name(s.joint as usize),
            DIAGNOSTIC_COLUMNS[s.column as usize],
            s.value,
            s.baseline
        );
    }
    out
}

fn frame_table(reader: &LogReader, args: &Args) -> anyhow::Result<()> {
    let index = match (args.at, args.time) {
        (Some(s), _) => reader.index_of_substep(s).with_context(|| {
            let idx = reader.index();
            if let Some(g) = reader.gap_holding(s) {
                // Within the recorded range, lost to damage (QA 2026-12-07: "not in the log
                // (it records substeps 0 to 13)" for substep 5).
                return format!(
                    "substep {s} is not in the log: {g}; look at a substep before or after \
                     that stretch"
                );
            }
            format!(
                "substep {s} is not in the log (it records substeps {} to {})",
                idx[0].summary.substep,
                idx[idx.len() - 1].summary.substep
            )
        })?,
        (None, Some(t)) => reader.index_at_time(t).with_context(|| {
            format!(
                "time {t} s precedes the first frame (t = {:.6} s) by more than a substep: give \
                 a time from there on, or --at {} for that frame",
                reader.index()[0].summary.time,
                reader.index()[0].summary.substep
            )
        })?,
        (None, None) => unreachable!("checked by the caller"),
    };
    // Past the end, the last frame is shown (documented); a mistyped time should not pass
    // unnoticed (QA 2026-12-07: `--time 100` of a 1 s log said nothing), as `export --to`.
    if let Some(t) = args.time {
        let last = reader.index()[reader.len() - 1].summary;
        if index == reader.len() - 1 && t > last.time + reader.header().substep_length() {
            eprintln!(
                "note: time {t} s is past the log's last frame (substep {}, t = {:.6} s); \
                 showing that one",
                last.substep, last.time
            );
        }
    }
    let f = reader.frame(index)?;
    let h = reader.header();
    let residual = |r: &[f32; 8]| {
        let m = r[3].max(r[4]).max(r[5]);
        if r[3..6].iter().any(|v| v.is_nan()) {
            f32::INFINITY
        } else {
            m
        }
    };
    let mut rows: Vec<(usize, [f32; 8])> = f.diagnostic_rows().enumerate().collect();
    rows.sort_by(|a, b| {
        residual(&b.1)
            .total_cmp(&residual(&a.1))
            .then(a.0.cmp(&b.0))
    });
    rows.truncate(args.top);
    if args.json {
        let joints: Vec<serde_json::Value> = rows
            .iter()
            .map(|(j, r)| {
                let mut o = serde_json::Map::new();
                o.insert("joint".into(), (*j).into());
                o.insert("name".into(), h.joint_name(*j).into());
                for (c, name) in DIAGNOSTIC_COLUMNS.iter().enumerate() {
                    o.insert((*name).into(), serde_json::json!(r[c]));
                }
                serde_json::Value::Object(o)
            })
            .collect();
        return emit_json(&serde_json::json!({
            "frames": reader.len(),
            "frame": {
                "substep": f.substep(),
                "time": f.time(),
                "total_energy": f.total_energy(),
                "state_hash": f.state_hash(),
                // Exact where JSON numbers are doubles (jq, JavaScript; QA 2026-12-07).
                "state_hash_hex": crate::output::hex64(f.state_hash()),
                "joints": joints,
            }
        }));
    }
    let mut out = format!(
        "substep {} (t = {:.6} s), total energy {:.6} J; {} of {} by residual \
         (largest of anchor error, angular error, limit violation)\n",
        f.substep(),
        f.time(),
        f.total_energy(),
        rows.len(),
        count(h.joint_count as u64, "joint")
    );
    let _ = writeln!(
        out,
        "{:<24} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}",
        "joint",
        "err.x m",
        "err.y m",
        "err.z m",
        "|err| m",
        "ang rad",
        "limit",
        "speed m/s",
        "coord"
    );
    for (j, r) in &rows {
        let _ = write!(out, "{:<24}", h.joint_name(*j));
        for v in r {
            let _ = write!(out, " {v:>11.3e}");
        }
        out.push('\n');
    }
    emit(&out)
}

/// How long a followed log may stay the same size before the follower says so.
const FOLLOW_IDLE_NOTICE: Duration = Duration::from_secs(10);
/// How long a followed log may stay the same size, with no writer holding it and no footer,
/// before the follower decides its writer is gone (killed) and ends.
const FOLLOW_WRITER_GONE: Duration = Duration::from_secs(1);
/// How long a log whose header cannot be read yet is waited for (a writer writes the
/// header at once; longer means a damaged file).
const FOLLOW_HEADER_WAIT: Duration = Duration::from_secs(5);

/// Whether an open error means "the recording has not started yet": no file, an empty one,
/// or a header not written whole yet.
fn not_started(e: &anyhow::Error) -> Option<bool> {
    use lavender_replay::ReplayError as R;
    match e.downcast_ref::<R>()? {
        R::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => Some(true),
        R::NotALog { found, .. } if found.is_empty() => Some(true),
        // Damaged, or cut short inside its header: a writer writes its header whole at once,
        // so only for a moment (FOLLOW_HEADER_WAIT).
        R::CorruptHeader { .. } => Some(false),
        _ => None,
    }
}

/// The identity of the file at `path` now (device and inode on Unix), to notice a log
/// replaced by a new recording while it is followed.
fn file_identity(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).ok().map(|_| (0, 0))
    }
}

/// Opens the log to follow, waiting for a recording that has not started yet.
fn open_when_started(path: &Path) -> anyhow::Result<LogReader> {
    let start = std::time::Instant::now();
    let (mut said, mut said_idle) = (false, false);
    loop {
        let e = match open_quietly(path) {
            Ok(r) => return Ok(r),
            Err(e) => e,
        };
        match not_started(&e) {
            // An empty file that no writer holds, for as long as a header may take: not a
            // recording starting (QA 2026-12-07: `: > zero.lvlog` was waited for forever).
            Some(true)
                if start.elapsed() >= FOLLOW_HEADER_WAIT
                    && std::fs::metadata(path).is_ok_and(|m| m.len() == 0)
                    && lavender_replay::files::no_writer(path) == Some(true) =>
            {
                bail!(
                    "{} is empty and no recording holds it (a writer locks its log from the \
                     start): nothing will be written there. Follow the log a running recording \
                     writes (`lavender run SCENE --record NAME.lvlog`)",
                    path.display()
                )
            }
            Some(true) => {}
            Some(false) if start.elapsed() < FOLLOW_HEADER_WAIT => {}
            _ => return Err(e),
        }
        if OutputKind::of(path) == OutputKind::Hdf5 {
            // A recording to HDF5 appears at its path only when finished: waiting for it
            // would end, a whole run later, in "not a Lavender log".
            bail!(
                "{} is not there to follow, and an HDF5 recording cannot be followed: it is \
                 written to a temporary file and appears at its path only when the run ends. \
                 Record to a .lvlog to follow the run (`lavender run SCENE --record \
                 run.lvlog`), then `lavender export run.lvlog run.h5`",
                path.display()
            );
        }
        if crate::interrupt::requested() {
            return Err(crate::interrupt::Interrupted(format!(
                "interrupted while waiting for {} to be written: nothing read",
                path.display()
            ))
            .into());
        }
        if !said {
            eprintln!(
                "waiting for {} to be written (Ctrl-C to stop)",
                path.display()
            );
            said = true;
        }
        if !said_idle && start.elapsed() >= FOLLOW_IDLE_NOTICE {
            eprintln!(
                "note: nothing has started writing {} for {} s; is a recording to it running? \
                 (still waiting; Ctrl-C to stop)",
                path.display(),
                FOLLOW_IDLE_NOTICE.as_secs()
            );
            said_idle = true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// How long a follower that finds a finished log waits for a new recording to replace it
/// (`run --record live.lvlog & scrub live.lvlog --follow`, run again: the follower may
/// start before the new run has replaced the old log).
const FOLLOW_REPLACEMENT_WAIT: Duration = Duration::from_secs(2);

/// Refuses at once a path that does not exist and that no recording can create: a follower
/// would wait for it forever (QA 2026-12-07: a missing directory, a `.txt`; `run --record`
/// refuses both).
fn check_followable(path: &Path) -> anyhow::Result<()> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Ok(());
    }
    let why = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Some(format!(
            "the directory {} {}",
            dir.display(),
            if dir.exists() {
                "is a file, not a directory"
            } else {
                "does not exist"
            }
        )),
        _ => match lavender_replay::files::extension(path) {
            Some(e) if lavender_replay::files::RECORD_EXTENSIONS.contains(&e.as_str()) => None,
            Some(e) => Some(format!(
                "the extension `.{e}` names no format Lavender records in"
            )),
            None => Some("the name has no extension to choose a format by".into()),
        },
    };
    match why {
        Some(why) => bail!(
            "cannot follow {}: there is no such file, and no recording can create it: {why}; \
             follow the log a recording writes (`lavender run SCENE --record NAME.lvlog`)",
            path.display()
        ),
        None => Ok(()),
    }
}

fn follow(args: &Args, params: &SpikeParams) -> anyhow::Result<()> {
    let path = args.log.as_path();
    check_followable(path)?;
    // Ctrl-C ends the follow at the next poll (a JSON error line under --json, exit 130).
    crate::interrupt::stop_cleanly();
    let mut reader = open_when_started(path)?;
    let mut identity = file_identity(path);
    if reader.is_finished() {
        let start = std::time::Instant::now();
        while start.elapsed() < FOLLOW_REPLACEMENT_WAIT
            && file_identity(path) == identity
            && !crate::interrupt::requested()
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        if file_identity(path) != identity {
            // A new recording replaced the finished log: follow that one.
            reader = open_when_started(path)?;
            identity = file_identity(path);
        }
        if reader.is_finished() {
            eprintln!(
                "note: {} is a finished recording ({}; no writer is adding to it): its \
                 spikes follow, then the command ends",
                path.display(),
                count(reader.len() as u64, "frame")
            );
        }
    }
    let mut finder = scrub::SpikeFinder::new(&reader, params)?;
    finder.skip_corrupt(true);
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut found = Vec::new();
    let mut printed = 0usize;
    let mut last_growth = std::time::Instant::now();
    let mut idle_said = false;
    let mut seen = 0usize;
    let mut writer_gone = false;
    loop {
        // Each frame is judged once, as it arrives.
        let already_skipped = finder.skipped().len();
        finder.scan(&reader, &mut found)?;
        note_skipped(path, &finder.skipped()[already_skipped..], "judging spikes");
        for s in &found[printed..] {
            if args.json {
                emit_json(&spike_json(&reader, s))?;
            } else {
                emit(&format!(
                    "spike at substep {} (t = {:.5} s): {} {} = {:.4e} (baseline {:.4e})\n",
                    s.substep,
                    s.time,
                    reader.header().joint_name(s.joint as usize),
                    DIAGNOSTIC_COLUMNS[s.column as usize],
                    s.value,
                    s.baseline
                ))?;
            }
        }
        printed = found.len();
        if reader.len() != seen {
            seen = reader.len();
            last_growth = std::time::Instant::now();
            idle_said = false;
            if terminal && !args.json {
                eprint!(
                    "\r{} read, {}   ",
                    count(reader.len() as u64, "frame"),
                    count(printed as u64, "spike")
                );
            }
        }
        // Under --json, a last line says how the follow ended, so that a script reading
        // standard output tells a finished log from a killed writer's (QA 2026-12-08).
        let end = |finished: bool| {
            if !args.json {
                return Ok(());
            }
            emit_json(&serde_json::json!({"end": {
                "finished": finished,
                "frames": reader.len(),
                "spikes": printed,
            }}))
        };
        if reader.is_finished() {
            if !args.json {
                eprintln!(
                    "{}the log is finished: {}, {}",
                    if terminal { "\n" } else { "" },
                    count(reader.len() as u64, "frame"),
                    count(printed as u64, "spike")
                );
            }
            return end(true);
        }
        if writer_gone {
            eprintln!(
                "{}no writer is adding to {} and it has no footer: its writer stopped without \
                 finishing it (killed?); {}, {}. `lavender scrub` reads it as \
                 it is (every complete frame)",
                if terminal { "\n" } else { "" },
                path.display(),
                count(reader.len() as u64, "frame"),
                count(printed as u64, "spike")
            );
            return end(false);
        }
        // Checked at every poll: a new recording to the same path unlinks the followed
        // file, which then never grows again.
        if file_identity(path) != identity {
            bail!(
                "{} was replaced by a new file while it was followed (a new recording to the \
                 same path); run `lavender scrub {} --follow` again to follow it",
                path.display(),
                path.display()
            );
        }
        if crate::interrupt::requested() {
            return Err(crate::interrupt::Interrupted(format!(
                "interrupted while following {}: {} read, {}",
                path.display(),
                count(reader.len() as u64, "frame"),
                count(printed as u64, "spike")
            ))
            .into());
        }
        // A writer holds a lock on its log until it finishes it (`files::no_writer`): a log
        // with no footer that no writer holds will not grow again (its writer was killed).
        // One more scan of what it left, then the loop ends above.
        if last_growth.elapsed() >= FOLLOW_WRITER_GONE
            && !writer_gone
            && lavender_replay::files::no_writer(path) == Some(true)
            && file_identity(path) == identity
        {
            writer_gone = true;
            reader.refresh()?;
            continue;
        }
        if last_growth.elapsed() >= FOLLOW_IDLE_NOTICE && !idle_said {
            eprintln!(
                "{}no new frames for {} s and no footer: the writer is slow, paused or was \
                 stopped (a killed writer leaves no footer); still waiting, Ctrl-C to stop",
                if terminal { "\n" } else { "" },
                FOLLOW_IDLE_NOTICE.as_secs()
            );
            idle_said = true;
        }
        std::thread::sleep(Duration::from_millis(200));
        reader.refresh()?;
    }
}

fn draw(
    path: &Path,
    reader: &LogReader,
    timeline: &[TimelinePoint],
    spikes: &[Spike],
) -> anyhow::Result<()> {
    let values = timeline.iter().flat_map(|p| {
        [
            p.max_anchor_error,
            p.max_angular_error,
            p.max_limit_violation,
        ]
        .map(f64::from)
    });
    let (t0, t1) = chart::time_range(timeline[0].time, timeline[timeline.len() - 1].time);
    // Where the state went non-finite, which no residual curve need show (QA 2026-12-07:
    // a free body that blew up gave two empty panels).
    let blew_up = scrub::first_non_finite_body(reader).map_or(String::new(), |b| {
        format!(
            "; non-finite from substep {} (t = {:.4} s, body `{}`)",
            b.substep, b.time, b.name
        )
    });
    let title = format!(
        "{}: per-substep max residuals, {} marked{blew_up}",
        chart::short_name(reader.path(), 60),
        count(spikes.len() as u64, "spike")
    );
    let timeline_chart = Timeline {
        title,
        timeline,
        spikes,
        x: (t0, t1),
        y: chart::log_range(values, -9.0),
    };
    // The residuals above, the energy below (the chapter: plot energy alongside residual).
    chart::save_sized(path, &timeline_chart, (1200, 800))
}

struct Timeline<'a> {
    title: String,
    timeline: &'a [TimelinePoint],
    spikes: &'a [Spike],
    x: (f64, f64),
    y: (f64, f64),
}

/// A timeline curve: legend label, the diagnostic column it is the maximum of, the value it
/// plots.
type Series = (&'static str, usize, fn(&TimelinePoint) -> f32);

/// log10 of a residual, floored at 1e-9 (zeros cannot be shown on a log axis); a non-finite
/// residual goes to the top edge `top` (QA 2026-12-07: `max` took NaN for the floor, so a run
/// that blew up ended its curves at the bottom edge, as if its errors had vanished).
pub(crate) fn lg(v: f32, top: f64) -> f64 {
    if v.is_finite() {
        f64::from(v).max(1e-9).log10()
    } else {
        top
    }
}

impl Timeline<'_> {
    /// The total energy against its first frame's, J, over the same time axis: a run that
    /// gains energy without a drive (too few velocity passes, a timestep too long) shows it
    /// here, and its residuals above.
    fn draw_energy<DB: plotters::prelude::DrawingBackend>(
        &self,
        area: &plotters::drawing::DrawingArea<DB, plotters::coord::Shift>,
    ) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        use chart::err;
        use plotters::prelude::*;
        let start = self.timeline[0].total_energy;
        let change = |p: &TimelinePoint| p.total_energy - start;
        let finite = self.timeline.iter().map(change).filter(|d| d.is_finite());
        let (lo, hi) = finite.fold((0.0f64, 0.0f64), |(lo, hi), d| (lo.min(d), hi.max(d)));
        let pad = ((hi - lo) * 0.05).max(1e-12);
        let mut chart = chart::time_linear_axes(
            area,
            (self.x, (lo - pad, hi + pad)),
            "total energy minus the first frame's (J)",
        )?;
        let points = self
            .timeline
            .iter()
            .filter(|p| change(p).is_finite())
            .map(|p| (p.time, change(p)));
        chart
            .draw_series(LineSeries::new(points, BLACK.stroke_width(1)))
            .map_err(|e| err(&e))?;
        Ok(())
    }
}

/// The y axis of residual curves ([`draw_residuals`]).
pub(crate) const RESIDUAL_AXIS: &str =
    "residual (log scale; zeros at the bottom edge, non-finite at the top)";

/// One residual column's curve for [`draw_residuals`].
pub(crate) struct ResidualCurve {
    /// Its diagnostic column (its spikes are those of this column).
    pub column: usize,
    /// Legend label.
    pub label: String,
    pub color: plotters::style::RGBColor,
    /// `(time, value)` at every frame.
    pub points: Vec<(f64, f32)>,
}

/// A legend entry: its text, colour and mark.
pub(crate) type LegendEntry = (String, plotters::style::RGBColor, chart::Mark);

/// The residual curves on a log axis whose top is `top` (log10; non-finite values go there),
/// each column's spikes circled at the spike's own value in the curve's colour, and their
/// legend entries. A curve zero throughout has no line on a log axis and says so.
pub(crate) fn draw_residuals<DB: plotters::prelude::DrawingBackend>(
    axes: &mut chart::TimeAxes<'_, DB>,
    (curves, spikes, top): (&[ResidualCurve], &[Spike], f64),
    entries: &mut Vec<LegendEntry>,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    use plotters::prelude::*;
    for curve in curves {
        entries.push((curve.label.clone(), curve.color, chart::Mark::Line));
        if curve.points.iter().all(|&(_, v)| v == 0.0) {
            entries.push((
                "zero throughout (not drawn)".into(),
                WHITE,
                chart::Mark::Text,
            ));
            continue;
        }
        let points = curve.points.iter().map(|&(t, v)| (t, lg(v, top)));
        chart::draw_curve(axes, points, curve.color)?;
        // A spike marks the joint's own value (below the curve of the maximum over all
        // joints when another joint's residual is larger then).
        let marks = spikes.iter().filter(|s| s.column as usize == curve.column);
        axes.draw_series(marks.map(|s| {
            Circle::new(
                (s.time, lg(s.value, top - 0.25)),
                5,
                curve.color.stroke_width(2),
            )
        }))
        .map_err(|e| chart::err(&e))?;
    }
    if !spikes.is_empty() {
        entries.push((
            "spike onset: the joint's value,".into(),
            curves[0].color,
            chart::Mark::Circle,
        ));
        entries.push(("in its column's colour".into(), WHITE, chart::Mark::Text));
    }
    Ok(())
}

impl chart::Chart for Timeline<'_> {
    fn render<DB: plotters::prelude::DrawingBackend>(
        &self,
        root: plotters::drawing::DrawingArea<DB, plotters::coord::Shift>,
    ) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        use chart::err;
        use plotters::prelude::*;
        let series: [Series; 3] = [
            ("max anchor error (m)", COL_ANCHOR_ERROR, |p| {
                p.max_anchor_error
            }),
            ("max angular error (rad)", COL_ANGULAR_ERROR, |p| {
                p.max_angular_error
            }),
            ("max limit violation (rad or m)", COL_LIMIT_VIOLATION, |p| {
                p.max_limit_violation
            }),
        ];
        let curves: Vec<ResidualCurve> = (series.iter().enumerate())
            .map(|(k, &(label, column, get))| ResidualCurve {
                column,
                label: label.into(),
                color: lavender_tutorial::plot::color(k),
                points: self.timeline.iter().map(|p| (p.time, get(p))).collect(),
            })
            .collect();
        let (plot_area, legend_area) = chart::panels(&root, 270)?;
        let (plot_area, energy_area) = plot_area.split_vertically(500);
        self.draw_energy(&energy_area)?;
        let mut chart =
            chart::time_log_axes(&plot_area, &self.title, (self.x, self.y), RESIDUAL_AXIS)?;
        // Legend entries, drawn in the panel: a line (or a marker) and its text.
        let mut entries: Vec<LegendEntry> = Vec::new();
        draw_residuals(&mut chart, (&curves, self.spikes, self.y.1), &mut entries)?;
        entries.push((
            "lower: total energy minus the first".into(),
            BLACK,
            chart::Mark::Line,
        ));
        entries.push((
            format!("frame's ({:.4e} J), J", self.timeline[0].total_energy),
            WHITE,
            chart::Mark::Text,
        ));
        chart::legend(&legend_area, &entries)?;
        root.present().map_err(|e| err(&e))?;
        Ok(())
    }
}

/// `--time`: a finite number of seconds, named as typed when not (`1e400` parses to inf; QA
/// 2026-12-06: the message said "--time inf").
fn finite_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if t.is_finite() => Ok(t),
        Ok(_) => Err(format!("`{text}` is not a finite number of seconds")),
        Err(_) => Err(format!("`{text}` is not a number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::{lg, linear_sparkline, peak};

    #[test]
    fn the_linear_sparkline_spans_the_finite_extremes_and_marks_non_finite_buckets() {
        let ramp: Vec<f32> = (0..8).map(|i| i as f32 - 3.0).collect();
        assert_eq!(linear_sparkline(&ramp, 8), "▁▂▃▄▅▆▇█");
        assert_eq!(linear_sparkline(&[2.0; 5], 5), "▄▄▄▄▄");
        assert_eq!(linear_sparkline(&[0.0, f32::NAN, 1.0], 3), "▁!█");
        // Buckets are means: 0,0 | 1,1 | 2,2.
        assert_eq!(linear_sparkline(&[0.0, 0.0, 1.0, 1.0, 2.0, 2.0], 3), "▁▅█");
        // Scaled to the values' extremes, not the means': 0,0 | 0,8 | 0,0 on 0 to 8.
        assert_eq!(linear_sparkline(&[0.0, 0.0, 0.0, 8.0, 0.0, 0.0], 3), "▁▅▁");
        assert_eq!(linear_sparkline(&[], 3), "");
    }

    #[test]
    fn a_peak_never_finite_prints_as_a_dash_and_an_overflow_as_inf() {
        assert_eq!(peak(f32::NEG_INFINITY), "-");
        assert_eq!(peak(f32::INFINITY), "inf");
        assert_eq!(peak(0.0), "0.000e0");
        assert_eq!(peak(4.915e-7), "4.915e-7");
    }

    #[test]
    fn the_timeline_puts_non_finite_residuals_at_the_top_and_zeros_at_the_bottom() {
        assert_eq!(lg(f32::NAN, 2.5), 2.5);
        assert_eq!(lg(f32::INFINITY, 2.5), 2.5);
        assert_eq!(lg(0.0, 2.5), -9.0);
        assert!((lg(1e-3, 2.5) + 3.0).abs() < 1e-6);
    }
}
