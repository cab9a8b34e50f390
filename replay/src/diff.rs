//! Comparing two runs: are they identical, and if not, where did they first diverge?
//!
//! Frames are paired by substep. When one log starts at a later substep that the other
//! records (a resumed run), pairing starts there; logs that share no substep are an error.
//! With [`Extent::Whole`] a log that ends before the other is a divergence at the first
//! substep it lacks; with [`Extent::Overlap`] only the substeps both record are compared.
//! Frames whose state and diagnostics hashes match are identical and are not compared value
//! by value (the hashes come from the frame index; the frames are still checked against their
//! checksums, so a damaged file is an error, never "identical"). The index holds every hash in
//! memory, so the first differing hash is found by a linear scan rather than a bisection: it
//! is exact even when runs re-converge. Frames whose hashes differ are compared value by value
//! with the tolerance.

use serde::Serialize;

use crate::error::{ReplayError, Result};
use crate::format::{DIAGNOSTIC_COLUMNS, POSE_FIELDS, VELOCITY_FIELDS};
use crate::reader::LogReader;

/// Values `a`, `b` agree when `|a - b| <= atol + rtol * max(|a|, |b|)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Tolerance {
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance.
    pub rtol: f64,
}

impl Tolerance {
    /// Bitwise comparison.
    pub const EXACT: Tolerance = Tolerance {
        atol: 0.0,
        rtol: 0.0,
    };

    fn is_exact(&self) -> bool {
        self.atol == 0.0 && self.rtol == 0.0
    }
}

/// Whether a location is a body or a joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LocationKind {
    /// A body's pose or velocity.
    Body,
    /// A joint's diagnostics.
    Joint,
}

/// One value in a frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    /// Body or joint.
    pub kind: LocationKind,
    /// Body or joint index.
    pub index: usize,
    /// Body or joint name (from the first log's header).
    pub name: String,
    /// Field, e.g. "position.y", "quaternion.w", "velocity.x", "anchor_error_norm".
    pub field: String,
}

/// The largest difference found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Deviation {
    /// `|a - b|` (infinite when exactly one side is non-finite or they differ in a non-finite
    /// way); 0 when nothing differs.
    pub value: f64,
    /// Substep where it occurred.
    pub substep: Option<u64>,
    /// Where it occurred.
    pub location: Option<Location>,
}

/// Which substeps [`diff_with_progress`] compares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Extent {
    /// From the later of the two first substeps to the end of both logs: a log that ends
    /// first diverges at the first substep it lacks (a truncated run is not identical).
    #[default]
    Whole,
    /// Only the substeps both logs record (a short resumed run against the original).
    Overlap,
}

/// Why two runs differ at their first divergent substep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Divergence {
    /// A recorded value differs beyond the tolerance.
    Values,
    /// Every recorded value is equal but the state hashes differ: state the frames do not
    /// hold differs (warm-start impulses).
    HiddenState,
    /// One log ends before the other ([`Extent::Whole`] only).
    LogEnds,
    /// The logs stop recording the same substeps (different substep numbering).
    SubstepNumbering,
}

/// What `lavender diff --json` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffReport {
    /// True when the runs have the same frames and nothing differs beyond the tolerance
    /// (with zero tolerance: every frame's state hash and values are equal).
    pub identical: bool,
    /// First substep where the runs differ (beyond the tolerance), or where one run has a
    /// frame the other lacks.
    pub first_divergent_substep: Option<u64>,
    /// Why they differ there (`None` when identical).
    pub reason: Option<Divergence>,
    /// The most deviating value in that first divergent frame (`None` when only the state
    /// hash, the substep numbering or the length differs).
    #[serde(rename = "where")]
    pub where_: Option<Location>,
    /// The largest deviation over all compared frames (raw units: metres, radians, ...).
    pub max_deviation: Deviation,
    /// Number of frame pairs examined.
    pub frames_compared: usize,
    /// Substep of the first pair compared. When one log starts later (a run resumed from a
    /// substep of the other), pairing starts at its first substep and the other log's
    /// earlier frames are not compared.
    pub first_common_substep: Option<u64>,
    /// Substep of the last pair compared.
    pub last_common_substep: Option<u64>,
    /// Which substeps were compared.
    pub extent: Extent,
    /// Frames in the first log.
    pub frames_a: usize,
    /// Frames in the second log.
    pub frames_b: usize,
    /// The logs come from scenes with different hashes (the CLI refuses unless `--force`).
    pub scene_hash_mismatch: bool,
    /// The two logs' substep lengths, s (first, second). When they differ, substep `n` of
    /// one run is compared with substep `n` of the other, at different times.
    pub substep_lengths: [f64; 2],
    /// The substep lengths differ (by more than 1e-9 relative).
    pub substep_lengths_differ: bool,
}

/// Deviation between two values: 0 when bitwise equal (including equal NaNs).
fn deviation(a: f32, b: f32) -> f64 {
    if a.to_bits() == b.to_bits() {
        0.0
    } else if a.is_finite() && b.is_finite() {
        (a as f64 - b as f64).abs()
    } else {
        f64::INFINITY
    }
}

struct FrameDiff {
    /// Largest deviation beyond tolerance in the frame.
    worst_beyond: Option<(f64, Location)>,
    /// Largest deviation in the frame, regardless of tolerance.
    max: Option<(f64, Location)>,
    /// The frame's largest deviations by kind of value.
    by_kind: FrameDeviation,
}

/// The largest deviations of one frame pair, by kind of value (0 where bitwise equal,
/// infinite where one side is not finite): how two runs drift apart, substep by substep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FrameDeviation {
    /// The substep both frames record.
    pub substep: u64,
    /// Simulation time of the frame in the first log, s.
    pub time: f64,
    /// Body positions, m.
    pub position: f64,
    /// Body orientation quaternion components (about half the angle, rad, when small).
    pub rotation: f64,
    /// Body velocities, linear (m/s) and angular (rad/s).
    pub velocity: f64,
    /// Joint diagnostic columns (m, rad, m/s: the columns' own units).
    pub diagnostics: f64,
}

fn compare_frame(
    a: &LogReader,
    b: &LogReader,
    (ia, ib): (usize, usize),
    tol: &Tolerance,
) -> Result<FrameDiff> {
    let (fa, fb) = (a.frame(ia)?, b.frame(ib)?);
    let mut out = FrameDiff {
        worst_beyond: None,
        max: None,
        by_kind: FrameDeviation::default(),
    };
    let mut visit = |kind, index: usize, field: &str, x: f32, y: f32| {
        let d = deviation(x, y);
        if d == 0.0 {
            return;
        }
        let by_kind = &mut out.by_kind;
        let group = match kind {
            LocationKind::Joint => &mut by_kind.diagnostics,
            _ if field.starts_with("position") => &mut by_kind.position,
            _ if field.starts_with("quaternion") => &mut by_kind.rotation,
            _ => &mut by_kind.velocity,
        };
        *group = group.max(d);
        let limit = tol.atol + tol.rtol * (x.abs().max(y.abs()) as f64);
        let loc = || {
            let name = match kind {
                LocationKind::Body => a.header().body_name(index),
                LocationKind::Joint => a.header().joint_name(index),
            };
            Location {
                kind,
                index,
                name,
                field: field.to_string(),
            }
        };
        if out.max.as_ref().is_none_or(|(m, _)| d > *m) {
            out.max = Some((d, loc()));
        }
        let within = d <= limit;
        if !within && out.worst_beyond.as_ref().is_none_or(|(m, _)| d > *m) {
            out.worst_beyond = Some((d, loc()));
        }
    };
    for (body, (pa, pb)) in fa.pose_rows().zip(fb.pose_rows()).enumerate() {
        for (k, field) in POSE_FIELDS.iter().enumerate() {
            visit(LocationKind::Body, body, field, pa[k], pb[k]);
        }
    }
    for (body, (va, vb)) in fa.velocity_rows().zip(fb.velocity_rows()).enumerate() {
        for (k, field) in VELOCITY_FIELDS.iter().enumerate() {
            visit(LocationKind::Body, body, field, va[k], vb[k]);
        }
    }
    for (joint, (da, db)) in fa.diagnostic_rows().zip(fb.diagnostic_rows()).enumerate() {
        for (k, field) in DIAGNOSTIC_COLUMNS.iter().enumerate() {
            visit(LocationKind::Joint, joint, field, da[k], db[k]);
        }
    }
    Ok(out)
}

/// `first..=last` substeps of a log, for messages.
fn extent_text(r: &LogReader) -> String {
    match (r.index().first(), r.index().last()) {
        (Some(a), Some(b)) => format!("substeps {} to {}", a.summary.substep, b.summary.substep),
        _ => "no frames".into(),
    }
}

/// Offsets `(in a, in b)` of the first pair: the later of the two first substeps, which the
/// other log must record. An error when the logs share no substep.
fn align(a: &LogReader, b: &LogReader) -> Result<(usize, usize)> {
    let first = |r: &LogReader| r.index().first().map(|m| m.summary.substep);
    let offsets = match (first(a), first(b)) {
        (Some(fa), Some(fb)) if fa < fb => a.index_of_substep(fb).map(|i| (i, 0)),
        (Some(fa), Some(fb)) if fb < fa => b.index_of_substep(fa).map(|i| (0, i)),
        (Some(_), Some(_)) => Some((0, 0)),
        _ => None,
    };
    offsets.ok_or_else(|| {
        ReplayError::InvalidArgument(format!(
            "the logs share no substep to compare: the first records {}, the second {}",
            extent_text(a),
            extent_text(b)
        ))
    })
}

/// Compares two runs of the same scene over their whole extent, without a progress callback
/// (see [`diff_with_progress`]).
pub fn diff(a: &LogReader, b: &LogReader, tol: &Tolerance) -> Result<DiffReport> {
    diff_with_progress(a, b, tol, Extent::Whole, |_, _| {})
}

/// Compares two runs of the same scene over `extent`, calling `progress(frames paired so
/// far, frames to pair)` every 256 frames and at the end (for a progress bar). Different
/// body or joint counts, logs that share no substep and corrupt frames are errors; a
/// different scene hash is reported in [`DiffReport::scene_hash_mismatch`].
pub fn diff_with_progress(
    a: &LogReader,
    b: &LogReader,
    tol: &Tolerance,
    extent: Extent,
    progress: impl FnMut(usize, usize),
) -> Result<DiffReport> {
    compare(a, b, tol, extent, progress, |_| {})
}

/// [`diff_with_progress`], also returning every compared frame pair's largest deviations by
/// kind (what `lavender diff --plot` draws): 0 for frames whose hashes match.
pub fn diff_series(
    a: &LogReader,
    b: &LogReader,
    tol: &Tolerance,
    extent: Extent,
    progress: impl FnMut(usize, usize),
) -> Result<(DiffReport, Vec<FrameDeviation>)> {
    let mut series = Vec::new();
    let report = compare(a, b, tol, extent, progress, |d| series.push(d))?;
    Ok((report, series))
}

/// An error unless the two logs hold as many bodies and joints (what a comparison pairs),
/// whatever their scenes: checked before a scene-hash check, whose `--force` cannot help
/// logs of different shapes (QA 2026-12-08: `diff` said "pass --force", which then failed).
pub fn check_shapes(a: &LogReader, b: &LogReader) -> Result<()> {
    let (ha, hb) = (a.header(), b.header());
    if ha.body_count != hb.body_count {
        return Err(ReplayError::ShapeMismatch {
            what: "body counts",
            a: ha.body_count,
            b: hb.body_count,
        });
    }
    if ha.joint_count != hb.joint_count {
        return Err(ReplayError::ShapeMismatch {
            what: "joint counts",
            a: ha.joint_count,
            b: hb.joint_count,
        });
    }
    Ok(())
}

fn compare(
    a: &LogReader,
    b: &LogReader,
    tol: &Tolerance,
    extent: Extent,
    mut progress: impl FnMut(usize, usize),
    mut on_frame: impl FnMut(FrameDeviation),
) -> Result<DiffReport> {
    check_shapes(a, b)?;
    let (ha, hb) = (a.header(), b.header());
    let (oa, ob) = align(a, b)?;
    let n = (a.len() - oa).min(b.len() - ob);
    // A gap recovery passed over inside the paired frames: the substeps it held cannot be
    // compared, so the logs cannot be called identical (nor diverged).
    a.check_no_gap(oa..oa + n)?;
    b.check_no_gap(ob..ob + n)?;
    let mut first: Option<(u64, Divergence, Option<Location>)> = None;
    let mut max = Deviation {
        value: 0.0,
        substep: None,
        location: None,
    };
    let mut compared = 0;
    let mut last_common = None;
    for (i, (ma, mb)) in a.index()[oa..].iter().zip(&b.index()[ob..]).enumerate() {
        if i % 256 == 0 {
            progress(i, n);
        }
        let (sa, sb) = (ma.summary.substep, mb.summary.substep);
        if sa != sb {
            // The runs no longer record the same substeps; pairing stops here.
            first.get_or_insert((sa.min(sb), Divergence::SubstepNumbering, None));
            break;
        }
        compared += 1;
        last_common = Some(sa);
        // Equal states and equal diagnostics: nothing recorded differs (the diagnostics are a
        // function of the state, but of the build too). The frames are still checked against
        // their checksums: the hashes come from the index, the file may be damaged since.
        if ma.state_hash == mb.state_hash && ma.diagnostics_hash == mb.diagnostics_hash {
            a.frame(oa + i)?;
            b.frame(ob + i)?;
            on_frame(FrameDeviation {
                substep: sa,
                time: ma.summary.time,
                ..FrameDeviation::default()
            });
            continue;
        }
        let fd = compare_frame(a, b, (oa + i, ob + i), tol)?;
        on_frame(FrameDeviation {
            substep: sa,
            time: ma.summary.time,
            ..fd.by_kind
        });
        if let Some((d, loc)) = fd.max {
            if d > max.value {
                max = Deviation {
                    value: d,
                    substep: Some(sa),
                    location: Some(loc),
                };
            }
        }
        if first.is_none() {
            match fd.worst_beyond {
                Some((_, loc)) => first = Some((sa, Divergence::Values, Some(loc))),
                // Same logged values, different hidden state (e.g. warm-start impulses).
                None if tol.is_exact() => first = Some((sa, Divergence::HiddenState, None)),
                None => {}
            }
        }
    }
    if first.is_none() && extent == Extent::Whole && a.len() - oa != b.len() - ob {
        let (longer, o) = if a.len() - oa > b.len() - ob {
            (a, oa)
        } else {
            (b, ob)
        };
        first = Some((
            longer.index()[o + n].summary.substep,
            Divergence::LogEnds,
            None,
        ));
    }
    progress(compared, n);
    let (first_divergent_substep, reason, where_) = match first {
        Some((s, why, loc)) => (Some(s), Some(why), loc),
        None => (None, None, None),
    };
    Ok(DiffReport {
        identical: first_divergent_substep.is_none(),
        first_divergent_substep,
        reason,
        where_,
        max_deviation: max,
        frames_compared: compared,
        first_common_substep: a.index().get(oa).map(|m| m.summary.substep),
        last_common_substep: last_common,
        extent,
        frames_a: a.len(),
        frames_b: b.len(),
        scene_hash_mismatch: ha.scene_hash != hb.scene_hash,
        substep_lengths: [ha.substep_length(), hb.substep_length()],
        substep_lengths_differ: substep_lengths_differ(ha.substep_length(), hb.substep_length()),
    })
}

/// Whether two substep lengths differ beyond rounding (1e-9 relative).
pub fn substep_lengths_differ(a: f64, b: f64) -> bool {
    (a - b).abs() > 1e-9 * a.max(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, OwnedFrame};

    fn open(frames: &[OwnedFrame], scene_hash: u64) -> LogReader {
        let mut h = testutil::header(3, 2);
        h.scene_hash = scene_hash;
        LogReader::from_bytes(&testutil::log_bytes(&h, frames, true)).unwrap()
    }

    #[test]
    fn identical_logs_are_identical_without_reading_frames() {
        let frames = testutil::frames(3, 2, 60, 0);
        let (a, b) = (open(&frames, 1), open(&frames, 1));
        let r = diff(&a, &b, &Tolerance::EXACT).unwrap();
        assert!(r.identical);
        assert_eq!(r.first_divergent_substep, None);
        assert_eq!(r.where_, None);
        assert_eq!(r.max_deviation.value, 0.0);
        assert_eq!(r.frames_compared, 60);
        assert!(!r.scene_hash_mismatch);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["identical"], true);
        assert!(json["first_divergent_substep"].is_null() && json["where"].is_null());
    }

    #[test]
    fn the_series_holds_each_frames_deviation_by_kind() {
        let frames = testutil::frames(3, 2, 60, 0);
        let mut perturbed = frames.clone();
        // From substep 23 on, body 1's y drifts by 1e-3 per substep; at 40 a joint column
        // and a velocity differ too.
        for (k, f) in perturbed[23..].iter_mut().enumerate() {
            f.poses[1][1] += 1e-3 * (k + 1) as f32;
            f.rehash();
        }
        perturbed[40].diagnostics[1][3] += 0.5;
        perturbed[40].velocities[2][4] -= 0.25;
        perturbed[40].rehash();
        let (a, b) = (open(&frames, 1), open(&perturbed, 1));
        let (report, series) =
            diff_series(&a, &b, &Tolerance::EXACT, Extent::Whole, |_, _| {}).unwrap();
        assert_eq!(report.first_divergent_substep, Some(23));
        assert_eq!(series.len(), 60);
        assert!(series[..23]
            .iter()
            .all(|d| d.position == 0.0 && d.diagnostics == 0.0));
        for (i, d) in series.iter().enumerate().skip(23) {
            assert_eq!(d.substep, i as u64);
            assert_eq!(d.time, frames[i].time);
            let drift = 1e-3 * (i - 22) as f64;
            assert!((d.position - drift).abs() < 1e-5, "{i}: {d:?}");
            assert_eq!(d.rotation, 0.0);
        }
        // f32 rounding of the values the offsets were added to: within 1e-6.
        assert!(
            (series[40].diagnostics - 0.5).abs() < 1e-6,
            "{:?}",
            series[40]
        );
        assert!(
            (series[40].velocity - 0.25).abs() < 1e-6,
            "{:?}",
            series[40]
        );
        assert_eq!((series[41].diagnostics, series[41].velocity), (0.0, 0.0));
        // The report is the one `diff` gives.
        let plain = diff(&a, &b, &Tolerance::EXACT).unwrap();
        assert_eq!(
            serde_json::to_value(&plain).unwrap(),
            serde_json::to_value(&report).unwrap()
        );
    }

    #[test]
    fn progress_counts_up_to_every_frame_paired() {
        let frames = testutil::frames(3, 2, 600, 0);
        let (a, b) = (open(&frames, 1), open(&frames, 1));
        let mut calls = Vec::new();
        let r = diff_with_progress(&a, &b, &Tolerance::EXACT, Extent::Whole, |done, total| {
            calls.push((done, total))
        })
        .unwrap();
        assert!(r.identical);
        // Every 256 frames, then the end.
        assert_eq!(calls, vec![(0, 600), (256, 600), (512, 600), (600, 600)]);
    }

    #[test]
    fn a_perturbation_is_found_at_its_substep_and_field() {
        let frames = testutil::frames(3, 2, 60, 0);
        let mut perturbed = frames.clone();
        // From substep 23 on, body 1's y drifts by 1e-3 per substep (a chaotic divergence).
        for (k, f) in perturbed[23..].iter_mut().enumerate() {
            f.poses[1][1] += 1e-3 * (k + 1) as f32;
            f.rehash();
        }
        let (a, b) = (open(&frames, 1), open(&perturbed, 2));
        let r = diff(&a, &b, &Tolerance::EXACT).unwrap();
        assert!(!r.identical);
        assert!(r.scene_hash_mismatch);
        assert_eq!(r.first_divergent_substep, Some(23));
        let w = r.where_.clone().unwrap();
        assert_eq!(w.kind, LocationKind::Body);
        assert_eq!(
            (w.index, w.name.as_str(), w.field.as_str()),
            (1, "link1", "position.y")
        );
        // Largest deviation is at the last substep: 37e-3 (f32 rounding around y ~ 1).
        assert_eq!(r.max_deviation.substep, Some(59));
        assert!(
            (r.max_deviation.value - 0.037).abs() < 1e-6,
            "{}",
            r.max_deviation.value
        );

        // With a 5e-3 absolute tolerance the divergence starts when the drift exceeds it:
        // drift at substep 23 + k is (k + 1) * 1e-3 > 5e-3 first for k = 5 (with f32 rounding
        // the sixth step may land just at 6e-3, well above 5e-3).
        let r = diff(
            &a,
            &b,
            &Tolerance {
                atol: 5e-3,
                rtol: 0.0,
            },
        )
        .unwrap();
        assert_eq!(r.first_divergent_substep, Some(28));
        assert_eq!(r.where_.unwrap().field, "position.y");

        let json = serde_json::to_value(diff(&a, &b, &Tolerance::EXACT).unwrap()).unwrap();
        assert_eq!(json["first_divergent_substep"], 23);
        assert_eq!(json["where"]["kind"], "body");
        assert_eq!(json["where"]["field"], "position.y");
        assert_eq!(json["where"]["index"], 1);
    }

    #[test]
    fn joint_fields_shapes_and_lengths() {
        let frames = testutil::frames(3, 2, 30, 0);
        let mut other = frames.clone();
        other[12].diagnostics[1][3] = 0.5;
        other[12].state_hash ^= 1;
        let r = diff(&open(&frames, 1), &open(&other, 1), &Tolerance::EXACT).unwrap();
        assert_eq!(r.first_divergent_substep, Some(12));
        let w = r.where_.unwrap();
        assert_eq!(
            (w.kind, w.index, w.field.as_str()),
            (LocationKind::Joint, 1, "anchor_error_norm")
        );

        let r = diff(
            &open(&frames, 1),
            &open(&frames[..25], 1),
            &Tolerance::EXACT,
        )
        .unwrap();
        assert!(!r.identical);
        assert_eq!(
            (r.first_divergent_substep, r.frames_compared),
            (Some(25), 25)
        );
        assert_eq!(r.reason, Some(Divergence::LogEnds));
        assert_eq!(r.last_common_substep, Some(24));
        // Over the overlap alone, the shorter run is identical.
        let r = diff_with_progress(
            &open(&frames, 1),
            &open(&frames[..25], 1),
            &Tolerance::EXACT,
            Extent::Overlap,
            |_, _| {},
        )
        .unwrap();
        assert!(r.identical, "{r:?}");
        assert_eq!((r.reason, r.frames_compared), (None, 25));
        assert_eq!(serde_json::to_value(&r).unwrap()["extent"], "overlap");

        let small = LogReader::from_bytes(&testutil::log_bytes(
            &testutil::header(2, 2),
            &testutil::frames(2, 2, 3, 0),
            true,
        ))
        .unwrap();
        let err = diff(&open(&frames, 1), &small, &Tolerance::EXACT).unwrap_err();
        assert!(matches!(
            err,
            ReplayError::ShapeMismatch {
                what: "body counts",
                a: 3,
                b: 2
            }
        ));
    }

    #[test]
    fn equal_states_with_different_diagnostics_differ() {
        // Two builds whose diagnostics code differs record the same state hashes but different
        // joint columns: the diagnostics hash in the index sends the frame to a full compare.
        let frames = testutil::frames(3, 2, 30, 0);
        let mut other = frames.clone();
        other[17].diagnostics[0][4] += 1e-7;
        let (a, b) = (open(&frames, 1), open(&other, 1));
        assert_eq!(a.index()[17].state_hash, b.index()[17].state_hash);
        let r = diff(&a, &b, &Tolerance::EXACT).unwrap();
        assert_eq!(r.first_divergent_substep, Some(17));
        let w = r.where_.unwrap();
        assert_eq!(
            (w.kind, w.index, w.field.as_str()),
            (LocationKind::Joint, 0, "angular_error")
        );
        // Within a tolerance above the change, the runs agree.
        let loose = Tolerance {
            atol: 1e-6,
            rtol: 0.0,
        };
        assert!(diff(&a, &b, &loose).unwrap().identical);
    }

    #[test]
    fn a_log_starting_later_is_compared_from_its_first_substep() {
        let frames = testutil::frames(3, 2, 60, 0);
        let full = open(&frames, 1);
        let tail = open(&frames[20..], 1);
        for (a, b) in [(&full, &tail), (&tail, &full)] {
            let r = diff(a, b, &Tolerance::EXACT).unwrap();
            assert!(r.identical, "{r:?}");
            assert_eq!(r.first_common_substep, Some(20));
            assert_eq!(r.frames_compared, 40);
        }
        let mut perturbed = frames[20..].to_vec();
        perturbed[5].poses[2][0] += 0.25;
        perturbed[5].rehash();
        let r = diff(&full, &open(&perturbed, 1), &Tolerance::EXACT).unwrap();
        assert_eq!(r.first_divergent_substep, Some(25));
        assert_eq!(r.where_.unwrap().field, "position.x");
    }

    #[test]
    fn logs_without_a_common_substep_are_an_error_not_a_divergence() {
        let frames = testutil::frames(3, 2, 60, 0);
        let early = open(&frames[..20], 1);
        let late = open(&frames[40..], 1);
        for (a, b) in [(&early, &late), (&late, &early)] {
            let err = diff(a, b, &Tolerance::EXACT).unwrap_err().to_string();
            assert!(err.contains("share no substep"), "{err}");
            assert!(err.contains("substeps 0 to 19") && err.contains("substeps 40 to 59"));
        }
    }

    #[test]
    fn a_damaged_frame_is_an_error_even_when_its_hashes_match() {
        let frames = testutil::frames(3, 2, 30, 0);
        let bytes = testutil::log_bytes(&testutil::header(3, 2), &frames, true);
        let good = LogReader::from_bytes(&bytes).unwrap();
        let mut damaged = bytes.clone();
        // A byte well inside frame 12's payload (its checksum no longer matches).
        let at = good.index()[12].offset as usize + 64;
        damaged[at] ^= 0x10;
        let bad = LogReader::from_bytes(&damaged).unwrap();
        assert_eq!(good.index()[12].state_hash, bad.index()[12].state_hash);
        let err = diff(&good, &bad, &Tolerance::EXACT).unwrap_err();
        assert!(
            matches!(err, ReplayError::CorruptFrame { index: 12, .. }),
            "{err}"
        );
    }

    #[test]
    fn the_reason_says_values_or_hidden_state() {
        let frames = testutil::frames(3, 2, 30, 0);
        let mut hidden = frames.clone();
        hidden[7].state_hash ^= 1;
        let r = diff(&open(&frames, 1), &open(&hidden, 1), &Tolerance::EXACT).unwrap();
        assert_eq!(
            (r.first_divergent_substep, r.reason, r.where_),
            (Some(7), Some(Divergence::HiddenState), None)
        );
        let mut moved = frames.clone();
        moved[9].poses[0][2] += 0.5;
        moved[9].rehash();
        let r = diff(&open(&frames, 1), &open(&moved, 1), &Tolerance::EXACT).unwrap();
        assert_eq!(r.reason, Some(Divergence::Values));
        assert_eq!(serde_json::to_value(&r).unwrap()["reason"], "values");
    }
}
