//! A finished copy of a log, or of a range of it, as a new `.lvlog`: a killed writer's log
//! gets its footer (every later command then opens it from the footer index instead of
//! scanning the whole file), and a long run can be cut to the stretch that matters. Frames
//! are copied as recorded (poses, velocities, diagnostics, energy, state hash, and the
//! solver state of keyframes), so the copy diffs identical to the original over the frames it
//! holds and resumes from its keyframes. A range that starts between two keyframes gets the
//! solver state of its first substep re-derived (the run resumed there from the keyframe
//! before it, checked against the recorded state hash), so a stretch cut out of a long run
//! resumes from its first substep, not only from a keyframe it may not hold.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{ReplayError, Result};
use crate::range::ExportRange;
use crate::reader::LogReader;
use crate::writer::{LogSummary, LogWriter, WriterOptions};

/// Copies the frames of `range` from `reader` to a new log at `path` (`.lvlog`), written under
/// a temporary name and renamed to `path` once finished with its footer, so that a failed or
/// interrupted copy (`stop` set, read before every frame) leaves `path` as it was. Refuses,
/// before any work, to write over the log it reads. `progress` gets the frames of the range
/// done so far (every 256, and at the end).
pub fn copy_interruptible(
    reader: &LogReader,
    path: impl AsRef<Path>,
    range: ExportRange,
    mut progress: impl FnMut(usize),
    stop: &AtomicBool,
) -> Result<LogSummary> {
    let path = path.as_ref();
    if range.every != 1 {
        // A log holds consecutive substeps: diff pairs frames by substep and resume re-runs
        // from keyframes (QA 2026-12-07: a thinned copy never diffed identical).
        return Err(ReplayError::InvalidArgument(format!(
            "--every {} thins HDF5 exports only: a copy as a log holds every substep of its \
             range (diff and resume rely on it)",
            range.every
        )));
    }
    crate::files::check_extension(
        path,
        &["lvlog"],
        "a copy of a log",
        "name it NAME.lvlog (or NAME.h5 for an HDF5 export)",
    )?;
    crate::files::refuse_to_overwrite_input(reader.path(), path)?;
    crate::files::check_output(path)?;
    let frames = range.frames_of(reader)?;
    let target = crate::files::output_target(path);
    crate::files::remove_stale_partials(&target);
    let partial = crate::files::partial_path(&target);
    let copied = (|| {
        let mut w = LogWriter::create_with(&partial, reader.header(), WriterOptions::default())?;
        let start = frames.start;
        let first_state = frames
            .clone()
            .next()
            .and_then(|i| solver_state_at(reader, i));
        // Every frame of the range (`every` is 1, above).
        for i in frames.clone() {
            if stop.load(Ordering::Relaxed) {
                return Err(ReplayError::Interrupted {
                    path: path.to_path_buf(),
                });
            }
            let f = reader.frame(i)?;
            let mut input = f.input();
            if let (true, Some(state)) = (i == start, &first_state) {
                input.solver_state = Some(state);
            }
            w.append(&input)?;
            if (i - start).is_multiple_of(256) {
                progress(i - start);
            }
        }
        progress(frames.len());
        w.finish()
    })();
    let renamed = copied.and_then(|summary| {
        // A stop asked for while the footer was written: the output stays as it was, as the
        // message on the first signal promised (QA 2026-12-07).
        if stop.load(Ordering::Relaxed) {
            return Err(ReplayError::Interrupted {
                path: path.to_path_buf(),
            });
        }
        std::fs::rename(&partial, &target)
            .map(|()| summary)
            .map_err(|source| ReplayError::Io {
                action: "renaming the finished copy to",
                path: path.to_path_buf(),
                source,
            })
    });
    match renamed {
        Ok(summary) => Ok(LogSummary {
            path: path.to_path_buf(),
            ..summary
        }),
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            // The output's name, not the temporary one's (QA 2026-12-07).
            Err(match e {
                ReplayError::Io {
                    action,
                    path: p,
                    source,
                } if p == partial => ReplayError::Io {
                    action,
                    path: path.to_path_buf(),
                    source,
                },
                e => e,
            })
        }
    }
}

/// The solver state after the substep of frame `index`, where that frame carries none: the run
/// resumed there (re-run from the keyframe before it), kept only if the re-run state's hash is
/// the recorded one (the hash covers the solver state, so the bits are the original run's).
/// `None` where the frame is a keyframe already or the log cannot be resumed there (no scene,
/// no keyframe before it, recorded by a build that steps differently).
fn solver_state_at(reader: &LogReader, index: usize) -> Option<Vec<f32>> {
    let frame = reader.frame(index).ok()?;
    if frame.solver_state().is_some() {
        return None;
    }
    let resumed = match crate::resume::resume(reader, frame.substep()) {
        Ok(resumed) => resumed,
        Err(e) => {
            tracing::info!(substep = frame.substep(), %e, "the copy's first frame stays without solver state");
            return None;
        }
    };
    let same = resumed.world.state_hash() == frame.state_hash();
    if !same {
        tracing::warn!(
            substep = frame.substep(),
            "re-running up to the copy's first substep did not reproduce its recorded state; \
             the copy resumes from its keyframes only"
        );
    }
    same.then(|| resumed.world.solver_state().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;

    /// Opens a log the test wrote.
    fn open(path: &Path) -> LogReader {
        // SAFETY: the file lives in a private temporary directory and nothing writes it while
        // it is mapped (a copy is written under another name and renamed over its target).
        unsafe { LogReader::open(path) }.unwrap()
    }

    /// Writes `n` frames of a log with `bodies` bodies and `joints` joints, keyframes every 10.
    fn record_frames(path: &Path, bodies: usize, joints: usize, n: usize) {
        let header = testutil::header(bodies, joints);
        testutil::write(
            path,
            &header,
            &testutil::frames(bodies, joints, n, 10),
            true,
        );
    }

    #[test]
    fn a_killed_writers_log_is_copied_whole_with_a_footer() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("run.lvlog");
        record_frames(&log, 3, 2, 40);
        // Cut the footer and half a frame off, as a killed writer leaves a log.
        let bytes = std::fs::read(&log).unwrap();
        let killed = dir.path().join("killed.lvlog");
        let whole = open(&log);
        let cut = whole.index()[30].offset as usize + 10;
        std::fs::write(&killed, &bytes[..cut]).unwrap();
        let damaged = open(&killed);
        assert!(damaged.recovery().is_some());
        assert_eq!(damaged.len(), 30);

        let copy = dir.path().join("copy.lvlog");
        let stop = AtomicBool::new(false);
        let summary =
            copy_interruptible(&damaged, &copy, ExportRange::default(), |_| {}, &stop).unwrap();
        assert_eq!(
            (summary.frames, summary.path.as_path()),
            (30, copy.as_path())
        );
        let copied = open(&copy);
        assert!(copied.recovery().is_none(), "the copy has its footer");
        assert_eq!(copied.len(), 30);
        for i in 0..30 {
            let (a, b) = (whole.frame(i).unwrap(), copied.frame(i).unwrap());
            assert_eq!(a.substep(), b.substep());
            assert_eq!(a.state_hash(), b.state_hash());
            assert_eq!(a.poses(), b.poses());
            assert_eq!(a.velocities(), b.velocities());
            assert_eq!(a.diagnostics(), b.diagnostics());
            assert_eq!(a.solver_state(), b.solver_state());
            assert_eq!(whole.index()[i].summary, copied.index()[i].summary);
        }
        // A range; thinned, refused (a log holds every substep of its range).
        let part = dir.path().join("part.lvlog");
        let range = |every| ExportRange {
            from: 10,
            to: 19,
            every,
        };
        copy_interruptible(&whole, &part, range(1), |_| {}, &stop).unwrap();
        let substeps: Vec<u64> = open(&part)
            .index()
            .iter()
            .map(|m| m.summary.substep)
            .collect();
        assert_eq!(substeps, (10..=19).collect::<Vec<_>>());
        let thinned = copy_interruptible(&whole, &part, range(2), |_| {}, &stop);
        assert!(matches!(thinned, Err(ReplayError::InvalidArgument(_))));
    }

    #[test]
    fn a_copy_refuses_its_own_input_and_an_interrupted_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("run.lvlog");
        record_frames(&log, 2, 1, 8);
        let reader = open(&log);
        let stop = AtomicBool::new(false);
        let own = copy_interruptible(&reader, &log, ExportRange::default(), |_| {}, &stop);
        assert!(own.is_err());
        assert_eq!(open(&log).len(), 8, "the input is untouched");
        let copy = dir.path().join("copy.lvlog");
        std::fs::write(&copy, b"earlier").unwrap();
        stop.store(true, Ordering::Relaxed);
        let stopped = copy_interruptible(&reader, &copy, ExportRange::default(), |_| {}, &stop);
        assert!(matches!(stopped, Err(ReplayError::Interrupted { .. })));
        assert_eq!(std::fs::read(&copy).unwrap(), b"earlier");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
        let wrong = copy_interruptible(
            &reader,
            dir.path().join("x.h5"),
            ExportRange::default(),
            |_| {},
            &stop,
        );
        assert!(wrong.is_err());
    }
}
