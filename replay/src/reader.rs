//! The reader: maps a log, recovers what a killed writer left, validates each frame once and
//! serves archived data in place.
//!
//! Opening a finished log reads only the prefix, the header and the footer index; frames are
//! validated (checksum + rkyv bytecheck) the first time they are touched. Opening a log without
//! a usable footer scans and validates every frame, stopping at the first torn or corrupt
//! record, and reports what it dropped in [`LogReader::recovery`].

use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::Arc;

use memmap2::Mmap;
use rkyv::rancor;
use rkyv::util::AlignedVec;

use crate::error::{ReplayError, Result};
use crate::format::{
    align16, check_magic, decode_record_head, record_crc, ArchivedFooterRecord,
    ArchivedFrameRecord, FrameInput, FrameMeta, FrameSummary, Header, Prefix, FORMAT_MAJOR,
    KIND_FOOTER, KIND_FRAME, MAGIC, PREFIX_SIZE, RECORD_ALIGN, RECORD_HEAD_SIZE, TRAILER_MAGIC,
    TRAILER_SIZE,
};
use crate::scrub::{Spike, SpikeParams};

const UNCHECKED: u8 = 0;
const VALID: u8 = 1;
const INVALID: u8 = 2;

/// Why a log was opened by recovery rather than through its footer.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecoveryReason {
    /// The writer never called `finish` (killed, crashed, or still running); every byte
    /// after the header was a complete frame.
    NoFooter,
    /// The last record is incomplete: the writer was stopped mid-write (or is still writing).
    TornTail {
        /// Byte offset of the incomplete record.
        offset: u64,
    },
    /// A record failed its checksum or validation; it and everything after it were dropped.
    Corrupt {
        /// Byte offset of the bad record.
        offset: u64,
        /// What check failed.
        detail: String,
    },
    /// A footer record is present but could not be used (damaged footer or trailer).
    UnusableFooter {
        /// Byte offset of the footer record.
        offset: u64,
        /// What check failed.
        detail: String,
    },
}

impl RecoveryReason {
    /// What recovery found, without the guess at its cause that `Display` adds ("its
    /// writer is still writing, or was stopped"): for a caller that knows which, from the
    /// writer's lock ([`crate::files::no_writer`]), and says it once (QA 2026-12-07: both
    /// asides were printed).
    pub fn finding(&self) -> String {
        match self {
            RecoveryReason::NoFooter => "the log has no footer yet".into(),
            RecoveryReason::TornTail { offset } => {
                format!("the record at byte {offset} is incomplete")
            }
            other => other.to_string(),
        }
    }
}

impl RecoveryReason {
    /// The reason as a sentence for the log at `path`, its "still writing, or stopped" aside
    /// settled by the writer's lock where locks work ([`crate::files::no_writer`]): what the
    /// command line's notes and Python's `Log.recovery` say alike (QA 2026-12-08: they
    /// differed for a log cut short by hand).
    pub fn described(&self, path: &Path) -> String {
        let unfinished = matches!(
            self,
            RecoveryReason::NoFooter | RecoveryReason::TornTail { .. }
        );
        match (unfinished, crate::files::no_writer(path)) {
            (true, Some(true)) => format!(
                "{} (no writer holds it now: its writer was stopped before it finished, or the \
                 file was cut short)",
                self.finding()
            ),
            (true, Some(false)) => format!(
                "{} (a writer holds it now: it is still being written)",
                self.finding()
            ),
            _ => self.to_string(),
        }
    }
}

impl fmt::Display for RecoveryReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecoveryReason::NoFooter => {
                write!(
                    f,
                    "the log has no footer yet (its writer is still writing, was stopped \
                     before it finished, or the file was cut short)"
                )
            }
            RecoveryReason::TornTail { offset } => {
                write!(
                    f,
                    "the record at byte {offset} is incomplete (its writer is still writing it, \
                     was stopped mid-write, or the file was cut short)"
                )
            }
            RecoveryReason::Corrupt { offset, detail } => {
                write!(f, "the record at byte {offset} is corrupt ({detail})")
            }
            RecoveryReason::UnusableFooter { offset, detail } => {
                write!(f, "the footer at byte {offset} is unusable ({detail})")
            }
        }
    }
}

/// What recovery had to do to open a log.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Recovery {
    /// Bytes at the end of the file that are not part of any recovered frame.
    pub dropped_bytes: u64,
    /// Why.
    pub reason: RecoveryReason,
    /// Corrupt records between recovered frames, passed over (the frames after them are
    /// recovered too): the log has gaps there. Empty for a log its writer was merely stopped
    /// in.
    pub skipped: Vec<SkippedRecord>,
}

/// Bytes between two recovered frames of a log without a usable footer that hold no valid
/// frame: a damaged record (or several), passed over by recovery, which went on from the
/// next valid frame record after it. The substeps it held are missing from the log.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkippedRecord {
    /// Byte offset of the first bad record.
    pub offset: u64,
    /// Bytes passed over (to the next valid frame record).
    pub bytes: u64,
    /// What check the first bad record failed.
    pub detail: String,
    /// Index of the recovered frame before the gap (`None` when it comes before the first).
    pub after_frame: Option<usize>,
    /// Substep of that frame.
    pub after_substep: Option<u64>,
    /// Substep of the recovered frame after the gap.
    pub before_substep: u64,
}

impl SkippedRecord {
    /// The stretch from the bad record at `offset` to the valid frame record at `next`, after
    /// `frames` (of this scan; `last` the summary of the frame before).
    fn before(
        offset: u64,
        next: u64,
        detail: String,
        frames: &[FrameMeta],
        last: Option<FrameSummary>,
    ) -> SkippedRecord {
        SkippedRecord {
            offset,
            bytes: next - offset,
            detail,
            after_frame: frames.len().checked_sub(1),
            after_substep: last.map(|p| p.substep),
            before_substep: 0, // set when the frame at `next` is read
        }
    }
}

impl fmt::Display for SkippedRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let between = match self.after_substep {
            Some(a) => format!("between substeps {a} and {}", self.before_substep),
            None => format!("before substep {}", self.before_substep),
        };
        write!(
            f,
            "{} bytes at byte {} {between} hold no valid frame (the first record there: {}); \
             the substeps they held are missing",
            self.bytes, self.offset, self.detail
        )
    }
}

/// The bytes a reader reads from, shared with the [`StorageKeepAlive`] handles it gave out.
enum Storage {
    Mapped { map: Arc<Mmap>, file: File },
    Owned(Arc<AlignedVec<16>>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped { map, .. } => map,
            Storage::Owned(v) => v,
        }
    }
}

/// Keeps the bytes a [`LogReader`] read from alive: see [`LogReader::keep_alive`].
#[derive(Clone)]
pub struct StorageKeepAlive {
    /// Held, never read: while it lives, so do the bytes.
    _storage: Arc<dyn std::any::Any + Send + Sync>,
}

impl fmt::Debug for StorageKeepAlive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StorageKeepAlive")
    }
}

/// A log opened for reading.
pub struct LogReader {
    path: PathBuf,
    storage: Storage,
    prefix: Prefix,
    header: Header,
    data_start: u64,
    frames: Vec<FrameMeta>,
    /// Per frame: UNCHECKED, VALID or INVALID.
    checked: Vec<AtomicU8>,
    /// Per VALID frame: the checksum its record head held when it was validated. A frame
    /// read again is served only while its head still holds it (see [`LogReader::frame`]).
    checksums: Vec<AtomicU32>,
    /// Indices of frames that carry solver state, ascending.
    keyframes: Vec<usize>,
    /// A valid footer was read: the log is complete.
    finished: bool,
    /// End of the last recovered frame record (where a refresh resumes scanning).
    scan_end: u64,
    recovery: Option<Recovery>,
    /// Corrupt stretches recovery passed over, over every scan (see [`SkippedRecord`]).
    skipped: Vec<SkippedRecord>,
    /// The footer's spike index (finished logs whose header asked for one).
    spike_index: Option<Vec<Spike>>,
}

impl fmt::Debug for LogReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogReader")
            .field("path", &self.path)
            .field("frames", &self.frames.len())
            .field("finished", &self.finished)
            .field("recovery", &self.recovery)
            .finish_non_exhaustive()
    }
}

fn corrupt_header(path: &Path, detail: impl Into<String>) -> ReplayError {
    ReplayError::CorruptHeader {
        path: path.to_path_buf(),
        detail: format!("the log header is corrupt ({})", detail.into()),
    }
}

/// A file that ends before its header does, `len` bytes long where the header needs
/// `needed`: cut short, however short (QA 2026-12-07: 1 to 7 bytes read as "cut short", 8 to
/// 31 as "corrupt", and a cut header compared its body's length with the whole file's).
fn header_cut_short(path: &Path, len: usize, needed: u64, what: &str) -> ReplayError {
    ReplayError::CorruptHeader {
        path: path.to_path_buf(),
        detail: format!(
            "the file is cut short ({len} bytes) inside the log's {what} {needed} bytes: its \
             header was never written whole (its writer was stopped as it started, or the \
             file was truncated)"
        ),
    }
}

/// The longest header a prefix may give: 4 GiB, far above any scene's TOML and names (a
/// million bodies' names are tens of MB).
const MAX_HEADER_LEN: u64 = 1 << 32;

/// Reads the prefix and header from the start of `bytes`; returns them and the data start.
fn parse_header(path: &Path, bytes: &[u8]) -> Result<(Prefix, Header, u64)> {
    let prefix_cut = |len| header_cut_short(path, len, PREFIX_SIZE as u64, "prefix, which is");
    if !bytes.is_empty() && bytes.len() < MAGIC.len() && MAGIC.starts_with(bytes) {
        return Err(prefix_cut(bytes.len()));
    }
    if !check_magic(bytes) {
        return Err(ReplayError::NotALog {
            path: path.to_path_buf(),
            found: bytes[..bytes.len().min(8)].to_vec(),
        });
    }
    let Some(prefix_bytes) = bytes.get(..PREFIX_SIZE) else {
        return Err(prefix_cut(bytes.len()));
    };
    let prefix = Prefix::decode(prefix_bytes.try_into().expect("PREFIX_SIZE bytes"));
    if prefix.major != FORMAT_MAJOR {
        return Err(ReplayError::UnsupportedVersion {
            path: path.to_path_buf(),
            major: prefix.major,
            minor: prefix.minor,
            supported: FORMAT_MAJOR,
        });
    }
    // A length no header reaches is a damaged prefix, not a file cut short.
    if prefix.header_len > MAX_HEADER_LEN {
        return Err(corrupt_header(
            path,
            format!(
                "its prefix gives a header of {} bytes, more than any log's header holds",
                prefix.header_len
            ),
        ));
    }
    // Where the header ends, from the start of the file (prefix included), against the
    // file's length.
    let body_end = PREFIX_SIZE as u64 + prefix.header_len;
    if body_end > bytes.len() as u64 {
        // A writer writes its whole header before any frame: a frame record in the file
        // shows the header was written, and its length in the prefix is what is damaged
        // (QA 2026-12-07: a flipped bit there read as a killed writer's file).
        let first_record = (align16(PREFIX_SIZE)..bytes.len().saturating_sub(RECORD_HEAD_SIZE - 1))
            .step_by(RECORD_ALIGN)
            .find(|&o| {
                // A whole record whose checksum holds (not a name in the header's JSON).
                let (kind, crc, len) = decode_record_head(&bytes[o..o + RECORD_HEAD_SIZE]);
                let payload = usize::try_from(len)
                    .ok()
                    .and_then(|l| (o + RECORD_HEAD_SIZE).checked_add(l))
                    .and_then(|end| bytes.get(o + RECORD_HEAD_SIZE..end));
                (kind == KIND_FRAME || kind == KIND_FOOTER)
                    && payload.is_some_and(|p| record_crc(&bytes[o + 8..o + 16], p) == crc)
            });
        if let Some(at) = first_record {
            return Err(corrupt_header(
                path,
                format!(
                    "its prefix gives a header of {} bytes, but the file ({} bytes) holds a \
                     record from byte {at}: the prefix's length field is damaged",
                    prefix.header_len,
                    bytes.len()
                ),
            ));
        }
        return Err(header_cut_short(
            path,
            bytes.len(),
            body_end,
            "header, which runs to",
        ));
    }
    let body_end = body_end as usize;
    let body = &bytes[PREFIX_SIZE..body_end];
    if crc32fast::hash(body) != prefix.header_crc {
        return Err(corrupt_header(path, "header checksum mismatch"));
    }
    let header: Header = serde_json::from_slice(body)
        .map_err(|e| corrupt_header(path, format!("header JSON: {e}")))?;
    header.validate().map_err(|e| corrupt_header(path, e))?;
    let data_start = align16(body_end) as u64;
    if data_start > bytes.len() as u64 {
        return Err(header_cut_short(
            path,
            bytes.len(),
            data_start,
            "header, which with its padding runs to",
        ));
    }
    Ok((prefix, header, data_start))
}

/// The record head at `offset` (kind, checksum, payload length), if it lies in `bytes`.
fn record_head_at(bytes: &[u8], offset: u64) -> Option<([u8; 4], u32, u64)> {
    let start = usize::try_from(offset).ok()?;
    bytes
        .get(start..start.checked_add(RECORD_HEAD_SIZE)?)
        .map(decode_record_head)
}

/// Validates the frame record at `offset` (head, checksum, archive, shape) and returns its
/// payload range. Never reads out of bounds.
fn check_frame<'b>(
    bytes: &'b [u8],
    offset: u64,
    header: &Header,
) -> std::result::Result<(u64, &'b ArchivedFrameRecord<'static>), String> {
    let start = offset as usize;
    let head = bytes
        .get(start..start + RECORD_HEAD_SIZE)
        .ok_or("record head past the end of the file")?;
    let (kind, crc, len) = decode_record_head(head);
    if kind != KIND_FRAME {
        return Err(format!("expected a frame record, found kind {kind:02x?}"));
    }
    let payload_start = start + RECORD_HEAD_SIZE;
    let payload = usize::try_from(len)
        .ok()
        .and_then(|l| payload_start.checked_add(l))
        .and_then(|end| bytes.get(payload_start..end))
        .ok_or("payload past the end of the file")?;
    if record_crc(&head[8..16], payload) != crc {
        return Err("checksum mismatch".into());
    }
    let rec = rkyv::access::<ArchivedFrameRecord<'static>, rancor::Error>(payload)
        .map_err(|e| format!("archive validation failed: {e}"))?;
    if rec.poses.len() != header.body_count
        || rec.velocities.len() != header.body_count
        || rec.diagnostics.len() != header.joint_count
    {
        return Err(format!(
            "frame holds {} poses, {} velocities, {} joints; header declares {} bodies, {} joints",
            rec.poses.len(),
            rec.velocities.len(),
            rec.diagnostics.len(),
            header.body_count,
            header.joint_count
        ));
    }
    Ok((len, rec))
}

fn meta_of(offset: u64, len: u64, rec: &ArchivedFrameRecord<'static>) -> FrameMeta {
    let summary: FrameSummary =
        rkyv::deserialize::<FrameSummary, rancor::Error>(&rec.summary).expect("infallible");
    FrameMeta {
        offset,
        len,
        state_hash: rec.state_hash.to_native(),
        diagnostics_hash: diagnostics_hash_of(rec),
        has_solver_state: rec.solver_state.is_some(),
        summary,
    }
}

/// [`lavender_engine::diagnostics_hash`] of an archived frame's diagnostics.
#[cfg(target_endian = "little")]
fn diagnostics_hash_of(rec: &ArchivedFrameRecord<'_>) -> u64 {
    lavender_engine::diagnostics_hash(native(rec.diagnostics.get()))
}

/// See the little-endian version.
#[cfg(not(target_endian = "little"))]
fn diagnostics_hash_of(rec: &ArchivedFrameRecord<'_>) -> u64 {
    let rows: Vec<[f32; 8]> = rec
        .diagnostics
        .get()
        .iter()
        .map(|r| r.map(|v| v.to_native()))
        .collect();
    lavender_engine::diagnostics_hash(&rows)
}

/// True if `next` may follow `prev`: a later substep at the same or a later (finite) time.
fn in_order(prev: &FrameSummary, next: &FrameSummary) -> bool {
    next.substep > prev.substep && next.time >= prev.time
}

/// Field-by-field equality with floats compared bitwise (summaries may hold NaN).
fn same_meta(a: &FrameMeta, b: &FrameMeta) -> bool {
    let max_eq = |x: &crate::format::ColumnMax, y: &crate::format::ColumnMax| {
        x.value.to_bits() == y.value.to_bits() && x.joint == y.joint
    };
    let (sa, sb) = (&a.summary, &b.summary);
    (
        a.offset,
        a.len,
        a.state_hash,
        a.diagnostics_hash,
        a.has_solver_state,
    ) == (
        b.offset,
        b.len,
        b.state_hash,
        b.diagnostics_hash,
        b.has_solver_state,
    ) && sa.substep == sb.substep
        && sa.time.to_bits() == sb.time.to_bits()
        && sa.total_energy.to_bits() == sb.total_energy.to_bits()
        && max_eq(&sa.anchor_error, &sb.anchor_error)
        && max_eq(&sa.angular_error, &sb.angular_error)
        && max_eq(&sa.limit_violation, &sb.limit_violation)
        && (
            sa.first_non_finite_joint,
            sa.first_non_finite_body,
            sa.non_finite,
        ) == (
            sb.first_non_finite_joint,
            sb.first_non_finite_body,
            sb.non_finite,
        )
}

/// Outcome of a scan over frame records.
struct Scan {
    frames: Vec<FrameMeta>,
    end: u64,
    stop: RecoveryReason,
    /// Corrupt stretches passed over; `after_frame` counts the frames before the scan.
    skipped: Vec<SkippedRecord>,
}

/// The offset of the first valid frame record after the bad record at `bad` that follows
/// `last` in order, if any: where a scan goes on after a corrupt record. First the offset
/// the bad record's own length points to (a payload damaged, the length intact), then every
/// 16-byte boundary after it (records are 16-aligned; a damaged length); only candidates
/// that start with the frame kind are checked in full.
fn resync(bytes: &[u8], bad: u64, header: &Header, last: Option<&FrameSummary>) -> Option<u64> {
    let valid_at = |offset: u64| {
        check_frame(bytes, offset, header).is_ok_and(|(len, rec)| {
            last.is_none_or(|p| in_order(p, &meta_of(offset, len, rec).summary))
        })
    };
    let file_len = bytes.len() as u64;
    let head = bytes.get(bad as usize..bad as usize + RECORD_HEAD_SIZE)?;
    let (_, _, len) = decode_record_head(head);
    let declared = (RECORD_HEAD_SIZE as u64)
        .checked_add(len)
        .map(|l| bad + align16(l.min(file_len) as usize) as u64);
    if let Some(next) = declared.filter(|&n| n > bad && n < file_len) {
        if valid_at(next) {
            return Some(next);
        }
    }
    let first = bad as usize + 16;
    (first..bytes.len().saturating_sub(RECORD_HEAD_SIZE - 1))
        .step_by(16)
        .find(|&o| bytes[o..o + 4] == KIND_FRAME && valid_at(o as u64))
        .map(|o| o as u64)
}

fn scan(bytes: &[u8], from: u64, header: &Header, prev: Option<&FrameSummary>) -> Scan {
    let mut frames: Vec<FrameMeta> = Vec::new();
    let mut skipped = Vec::new();
    let mut offset = from;
    let mut last = prev.copied();
    let file_len = bytes.len() as u64;
    let stop = loop {
        if offset == file_len {
            break RecoveryReason::NoFooter;
        }
        let Some(head) = bytes.get(offset as usize..offset as usize + RECORD_HEAD_SIZE) else {
            break RecoveryReason::TornTail { offset };
        };
        let (kind, _, len) = decode_record_head(head);
        if kind == KIND_FOOTER {
            break RecoveryReason::UnusableFooter {
                offset,
                detail: "no valid trailer follows it".into(),
            };
        }
        let end = offset
            .checked_add(RECORD_HEAD_SIZE as u64)
            .and_then(|o| o.checked_add(len));
        if kind == KIND_FRAME && end.is_none_or(|e| e > file_len) {
            // The last record, cut short (its writer stopped mid-write, or is writing it)
            // unless a valid frame follows: then its length was damaged.
            match resync(bytes, offset, header, last.as_ref()) {
                Some(next) => {
                    let detail = format!("its length, {len} bytes, runs past the next frame");
                    skipped.push(SkippedRecord::before(offset, next, detail, &frames, last));
                    offset = next;
                    continue;
                }
                None => break RecoveryReason::TornTail { offset },
            }
        }
        let checked = check_frame(bytes, offset, header).and_then(|(len, rec)| {
            let meta = meta_of(offset, len, rec);
            match last {
                Some(p) if !in_order(&p, &meta.summary) => Err("frame out of order".to_string()),
                _ => Ok((len, meta)),
            }
        });
        match checked {
            Ok((len, meta)) => {
                if let Some(gap) = skipped
                    .last_mut()
                    .filter(|g: &&mut SkippedRecord| g.offset + g.bytes == offset)
                {
                    gap.before_substep = meta.summary.substep;
                }
                last = Some(meta.summary);
                frames.push(meta);
                offset += (RECORD_HEAD_SIZE + align16(len as usize)) as u64;
                if offset > file_len {
                    // The padding of the last frame is torn: the frame itself is complete.
                    offset = file_len;
                }
            }
            // A corrupt record followed by valid frames is passed over (QA 2026-12-06: one
            // flipped byte in a killed writer's log dropped every intact frame after it); one
            // followed by none ends the scan there.
            Err(detail) => match resync(bytes, offset, header, last.as_ref()) {
                Some(next) => {
                    skipped.push(SkippedRecord::before(offset, next, detail, &frames, last));
                    offset = next;
                }
                None => break RecoveryReason::Corrupt { offset, detail },
            },
        }
    };
    Scan {
        frames,
        end: offset,
        stop,
        skipped,
    }
}

/// Reads the trailer and footer index. Errors say why the footer cannot be used.
fn read_footer(
    bytes: &[u8],
    data_start: u64,
    header: &Header,
) -> std::result::Result<(u64, Vec<FrameMeta>, Vec<Spike>), String> {
    let file_len = bytes.len();
    if file_len < data_start as usize + TRAILER_SIZE || bytes[file_len - 8..] != TRAILER_MAGIC {
        return Err("no trailer".into());
    }
    let footer_offset = u64::from_le_bytes(
        bytes[file_len - 16..file_len - 8]
            .try_into()
            .expect("8 bytes"),
    );
    if footer_offset < data_start || footer_offset % 16 != 0 || footer_offset as usize > file_len {
        return Err(format!(
            "trailer points to byte {footer_offset}, outside the frames"
        ));
    }
    let start = footer_offset as usize;
    let head = bytes
        .get(start..start + RECORD_HEAD_SIZE)
        .ok_or("footer head past the end")?;
    let (kind, crc, len) = decode_record_head(head);
    if kind != KIND_FOOTER {
        return Err(format!("trailer points to a record of kind {kind:02x?}"));
    }
    let payload_start = start + RECORD_HEAD_SIZE;
    let expected_end = (file_len - TRAILER_SIZE) as u64;
    if (payload_start as u64)
        .checked_add(len)
        .map(|e| align16(e as usize) as u64)
        != Some(expected_end)
    {
        return Err("footer length does not reach the trailer".into());
    }
    let payload = &bytes[payload_start..payload_start + len as usize];
    if record_crc(&head[8..16], payload) != crc {
        return Err("footer checksum mismatch".into());
    }
    let footer = rkyv::access::<ArchivedFooterRecord<'static>, rancor::Error>(payload)
        .map_err(|e| format!("footer archive validation failed: {e}"))?;
    if footer.body_count.to_native() != header.body_count as u64
        || footer.joint_count.to_native() != header.joint_count as u64
    {
        return Err("footer counts disagree with the header".into());
    }
    let mut frames = Vec::with_capacity(footer.frames.len());
    let mut expect = data_start;
    for archived in footer.frames.iter() {
        let meta: FrameMeta =
            rkyv::deserialize::<FrameMeta, rancor::Error>(archived).map_err(|e| e.to_string())?;
        if meta.offset != expect {
            return Err(format!(
                "index entry {} is at byte {}, expected {expect}",
                frames.len(),
                meta.offset
            ));
        }
        if let Some(p) = frames.last().map(|m: &FrameMeta| m.summary) {
            if !in_order(&p, &meta.summary) {
                return Err(format!("index entry {} is out of order", frames.len()));
            }
        }
        expect = meta
            .len
            .checked_add(15 + RECORD_HEAD_SIZE as u64)
            .and_then(|l| expect.checked_add(l & !15))
            .ok_or("index entry length overflows")?;
        frames.push(meta);
    }
    if expect != footer_offset {
        return Err("index does not cover the frames exactly".into());
    }
    let spikes = footer
        .spikes
        .iter()
        .map(rkyv::deserialize::<Spike, rancor::Error>)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| format!("spike index: {e}"))?;
    Ok((footer_offset, frames, spikes))
}

/// Reinterprets archived little-endian floats as native floats, without copying.
///
/// rend's `f32_le` is `#[repr(C, align(4))] struct f32_le(f32)` whose stored bits are the
/// little-endian encoding; on a little-endian target that *is* the native `f32`, and both
/// types are `Pod`, so bytemuck's checked cast is exact. If rkyv were built for big-endian or
/// unaligned archives, the archived type would not be `f32_le` and this would not compile.
#[cfg(target_endian = "little")]
fn native<const N: usize>(archived: &[[rend::f32_le; N]]) -> &[[f32; N]]
where
    [rend::f32_le; N]: bytemuck::Pod,
    [f32; N]: bytemuck::Pod,
{
    bytemuck::cast_slice(archived)
}

/// See [`native`].
#[cfg(target_endian = "little")]
fn native_flat(archived: &[rend::f32_le]) -> &[f32] {
    bytemuck::cast_slice(archived)
}

impl LogReader {
    /// Memory-maps and opens a log, recovering a footer-less or torn one.
    ///
    /// # Safety
    ///
    /// The caller must guarantee that, for as long as the reader (and any view or slice it
    /// returns) is alive, no process truncates the file or modifies bytes already in it.
    /// Appending is allowed (that is how a live recording grows; see [`refresh`]). Changing
    /// mapped bytes would change data the reader has already validated and lent out as
    /// `&[f32]`, which is undefined behaviour; truncating can fault the process with SIGBUS.
    /// Logs written by [`LogWriter`](crate::LogWriter) only ever grow, so a reader of a log
    /// that Lavender is recording or has recorded is safe.
    ///
    /// [`refresh`]: LogReader::refresh
    pub unsafe fn open(path: impl AsRef<Path>) -> Result<LogReader> {
        let path = path.as_ref();
        let io = |action| {
            move |source| ReplayError::Io {
                action,
                path: path.to_path_buf(),
                source,
            }
        };
        let not_a_file = |meta: &std::fs::Metadata| {
            io("opening")(std::io::Error::other(if meta.is_dir() {
                "it is a directory; pass a log file (.lvlog)"
            } else {
                "it is not a regular file (a device or a pipe); pass a log file (.lvlog)"
            }))
        };
        // Judged before opening too: opening a FIFO waits for a writer (QA, 2026-12-05:
        // `lavender scrub fifo` hung).
        if let Ok(meta) = std::fs::metadata(path) {
            if !meta.is_file() {
                return Err(not_a_file(&meta));
            }
        }
        let file = File::open(path).map_err(io("opening"))?;
        let meta = file.metadata().map_err(io("reading metadata of"))?;
        if !meta.is_file() {
            return Err(not_a_file(&meta));
        }
        let len = meta.len();
        if len == 0 {
            return Err(ReplayError::NotALog {
                path: path.to_path_buf(),
                found: Vec::new(),
            });
        }
        // SAFETY: the caller guarantees (see `# Safety` above) that the file is neither
        // truncated nor modified while mapped, except by appends beyond the mapped length,
        // which do not affect the mapped bytes.
        let map = unsafe { Mmap::map(&file) }.map_err(io("mapping"))?;
        Self::from_storage(
            path.to_path_buf(),
            Storage::Mapped {
                map: Arc::new(map),
                file,
            },
        )
    }

    /// Opens a log held in memory (a copy is made into an aligned buffer). Safe: nothing else
    /// can change the bytes. [`refresh`](LogReader::refresh) on such a reader returns 0.
    pub fn from_bytes(bytes: &[u8]) -> Result<LogReader> {
        let mut v = AlignedVec::<16>::with_capacity(bytes.len());
        v.extend_from_slice(bytes);
        Self::from_storage(PathBuf::from("<memory>"), Storage::Owned(Arc::new(v)))
    }

    fn from_storage(path: PathBuf, storage: Storage) -> Result<LogReader> {
        let bytes = storage.bytes();
        let (prefix, header, data_start) = parse_header(&path, bytes)?;
        let mut reader = LogReader {
            path,
            prefix,
            header,
            data_start,
            frames: Vec::new(),
            checked: Vec::new(),
            checksums: Vec::new(),
            keyframes: Vec::new(),
            finished: false,
            scan_end: data_start,
            recovery: None,
            skipped: Vec::new(),
            spike_index: None,
            storage,
        };
        reader.load_from(data_start);
        Ok(reader)
    }

    /// Reads the footer if usable, else scans from `from` (frames before it are kept).
    fn load_from(&mut self, from: u64) {
        let bytes = self.storage.bytes();
        let footer_detail = match read_footer(bytes, self.data_start, &self.header) {
            Ok((footer_offset, frames, spikes)) => {
                let known = self.frames.len();
                let consistent = frames.len() >= known
                    && frames[..known]
                        .iter()
                        .zip(&self.frames)
                        .all(|(a, b)| same_meta(a, b));
                if consistent {
                    self.push_frames(frames[known..].to_vec(), UNCHECKED);
                    self.finished = true;
                    self.scan_end = footer_offset;
                    self.recovery = None;
                    self.spike_index = self.header.spike_index.is_some().then_some(spikes);
                    return;
                }
                Some("the index disagrees with the frames already read".to_string())
            }
            Err(detail) => Some(detail),
        };
        let prev = self.frames.last().map(|m| m.summary);
        let Scan {
            frames,
            end,
            stop,
            skipped,
        } = scan(bytes, from, &self.header, prev.as_ref());
        // Frame indices of the gaps count the frames read before this scan.
        let known = self.frames.len();
        self.skipped.extend(skipped.into_iter().map(|mut g| {
            g.after_frame = match g.after_frame {
                Some(i) => Some(known + i),
                None => known.checked_sub(1),
            };
            g
        }));
        let dropped_bytes = bytes.len() as u64 - end;
        let stop = match (stop, footer_detail) {
            (RecoveryReason::UnusableFooter { offset, .. }, Some(detail)) => {
                RecoveryReason::UnusableFooter { offset, detail }
            }
            (stop, _) => stop,
        };
        self.push_frames(frames, VALID);
        self.scan_end = end;
        tracing::debug!(path = %self.path.display(), dropped_bytes, reason = %stop, "log opened by recovery");
        self.recovery = Some(Recovery {
            dropped_bytes,
            reason: stop,
            skipped: self.skipped.clone(),
        });
    }

    fn push_frames(&mut self, frames: Vec<FrameMeta>, state: u8) {
        for m in frames {
            if m.has_solver_state {
                self.keyframes.push(self.frames.len());
            }
            // A frame a scan validated is in the bytes now: its head's checksum is the one.
            let crc = if state == VALID {
                record_head_at(self.storage.bytes(), m.offset).map_or(0, |(_, crc, _)| crc)
            } else {
                0
            };
            self.frames.push(m);
            self.checked.push(AtomicU8::new(state));
            self.checksums.push(AtomicU32::new(crc));
        }
    }

    /// Whether the path this log was opened from now names another file (a new recording
    /// to the same path replaces the file rather than truncating it, so this reader keeps
    /// the old one, which will not grow again): open the path again to read the new run.
    /// False for a log held in memory, or where the platform has no file identity.
    pub fn replaced(&self) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let Storage::Mapped { file, .. } = &self.storage else {
                return false;
            };
            match (file.metadata(), std::fs::metadata(&self.path)) {
                (Ok(open), Ok(now)) => (open.dev(), open.ino()) != (now.dev(), now.ino()),
                // Gone from its path: replaced by nothing (yet).
                (Ok(_), Err(_)) => true,
                _ => false,
            }
        }
        #[cfg(not(unix))]
        {
            false
        }
    }

    /// An error when the mapped file is now shorter than its mapping: another program
    /// truncated it in place, and reading the lost pages would kill the process with
    /// SIGBUS. One `fstat`; the Python `Log` calls it before every read, which turns the
    /// common case (a file overwritten in place between two calls, QA 2026-12-05) into an
    /// `OSError` (a truncation during a read still crashes: the contract of `open`).
    pub fn check_length(&self) -> Result<()> {
        self.checked_file_len().map(|_| ())
    }

    /// The mapped file's length now (`None` for a log held in memory), an error when it is
    /// shorter than the mapping (see [`LogReader::check_length`]).
    fn checked_file_len(&self) -> Result<Option<u64>> {
        let Storage::Mapped { map, file } = &self.storage else {
            return Ok(None);
        };
        let now = file
            .metadata()
            .map_err(|source| ReplayError::Io {
                action: "reading metadata of",
                path: self.path.clone(),
                source,
            })?
            .len();
        let was = map.len() as u64;
        if now < was {
            return Err(ReplayError::FileShrank {
                path: self.path.clone(),
                was,
                now,
            });
        }
        Ok(Some(now))
    }

    /// Re-maps a growing file and picks up the complete frames appended since the last call
    /// (or since open). Returns how many frames were added. A log that was finished when last
    /// read, or one held in memory, never grows.
    pub fn refresh(&mut self) -> Result<usize> {
        let Some(len) = self.checked_file_len()? else {
            return Ok(0);
        };
        let Storage::Mapped { map, file } = &self.storage else {
            return Ok(0);
        };
        if self.finished || len == map.len() as u64 {
            return Ok(0);
        }
        let path = self.path.clone();
        let io = |action| {
            let path = path.clone();
            move |source| ReplayError::Io {
                action,
                path,
                source,
            }
        };
        // SAFETY: the contract of `open` (no truncation, no modification except appends)
        // covers the whole life of this reader, so it holds for the new mapping too. `&mut
        // self` guarantees no borrow of the old mapping is alive here, and handles from
        // `keep_alive` keep it mapped for views that outlive the borrow (bindings).
        let map = unsafe { Mmap::map(file) }.map_err(io("re-mapping"))?;
        if let Storage::Mapped { map: old, .. } = &mut self.storage {
            // Handles from `keep_alive` keep the old mapping until they are dropped.
            *old = Arc::new(map);
        }
        let before = self.frames.len();
        self.load_from(self.scan_end);
        Ok(self.frames.len() - before)
    }

    /// A handle on the bytes this reader reads from now (its memory map, or its copy of the
    /// bytes of [`from_bytes`](LogReader::from_bytes)). Every slice this reader or its
    /// [`FrameView`]s lend lies in those bytes, and they stay mapped, unmoved and (under the
    /// contract of [`open`](LogReader::open)) unchanged for as long as the handle lives, also
    /// after [`refresh`](LogReader::refresh) re-maps the file and after the reader is dropped.
    /// For bindings that hand out views whose lifetime the borrow checker cannot see (the
    /// Python module's NumPy arrays keep one as their base).
    pub fn keep_alive(&self) -> StorageKeepAlive {
        match &self.storage {
            Storage::Mapped { map, .. } => StorageKeepAlive {
                _storage: map.clone(),
            },
            Storage::Owned(v) => StorageKeepAlive {
                _storage: v.clone(),
            },
        }
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Format version of the file: (major, minor).
    pub fn version(&self) -> (u16, u16) {
        (self.prefix.major, self.prefix.minor)
    }

    /// The file's path (`<memory>` for [`from_bytes`](LogReader::from_bytes)).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of readable frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// True if the log has no readable frame.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The spike onsets the writer stored in the footer, if it ran the finder with exactly
    /// `params` (see [`crate::scrub`]); `None` otherwise (other parameters, no index, or a
    /// log without a usable footer).
    pub fn spike_index(&self, params: &SpikeParams) -> Option<&[Spike]> {
        match (&self.spike_index, &self.header.spike_index) {
            (Some(spikes), Some(p)) if p == params => Some(spikes),
            _ => None,
        }
    }

    /// True if the log was closed by `finish` and its footer was read.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// `None` for a finished log read through its footer; otherwise what recovery dropped.
    pub fn recovery(&self) -> Option<&Recovery> {
        self.recovery.as_ref()
    }

    /// The corrupt stretches recovery passed over (empty for a finished log, whose corrupt
    /// frames stay in the index and fail when read): the log has gaps there.
    pub fn skipped_records(&self) -> &[SkippedRecord] {
        &self.skipped
    }

    /// The corrupt stretch that lost `substep`'s frame, if one did: where a substep between
    /// the first and the last recorded is missing, the error can say why.
    pub fn gap_holding(&self, substep: u64) -> Option<&SkippedRecord> {
        self.skipped
            .iter()
            .find(|g| g.after_substep.is_none_or(|a| a < substep) && substep < g.before_substep)
    }

    /// An error naming the first gap (see [`LogReader::skipped_records`]) between frames
    /// `frames.start` and `frames.end - 1`: what a reader of that range would otherwise
    /// silently miss.
    pub fn check_no_gap(&self, frames: std::ops::Range<usize>) -> Result<()> {
        let gap = self.skipped.iter().find(|g| {
            let before = g.after_frame.map_or(0, |i| i + 1); // index of the frame after it
            before > frames.start && before < frames.end
        });
        match gap {
            Some(g) => Err(ReplayError::SkippedRecord {
                path: self.path.clone(),
                record: g.clone(),
            }),
            None => Ok(()),
        }
    }

    /// The frame index: offsets, state hashes and summaries, without touching frame data.
    pub fn index(&self) -> &[FrameMeta] {
        &self.frames
    }

    /// Per-frame summaries, from the footer index (or the one-time recovery scan).
    pub fn summaries(&self) -> impl ExactSizeIterator<Item = &FrameSummary> + '_ {
        self.frames.iter().map(|m| &m.summary)
    }

    /// Index of the frame nearest to time `t` (`None` if `t` is NaN or precedes the first
    /// frame by more than the spacing of the first two frames: `t = 0` finds the first
    /// substep of a run, which ends at one substep's time). Between two frames the nearer
    /// wins (a tie the earlier), so a time printed with a few digits (`1.44583`, for the
    /// frame at 1.4458333 s) finds its frame; after the last frame, the last.
    pub fn index_at_time(&self, t: f64) -> Option<usize> {
        if t.is_nan() || self.frames.is_empty() {
            return None;
        }
        let time = |i: usize| self.frames[i].summary.time;
        // Frames at or before `t`.
        let after = self.frames.partition_point(|m| m.summary.time <= t);
        match after {
            0 => {
                // Before the first frame: it, within a spacing (the run's start, t = 0, is
                // one substep before its first frame), or with one frame, its own time.
                let spacing = if self.frames.len() > 1 {
                    time(1) - time(0)
                } else {
                    time(0).abs()
                };
                (time(0) - t <= spacing * (1.0 + 1e-6)).then_some(0)
            }
            n if n == self.frames.len() => Some(n - 1),
            n => Some(if time(n) - t < t - time(n - 1) {
                n
            } else {
                n - 1
            }),
        }
    }

    /// Index of the frame recording `substep`, if any.
    pub fn index_of_substep(&self, substep: u64) -> Option<usize> {
        self.frames
            .binary_search_by_key(&substep, |m| m.summary.substep)
            .ok()
    }

    /// The frame nearest to time `t`, as [`index_at_time`](LogReader::index_at_time) finds it.
    pub fn frame_at_time(&self, t: f64) -> Result<Option<FrameView<'_>>> {
        self.index_at_time(t).map(|i| self.frame(i)).transpose()
    }

    /// Index of the last frame at or before `i` that carries solver state.
    pub fn last_keyframe_at_or_before(&self, i: usize) -> Option<usize> {
        let n = self.keyframes.partition_point(|&k| k <= i);
        n.checked_sub(1).map(|k| self.keyframes[k])
    }

    /// Validates frame `i` if this is its first use.
    fn ensure_valid(&self, i: usize) -> Result<()> {
        let state = self.checked[i].load(Ordering::Acquire);
        let offset = self.frames[i].offset;
        if state == VALID {
            // Its record head still as validated (one 16-byte read): a file another program
            // wrote over in place (`cp other.lvlog run.lvlog`, as long or longer) puts other
            // bytes here, and reading them unchecked at the old offsets read out of bounds
            // (QA 2026-12-07: a shape of 1.7e9 joints, then SIGSEGV).
            return match record_head_at(self.storage.bytes(), offset) {
                Some((kind, crc, len))
                    if kind == KIND_FRAME
                        && len == self.frames[i].len
                        && crc == self.checksums[i].load(Ordering::Acquire) =>
                {
                    Ok(())
                }
                _ => Err(ReplayError::CorruptFrame {
                    path: self.path.clone(),
                    index: i,
                    substep: self.frames[i].summary.substep,
                    offset,
                    detail: "its bytes changed since they were checked: another program \
                             wrote over the file (open it again to read what it holds now)"
                        .into(),
                }),
            };
        }
        let outcome =
            check_frame(self.storage.bytes(), offset, &self.header).and_then(|(len, rec)| {
                if same_meta(&meta_of(offset, len, rec), &self.frames[i]) {
                    Ok(())
                } else {
                    Err("frame disagrees with its index entry".into())
                }
            });
        match outcome {
            Ok(()) => {
                let crc = record_head_at(self.storage.bytes(), offset).map_or(0, |(_, c, _)| c);
                self.checksums[i].store(crc, Ordering::Release);
                self.checked[i].store(VALID, Ordering::Release);
                Ok(())
            }
            Err(detail) => {
                if state == UNCHECKED {
                    // The error goes to the caller; this is for RUST_LOG tracing only.
                    tracing::debug!(path = %self.path.display(), frame = i, %detail, "corrupt frame");
                }
                self.checked[i].store(INVALID, Ordering::Release);
                Err(ReplayError::CorruptFrame {
                    path: self.path.clone(),
                    index: i,
                    substep: self.frames[i].summary.substep,
                    offset,
                    detail,
                })
            }
        }
    }

    /// Validates every frame not yet validated; returns the first corrupt one as an error.
    pub fn validate_all(&self) -> Result<()> {
        (0..self.len()).try_for_each(|i| self.ensure_valid(i))
    }

    /// The archived record of a frame already validated.
    fn archived(&self, i: usize) -> &ArchivedFrameRecord<'static> {
        assert_eq!(
            self.checked[i].load(Ordering::Acquire),
            VALID,
            "frame {i} read before validation"
        );
        let m = &self.frames[i];
        let start = m.offset as usize + RECORD_HEAD_SIZE;
        let payload = &self.storage.bytes()[start..start + m.len as usize];
        // SAFETY: the assertion above shows `ensure_valid(i)` succeeded, i.e. `rkyv::access`
        // (bytecheck) accepted exactly these bytes as an `ArchivedFrameRecord`. The bytes
        // cannot have changed since: owned storage is never mutated, a mapping is replaced
        // only by `refresh(&mut self)` (which keeps the same offsets and file contents), and
        // `open`'s contract forbids other processes from modifying them. (Where one does
        // anyway between two calls, `ensure_valid` refuses a frame whose record head no
        // longer holds the length and checksum it was validated with.)
        unsafe { rkyv::access_unchecked::<ArchivedFrameRecord<'static>>(payload) }
    }

    /// Frame `i`, validated on first use and then read in place.
    pub fn frame(&self, i: usize) -> Result<FrameView<'_>> {
        if i >= self.len() {
            return Err(ReplayError::FrameOutOfRange {
                index: i,
                len: self.len(),
            });
        }
        self.ensure_valid(i)?;
        Ok(FrameView {
            rec: self.archived(i),
            index: i,
        })
    }

    /// The solver state stored with frame `i`, if any.
    #[cfg(target_endian = "little")]
    pub fn solver_state(&self, i: usize) -> Result<Option<&[f32]>> {
        Ok(self.frame(i)?.solver_state())
    }

    /// One diagnostic column of one joint over the whole log: `(substep, value)` pairs, read
    /// in place without deserialising frames. Validates every frame first (once).
    pub fn column(
        &self,
        joint: usize,
        column: usize,
    ) -> Result<impl ExactSizeIterator<Item = (u64, f32)> + '_> {
        self.check_joint_column(joint, column)?;
        self.validate_all()?;
        Ok((0..self.len()).map(move |i| {
            let rec = self.archived(i);
            (
                rec.substep.to_native(),
                rec.diagnostics[joint][column].to_native(),
            )
        }))
    }

    pub(crate) fn check_joint_column(&self, joint: usize, column: usize) -> Result<()> {
        if joint >= self.header.joint_count {
            return Err(ReplayError::OutOfRange {
                what: "joint",
                index: joint,
                len: self.header.joint_count,
            });
        }
        if column >= 8 {
            return Err(ReplayError::OutOfRange {
                what: "column",
                index: column,
                len: 8,
            });
        }
        Ok(())
    }
}

/// One frame, read in place from the log.
#[derive(Clone, Copy)]
pub struct FrameView<'a> {
    rec: &'a ArchivedFrameRecord<'static>,
    index: usize,
}

impl fmt::Debug for FrameView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameView")
            .field("index", &self.index)
            .field("substep", &self.substep())
            .field("time", &self.time())
            .finish_non_exhaustive()
    }
}

impl<'a> FrameView<'a> {
    /// Position of this frame in the log.
    pub fn index(&self) -> usize {
        self.index
    }
    /// Substep number.
    pub fn substep(&self) -> u64 {
        self.rec.substep.to_native()
    }
    /// Simulation time.
    pub fn time(&self) -> f64 {
        self.rec.time.to_native()
    }
    /// Total energy.
    pub fn total_energy(&self) -> f64 {
        self.rec.total_energy.to_native()
    }
    /// Hash of the simulation state after the substep.
    pub fn state_hash(&self) -> u64 {
        self.rec.state_hash.to_native()
    }
    /// The writer's summary of this frame.
    pub fn summary(&self) -> FrameSummary {
        rkyv::deserialize::<FrameSummary, rancor::Error>(&self.rec.summary).expect("infallible")
    }
    /// Number of bodies.
    pub fn body_count(&self) -> usize {
        self.rec.poses.len()
    }
    /// Number of joints.
    pub fn joint_count(&self) -> usize {
        self.rec.diagnostics.len()
    }
    /// Pose of body `b` (position xyz, quaternion xyzw).
    pub fn pose(&self, b: usize) -> Option<[f32; 7]> {
        self.rec
            .poses
            .get()
            .get(b)
            .map(|r| r.map(|v| v.to_native()))
    }
    /// Velocity of body `b` (linear xyz, angular xyz).
    pub fn velocity(&self, b: usize) -> Option<[f32; 6]> {
        self.rec
            .velocities
            .get()
            .get(b)
            .map(|r| r.map(|v| v.to_native()))
    }
    /// The eight diagnostic columns of joint `j`.
    pub fn diagnostic(&self, j: usize) -> Option<[f32; 8]> {
        self.rec
            .diagnostics
            .get()
            .get(j)
            .map(|r| r.map(|v| v.to_native()))
    }
    /// One diagnostic value.
    pub fn diagnostic_value(&self, j: usize, column: usize) -> Option<f32> {
        self.rec
            .diagnostics
            .get()
            .get(j)
            .and_then(|r| r.get(column))
            .map(|v| v.to_native())
    }
    /// All poses as native arrays (portable; on little-endian targets prefer `poses()`).
    pub fn pose_rows(&self) -> impl ExactSizeIterator<Item = [f32; 7]> + 'a {
        self.rec
            .poses
            .get()
            .iter()
            .map(|r| r.map(|v| v.to_native()))
    }
    /// All velocities as native arrays (portable).
    pub fn velocity_rows(&self) -> impl ExactSizeIterator<Item = [f32; 6]> + 'a {
        self.rec
            .velocities
            .get()
            .iter()
            .map(|r| r.map(|v| v.to_native()))
    }
    /// All diagnostic rows as native arrays (portable).
    pub fn diagnostic_rows(&self) -> impl ExactSizeIterator<Item = [f32; 8]> + 'a {
        self.rec
            .diagnostics
            .get()
            .iter()
            .map(|r| r.map(|v| v.to_native()))
    }
    /// True if the frame carries solver state.
    pub fn has_solver_state(&self) -> bool {
        self.rec.solver_state.is_some()
    }
}

#[cfg(target_endian = "little")]
impl<'a> FrameView<'a> {
    /// All poses, in place.
    pub fn poses(&self) -> &'a [[f32; 7]] {
        native(self.rec.poses.get())
    }
    /// All velocities, in place.
    pub fn velocities(&self) -> &'a [[f32; 6]] {
        native(self.rec.velocities.get())
    }
    /// All diagnostics (one row of eight columns per joint), in place.
    pub fn diagnostics(&self) -> &'a [[f32; 8]] {
        native(self.rec.diagnostics.get())
    }
    /// The solver state, in place, if this frame carries it.
    pub fn solver_state(&self) -> Option<&'a [f32]> {
        self.rec.solver_state.as_ref().map(|b| native_flat(b.get()))
    }
    /// The frame as a writer takes it, every array in place: what a copy or an export of
    /// the log appends.
    pub fn input(&self) -> FrameInput<'a> {
        FrameInput {
            substep: self.substep(),
            time: self.time(),
            poses: self.poses(),
            velocities: self.velocities(),
            diagnostics: self.diagnostics(),
            solver_state: self.solver_state(),
            total_energy: self.total_energy(),
            state_hash: self.state_hash(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::PREFIX_SIZE;
    use crate::testutil::{self, OwnedFrame};
    use crate::LogWriter;
    use proptest::prelude::*;

    fn bits<const N: usize>(rows: &[[f32; N]]) -> Vec<u32> {
        rows.iter().flatten().map(|v| v.to_bits()).collect()
    }

    /// Asserts that frame `i` of `r` holds exactly `f`, bit for bit, through every accessor.
    fn assert_frame_eq(r: &LogReader, i: usize, f: &OwnedFrame) {
        let v = r.frame(i).unwrap();
        assert_eq!(v.index(), i);
        assert_eq!(v.substep(), f.substep);
        assert_eq!(v.time().to_bits(), f.time.to_bits());
        assert_eq!(v.total_energy().to_bits(), f.total_energy.to_bits());
        assert_eq!(v.state_hash(), f.state_hash);
        assert_eq!(bits(v.poses()), bits(&f.poses));
        assert_eq!(bits(v.velocities()), bits(&f.velocities));
        assert_eq!(bits(v.diagnostics()), bits(&f.diagnostics));
        for b in 0..f.poses.len() {
            assert_eq!(bits(&[v.pose(b).unwrap()]), bits(&[f.poses[b]]));
            assert_eq!(bits(&[v.velocity(b).unwrap()]), bits(&[f.velocities[b]]));
        }
        for j in 0..f.diagnostics.len() {
            assert_eq!(bits(&[v.diagnostic(j).unwrap()]), bits(&[f.diagnostics[j]]));
        }
        assert_eq!(v.pose(f.poses.len()), None);
        assert_eq!(v.solver_state().map(<[f32]>::to_vec), f.solver_state);
        assert_eq!(v.has_solver_state(), f.solver_state.is_some());
        assert_eq!(v.summary(), FrameSummary::compute(&f.input()));
    }

    #[test]
    fn round_trip_is_bitwise_through_the_footer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.lvlog");
        let header = testutil::header(3, 4);
        let frames = testutil::frames(3, 4, 50, 10);
        testutil::write(&path, &header, &frames, true);

        // SAFETY: the file lives in a private temporary directory; nothing else touches it.
        let r = unsafe { LogReader::open(&path) }.unwrap();
        assert!(r.is_finished());
        assert!(r.recovery().is_none());
        assert_eq!(r.header(), &header);
        assert_eq!(r.version(), (FORMAT_MAJOR, 0));
        assert_eq!(r.len(), 50);
        // Lazily validated: nothing touched yet.
        assert!(r
            .checked
            .iter()
            .all(|c| c.load(Ordering::Relaxed) == UNCHECKED));
        for (i, f) in frames.iter().enumerate() {
            assert_frame_eq(&r, i, f);
        }
        let summaries: Vec<_> = r.summaries().copied().collect();
        let expected: Vec<_> = frames
            .iter()
            .map(|f| FrameSummary::compute(&f.input()))
            .collect();
        assert_eq!(summaries, expected);
        assert!(matches!(
            r.frame(50),
            Err(ReplayError::FrameOutOfRange { index: 50, len: 50 })
        ));
    }

    #[test]
    fn footerless_log_recovers_every_frame() {
        let header = testutil::header(2, 3);
        let frames = testutil::frames(2, 3, 20, 5);
        let bytes = testutil::log_bytes(&header, &frames, false);
        let r = LogReader::from_bytes(&bytes).unwrap();
        assert!(!r.is_finished());
        assert_eq!(
            r.recovery(),
            Some(&Recovery {
                dropped_bytes: 0,
                reason: RecoveryReason::NoFooter,
                skipped: Vec::new(),
            })
        );
        assert_eq!(r.len(), 20);
        for (i, f) in frames.iter().enumerate() {
            assert_frame_eq(&r, i, f);
        }
    }

    /// QA (2026-12-06): in a log without a footer, one corrupt record dropped every intact
    /// frame after it. Recovery passes over it, whether its payload (its length still leads
    /// to the next record) or its length (the next record is found by its kind on a 16-byte
    /// boundary) was damaged, and says where the gap is; the other frames read as written.
    #[test]
    fn a_corrupt_record_in_a_footerless_log_is_passed_over_not_the_end() {
        let header = testutil::header(2, 3);
        let frames = testutil::frames(2, 3, 20, 5);
        let bytes = testutil::log_bytes(&header, &frames, false);
        let ends = frame_ends(&bytes);
        // Frame 7 starts where frame 6 ends (16-aligned); its length field is at +8.
        let start = align16(ends[6]);
        for (what, at) in [
            ("payload", start + RECORD_HEAD_SIZE + 40),
            ("length", start + 9),
        ] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x40;
            let r = LogReader::from_bytes(&damaged).unwrap();
            assert_eq!(r.len(), 19, "{what}");
            let rec = r.recovery().unwrap();
            assert_eq!(rec.reason, RecoveryReason::NoFooter, "{what}");
            assert_eq!(rec.dropped_bytes, 0, "{what}");
            let gap = &rec.skipped[..];
            assert_eq!(gap.len(), 1, "{what}: {gap:?}");
            let g = &gap[0];
            assert_eq!(g.offset, start as u64, "{what}");
            assert_eq!(g.bytes, (align16(ends[7]) - start) as u64, "{what}");
            assert_eq!(
                (g.after_frame, g.after_substep),
                (Some(6), Some(frames[6].substep))
            );
            assert_eq!(g.before_substep, frames[8].substep, "{what}");
            assert_eq!(r.skipped_records(), gap);
            for (i, f) in frames.iter().enumerate() {
                match i {
                    7 => assert_eq!(r.index_of_substep(f.substep), None),
                    _ => assert_frame_eq(&r, i - usize::from(i > 7), f),
                }
            }
            // Ranges across the gap are refused, naming it; those beside it are not.
            let err = r.check_no_gap(0..19).unwrap_err();
            assert!(
                matches!(&err, ReplayError::SkippedRecord { record, .. } if record == g),
                "{err}"
            );
            let text = err.to_string();
            assert!(
                text.contains(&format!(
                    "between substeps {} and {}",
                    frames[6].substep, frames[8].substep
                )) && text.contains("missing"),
                "{text}"
            );
            r.check_no_gap(0..7).unwrap();
            r.check_no_gap(7..19).unwrap();
        }
        // Two damaged records in a row are one gap; damage with no frame after it ends the
        // recovery as before.
        let mut damaged = bytes.clone();
        damaged[align16(ends[6]) + RECORD_HEAD_SIZE + 40] ^= 1;
        damaged[align16(ends[7]) + RECORD_HEAD_SIZE + 40] ^= 1;
        let r = LogReader::from_bytes(&damaged).unwrap();
        assert_eq!(r.len(), 18);
        assert_eq!(r.skipped_records().len(), 1);
        assert_eq!(r.skipped_records()[0].before_substep, frames[9].substep);
        let mut damaged = bytes.clone();
        damaged[align16(ends[18]) + RECORD_HEAD_SIZE + 40] ^= 1;
        let r = LogReader::from_bytes(&damaged).unwrap();
        assert_eq!(r.len(), 19);
        assert!(r.skipped_records().is_empty());
        assert!(matches!(
            r.recovery().unwrap().reason,
            RecoveryReason::Corrupt { .. }
        ));
    }

    #[test]
    fn random_access_by_index_time_substep_and_keyframe() {
        let header = testutil::header(2, 2);
        let frames = testutil::frames(2, 2, 40, 8);
        let r = LogReader::from_bytes(&testutil::log_bytes(&header, &frames, true)).unwrap();
        let dt = 1.0 / 240.0;
        // Frame i has time (i + 1) * dt.
        assert_eq!(r.index_at_time(f64::NAN), None);
        assert_eq!(r.index_at_time(frames[0].time), Some(0));
        assert_eq!(r.index_at_time(frames[17].time), Some(17));
        // The nearer frame.
        assert_eq!(r.index_at_time(frames[17].time + 0.4 * dt), Some(17));
        assert_eq!(r.index_at_time(frames[17].time + 0.6 * dt), Some(18));
        assert_eq!(r.index_at_time(frames[18].time - 1e-6), Some(18));
        // A time printed with five decimals finds its frame (QA: 1.44583 for 1.4458333 s).
        let printed: f64 = format!("{:.5}", frames[34].time).parse().unwrap();
        assert!(printed < frames[34].time, "{printed}");
        assert_eq!(r.index_at_time(printed), Some(34));
        // Before the first frame: it, within a spacing (t = 0 for a run's log); else none.
        assert_eq!(r.index_at_time(frames[0].time - 0.6 * dt), Some(0));
        assert_eq!(r.index_at_time(0.0), Some(0));
        assert_eq!(r.index_at_time(frames[0].time - 1.1 * dt), None);
        assert_eq!(r.index_at_time(1e9), Some(39));
        assert_eq!(
            r.frame_at_time(frames[5].time).unwrap().unwrap().substep(),
            5
        );
        assert!(r.frame_at_time(-1.0).unwrap().is_none());
        assert_eq!(r.index_of_substep(33), Some(33));
        assert_eq!(r.index_of_substep(40), None);
        // Keyframes at 0, 8, 16, 24, 32.
        assert_eq!(r.last_keyframe_at_or_before(0), Some(0));
        assert_eq!(r.last_keyframe_at_or_before(7), Some(0));
        assert_eq!(r.last_keyframe_at_or_before(8), Some(8));
        assert_eq!(r.last_keyframe_at_or_before(39), Some(32));
        assert_eq!(
            r.solver_state(16).unwrap(),
            frames[16].solver_state.as_deref()
        );
        assert_eq!(r.solver_state(17).unwrap(), None);
        // Shuffled access order gives the same frames.
        for i in [39usize, 0, 21, 3, 38, 21] {
            assert_frame_eq(&r, i, &frames[i]);
        }
    }

    #[test]
    fn column_iterator_equals_per_frame_reads() {
        let header = testutil::header(1, 5);
        let frames = testutil::frames(1, 5, 30, 0);
        let r = LogReader::from_bytes(&testutil::log_bytes(&header, &frames, true)).unwrap();
        for joint in 0..5 {
            for col in 0..8 {
                let column: Vec<(u64, f32)> = r.column(joint, col).unwrap().collect();
                assert_eq!(column.len(), 30);
                for (i, (substep, v)) in column.into_iter().enumerate() {
                    let f = r.frame(i).unwrap();
                    assert_eq!(substep, f.substep());
                    assert_eq!(
                        v.to_bits(),
                        f.diagnostic_value(joint, col).unwrap().to_bits()
                    );
                    assert_eq!(v.to_bits(), frames[i].diagnostics[joint][col].to_bits());
                }
            }
        }
        assert!(matches!(
            r.column(5, 0),
            Err(ReplayError::OutOfRange { what: "joint", .. })
        ));
        assert!(matches!(
            r.column(0, 8),
            Err(ReplayError::OutOfRange { what: "column", .. })
        ));
        // QA (2026-12-08): "column 8 is out of range: the log has 8" (8 what?).
        let says = |e: Option<ReplayError>| e.unwrap().to_string();
        assert_eq!(
            says(r.column(0, 8).err()),
            "column 8 is out of range: the log has 8 columns (indices 0 to 7)"
        );
        assert_eq!(
            says(r.column(5, 0).err()),
            "joint 5 is out of range: the log has 5 joints (indices 0 to 4)"
        );
    }

    /// Byte offset just past the payload of every frame record, in order.
    fn frame_ends(bytes: &[u8]) -> Vec<usize> {
        let r = LogReader::from_bytes(bytes).unwrap();
        r.index()
            .iter()
            .map(|m| (m.offset + RECORD_HEAD_SIZE as u64 + m.len) as usize)
            .collect()
    }

    #[test]
    fn truncation_at_every_byte_recovers_complete_frames_or_errors_clearly() {
        let header = testutil::header(2, 2);
        let frames = testutil::frames(2, 2, 6, 3);
        let bytes = testutil::log_bytes(&header, &frames, true);
        let ends = frame_ends(&bytes);
        let data_start = LogReader::from_bytes(&bytes).unwrap().data_start as usize;
        let prefix = Prefix::decode(bytes[..PREFIX_SIZE].try_into().unwrap());
        let header_end = PREFIX_SIZE + prefix.header_len as usize;
        for cut in 0..bytes.len() {
            let result = LogReader::from_bytes(&bytes[..cut]);
            if cut < data_start {
                let err = result.expect_err("a truncated header cannot be read");
                let msg = err.to_string();
                if cut == 0 {
                    assert!(matches!(err, ReplayError::NotALog { .. }), "{cut}: {msg}");
                    continue;
                }
                // However short, a cut header reads as cut short, with the bytes the file
                // has against those the header needs, both counted from the file's start
                // (QA 2026-12-07: "corrupt" from 8 bytes on, and the header body's length
                // against the whole file's).
                assert!(
                    matches!(err, ReplayError::CorruptHeader { .. }),
                    "{cut}: {msg}"
                );
                let needed = if cut < PREFIX_SIZE {
                    format!("prefix, which is {PREFIX_SIZE} bytes")
                } else if cut < header_end {
                    format!("header, which runs to {header_end} bytes")
                } else {
                    format!("header, which with its padding runs to {data_start} bytes")
                };
                assert!(
                    msg.contains(&format!(
                        "cut short ({cut} bytes) inside the log's {needed}"
                    )) && msg.contains("re-record")
                        && !msg.contains("corrupt"),
                    "{cut}: {msg}"
                );
                continue;
            }
            let r = result.unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
            let complete = ends.iter().filter(|&&e| e <= cut).count();
            assert_eq!(r.len(), complete, "cut at {cut}");
            assert!(!r.is_finished());
            let rec = r.recovery().expect("a truncated log is recovered");
            assert_eq!(rec.dropped_bytes, cut as u64 - r.scan_end, "cut at {cut}");
            let kept = match complete {
                0 => data_start,
                n => align16(ends[n - 1]).min(cut),
            };
            assert_eq!(r.scan_end, kept as u64, "cut at {cut}");
            for (i, f) in frames.iter().enumerate().take(r.len()) {
                assert_frame_eq(&r, i, f);
            }
        }
        // The uncut file is complete.
        assert!(LogReader::from_bytes(&bytes).unwrap().recovery().is_none());
    }

    #[test]
    fn foreign_and_future_files_are_clear_errors() {
        let err = LogReader::from_bytes(b"PK\x03\x04 this is a zip file, not a log").unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, ReplayError::NotALog { .. }));
        assert!(
            msg.contains("not a Lavender log") && msg.contains("lavender run --record"),
            "{msg}"
        );
        // HDF5, and a file cut inside the magic, say what they are.
        let msg = LogReader::from_bytes(b"\x89HDF\r\n\x1a\n\0\0\0\0")
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("is an HDF5 file") && msg.contains(".lvlog"),
            "{msg}"
        );
        let msg = LogReader::from_bytes(b"LAVLOG").unwrap_err().to_string();
        assert!(msg.contains("cut short (6 bytes)"), "{msg}");

        let header = testutil::header(1, 1);
        let mut bytes = testutil::log_bytes(&header, &testutil::frames(1, 1, 2, 0), true);
        bytes[8] = 4; // major version 4
        let err = LogReader::from_bytes(&bytes).unwrap_err();
        assert!(
            matches!(
                err,
                ReplayError::UnsupportedVersion {
                    major: 4,
                    minor: 0,
                    supported: 3,
                    ..
                }
            ),
            "{err}"
        );
        bytes[8] = 3;
        // A header length no log has: a damaged prefix, not a file cut short.
        let mut damaged = bytes.clone();
        damaged[16 + 6] = 0x40;
        let msg = LogReader::from_bytes(&damaged).unwrap_err().to_string();
        assert!(
            msg.contains("the log header is corrupt (its prefix gives a header of")
                && !msg.contains("cut short"),
            "{msg}"
        );
        // A length within bounds but past the file's end (QA 2026-12-07: bit 30 of it, read
        // as a writer killed in its header): frame records follow, so it is the prefix.
        let mut damaged = bytes.clone();
        damaged[16 + 3] ^= 0x40;
        let msg = LogReader::from_bytes(&damaged).unwrap_err().to_string();
        assert!(
            msg.contains("holds a record from byte")
                && msg.contains("the prefix's length field is damaged")
                && !msg.contains("cut short"),
            "{msg}"
        );
        // Cut inside the header, nothing after it: cut short, as before.
        let cut = &bytes[..PREFIX_SIZE + 40];
        let msg = LogReader::from_bytes(cut).unwrap_err().to_string();
        assert!(msg.contains("cut short"), "{msg}");
        bytes[PREFIX_SIZE + 3] ^= 0x20; // inside the header JSON
        let err = LogReader::from_bytes(&bytes).unwrap_err();
        assert!(
            err.to_string().contains("header checksum mismatch"),
            "{err}"
        );

        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        // SAFETY: private temporary file.
        let err = unsafe { LogReader::open(&empty) }.unwrap_err();
        assert!(matches!(err, ReplayError::NotALog { .. }));
        assert!(err.to_string().contains("is empty (0 bytes)"), "{err}");
        // SAFETY: a directory is refused before anything is mapped.
        let err = unsafe { LogReader::open(dir.path()) }.unwrap_err();
        assert!(err.to_string().contains("it is a directory"), "{err}");
        // SAFETY: the path does not exist; nothing is mapped.
        let err = unsafe { LogReader::open(dir.path().join("missing")) }.unwrap_err();
        assert!(
            matches!(
                err,
                ReplayError::Io {
                    action: "opening",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_corrupt_frame_in_a_finished_log_is_an_error_on_first_use() {
        let header = testutil::header(2, 2);
        let frames = testutil::frames(2, 2, 5, 0);
        let mut bytes = testutil::log_bytes(&header, &frames, true);
        let meta = LogReader::from_bytes(&bytes).unwrap().index()[2];
        bytes[meta.offset as usize + RECORD_HEAD_SIZE + 40] ^= 0x01;
        let r = LogReader::from_bytes(&bytes).unwrap();
        assert!(r.is_finished());
        assert_frame_eq(&r, 1, &frames[1]);
        let err = r.frame(2).unwrap_err();
        assert!(
            matches!(err, ReplayError::CorruptFrame { index: 2, offset, .. } if offset == meta.offset),
            "{err}"
        );
        assert!(err.to_string().contains("checksum mismatch"));
        // Still an error on the second try, and through every path that reads frames.
        assert!(r.frame(2).is_err());
        assert!(r.column(0, 3).is_err());
        assert!(r.validate_all().is_err());
        assert_frame_eq(&r, 3, &frames[3]);
    }

    /// QA 2026-12-07: a file written over in place (`cp other.lvlog run.lvlog`) as long or
    /// longer passed the length check, and frames validated before were read unchecked from
    /// the other file's bytes (a shape of 1.7e9 joints, then SIGSEGV). A frame read again
    /// is served only while its record head holds the length and checksum it was validated
    /// with: another layout, or the same layout with other values, is a `CorruptFrame`.
    #[test]
    fn a_file_written_over_in_place_is_an_error_not_a_read_of_other_bytes() {
        let header = testutil::header(2, 2);
        let frames = testutil::frames(2, 2, 5, 0);
        let ours = testutil::log_bytes(&header, &frames, true);
        let mut moved = testutil::frames(2, 2, 5, 0);
        moved[3].poses[1][0] += 1.0;
        let others = [
            // Another scene, longer: every frame at another offset.
            testutil::log_bytes(
                &testutil::header(9, 40),
                &testutil::frames(9, 40, 8, 2),
                true,
            ),
            // The same layout, one value other.
            testutil::log_bytes(&header, &moved, true),
        ];
        for (case, other) in others.iter().enumerate() {
            assert!(other.len() >= ours.len(), "case {case}");
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("run.lvlog");
            std::fs::write(&path, &ours).unwrap();
            // SAFETY: the test writes over the file between calls only, never during one,
            // and checks that this is refused; no slice from before the write is read after.
            let r = unsafe { LogReader::open(&path) }.unwrap();
            for (i, f) in frames.iter().enumerate() {
                assert_frame_eq(&r, i, f);
            }
            // In place: the same inode, truncated and written again (what `cp` does).
            std::fs::write(&path, other).unwrap();
            assert!(r.check_length().is_ok(), "case {case}: no shorter");
            let err = r.frame(3).unwrap_err();
            assert!(
                matches!(err, ReplayError::CorruptFrame { index: 3, .. })
                    && err.to_string().contains("changed since they were checked"),
                "case {case}: {err}"
            );
            assert!(r.validate_all().is_err(), "case {case}");
            assert!(r.column(0, 3).is_err(), "case {case}");
        }
    }

    #[test]
    fn writer_rejects_mismatched_lengths_and_disorder() {
        let dir = tempfile::tempdir().unwrap();
        let header = testutil::header(2, 3);
        let mut w = LogWriter::create(dir.path().join("x"), &header).unwrap();
        let frames = testutil::frames(2, 3, 3, 0);
        let mut bad = frames[0].clone();
        bad.diagnostics.pop();
        let err = w.append(&bad.input()).unwrap_err();
        assert!(
            matches!(
                err,
                ReplayError::LengthMismatch {
                    field: "diagnostics",
                    expected: 3,
                    found: 2,
                    ..
                }
            ),
            "{err}"
        );
        w.append(&frames[1].input()).unwrap();
        let err = w.append(&frames[0].input()).unwrap_err();
        assert!(
            matches!(
                err,
                ReplayError::OutOfOrder {
                    substep: 0,
                    prev_substep: 1,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(w.frames(), 1);
        let mut h = header.clone();
        h.joint_names.pop();
        let err = LogWriter::create(dir.path().join("y"), &h).err().unwrap();
        assert!(matches!(err, ReplayError::InvalidHeader(_)), "{err}");
    }

    #[test]
    #[cfg(unix)]
    fn a_fifo_or_directory_is_a_clear_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.lvlog");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let (tx, rx) = std::sync::mpsc::channel();
        let paths = [fifo, dir.path().to_path_buf()];
        let thread_paths = paths.clone();
        std::thread::spawn(move || {
            for p in thread_paths {
                // SAFETY: nothing is mapped (the open fails).
                let _ = tx.send(unsafe { LogReader::open(&p) }.err().map(|e| e.to_string()));
            }
        });
        for (p, what) in paths.iter().zip(["not a regular file", "is a directory"]) {
            let err = rx
                .recv_timeout(std::time::Duration::from_secs(10))
                .expect("opening returned (a FIFO's open waits for a writer)")
                .expect("an error");
            assert!(err.contains(what), "{}: {err}", p.display());
        }
    }

    #[test]
    fn refresh_follows_a_growing_log_frame_by_frame() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.lvlog");
        let header = testutil::header(2, 2);
        let frames = testutil::frames(2, 2, 12, 4);
        let mut w = LogWriter::create(&path, &header).unwrap();
        for f in &frames[..3] {
            w.append(&f.input()).unwrap();
        }
        w.flush().unwrap();
        // SAFETY: the file is only appended to (by `w`) while the reader is alive.
        let mut r = unsafe { LogReader::open(&path) }.unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r.refresh().unwrap(), 0);
        for f in &frames[3..7] {
            w.append(&f.input()).unwrap();
        }
        w.flush().unwrap();
        assert_eq!(r.refresh().unwrap(), 4);
        assert_eq!(r.len(), 7);
        assert_eq!(r.last_keyframe_at_or_before(6), Some(4));
        for (i, f) in frames[..7].iter().enumerate() {
            assert_frame_eq(&r, i, f);
        }
        for f in &frames[7..] {
            w.append(&f.input()).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(r.refresh().unwrap(), 5);
        assert!(r.is_finished());
        assert!(r.recovery().is_none());
        for (i, f) in frames.iter().enumerate() {
            assert_frame_eq(&r, i, f);
        }
        assert_eq!(r.refresh().unwrap(), 0);
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn a_keep_alive_handle_keeps_lent_bytes_valid_across_refresh_and_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.lvlog");
        let frames = testutil::frames(2, 3, 40, 4);
        let mut w = LogWriter::create(&path, &testutil::header(2, 3)).unwrap();
        for f in &frames[..2] {
            w.append(&f.input()).unwrap();
        }
        w.flush().unwrap();
        // SAFETY: the file is only appended to (by `w`) while the reader is alive.
        let mut r = unsafe { LogReader::open(&path) }.unwrap();
        let keep = r.keep_alive();
        let rows = r.frame(1).unwrap().diagnostics();
        let (ptr, len, copy) = (rows.as_ptr(), rows.len(), rows.to_vec());
        // Grow the file by far more than a page, so the re-map cannot reuse the old one.
        for f in &frames[2..] {
            w.append(&f.input()).unwrap();
        }
        w.flush().unwrap();
        assert_eq!(r.refresh().unwrap(), 38);
        drop(r);
        // SAFETY: the rows lay in the reader's mapping at the time of `keep_alive`, which the
        // handle keeps mapped; the file was only appended to.
        let again = unsafe { std::slice::from_raw_parts(ptr, len) };
        assert_eq!(again, &copy[..]);
        drop(keep);
    }

    #[test]
    fn refresh_waits_for_a_frame_written_in_pieces() {
        let header = testutil::header(1, 1);
        let frames = testutil::frames(1, 1, 3, 0);
        let full = testutil::log_bytes(&header, &frames, false);
        let ends = frame_ends(&full);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pieces.lvlog");
        let mut file = std::fs::File::create(&path).unwrap();
        use std::io::Write;
        file.write_all(&full[..ends[0] + 8]).unwrap(); // frame 0 and a torn frame 1 head
                                                       // SAFETY: the test only appends to the file while the reader is alive.
        let mut r = unsafe { LogReader::open(&path) }.unwrap();
        assert_eq!(r.len(), 1);
        assert!(matches!(
            r.recovery().unwrap().reason,
            RecoveryReason::TornTail { .. }
        ));
        file.write_all(&full[ends[0] + 8..ends[1] - 1]).unwrap();
        assert_eq!(r.refresh().unwrap(), 0);
        file.write_all(&full[ends[1] - 1..]).unwrap();
        assert_eq!(r.refresh().unwrap(), 2);
        assert_eq!(r.recovery().unwrap().reason, RecoveryReason::NoFooter);
        for (i, f) in frames.iter().enumerate() {
            assert_frame_eq(&r, i, f);
        }
        assert!(r.check_length().is_ok());
        file.set_len(16).unwrap();
        assert!(matches!(
            r.check_length(),
            Err(ReplayError::FileShrank { .. })
        ));
        assert!(matches!(r.refresh(), Err(ReplayError::FileShrank { .. })));
    }

    #[test]
    fn frame_input_shape_is_documented_in_summary() {
        // A frame with a NaN residual is flagged in the index and readable.
        let header = testutil::header(1, 2);
        let mut frames = testutil::frames(1, 2, 3, 0);
        frames[1].diagnostics[1][4] = f32::NAN;
        let r = LogReader::from_bytes(&testutil::log_bytes(&header, &frames, true)).unwrap();
        let s: Vec<_> = r.summaries().collect();
        assert!(!s[0].non_finite && s[1].non_finite);
        assert_eq!(s[1].first_non_finite_joint, Some(1));
        assert!(s[1].angular_error.value.is_nan());
        let _: FrameInput<'_> = frames[0].input();
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        #[test]
        fn bit_flips_never_panic_and_never_serve_wrong_data(pos in any::<prop::sample::Index>(), bit in 0u8..8, finish in any::<bool>()) {
            thread_local! {
                static LOGS: [(Vec<u8>, Vec<OwnedFrame>); 2] = {
                    let header = testutil::header(2, 3);
                    let frames = testutil::frames(2, 3, 6, 2);
                    [
                        (testutil::log_bytes(&header, &frames, false), frames.clone()),
                        (testutil::log_bytes(&header, &frames, true), frames),
                    ]
                };
            }
            LOGS.with(|logs| {
                let (bytes, frames) = &logs[finish as usize];
                let mut bytes = bytes.clone();
                let i = pos.index(bytes.len());
                bytes[i] ^= 1 << bit;
                if let Ok(r) = LogReader::from_bytes(&bytes) {
                    // Frames are matched by substep: recovery may pass over a damaged one.
                    for k in 0..r.len() {
                        if r.frame(k).is_ok() {
                            let substep = r.index()[k].summary.substep;
                            let f = frames.iter().find(|f| f.substep == substep);
                            assert_frame_eq(&r, k, f.expect("a recorded substep"));
                        }
                    }
                    let _ = r.validate_all();
                    let _ = r.column(0, 3).map(|c| c.count());
                }
            });
        }
    }
}
