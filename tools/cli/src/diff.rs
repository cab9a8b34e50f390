//! `lavender diff`: where two runs first diverge, and by how much at most.
//!
//! Exit codes: 0 identical within tolerance, 1 diverged, 2 unusable input (unreadable logs,
//! different shapes, or different scenes without `--force`).

use crate::output::{emit, emit_json, progress};
use crate::scrub::open_log;
use anyhow::bail;
use lavender_replay::diff::{diff_with_progress, Divergence, Extent, Tolerance};
use std::fmt::Write as _;
use std::path::PathBuf;

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
    after_help = "Examples:\n  lavender diff golden.lvlog new.lvlog                 bitwise; exit 1 if they differ\n  lavender diff a.lvlog b.lvlog --atol 1e-6 --rtol 1e-5\n  lavender diff a.lvlog b.lvlog --json                 {\"identical\", \"first_divergent_substep\", \"where\": {\"kind\", \"index\", \"name\", \"field\"}, \"max_deviation\"}\n  lavender diff run.lvlog other-scene.lvlog --force    compare even though the scene hashes differ\n  lavender diff run.lvlog detail.lvlog --overlap       a short resumed run: only the substeps both hold"
)]
pub struct Args {
    /// The reference run log.
    a: PathBuf,
    /// The run log to compare with it.
    b: PathBuf,
    /// Absolute tolerance (raw units: m, rad, m/s, ...).
    #[arg(long, default_value_t = 0.0, value_name = "X")]
    atol: f64,
    /// Relative tolerance.
    #[arg(long, default_value_t = 0.0, value_name = "Y")]
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
}

/// Runs the comparison; `Ok(true)` means the runs diverged (exit code 1).
pub fn main(args: Args) -> anyhow::Result<bool> {
    if !(args.atol.is_finite() && args.atol >= 0.0 && args.rtol.is_finite() && args.rtol >= 0.0) {
        bail!("--atol and --rtol must be finite and >= 0");
    }
    let a = open_log(&args.a)?;
    let b = open_log(&args.b)?;
    let (ha, hb) = (a.header(), b.header());
    if ha.scene_hash != hb.scene_hash && !args.force {
        bail!(
            "the logs come from different scenes (scene hash {:#018x} vs {:#018x}); pass --force \
             to compare them anyway",
            ha.scene_hash,
            hb.scene_hash
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
    let report = diff_with_progress(&a, &b, &tol, extent, |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
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
    let (sa, sb) = (ha.substep_length(), hb.substep_length());
    if (sa - sb).abs() > 1e-9 * sa.max(sb) {
        let _ = writeln!(
            out,
            "note: the substeps differ in length ({sa:.6e} s and {sb:.6e} s): substep n of one \
             run is compared with substep n of the other, at different times"
        );
    }
    for (h, which) in [(ha, "a"), (hb, "b")] {
        let _ = writeln!(
            out,
            "{which}: {} frames, engine {} ({}), {} velocity{} / {} position iterations{}",
            if which == "a" {
                report.frames_a
            } else {
                report.frames_b
            },
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
                "identical{} over {} frames ({common}{})",
                if tol == Tolerance::EXACT {
                    " (bit for bit)".to_string()
                } else {
                    format!(" within atol {:e} rtol {:e}", tol.atol, tol.rtol)
                },
                report.frames_compared,
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
            let time = [&a, &b]
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
                        ": one log ends before it (identical over {} frames, {common}; \
                         --overlap compares only those)",
                        report.frames_compared
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
            "largest deviation {:.6e} at substep {s}: {} `{}`, {}",
            m.value,
            match w.kind {
                lavender_replay::diff::LocationKind::Body => "body",
                lavender_replay::diff::LocationKind::Joint => "joint",
            },
            w.name,
            w.field
        );
    }
    emit(&out)?;
    Ok(!report.identical)
}
