//! Scrubbing a run: where did residuals first jump, and which joints were worst.
//!
//! A spike is the *onset* of a residual jumping above its own recent past: for each joint and
//! residual column the finder keeps the values of the last `window` substeps and flags a
//! value when both hold (the baseline statistics use the finite values among them):
//!
//! * robust score `(v - median) / scale > k`, with `scale = max(1.4826 * MAD, rel_floor *
//!   |median|, abs_floor)` (the floors stop perfectly smooth data, whose MAD is 0, from turning
//!   rounding noise into spikes);
//! * `v > abs_threshold` (tiny residuals are never interesting, however sudden).
//!
//! The onset is reported once; the spike ends when the score falls below `k / 2` or the value
//! below the threshold (hysteresis), so a plateau or a slow decay is one spike. Non-finite
//! values in the watched columns are always spikes (first occurrence per joint and column;
//! before 2026-12-06 in any of the eight columns, whatever the columns asked for). A
//! non-finite value elsewhere shows in the frame summaries (`non_finite`,
//! `first_non_finite_joint`) and in [`worst_joints`]; a body's non-finite pose or velocity in
//! [`first_non_finite_body`].
//!
//! Cost. The median and MAD (two selections over the window) are computed only where a spike
//! could start. A value above the threshold is first checked against a lower bound of its
//! window kept per slot (the minimum over the last three blocks of `window / 2` substeps):
//! if the bound is at or above `v / (1 + 0.99 k rel_floor)`, no window value lies below that
//! bound, and if fewer than half of them do, the median is at least the bound, so
//! `v - median <= 0.99 k rel_floor median < k scale` and the score cannot exceed `k`. The
//! bound settles almost every value without reading the window; the rest count first, then
//! compute the median. A frame is judged column by column in branch-light passes, and the
//! windows are stored time-major, so a frame's pushes fill one contiguous row.
//!
//! The spike index. A [`LogWriter`](crate::LogWriter) whose header asks for it
//! ([`Header::spike_index`](crate::Header::spike_index), set by the recorder) runs this same
//! finder on every frame as it is appended, and stores the onsets in the footer. [`spikes`]
//! with those parameters then reads the footer only: on a finished log it costs about what
//! reading the summaries costs, whatever the log's size. Other parameters, logs without a
//! footer (recovered) and logs without the index are scanned frame by frame; the result is
//! the same either way (tested).

use serde::{Deserialize, Serialize};

use crate::error::{ReplayError, Result};
use crate::format::{COL_ANCHOR_ERROR, COL_ANGULAR_ERROR, COL_LIMIT_VIOLATION};
use crate::reader::LogReader;

/// Tuning of [`spikes`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpikeParams {
    /// Diagnostic columns to watch (default: 3 anchor error norm, 4 angular error, 5 limit
    /// violation).
    pub columns: Vec<usize>,
    /// How many previous substeps form the baseline (default 32).
    pub window: usize,
    /// Fewest previous substeps needed before a value can be judged (default 2, so spikes in
    /// the first substeps are still found).
    pub min_history: usize,
    /// Robust score threshold (default 8).
    pub k: f32,
    /// Values at or below this are never spikes (default 1e-3).
    pub abs_threshold: f32,
    /// Scale floor relative to the baseline median (default 0.05).
    pub rel_floor: f32,
    /// Absolute scale floor (default 1e-6).
    pub abs_floor: f32,
}

/// Most window values a [`SpikeFinder`] keeps (1 GB of f32).
const MAX_WINDOW_VALUES: usize = 1 << 28;

impl SpikeParams {
    /// Checks the tuning: `k` finite and >= 0, `abs_threshold` finite and >= 0, the floors
    /// finite and >= 0, `window` at least `min_history` and `min_history` at least 1
    /// (a smaller window could never judge a value).
    pub fn validate(&self) -> Result<(), String> {
        self.check().map_err(|(_, message)| message)
    }

    /// As [`validate`](SpikeParams::validate), naming the parameter at fault: `"k"`,
    /// `"abs_threshold"`, `"floors"`, `"min_history"` or `"window"`.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.k.is_finite() && self.k >= 0.0) {
            return Err((
                "k",
                format!(
                    "the spike score k = {} must be a finite number >= 0 (default 8)",
                    self.k
                ),
            ));
        }
        if !(self.abs_threshold.is_finite() && self.abs_threshold >= 0.0) {
            return Err((
                "abs_threshold",
                format!(
                    "the spike threshold {} must be a finite number >= 0 (m or rad; default 1e-3)",
                    self.abs_threshold
                ),
            ));
        }
        let floor_ok = |x: f32| x.is_finite() && x >= 0.0;
        if !(floor_ok(self.rel_floor) && floor_ok(self.abs_floor)) {
            return Err((
                "floors",
                format!(
                    "the scale floors ({}, {}) must be finite and >= 0",
                    self.rel_floor, self.abs_floor
                ),
            ));
        }
        if self.min_history == 0 {
            return Err((
                "min_history",
                "min_history must be at least 1 (the earlier values a value needs before it \
                 can be judged; default 2)"
                    .to_string(),
            ));
        }
        if self.window < self.min_history {
            return Err((
                "window",
                format!(
                    "the spike window of {} must hold at least min_history = {} earlier \
                 values (those a value needs before it is judged; window default 32, \
                 min_history default 2)",
                    match self.window {
                        1 => "1 substep".to_string(),
                        n => format!("{n} substeps"),
                    },
                    self.min_history
                ),
            ));
        }
        Ok(())
    }

    /// These parameters for scanning `frames` frames: a window longer than the log holds
    /// every earlier frame either way, so it is cut to the log's length (the same spikes,
    /// and memory bounded by the log rather than by the setting).
    pub fn for_frames(&self, frames: usize) -> SpikeParams {
        SpikeParams {
            window: self.window.min(frames.max(self.min_history)),
            ..self.clone()
        }
    }
}

impl Default for SpikeParams {
    fn default() -> Self {
        SpikeParams {
            columns: vec![COL_ANCHOR_ERROR, COL_ANGULAR_ERROR, COL_LIMIT_VIOLATION],
            window: 32,
            min_history: 2,
            k: 8.0,
            abs_threshold: 1e-3,
            rel_floor: 0.05,
            abs_floor: 1e-6,
        }
    }
}

/// The onset of a residual spike.
#[derive(
    Clone, Copy, Debug, PartialEq, Serialize, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize,
)]
pub struct Spike {
    /// Substep of the onset.
    pub substep: u64,
    /// Time of the onset.
    pub time: f64,
    /// Joint index.
    pub joint: u32,
    /// Diagnostic column (see [`crate::format::DIAGNOSTIC_COLUMNS`]).
    pub column: u8,
    /// The value at the onset (may be NaN or infinite; JSON prints those as `null`).
    pub value: f32,
    /// Median of the previous `window` values (NaN without history).
    pub baseline: f32,
}

/// What `lavender scrub --json` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScrubReport {
    /// Frames scanned.
    pub frames: usize,
    /// Spikes, earliest first.
    pub spikes: Vec<Spike>,
    /// Where the spikes came from: `"index"` (the log's footer) or `"scan"` (every frame).
    pub source: SpikeSource,
}

/// Where [`spikes_with_source`] found its spikes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SpikeSource {
    /// The spike index in the footer of a finished log (recorded with the same parameters).
    Index,
    /// Every frame was read and judged.
    Scan,
}

/// The recent values of every watched (joint, column) slot, slot `ci * joints + j` for the
/// `ci`-th watched column of joint `j` (so one column's slots are contiguous).
///
/// The rings are time-major (`values[position * slots + slot]`) and every slot is pushed once
/// per frame (a non-finite value as NaN, which no statistic counts), so a frame's pushes fill
/// one contiguous row and the window of every slot is the same frames: the last `window`.
/// Reading one slot's window is strided, which is why each slot also keeps a lower bound of
/// its window: the minimum over the current block of `ceil(window / 2)` frames and the two
/// before it, a superset of the window. It settles almost every value without reading the
/// window (see [`SpikeFinder`]).
struct History {
    values: Vec<f32>,
    slots: usize,
    window: usize,
    /// Frames pushed.
    frames: usize,
    /// Frames per block of the lower bound.
    block: usize,
    /// Per slot: minimum of the current block's values, and of the two blocks before it.
    block_min: Vec<f32>,
    previous_min: Vec<f32>,
    /// Per slot: minimum of the previous block alone (to form `previous_min` at the next
    /// block boundary).
    last_block_min: Vec<f32>,
    in_spike: Vec<bool>,
}

impl History {
    fn new(slots: usize, window: usize) -> History {
        History {
            values: vec![f32::NAN; slots * window],
            slots,
            window,
            frames: 0,
            block: window.div_ceil(2),
            block_min: vec![f32::INFINITY; slots],
            previous_min: vec![f32::INFINITY; slots],
            last_block_min: vec![f32::INFINITY; slots],
            in_spike: vec![false; slots],
        }
    }

    /// Frames in every slot's window (finite or not).
    fn depth(&self) -> usize {
        self.frames.min(self.window)
    }

    /// The slots `slots` of the ring row the next frame goes to, and of the current block's
    /// minima.
    fn push_targets(&mut self, slots: std::ops::Range<usize>) -> (&mut [f32], &mut [f32]) {
        let start = (self.frames % self.window) * self.slots;
        let row = &mut self.values[start..start + self.slots];
        (&mut row[slots.clone()], &mut self.block_min[slots])
    }

    /// Ends a frame whose row was written through [`History::push_targets`] (and whose block
    /// minima were updated): starts a new block at the boundary.
    fn finish_frame(&mut self) {
        self.frames += 1;
        if self.frames.is_multiple_of(self.block) {
            // previous = min(current, previous block); previous block = current.
            for ((p, l), b) in self
                .previous_min
                .iter_mut()
                .zip(&mut self.last_block_min)
                .zip(&mut self.block_min)
            {
                *p = b.min(*l);
                *l = *b;
                *b = f32::INFINITY;
            }
        }
    }

    /// A value no larger than any finite value in the slot's window (+inf if it has none).
    #[inline]
    fn lower_bound(&self, slot: usize) -> f32 {
        self.block_min[slot].min(self.previous_min[slot])
    }

    /// The slot's finite window values, in ring order, into `out`.
    fn gather(&self, slot: usize, out: &mut Vec<f32>) {
        // One value per ring row (a strided walk), written unconditionally and kept where
        // finite: no branch on the value.
        let depth = self.depth();
        out.clear();
        out.resize(depth, 0.0);
        let mut kept = 0;
        for row in self.values.chunks_exact(self.slots).take(depth) {
            let v = row[slot];
            out[kept] = v;
            kept += usize::from(!v.is_nan());
        }
        out.truncate(kept);
    }

    /// Median and MAD of the slot's finite window values, using `scratch` (no allocation
    /// after warm-up).
    fn median_mad(&self, slot: usize, scratch: &mut Vec<f32>) -> Option<(f32, f32)> {
        self.gather(slot, scratch);
        median_mad(scratch)
    }
}

/// Median and MAD of the finite `values` (sorted in place), None when empty: the bits of
/// [`median`] of the values, then of their absolute deviations from it.
///
/// One sort instead of two selections: in sorted order the deviations `|v - med|` fall
/// until the median and rise after it (rounded subtraction is monotone), so walking outward
/// from the median, always to the smaller of the two next deviations, meets them in
/// increasing order, and the MAD's order statistics are the walk's steps `n/2 - 1` and `n/2`.
fn median_mad(values: &mut [f32]) -> Option<(f32, f32)> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    sort_total_order(values);
    let mid = n / 2;
    // `values[mid - 1]` is the largest value below the middle one: the bits of `median`'s
    // maximum over the lower part (the two differ at most in the sign of a zero, which the
    // sum with `values[mid]` does not keep).
    let of_sorted = |low: f32, high: f32| if n % 2 == 1 { high } else { 0.5 * (low + high) };
    let med = of_sorted(values[mid.saturating_sub(1)], values[mid]);
    let deviation = |v: f32| (v - med).abs();
    // Left of `split` every value is below the median, from `split` on none is.
    let split = values.partition_point(|&v| v < med);
    let (mut left, mut right) = (split, split);
    let (mut previous, mut current) = (0.0, 0.0);
    for _ in 0..=mid {
        let take_left = match (left.checked_sub(1), values.get(right)) {
            (Some(l), Some(&r)) => deviation(values[l]) <= deviation(r),
            (Some(_), None) => true,
            (None, _) => false,
        };
        previous = current;
        current = if take_left {
            left -= 1;
            deviation(values[left])
        } else {
            right += 1;
            deviation(values[right - 1])
        };
    }
    Some((med, of_sorted(previous, current)))
}

/// Sorts `values` in the order of [`f32::total_cmp`], as integers: each value's bits mapped
/// to an `i32` whose integer order is that order (the map `total_cmp` applies per comparison,
/// here once per value; it is its own inverse), an integer sort, the map back. A third
/// of the instructions of sorting with `total_cmp`.
fn sort_total_order(values: &mut [f32]) {
    let keys: &mut [i32] = bytemuck::cast_slice_mut(values);
    // Negative values: every bit but the sign flipped, so that larger magnitudes sort lower.
    let flip = |k: &mut i32| *k ^= (((*k >> 31) as u32) >> 1) as i32;
    keys.iter_mut().for_each(flip);
    keys.sort_unstable();
    keys.iter_mut().for_each(flip);
}

/// The median of `v` (reordered) by selection: [`median_mad`]'s reference.
#[cfg(test)]
fn median(v: &mut [f32]) -> f32 {
    let mid = v.len() / 2;
    let odd = v.len() % 2 == 1;
    let (lo, m, _) = v.select_nth_unstable_by(mid, f32::total_cmp);
    let m = *m;
    if odd {
        m
    } else {
        let below = lo.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        0.5 * (below + m)
    }
}

/// Finds the onsets of residual spikes, earliest first (then by joint, then by column): from
/// the log's spike index when it has one for `params`, else by reading every frame.
pub fn spikes(reader: &LogReader, params: &SpikeParams) -> Result<Vec<Spike>> {
    Ok(spikes_with_source(reader, params)?.0)
}

/// [`spikes`], also saying where they came from.
pub fn spikes_with_source(
    reader: &LogReader,
    params: &SpikeParams,
) -> Result<(Vec<Spike>, SpikeSource)> {
    match reader.spike_index(params) {
        Some(indexed) => Ok((indexed.to_vec(), SpikeSource::Index)),
        None => Ok((scan_spikes(reader, params)?, SpikeSource::Scan)),
    }
}

/// [`spikes_with_source`] passing over corrupt frames (as `lavender scrub` does) and
/// returning them: from the spike index when it answers, else by judging every frame that
/// passes its checksum.
pub fn spikes_skipping(
    reader: &LogReader,
    params: &SpikeParams,
) -> Result<(Vec<Spike>, SpikeSource, Vec<SkippedFrame>)> {
    if let Some(indexed) = reader.spike_index(params) {
        return Ok((indexed.to_vec(), SpikeSource::Index, Vec::new()));
    }
    let mut finder = SpikeFinder::new(reader, &params.for_frames(reader.len()))?;
    finder.skip_corrupt(true);
    let mut out = Vec::new();
    finder.scan(reader, &mut out)?;
    Ok((out, SpikeSource::Scan, finder.skipped().to_vec()))
}

/// [`spikes`] by reading and judging every frame, ignoring any spike index.
pub fn scan_spikes(reader: &LogReader, params: &SpikeParams) -> Result<Vec<Spike>> {
    let mut finder = SpikeFinder::new(reader, &params.for_frames(reader.len()))?;
    let mut out = Vec::new();
    finder.scan(reader, &mut out)?;
    Ok(out)
}

/// The spike finder as a stream: [`scan`](SpikeFinder::scan) judges only the frames it has
/// not seen, so a follower of a growing log (`lavender scrub --follow`) pays for each frame
/// once. Detection is causal (every value is judged against earlier ones only), so the
/// spikes of a log scanned in pieces are exactly those of [`spikes`] on the whole log.
pub struct SpikeFinder {
    params: SpikeParams,
    joints: usize,
    hist: History,
    /// Per joint and column (all eight): whether the last value was non-finite.
    non_finite: Vec<bool>,
    /// Number of `true` entries of `non_finite`.
    non_finite_set: usize,
    scratch: Vec<f32>,
    /// Slots (of the current column) whose value needs the full test.
    flagged: Vec<u32>,
    /// Frames of the log judged so far.
    seen: usize,
    /// Use the median-free prefilter (off only in the test that proves it changes nothing).
    prefilter: bool,
    /// Pass over corrupt frames instead of stopping at the first ([`SpikeFinder::skip_corrupt`]).
    skip_corrupt: bool,
    /// The corrupt frames passed over, in order.
    skipped: Vec<SkippedFrame>,
}

/// A frame a reader passed over because it failed its checksum or validation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkippedFrame {
    /// Frame index in the log.
    pub index: usize,
    /// The substep the log's index lists for it.
    pub substep: u64,
}

/// `reader.frame(i)`, or `None` with the frame noted in `skipped` where it is corrupt and
/// `skip` is set.
fn frame_or_skip<'a>(
    reader: &'a LogReader,
    i: usize,
    skip: bool,
    skipped: &mut Vec<SkippedFrame>,
) -> Result<Option<crate::reader::FrameView<'a>>> {
    match reader.frame(i) {
        Ok(frame) => Ok(Some(frame)),
        Err(ReplayError::CorruptFrame { index, substep, .. }) if skip => {
            skipped.push(SkippedFrame { index, substep });
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

impl SpikeFinder {
    /// A finder for the logs shaped like `reader` (its joint count), with `params`.
    pub fn new(reader: &LogReader, params: &SpikeParams) -> Result<SpikeFinder> {
        Self::for_joints(reader.header().joint_count, params)
    }

    /// A finder for frames of `joints` joints (what the log writer runs for the spike index).
    pub fn for_joints(joints: usize, params: &SpikeParams) -> Result<SpikeFinder> {
        if let Some(&c) = params.columns.iter().find(|&&c| c >= 8) {
            return Err(ReplayError::OutOfRange {
                what: "column",
                index: c,
                len: 8,
            });
        }
        params.validate().map_err(ReplayError::InvalidArgument)?;
        let values = joints
            .saturating_mul(params.columns.len())
            .saturating_mul(params.window);
        if values > MAX_WINDOW_VALUES {
            return Err(ReplayError::InvalidArgument(format!(
                "a window of {} substeps over {} watched joint columns keeps {values} values \
                 ({:.1} GB); use a smaller window (at most {})",
                params.window,
                joints * params.columns.len(),
                values as f64 * 4e-9,
                MAX_WINDOW_VALUES / (joints * params.columns.len()).max(1)
            )));
        }
        let window = params.window;
        Ok(SpikeFinder {
            params: params.clone(),
            joints,
            hist: History::new(joints * params.columns.len(), window),
            non_finite: vec![false; joints * 8],
            non_finite_set: 0,
            scratch: Vec::with_capacity(window),
            flagged: Vec::new(),
            seen: 0,
            prefilter: true,
            skip_corrupt: false,
            skipped: Vec::new(),
        })
    }

    /// With `skip`, a scan passes over a corrupt frame (noted in
    /// [`skipped`](SpikeFinder::skipped)) instead of stopping there with
    /// [`ReplayError::CorruptFrame`]. Its substep is then missing from the baselines, as if it
    /// had not been recorded.
    pub fn skip_corrupt(&mut self, skip: bool) {
        self.skip_corrupt = skip;
    }

    /// The corrupt frames the scans passed over ([`SpikeFinder::skip_corrupt`]), in order.
    pub fn skipped(&self) -> &[SkippedFrame] {
        &self.skipped
    }

    /// Judges one frame's diagnostics (`joints` rows of the eight columns; what the writer
    /// does for the spike index), appending its onsets to `out` in the documented order.
    pub fn judge_frame(
        &mut self,
        substep: u64,
        time: f64,
        rows: &[[f32; 8]],
        out: &mut Vec<Spike>,
    ) {
        let start = out.len();
        self.judge(substep, time, rows, out);
        self.seen += 1;
        out[start..].sort_by_key(|s| (s.substep, s.joint, s.column));
    }

    /// Frames judged so far.
    pub fn frames_seen(&self) -> usize {
        self.seen
    }

    /// Judges the frames of `reader` not seen yet and appends their spikes to `out`, earliest
    /// first (then by joint, then by column).
    pub fn scan(&mut self, reader: &LogReader, out: &mut Vec<Spike>) -> Result<()> {
        self.scan_until(reader, reader.len(), out)
    }

    /// Like [`scan`](SpikeFinder::scan), stopping before frame `end` (for progress reports).
    pub fn scan_until(
        &mut self,
        reader: &LogReader,
        end: usize,
        out: &mut Vec<Spike>,
    ) -> Result<()> {
        let start = out.len();
        #[cfg(not(target_endian = "little"))]
        let mut rows = Vec::new();
        for i in self.seen..end.min(reader.len()) {
            let Some(frame) = frame_or_skip(reader, i, self.skip_corrupt, &mut self.skipped)?
            else {
                self.seen = i + 1;
                continue;
            };
            #[cfg(target_endian = "little")]
            self.judge(frame.substep(), frame.time(), frame.diagnostics(), out);
            #[cfg(not(target_endian = "little"))]
            {
                rows.clear();
                rows.extend(frame.diagnostic_rows());
                self.judge(frame.substep(), frame.time(), &rows, out);
            }
            self.seen = i + 1;
        }
        // Within one substep, spikes come out by joint, then non-finite before robust ones;
        // sort to (substep, joint, column) for a stable, documented order.
        out[start..].sort_by_key(|s| (s.substep, s.joint, s.column));
        Ok(())
    }

    /// Judges one frame: the non-finite values first (rare: skipped unless the frame or the
    /// previous one had any), then column by column a branch-light pass that flags the
    /// slots needing the full robust test (in a spike; or above the threshold, with enough
    /// history, and above what the window's lower bound rules out), the full test for the
    /// flagged slots, and the push of the column into the rings.
    fn judge(&mut self, substep: u64, time: f64, rows: &[[f32; 8]], out: &mut Vec<Spike>) {
        let rows = &rows[..rows.len().min(self.joints)];
        let joints = self.joints;
        self.judge_non_finite(substep, time, rows, out);
        let params = &self.params;
        // Values at or below `v / onset_factor` whose window has fewer than half its values
        // below that bound cannot start a spike (module docs); 0.99 keeps f32 rounding of the
        // exact test on the safe side. Only valid for k, rel_floor >= 0 and v > 0.
        let prefilter = self.prefilter && params.k >= 0.0 && params.rel_floor >= 0.0;
        let onset_factor = 1.0 + 0.99 * params.k * params.rel_floor;
        let enough_history = self.hist.depth() >= params.min_history.max(1);
        let (hist, scratch, flagged) = (&mut self.hist, &mut self.scratch, &mut self.flagged);
        for (ci, &c) in params.columns.iter().enumerate() {
            let base = ci * joints;
            flagged.clear();
            for (j, row) in rows.iter().enumerate() {
                let v = row[c];
                let slot = base + j;
                // NaN compares false everywhere: a non-finite value is never flagged here. The
                // bound is read (and the division done) only above the threshold.
                let rising =
                    || !(prefilter && v > 0.0) || v / onset_factor > hist.lower_bound(slot);
                let candidate = v > params.abs_threshold && enough_history && rising();
                if (candidate || hist.in_spike[slot]) && v.is_finite() {
                    flagged.push(slot as u32);
                }
            }
            for &slot in flagged.iter() {
                let slot = slot as usize;
                let j = slot - base;
                let v = rows[j][c];
                let in_spike = hist.in_spike[slot];
                let candidate = v > params.abs_threshold;
                hist.gather(slot, scratch);
                let n = scratch.len();
                let mut judged = in_spike || (candidate && n >= params.min_history.max(1));
                if judged && !in_spike && prefilter && v > 0.0 {
                    let bound = v / onset_factor;
                    judged = scratch.iter().filter(|&&y| y < bound).count() >= n.div_ceil(2);
                }
                if !judged {
                    continue;
                }
                // `scratch` still holds the window gathered above (the count only read it).
                let (med, mad) = median_mad(scratch).unwrap_or((v, 0.0));
                let scale = (1.4826 * mad)
                    .max(params.rel_floor * med.abs())
                    .max(params.abs_floor);
                let score = (v - med) / scale;
                if in_spike {
                    if !candidate || score < 0.5 * params.k {
                        hist.in_spike[slot] = false;
                    }
                } else if score > params.k {
                    hist.in_spike[slot] = true;
                    out.push(Spike {
                        substep,
                        time,
                        joint: j as u32,
                        column: c as u8,
                        value: v,
                        baseline: med,
                    });
                }
            }
            // The push: the column into the ring row, and the block minima (`min` ignores
            // NaN, so non-finite values never lower the bound).
            let (ring_row, minima) = hist.push_targets(base..base + joints);
            for ((dst, m), row) in ring_row.iter_mut().zip(minima).zip(rows) {
                let v = row[c];
                let finite = v.is_finite();
                *dst = if finite { v } else { f32::NAN };
                if finite && v < *m {
                    *m = v;
                }
            }
        }
        hist.finish_frame();
    }

    /// Reports the first non-finite value of each joint and watched column, with its slot's
    /// baseline.
    fn judge_non_finite(
        &mut self,
        substep: u64,
        time: f64,
        rows: &[[f32; 8]],
        out: &mut Vec<Spike>,
    ) {
        let all_finite = rows
            .iter()
            .all(|row| row.iter().fold(true, |acc, v| acc & v.is_finite()));
        if all_finite && self.non_finite_set == 0 {
            return;
        }
        let joints = self.joints;
        let params = &self.params;
        for (j, row) in rows.iter().enumerate() {
            for (ci, &c) in params.columns.iter().enumerate() {
                let v = row[c];
                let flag = &mut self.non_finite[j * 8 + c];
                if !v.is_finite() && !*flag {
                    let baseline = (self.hist)
                        .median_mad(ci * joints + j, &mut self.scratch)
                        .map_or(f32::NAN, |(m, _)| m);
                    out.push(Spike {
                        substep,
                        time,
                        joint: j as u32,
                        column: c as u8,
                        value: v,
                        baseline,
                    });
                }
                let now = !v.is_finite();
                if *flag != now {
                    *flag = now;
                    if *flag {
                        self.non_finite_set += 1;
                    } else {
                        self.non_finite_set -= 1;
                    }
                }
            }
        }
    }
}

/// [`spikes`] wrapped with the frame count, as `lavender scrub --json` prints it.
pub fn report(reader: &LogReader, params: &SpikeParams) -> Result<ScrubReport> {
    let (spikes, source) = spikes_with_source(reader, params)?;
    Ok(ScrubReport {
        frames: reader.len(),
        spikes,
        source,
    })
}

/// One substep's largest residuals.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TimelinePoint {
    /// Substep.
    pub substep: u64,
    /// Time.
    pub time: f64,
    /// Largest anchor error norm (NaN if any joint's is NaN).
    pub max_anchor_error: f32,
    /// Largest angular error.
    pub max_angular_error: f32,
    /// Largest limit violation.
    pub max_limit_violation: f32,
    /// Total energy.
    pub total_energy: f64,
    /// Anything non-finite in the frame.
    pub non_finite: bool,
}

/// The total energy over a run, from its timeline: what `lavender scrub` prints.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct EnergySummary {
    /// Total energy after the first frame's substep, J.
    pub first: f64,
    /// After the last frame's, J.
    pub last: f64,
    /// The largest rise above `first` over the frames (0 when it never rose), J: a run
    /// without drives should not gain energy.
    pub max_rise: f64,
    /// The substep of that rise.
    pub max_rise_substep: Option<u64>,
    /// The first substep whose energy was not finite (inf: a speed or distance whose square
    /// f32 cannot hold; NaN), if any: no rise is judged from there on.
    pub non_finite_substep: Option<u64>,
    /// The largest rise above an earlier low (0 when it never rose after falling), J. The
    /// energy counts no joint stretch, so it dips while joints stretch under load and comes
    /// back as they close; a large regain is the joints acting as springs, which a rise
    /// above the start alone can hide (QA 2026-12-07: 190 J back in 16 substeps after a
    /// 325 J dip, "never above the start").
    pub max_regain: f64,
    /// The substep of that low (`None`: the start).
    pub max_regain_from_substep: Option<u64>,
    /// The substep that regain reached.
    pub max_regain_substep: Option<u64>,
    /// The lowest energy so far and its substep (`None`: the start), J.
    #[serde(skip)]
    low: (f64, Option<u64>),
}

impl EnergySummary {
    /// A summary that starts (and so far ends) at `first`, J.
    pub fn starting_at(first: f64) -> EnergySummary {
        // `+ 0.0` makes -0 (a potential `-m g . x` of bodies at height 0) print as 0.
        let first = first + 0.0;
        EnergySummary {
            first,
            last: first,
            max_rise: 0.0,
            max_rise_substep: None,
            non_finite_substep: None,
            max_regain: 0.0,
            max_regain_from_substep: None,
            max_regain_substep: None,
            low: (first, None),
        }
    }

    /// How the energy compares with the start, in words after "... J at the end": a rise,
    /// none, or that it cannot be judged (QA 2026-12-07: an infinite energy read as "never
    /// above the start"). `start` names the reference ("the start", "the first").
    pub fn rise_text(&self, start: &str) -> String {
        if !self.first.is_finite() {
            return format!(", not finite at {start}: no rise can be judged");
        }
        let rise = match self.max_rise_substep {
            Some(substep) => format!(
                "; rose {:.3e} J above {start} (at substep {substep})",
                self.max_rise
            ),
            None => format!(", never above {start}"),
        };
        let rise = match self.non_finite_substep {
            Some(s) => format!("{rise} up to substep {s}, where it is not finite"),
            None => rise,
        };
        // A regain from the start's level is the rise above, already said.
        match (self.max_regain_substep, self.max_regain > self.max_rise) {
            (Some(to), true) => format!(
                "{rise}; regained {:.3e} J after a dip (substeps {} to {to})",
                self.max_regain,
                self.max_regain_from_substep
                    .map_or_else(|| "the start".to_string(), |s| s.to_string())
            ),
            _ => rise,
        }
    }

    /// Takes in the energy after `substep`, J (a non-finite one never counts as a rise).
    pub fn fold(&mut self, energy: f64, substep: u64) {
        self.last = energy + 0.0;
        if !energy.is_finite() && self.non_finite_substep.is_none() {
            self.non_finite_substep = Some(substep);
        }
        let rise = energy - self.first;
        if rise > self.max_rise {
            (self.max_rise, self.max_rise_substep) = (rise, Some(substep));
        }
        // Judged up to the first non-finite energy (NaN compares false).
        if self.non_finite_substep.is_none() {
            if energy < self.low.0 {
                self.low = (energy, Some(substep));
            }
            let regain = energy - self.low.0;
            if regain > self.max_regain {
                self.max_regain = regain;
                self.max_regain_from_substep = self.low.1;
                self.max_regain_substep = Some(substep);
            }
        }
    }

    /// The summary of `timeline` (None when it is empty).
    pub fn of(timeline: &[TimelinePoint]) -> Option<EnergySummary> {
        let first = timeline.first()?;
        let mut s = EnergySummary::starting_at(first.total_energy);
        s.low.1 = Some(first.substep);
        for p in timeline {
            s.fold(p.total_energy, p.substep);
        }
        Some(s)
    }
}

/// Per-substep maxima, from the frame index only (no frame data is read).
pub fn timeline(reader: &LogReader) -> Vec<TimelinePoint> {
    reader
        .summaries()
        .map(|s| TimelinePoint {
            substep: s.substep,
            time: s.time,
            max_anchor_error: s.anchor_error.value,
            max_angular_error: s.angular_error.value,
            max_limit_violation: s.limit_violation.value,
            total_energy: s.total_energy,
            non_finite: s.non_finite,
        })
        .collect()
}

/// Where a run's state went non-finite: the first body whose pose or velocity did, by the
/// frame summaries ([`first_non_finite_body`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NonFiniteBody {
    /// Body index.
    pub index: u32,
    /// Body name.
    pub name: String,
    /// The first substep with a non-finite pose or velocity (of this body or any other).
    pub substep: u64,
    /// Time after that substep, s.
    pub time: f64,
}

/// The first frame whose state is non-finite and the first body in it with a non-finite pose
/// or velocity, from the frame index only (no frame data is read). A body can blow up with
/// every joint's diagnostics finite (a free body), which the worst joints never show (QA
/// 2026-12-07).
pub fn first_non_finite_body(reader: &LogReader) -> Option<NonFiniteBody> {
    let s = reader.summaries().find(|s| s.state_non_finite())?;
    let index = s.first_non_finite_body?;
    Some(NonFiniteBody {
        index,
        name: reader.header().body_name(index as usize),
        substep: s.substep,
        time: s.time,
    })
}

/// A joint's peak residuals over the run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorstJoint {
    /// Joint index.
    pub joint: u32,
    /// Joint name.
    pub name: String,
    /// Peak anchor error norm (column 3). The peaks are -inf (JSON null) where the column
    /// never held a finite value (a run non-finite from its first substep).
    pub peak_anchor_error: f32,
    /// Substep of that peak; `None` where the column never rose above 0 (no peak).
    pub anchor_error_substep: Option<u64>,
    /// Peak angular error (column 4).
    pub peak_angular_error: f32,
    /// Substep of that peak; `None` where the column never rose above 0 (no peak).
    pub angular_error_substep: Option<u64>,
    /// Peak limit violation (column 5).
    pub peak_limit_violation: f32,
    /// Substep of that peak; `None` where the column never rose above 0 (no peak).
    pub limit_violation_substep: Option<u64>,
    /// First substep with a non-finite diagnostic, if any.
    pub first_non_finite_substep: Option<u64>,
}

impl WorstJoint {
    /// A joint with no frame seen yet.
    fn new(joint: u32, name: String) -> WorstJoint {
        WorstJoint {
            joint,
            name,
            peak_anchor_error: f32::NEG_INFINITY,
            anchor_error_substep: None,
            peak_angular_error: f32::NEG_INFINITY,
            angular_error_substep: None,
            peak_limit_violation: f32::NEG_INFINITY,
            limit_violation_substep: None,
            first_non_finite_substep: None,
        }
    }

    /// Takes in the joint's diagnostics `row` at `substep` (frames in log order).
    fn observe(&mut self, substep: u64, row: &[f32; 8]) {
        if self.first_non_finite_substep.is_none() && !row.iter().all(|v| v.is_finite()) {
            self.first_non_finite_substep = Some(substep);
        }
        // A peak is a value above 0 (and above the earlier ones); a column that stays at 0
        // has a peak of 0 and no substep.
        let upd = |peak: &mut f32, at: &mut Option<u64>, v: f32| {
            if v > *peak {
                *peak = v;
                *at = (v > 0.0).then_some(substep);
            }
        };
        upd(
            &mut self.peak_anchor_error,
            &mut self.anchor_error_substep,
            row[COL_ANCHOR_ERROR],
        );
        upd(
            &mut self.peak_angular_error,
            &mut self.angular_error_substep,
            row[COL_ANGULAR_ERROR],
        );
        upd(
            &mut self.peak_limit_violation,
            &mut self.limit_violation_substep,
            row[COL_LIMIT_VIOLATION],
        );
    }
}

/// The `n` joints with the largest peak anchor error (joints that went non-finite first,
/// earliest first), with their other peaks. Reads every frame once; a corrupt frame is an
/// error ([`worst_joints_skipping`] passes over it).
pub fn worst_joints(reader: &LogReader, n: usize) -> Result<Vec<WorstJoint>> {
    worst_joints_from(reader, n, false, &mut |_| ()).map(|(worst, _)| worst)
}

/// [`worst_joints`] over the frames that pass their checksums, and the corrupt frames it
/// passed over.
pub fn worst_joints_skipping(
    reader: &LogReader,
    n: usize,
) -> Result<(Vec<WorstJoint>, Vec<SkippedFrame>)> {
    worst_joints_from(reader, n, true, &mut |_| ())
}

/// [`worst_joints_skipping`], calling `progress(frames_read)` every 1,024 frames and at the
/// end (a progress bar over a long log: QA 2026-12-08, seconds on a freshly written 2 GB log
/// without a word).
pub fn worst_joints_skipping_with_progress(
    reader: &LogReader,
    n: usize,
    progress: &mut dyn FnMut(usize),
) -> Result<(Vec<WorstJoint>, Vec<SkippedFrame>)> {
    worst_joints_from(reader, n, true, progress)
}

fn worst_joints_from(
    reader: &LogReader,
    n: usize,
    skip: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<(Vec<WorstJoint>, Vec<SkippedFrame>)> {
    let mut skipped = Vec::new();
    let joints = reader.header().joint_count;
    let mut peaks: Vec<WorstJoint> = (0..joints)
        .map(|j| WorstJoint::new(j as u32, reader.header().joint_name(j)))
        .collect();
    for i in 0..reader.len() {
        if i % 1024 == 0 {
            progress(i);
        }
        let Some(frame) = frame_or_skip(reader, i, skip, &mut skipped)? else {
            continue;
        };
        let s = frame.substep();
        for (p, row) in peaks.iter_mut().zip(frame.diagnostic_rows()) {
            p.observe(s, &row);
        }
    }
    progress(reader.len());
    peaks.sort_by(|a, b| {
        let nf = |w: &WorstJoint| w.first_non_finite_substep.unwrap_or(u64::MAX);
        nf(a)
            .cmp(&nf(b))
            .then(b.peak_anchor_error.total_cmp(&a.peak_anchor_error))
            .then(a.joint.cmp(&b.joint))
    });
    peaks.truncate(n);
    Ok((peaks, skipped))
}

/// One joint's eight diagnostic columns over a run (`lavender scrub --joint`), read frame by
/// frame ([`JointHistory::read`]); frames that failed their checksums are left out (and
/// listed in `skipped`), so `substeps` may have gaps there.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JointHistory {
    /// The joint's peaks, by the rule of [`worst_joints`].
    pub peaks: WorstJoint,
    /// Substep of every frame read, in log order.
    pub substeps: Vec<u64>,
    /// Simulation time of every frame read, s.
    pub times: Vec<f64>,
    /// `columns[c][i]`: column `c` (`format::DIAGNOSTIC_COLUMNS`) at frame `i` of `substeps`.
    pub columns: [Vec<f32>; 8],
    /// Frames passed over because they failed their checksums (with `skip_corrupt`).
    pub skipped: Vec<SkippedFrame>,
}

impl JointHistory {
    /// An empty history of joint `joint` of the log `reader` reads (an error when the log
    /// has no such joint).
    pub fn new(reader: &LogReader, joint: usize) -> Result<JointHistory> {
        reader.check_joint_column(joint, 0)?;
        Ok(JointHistory {
            peaks: WorstJoint::new(joint as u32, reader.header().joint_name(joint)),
            substeps: Vec::new(),
            times: Vec::new(),
            columns: Default::default(),
            skipped: Vec::new(),
        })
    }

    /// Appends the frames `frames` (indices into the log, read in order); a corrupt frame is
    /// an error, or with `skip_corrupt` passed over and listed in `skipped`.
    pub fn read(
        &mut self,
        reader: &LogReader,
        frames: std::ops::Range<usize>,
        skip_corrupt: bool,
    ) -> Result<()> {
        let joint = self.peaks.joint as usize;
        for i in frames {
            let Some(frame) = frame_or_skip(reader, i, skip_corrupt, &mut self.skipped)? else {
                continue;
            };
            let row = frame
                .diagnostic(joint)
                .expect("the joint was checked in `new`");
            self.peaks.observe(frame.substep(), &row);
            self.substeps.push(frame.substep());
            self.times.push(frame.time());
            for (column, v) in self.columns.iter_mut().zip(row) {
                column.push(v);
            }
        }
        Ok(())
    }

    /// The smallest and largest finite value of column `column` and the first substeps that
    /// hold them (`None` where the column has no finite value).
    pub fn range(&self, column: usize) -> Option<((f32, u64), (f32, u64))> {
        let values = self.columns[column].iter().zip(&self.substeps);
        values
            .filter(|(v, _)| v.is_finite())
            .fold(None, |range, (&v, &s)| match range {
                None => Some(((v, s), (v, s))),
                Some((lo, hi)) => Some((
                    if v < lo.0 { (v, s) } else { lo },
                    if v > hi.0 { (v, s) } else { hi },
                )),
            })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_energy_summary_finds_the_largest_rise_and_skips_non_finite_energies() {
        let point = |substep: u64, total_energy: f64| TimelinePoint {
            substep,
            time: substep as f64,
            max_anchor_error: 0.0,
            max_angular_error: 0.0,
            max_limit_violation: 0.0,
            total_energy,
            non_finite: !total_energy.is_finite(),
        };
        let t = [
            point(4, -1.0),
            point(5, -0.5),
            point(6, f64::NAN),
            point(7, -0.75),
        ];
        let s = EnergySummary::of(&t).unwrap();
        assert_eq!(
            (s.first, s.max_rise, s.max_rise_substep),
            (-1.0, 0.5, Some(5))
        );
        assert_eq!(s.last, -0.75);
        assert_eq!(s.non_finite_substep, Some(6));
        assert_eq!(
            s.rise_text("the start"),
            "; rose 5.000e-1 J above the start (at substep 5) up to substep 6, where it is not \
             finite"
        );
        // A dip and a regain below the start: said beside "never above".
        let dip = [0.0, -3.0, -1.0, -2.0, -0.5];
        let dip: Vec<_> = (0..5).map(|i| point(i, dip[i as usize])).collect();
        let s = EnergySummary::of(&dip).unwrap();
        assert_eq!(
            (
                s.max_regain,
                s.max_regain_from_substep,
                s.max_regain_substep
            ),
            (2.5, Some(1), Some(4))
        );
        assert_eq!(
            s.rise_text("the first"),
            ", never above the first; regained 2.500e0 J after a dip (substeps 1 to 4)"
        );
        // A regain no larger than the rise above the start is that rise: said once.
        let up = EnergySummary::of(&[point(0, 0.0), point(1, 1.0)]).unwrap();
        assert_eq!((up.max_regain, up.max_rise), (1.0, 1.0));
        assert_eq!(
            up.rise_text("the first"),
            "; rose 1.000e0 J above the first (at substep 1)"
        );
        let falling = EnergySummary::of(&[point(0, 2.0), point(1, 1.0)]).unwrap();
        assert_eq!((falling.max_rise, falling.max_rise_substep), (0.0, None));
        assert_eq!(falling.rise_text("the first"), ", never above the first");
        // Infinite from the start (QA 2026-12-07: "never above the start").
        let inf = EnergySummary::of(&[point(0, f64::INFINITY), point(1, f64::NAN)]).unwrap();
        assert_eq!(
            inf.rise_text("the start"),
            ", not finite at the start: no rise can be judged"
        );
        assert!(EnergySummary::of(&[]).is_none());
        // -0 J (bodies at height 0) is reported as 0, which prints as 0, not -0.
        let zero = EnergySummary::of(&[point(0, -0.0), point(1, -0.0)]).unwrap();
        assert!(zero.first.is_sign_positive() && zero.last.is_sign_positive());
        assert_eq!(format!("{:.6e}", zero.first), "0.000000e0");
    }

    use super::*;
    use crate::testutil::{self, OwnedFrame};
    use crate::Header;

    /// 6 joints, 400 substeps of smooth residuals around 1e-4 with ±5% deterministic noise.
    fn smooth() -> Vec<OwnedFrame> {
        let mut frames = testutil::frames(1, 6, 400, 0);
        for (s, f) in frames.iter_mut().enumerate() {
            for (j, row) in f.diagnostics.iter_mut().enumerate() {
                let noise = (((s * 7919 + j * 104_729) % 1000) as f32 / 1000.0 - 0.5) * 1e-5;
                row[3] = 1e-4 + noise;
                row[4] = 2e-4 + noise;
                row[5] = 0.0;
                row[6] = 0.01 * (s as f32 * 0.05).sin();
            }
        }
        frames
    }

    fn reader(frames: &[OwnedFrame]) -> LogReader {
        LogReader::from_bytes(&testutil::log_bytes(&testutil::header(1, 6), frames, true)).unwrap()
    }

    /// A log whose writer built the spike index with `params`.
    fn indexed_reader(frames: &[OwnedFrame], params: &SpikeParams, finish: bool) -> LogReader {
        let header = Header {
            spike_index: Some(params.clone()),
            ..testutil::header(1, 6)
        };
        LogReader::from_bytes(&testutil::log_bytes(&header, frames, finish)).unwrap()
    }

    /// The module docs' rule without any of the finder's shortcuts: per watched slot, the
    /// finite values of the last `window` frames; non-finite values reported once per run of
    /// them, in the watched columns.
    fn naive_spikes(frames: &[OwnedFrame], params: &SpikeParams) -> Vec<Spike> {
        use std::collections::VecDeque;
        let joints = frames[0].diagnostics.len();
        let window = params.window.max(1);
        let cols = params.columns.len();
        let mut rings = vec![VecDeque::<f32>::new(); joints * cols];
        let mut in_spike = vec![false; joints * cols];
        let mut non_finite = vec![false; joints * 8];
        let mut out = Vec::new();
        let stats = |ring: &VecDeque<f32>| -> Option<(f32, f32)> {
            let mut v: Vec<f32> = ring.iter().copied().filter(|x| !x.is_nan()).collect();
            if v.is_empty() {
                return None;
            }
            let med = median(&mut v);
            let mut dev: Vec<f32> = v.iter().map(|x| (x - med).abs()).collect();
            Some((med, median(&mut dev)))
        };
        for f in frames {
            let mut found = Vec::new();
            for (j, row) in f.diagnostics.iter().enumerate() {
                for (ci, &c) in params.columns.iter().enumerate() {
                    let v = row[c];
                    if !v.is_finite() && !non_finite[j * 8 + c] {
                        let baseline = stats(&rings[j * cols + ci]).map_or(f32::NAN, |(m, _)| m);
                        found.push(Spike {
                            substep: f.substep,
                            time: f.time,
                            joint: j as u32,
                            column: c as u8,
                            value: v,
                            baseline,
                        });
                    }
                    non_finite[j * 8 + c] = !v.is_finite();
                }
                for (ci, &c) in params.columns.iter().enumerate() {
                    let v = row[c];
                    let slot = j * cols + ci;
                    let ring = &rings[slot];
                    let n = ring.iter().filter(|x| !x.is_nan()).count();
                    let candidate = v > params.abs_threshold;
                    if v.is_finite()
                        && (in_spike[slot] || (candidate && n >= params.min_history.max(1)))
                    {
                        let (med, mad) = stats(ring).unwrap_or((v, 0.0));
                        let scale = (1.4826 * mad)
                            .max(params.rel_floor * med.abs())
                            .max(params.abs_floor);
                        let score = (v - med) / scale;
                        if in_spike[slot] {
                            if !candidate || score < 0.5 * params.k {
                                in_spike[slot] = false;
                            }
                        } else if score > params.k {
                            in_spike[slot] = true;
                            found.push(Spike {
                                substep: f.substep,
                                time: f.time,
                                joint: j as u32,
                                column: c as u8,
                                value: v,
                                baseline: med,
                            });
                        }
                    }
                    let ring = &mut rings[slot];
                    ring.push_back(if v.is_finite() { v } else { f32::NAN });
                    if ring.len() > window {
                        ring.pop_front();
                    }
                }
            }
            found.sort_by_key(|s| (s.substep, s.joint, s.column));
            out.extend(found);
        }
        out
    }

    fn bits(s: &[Spike]) -> Vec<(u64, u32, u8, u32, u32)> {
        s.iter()
            .map(|s| {
                (
                    s.substep,
                    s.joint,
                    s.column,
                    s.value.to_bits(),
                    s.baseline.to_bits(),
                )
            })
            .collect()
    }

    /// Smooth data with an early decaying spike, a plateau and a NaN.
    fn eventful() -> Vec<OwnedFrame> {
        let mut frames = smooth();
        for (k, f) in frames[5..].iter_mut().enumerate() {
            f.diagnostics[2][3] += 0.05 * (-(k as f32) / 10.0).exp();
        }
        for f in &mut frames[100..300] {
            f.diagnostics[4][5] = 0.02;
        }
        frames[350].diagnostics[1][4] = f32::NAN;
        frames
    }

    #[test]
    fn the_spike_index_holds_exactly_what_a_scan_finds() {
        let frames = eventful();
        let params = SpikeParams::default();
        let scanned = scan_spikes(&reader(&frames), &params).unwrap();
        assert_eq!(scanned.len(), 3);

        let r = indexed_reader(&frames, &params, true);
        let (found, source) = spikes_with_source(&r, &params).unwrap();
        assert_eq!(source, SpikeSource::Index);
        assert_eq!(bits(&found), bits(&scanned));
        assert_eq!(bits(&scan_spikes(&r, &params).unwrap()), bits(&scanned));

        // Other parameters: the index does not apply, the log is scanned.
        let other = SpikeParams {
            k: 4.0,
            ..params.clone()
        };
        let (_, source) = spikes_with_source(&r, &other).unwrap();
        assert_eq!(source, SpikeSource::Scan);
        // A log without a footer (writer killed): scanned, same result.
        let torn = indexed_reader(&frames, &params, false);
        let (found, source) = spikes_with_source(&torn, &params).unwrap();
        assert_eq!(source, SpikeSource::Scan);
        assert_eq!(bits(&found), bits(&scanned));
        // No index asked for: scanned.
        let (_, source) = spikes_with_source(&reader(&frames), &params).unwrap();
        assert_eq!(source, SpikeSource::Scan);
        let json = serde_json::to_value(report(&r, &params).unwrap()).unwrap();
        assert_eq!(json["source"], "index");
    }

    #[test]
    fn a_header_with_a_spike_column_out_of_range_is_refused() {
        let header = Header {
            spike_index: Some(SpikeParams {
                columns: vec![3, 9],
                ..SpikeParams::default()
            }),
            ..testutil::header(1, 6)
        };
        let err = header.validate().unwrap_err();
        assert!(err.contains("column 9"), "{err}");
    }

    #[test]
    fn median_mad_by_one_sort_has_the_bits_of_two_selections() {
        // Sizes 1 to 40 (odd and even), ties, signed zeros, negative and huge values.
        let mut rng = testutil::XorShift(0x2545_f491_4f6c_dd1d);
        let pool = [0.0, -0.0, 1e-3, 1e-3, -2.5, 3e38, -3e38, 7.0, 1e-30];
        for trial in 0..4000 {
            let n = 1 + trial % 40;
            let values: Vec<f32> = (0..n)
                .map(|_| match rng.next_u64() % 4 {
                    0 => pool[(rng.next_u64() % pool.len() as u64) as usize],
                    _ => rng.next_signed() * 2e-3,
                })
                .collect();
            let mut sorted = values.clone();
            let (med, mad) = median_mad(&mut sorted).unwrap();
            let mut v = values.clone();
            let reference_med = median(&mut v);
            let mut dev: Vec<f32> = values.iter().map(|x| (x - reference_med).abs()).collect();
            let reference_mad = median(&mut dev);
            assert_eq!(
                (med.to_bits(), mad.to_bits()),
                (reference_med.to_bits(), reference_mad.to_bits()),
                "{values:?}"
            );
        }
        assert_eq!(median_mad(&mut []), None);
    }

    #[test]
    fn the_prefilter_never_changes_a_result() {
        // Random-walk residuals with bursts, several parameter sets: the finder with the
        // median-free prefilter must give the bits of the finder without it.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut frames = testutil::frames(1, 6, 600, 0);
        let mut level = [1e-3f32; 6];
        for f in frames.iter_mut() {
            for (j, row) in f.diagnostics.iter_mut().enumerate() {
                level[j] = (level[j] * (0.8 + 0.4 * rnd())).clamp(1e-6, 1.0);
                let burst = if rnd() < 0.02 { 20.0 * rnd() } else { 1.0 };
                row[3] = level[j] * burst;
                row[4] = if rnd() < 0.5 { 0.0 } else { level[j] * rnd() };
                row[5] = (level[j] - 2e-3).max(0.0) * burst;
                // Now and then a non-finite value (kept out of the baselines).
                if rnd() < 0.003 {
                    row[3 + (j % 3)] = if rnd() < 0.5 { f32::NAN } else { f32::INFINITY };
                }
            }
        }
        let r = reader(&frames);
        let param_sets = [
            SpikeParams::default(),
            SpikeParams {
                abs_threshold: 0.0,
                ..SpikeParams::default()
            },
            SpikeParams {
                k: 3.0,
                rel_floor: 0.5,
                window: 7,
                ..SpikeParams::default()
            },
            SpikeParams {
                k: 0.0,
                rel_floor: 0.0,
                min_history: 1,
                ..SpikeParams::default()
            },
            SpikeParams {
                window: 1,
                min_history: 1,
                k: 2.0,
                ..SpikeParams::default()
            },
            SpikeParams {
                abs_threshold: 0.0,
                columns: vec![3, 3, 4],
                ..SpikeParams::default()
            },
        ];
        for params in &param_sets {
            // The documented rule, written plainly (one deque of the last `window` frames per
            // slot), must give the same bits as the finder.
            let plain = naive_spikes(&frames, params);
            let mut fast = SpikeFinder::new(&r, params).unwrap();
            let mut exact = SpikeFinder::new(&r, params).unwrap();
            exact.prefilter = false;
            let (mut a, mut b) = (Vec::new(), Vec::new());
            fast.scan(&r, &mut a).unwrap();
            exact.scan(&r, &mut b).unwrap();
            assert!(!b.is_empty(), "{params:?}: no spikes to compare");
            assert_eq!(bits(&a), bits(&b), "{params:?}");
            assert_eq!(bits(&a), bits(&plain), "{params:?}: against the plain rule");
        }
    }

    #[test]
    fn no_false_spikes_on_smooth_data() {
        let r = reader(&smooth());
        assert_eq!(spikes(&r, &SpikeParams::default()).unwrap(), vec![]);
        // Even with a threshold below the data, smooth noise stays under the robust score.
        let strict = SpikeParams {
            abs_threshold: 0.0,
            ..SpikeParams::default()
        };
        assert_eq!(spikes(&r, &strict).unwrap(), vec![]);
    }

    #[test]
    fn finds_an_early_decaying_spike_a_plateau_and_a_nan_once_each() {
        let mut frames = smooth();
        // Joint 2, anchor error: jumps to 0.05 at substep 5 and decays with a 10-substep
        // time constant.
        for (k, f) in frames[5..].iter_mut().enumerate() {
            f.diagnostics[2][3] += 0.05 * (-(k as f32) / 10.0).exp();
        }
        // Joint 4, limit violation: a 0.02 plateau from substep 100 to 299.
        for f in &mut frames[100..300] {
            f.diagnostics[4][5] = 0.02;
        }
        // Joint 1, angular error: NaN at substeps 350..352.
        for f in &mut frames[350..353] {
            f.diagnostics[1][4] = f32::NAN;
        }
        let r = reader(&frames);
        let found = spikes(&r, &SpikeParams::default()).unwrap();
        assert_eq!(found.len(), 3, "{found:#?}");

        let early = &found[0];
        assert_eq!((early.substep, early.joint, early.column), (5, 2, 3));
        assert_eq!(early.time, frames[5].time);
        assert_eq!(early.value, frames[5].diagnostics[2][3]);
        assert!((early.value - 0.0501).abs() < 1e-5, "{}", early.value);
        assert!((early.baseline - 1e-4).abs() < 1e-5, "{}", early.baseline);

        let plateau = &found[1];
        assert_eq!(
            (plateau.substep, plateau.joint, plateau.column),
            (100, 4, 5)
        );
        assert_eq!(plateau.value, 0.02);
        assert_eq!(plateau.baseline, 0.0);

        let nan = &found[2];
        assert_eq!((nan.substep, nan.joint, nan.column), (350, 1, 4));
        assert!(nan.value.is_nan());
        assert!((nan.baseline - 2e-4).abs() < 1e-5, "{}", nan.baseline);

        let json = serde_json::to_value(report(&r, &SpikeParams::default()).unwrap()).unwrap();
        assert_eq!(json["frames"], 400);
        assert_eq!(json["spikes"][0]["substep"], 5);
        assert_eq!(json["spikes"][0]["joint"], 2);
        assert_eq!(json["spikes"][0]["column"], 3);
        assert!(json["spikes"][2]["value"].is_null());
    }

    /// QA (2026-12-06): a frame gone non-finite in every column gave a spike in each of the
    /// eight, whatever the columns asked for (`Log.spikes(columns=[5])` listed columns 0 to
    /// 7 but 5). Only the watched columns report, each once.
    #[test]
    fn a_non_finite_frame_gives_spikes_in_the_watched_columns_only() {
        let mut frames = smooth();
        for f in &mut frames[350..] {
            f.diagnostics[1] = [f32::NAN; 8];
        }
        let r = reader(&frames);
        let columns = |found: Vec<Spike>| -> Vec<(u64, u32, u8)> {
            found
                .iter()
                .map(|s| (s.substep, s.joint, s.column))
                .collect()
        };
        let default = spikes(&r, &SpikeParams::default()).unwrap();
        assert_eq!(
            columns(default),
            vec![(350, 1, 3), (350, 1, 4), (350, 1, 5)]
        );
        let limit_only = SpikeParams {
            columns: vec![5],
            ..SpikeParams::default()
        };
        let found = spikes(&r, &limit_only).unwrap();
        assert!(found[0].baseline.is_finite(), "{found:?}");
        assert_eq!(columns(found), vec![(350, 1, 5)]);
    }

    #[test]
    fn timeline_and_worst_joints() {
        let mut frames = smooth();
        frames[40].diagnostics[3][3] = 0.3;
        frames[41].diagnostics[5][4] = 0.2;
        frames[60].diagnostics[0][7] = f32::INFINITY;
        let r = reader(&frames);
        let t = timeline(&r);
        assert_eq!(t.len(), 400);
        assert_eq!(t[40].max_anchor_error, 0.3);
        assert_eq!(t[41].max_angular_error, 0.2);
        assert!(t[60].non_finite && !t[59].non_finite);

        let worst = worst_joints(&r, 2).unwrap();
        assert_eq!(worst.len(), 2);
        assert_eq!(
            (worst[0].joint, worst[0].first_non_finite_substep),
            (0, Some(60))
        );
        assert_eq!(worst[1].joint, 3);
        assert_eq!(worst[1].name, "hinge3");
        assert_eq!(
            (worst[1].peak_anchor_error, worst[1].anchor_error_substep),
            (0.3, Some(40))
        );
        let all = worst_joints(&r, 100).unwrap();
        assert_eq!(all.len(), 6);
        let j5 = all.iter().find(|w| w.joint == 5).unwrap();
        assert_eq!(
            (j5.peak_angular_error, j5.angular_error_substep),
            (0.2, Some(41))
        );
        // A column that never rose above 0 has no peak substep (QA 2026-12-06: it said 0,
        // which reads as "peaked at substep 0").
        assert_eq!(
            (j5.peak_limit_violation, j5.limit_violation_substep),
            (0.0, None)
        );
        // With progress: the same joints, the frames read reported in order up to the end.
        let mut reported = Vec::new();
        let (with, _) =
            worst_joints_skipping_with_progress(&r, 100, &mut |done| reported.push(done)).unwrap();
        assert_eq!(with, all);
        assert_eq!(reported, [0, 400]);
    }

    /// QA (2026-12-07): a free body that blew up, every joint finite, was named nowhere.
    /// The first frame whose state is non-finite names it; an infinite energy with the
    /// state finite does not count.
    #[test]
    fn the_first_body_whose_state_went_non_finite_is_named_from_the_index() {
        let header = testutil::header(3, 1);
        let mut frames = testutil::frames(3, 1, 60, 0);
        for f in &mut frames[10..] {
            f.total_energy = f64::INFINITY;
        }
        let read = |frames: &[OwnedFrame]| {
            LogReader::from_bytes(&testutil::log_bytes(&header, frames, true)).unwrap()
        };
        assert_eq!(first_non_finite_body(&read(&frames)), None);
        frames[40].velocities[2][0] = f32::INFINITY;
        frames[41].poses[1][1] = f32::NAN;
        frames[41].velocities[2][0] = f32::NAN;
        let found = first_non_finite_body(&read(&frames)).unwrap();
        assert_eq!(
            found,
            NonFiniteBody {
                index: 2,
                name: "link2".into(),
                substep: 40,
                time: frames[40].time,
            }
        );
        let json = serde_json::to_value(&found).unwrap();
        assert_eq!(json["name"], "link2");
        assert_eq!(json["substep"], 40);
    }

    #[test]
    fn a_joint_history_holds_its_columns_and_the_peaks_of_the_worst_joints() {
        let mut frames = smooth();
        frames[40].diagnostics[3][3] = 0.3;
        frames[41].diagnostics[3][7] = -2.5;
        frames[90].diagnostics[3][7] = 5.0;
        let r = reader(&frames);
        assert!(JointHistory::new(&r, 6).is_err(), "6 joints: 0 to 5");
        let mut whole = JointHistory::new(&r, 3).unwrap();
        whole.read(&r, 0..r.len(), false).unwrap();
        assert_eq!(whole.substeps, (0..400).collect::<Vec<u64>>());
        for (c, column) in whole.columns.iter().enumerate() {
            let expected: Vec<f32> = frames.iter().map(|f| f.diagnostics[3][c]).collect();
            assert_eq!(column, &expected, "column {c}");
        }
        assert_eq!(whole.times[7], r.frame(7).unwrap().time());
        // The peaks are the worst joints' for this joint.
        let worst = worst_joints(&r, 6).unwrap();
        assert_eq!(&whole.peaks, worst.iter().find(|w| w.joint == 3).unwrap());
        assert_eq!(
            (
                whole.peaks.peak_anchor_error,
                whole.peaks.anchor_error_substep
            ),
            (0.3, Some(40))
        );
        assert_eq!(whole.range(7), Some(((-2.5, 41), (5.0, 90))));
        // Read in pieces: the same history.
        let mut pieces = JointHistory::new(&r, 3).unwrap();
        for range in [0..100, 100..101, 101..400] {
            pieces.read(&r, range, false).unwrap();
        }
        assert_eq!(pieces, whole);
    }

    #[test]
    fn a_joint_history_passes_over_a_corrupt_frame_only_when_asked() {
        let frames = smooth();
        let mut bytes = testutil::log_bytes(&testutil::header(1, 6), &frames, true);
        let clean = LogReader::from_bytes(&bytes).unwrap();
        let meta = clean.index()[10];
        bytes[(meta.offset + meta.len - 1) as usize] ^= 0x40;
        let r = LogReader::from_bytes(&bytes).unwrap();
        let mut strict = JointHistory::new(&r, 2).unwrap();
        let err = strict.read(&r, 0..r.len(), false).unwrap_err();
        assert!(
            matches!(err, ReplayError::CorruptFrame { index: 10, .. }),
            "{err}"
        );
        let mut lenient = JointHistory::new(&r, 2).unwrap();
        lenient.read(&r, 0..r.len(), true).unwrap();
        assert_eq!(
            lenient.skipped,
            vec![SkippedFrame {
                index: 10,
                substep: 10
            }]
        );
        assert_eq!(lenient.substeps.len(), 399);
        assert!(!lenient.substeps.contains(&10));
        assert_eq!(lenient.columns[3][10], frames[11].diagnostics[2][3]);
    }

    #[test]
    fn scanning_in_pieces_finds_exactly_the_spikes_of_the_whole_log() {
        let frames = eventful();
        let whole = spikes(&reader(&frames), &SpikeParams::default()).unwrap();
        assert_eq!(whole.len(), 3);
        let mut finder = SpikeFinder::new(&reader(&frames[..1]), &SpikeParams::default()).unwrap();
        let mut found = Vec::new();
        for end in [1, 6, 7, 99, 100, 101, 351, 400] {
            finder.scan(&reader(&frames[..end]), &mut found).unwrap();
            assert_eq!(finder.frames_seen(), end);
        }
        assert_eq!(found.len(), whole.len());
        for (a, b) in found.iter().zip(&whole) {
            assert_eq!(
                (a.substep, a.joint, a.column),
                (b.substep, b.joint, b.column)
            );
            assert_eq!(a.value.to_bits(), b.value.to_bits());
            assert_eq!(a.baseline.to_bits(), b.baseline.to_bits());
        }
    }

    #[test]
    fn bad_tuning_is_refused_with_the_valid_range() {
        let bad = [
            (
                SpikeParams {
                    k: f32::NAN,
                    ..SpikeParams::default()
                },
                "k = NaN",
            ),
            (
                SpikeParams {
                    k: -1.0,
                    ..SpikeParams::default()
                },
                "k = -1",
            ),
            (
                SpikeParams {
                    abs_threshold: f32::NAN,
                    ..SpikeParams::default()
                },
                "threshold NaN",
            ),
            (
                SpikeParams {
                    window: 0,
                    ..SpikeParams::default()
                },
                "window of 0",
            ),
            (
                SpikeParams {
                    window: 1,
                    ..SpikeParams::default()
                },
                "window of 1",
            ),
        ];
        for (params, says) in bad {
            let err = SpikeFinder::for_joints(3, &params)
                .err()
                .expect("refused")
                .to_string();
            assert!(err.contains(says), "{err}");
        }
        // A window too large to keep is refused before anything is allocated.
        let huge = SpikeParams {
            window: 1_000_000_000,
            ..SpikeParams::default()
        };
        let err = SpikeFinder::for_joints(1000, &huge)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("use a smaller window"), "{err}");
    }
}
