//! The frames of a log an export or a copy takes: a substep range and a stride.

use crate::error::{ReplayError, Result};
use crate::reader::LogReader;

/// Which frames of a log an export (`h5::export`, with the `hdf5` feature) or a copy
/// ([`crate::copy`]) takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExportRange {
    /// First substep (inclusive).
    pub from: u64,
    /// Last substep (inclusive).
    pub to: u64,
    /// Keep every this many frames of the range (>= 1), starting with its first.
    pub every: u64,
}

impl Default for ExportRange {
    fn default() -> Self {
        ExportRange {
            from: 0,
            to: u64::MAX,
            every: 1,
        }
    }
}

impl ExportRange {
    /// `every` 0 would export no frame: refused in the library's words (the command line
    /// checks its `--every` itself).
    pub(crate) fn check_every(&self) -> Result<()> {
        if self.every == 0 {
            return Err(ReplayError::InvalidArgument(
                "ExportRange::every is 0: it is the step between exported frames and must be \
                 at least 1 (1 exports every frame in the range)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The positions in `reader` of the frames from substep `from` to `to`: an error when
    /// there are none, or when recovery passed over a damaged stretch inside them (its
    /// frames would be missing from the output unsaid).
    pub fn frames_of(&self, reader: &LogReader) -> Result<std::ops::Range<usize>> {
        self.check_every()?;
        let index = reader.index();
        let start = index.partition_point(|m| m.summary.substep < self.from);
        let end = index.partition_point(|m| m.summary.substep <= self.to);
        if start >= end {
            let to = if self.to == u64::MAX {
                "the end".to_string()
            } else {
                format!("substep {}", self.to)
            };
            return Err(ReplayError::InvalidArgument(
                match (index.first(), index.last()) {
                    (Some(a), Some(b)) => format!(
                        "no frame to export from substep {} to {to}: the log records substeps \
                         {} to {}",
                        self.from, a.summary.substep, b.summary.substep
                    ),
                    _ => "the log holds no frames to export".into(),
                },
            ));
        }
        reader.check_no_gap(start..end)?;
        Ok(start..end)
    }
}
