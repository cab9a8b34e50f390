//! The crate's error type: every failure says what was wrong and what to do about it.

use std::path::PathBuf;

/// Everything that can go wrong while writing, reading or analysing a log.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The operating system refused a file operation.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done ("creating", "writing", "opening", ...).
        action: &'static str,
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// The output path names the input file: writing it would destroy what is being read.
    #[error(
        "{output} is the file being read ({input}); writing it would destroy it: choose \
         another output path"
    )]
    OutputIsInput {
        /// The file being read.
        input: PathBuf,
        /// The output path given.
        output: PathBuf,
    },

    /// The file does not start with the log magic: it is not a Lavender log.
    #[error("{}", not_a_log(path, found))]
    NotALog {
        /// The file involved.
        path: PathBuf,
        /// The first bytes of the file (up to eight).
        found: Vec<u8>,
    },

    /// The file is a Lavender log of a major format version this build cannot read.
    #[error(
        "{path} uses log format {major}.{minor}, but this build reads format {supported}.x; \
         use a Lavender build that matches the recorder"
    )]
    UnsupportedVersion {
        /// The file involved.
        path: PathBuf,
        /// Major version found in the file.
        major: u16,
        /// Minor version found in the file.
        minor: u16,
        /// The major version this build reads.
        supported: u16,
    },

    /// The fixed prefix or the header body is damaged, or the file ends inside them;
    /// nothing in the file can be trusted.
    #[error("{path}: {detail}; the file cannot be read, re-record it")]
    CorruptHeader {
        /// The file involved.
        path: PathBuf,
        /// What is wrong: the check that failed, or where the file ends.
        detail: String,
    },

    /// A frame failed its checksum or archive validation when it was first read.
    #[error(
        "{path}: frame {index} (substep {substep}, at byte {offset}) is corrupt: {detail}; the \
         file was damaged or modified after recording; the other frames are still readable"
    )]
    CorruptFrame {
        /// The file involved.
        path: PathBuf,
        /// Frame index.
        index: usize,
        /// The substep the index lists for it.
        substep: u64,
        /// Byte offset of the frame record in the file.
        offset: u64,
        /// What check failed.
        detail: String,
    },

    /// A range of frames spans a gap that recovery passed over in a log without a footer.
    #[error(
        "{path}: {record}; the file was damaged after (or while) it was written, and the frames \
         on either side are still readable"
    )]
    SkippedRecord {
        /// The file involved.
        path: PathBuf,
        /// The gap.
        record: crate::reader::SkippedRecord,
    },

    /// An export stopped by its caller (a Ctrl-C) before it finished.
    #[error(
        "the export to {path} was interrupted: nothing was written there (an earlier file at that \
         path is kept as it was)"
    )]
    Interrupted {
        /// The export's output path.
        path: PathBuf,
    },

    /// A frame index past the end of the log.
    #[error("frame {index} is out of range: the log has {len} frames")]
    FrameOutOfRange {
        /// Requested index.
        index: usize,
        /// Number of frames in the log.
        len: usize,
    },

    /// A joint index or diagnostic column that does not exist.
    #[error(
        "{what} {index} is out of range: the log has {len} {}{}",
        plural(what),
        last_index(*len)
    )]
    OutOfRange {
        /// "joint", "body" or "column".
        what: &'static str,
        /// Requested index.
        index: usize,
        /// How many exist.
        len: usize,
    },

    /// A frame's arrays do not match the counts declared in the header.
    #[error(
        "frame for substep {substep}: {field} has {found} entries but the header declares {expected}; \
         the scene changed shape after the log was created"
    )]
    LengthMismatch {
        /// Substep of the offending frame.
        substep: u64,
        /// Which array ("poses", "velocities", "diagnostics").
        field: &'static str,
        /// Count declared in the header.
        expected: usize,
        /// Count supplied.
        found: usize,
    },

    /// Frames must be appended with strictly increasing substeps and non-decreasing finite times.
    #[error(
        "frame out of order: substep {substep} (time {time}) follows substep {prev_substep} (time {prev_time}); \
         append frames in increasing substep order with finite, non-decreasing times"
    )]
    OutOfOrder {
        /// Substep of the rejected frame.
        substep: u64,
        /// Time of the rejected frame.
        time: f64,
        /// Substep of the previous frame.
        prev_substep: u64,
        /// Time of the previous frame.
        prev_time: f64,
    },

    /// An argument is out of its range (a substep range with no frame, a zero step, ...).
    #[error("{0}")]
    InvalidArgument(String),

    /// The header itself is inconsistent (e.g. names do not match counts).
    #[error("invalid header: {0}")]
    InvalidHeader(String),

    /// rkyv failed to serialise a frame (should not happen for well-formed input).
    #[error("could not encode a frame: {0}")]
    Encode(String),

    /// The recording thread stopped at an error already returned (the recorder's later calls,
    /// `finish` among them, say this instead of repeating it): the log keeps the frames
    /// written before that error.
    #[error("the recording had already stopped at its error ({0})")]
    RecordingStopped(String),

    /// Two logs cannot be compared because their shapes differ.
    #[error(
        "cannot compare logs: {what} differ ({a} vs {b}); the two runs come from different scenes"
    )]
    ShapeMismatch {
        /// "body counts" or "joint counts".
        what: &'static str,
        /// Value in the first log.
        a: usize,
        /// Value in the second log.
        b: usize,
    },

    /// The file became shorter than what was already read (truncated in place).
    #[error(
        "{path} shrank from {was} to {now} bytes while open: another program truncated or \
         overwrote it in place (Lavender's writers replace a file instead); reading it now \
         could crash the process, so open it again"
    )]
    FileShrank {
        /// The file involved.
        path: PathBuf,
        /// Bytes previously validated.
        was: u64,
        /// Current length.
        now: u64,
    },

    /// The engine refused something while recording or resuming (bad scene, non-finite step).
    #[error(transparent)]
    Engine(#[from] lavender_engine::EngineError),

    /// A run cannot be resumed from the requested substep.
    #[error("cannot resume: {0}")]
    Resume(String),

    /// The HDF5 library reported an error.
    #[error("HDF5 {action} {path}: {detail}")]
    Hdf5 {
        /// What was being done ("creating", "writing", ...).
        action: &'static str,
        /// The file involved.
        path: PathBuf,
        /// The library's message.
        detail: String,
    },
}

/// Result alias for this crate.
pub type Result<T, E = ReplayError> = std::result::Result<T, E>;

/// The signature every HDF5 file starts with.
const HDF5_SIGNATURE: [u8; 8] = *b"\x89HDF\r\n\x1a\n";

/// What [`ReplayError::NotALog`] says, by what the file starts with.
/// "joints", "bodies", "columns".
fn plural(what: &str) -> String {
    match what.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None => format!("{what}s"),
    }
}

/// The valid indices, for an out-of-range message.
fn last_index(len: usize) -> String {
    match len {
        0 => String::new(),
        1 => " (index 0)".into(),
        n => format!(" (indices 0 to {})", n - 1),
    }
}

fn not_a_log(path: &std::path::Path, found: &[u8]) -> String {
    let path = path.display();
    if found.is_empty() {
        format!(
            "{path} is empty (0 bytes), not a Lavender log; a recording writes its header \
             first, so pass a log once `lavender run --record` has started it"
        )
    } else if found == HDF5_SIGNATURE {
        format!(
            "{path} is an HDF5 file (written by `--record x.h5` or `lavender export`), not a \
             Lavender log: export, scrub, diff and resume read .lvlog logs, so record with \
             `--record run.lvlog` (and export that to HDF5); open this file with h5py or \
             MATLAB (for pandas, build a DataFrame from h5py's arrays)"
        )
    } else if !found.is_empty()
        && found
            .iter()
            .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
    {
        // QA (2026-12-06): a scene file was described by its first bytes in hex without a
        // `0x`, which read as decimal.
        format!(
            "{path} is a text file (it starts with {:?}), not a Lavender log: a scene file \
             goes to `lavender run`; a log is written by `lavender run --record run.lvlog`",
            String::from_utf8_lossy(found)
        )
    } else {
        let hex: Vec<String> = found.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{path} is not a Lavender log: its first bytes are {} (hex) instead of the magic \
             \"LAVLOG\"; pass a file written by `lavender run --record run.lvlog`",
            hex.join(" ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::not_a_log;
    use std::path::Path;

    #[test]
    fn a_file_that_is_not_a_log_is_described_as_text_or_by_its_bytes_in_hex() {
        let text = not_a_log(Path::new("chain.toml"), b"# A 100-l");
        assert!(
            text.contains("chain.toml is a text file (it starts with \"# A 100-l\")")
                && text.contains("a scene file goes to `lavender run`"),
            "{text}"
        );
        let binary = not_a_log(Path::new("a.out"), b"\x7fELF\x02\x01\x01\x00");
        assert!(
            binary.contains("its first bytes are 7f 45 4c 46 02 01 01 00 (hex)"),
            "{binary}"
        );
    }
}
