//! The writer: one whole frame record per `append`, a footer index on `finish`.
//!
//! Each frame is serialised, head first, straight into the page-aligned staging buffer of the
//! file ([`crate::append`]: whole blocks by direct I/O, the tail buffered), checksummed,
//! padded and written out at once. In steady state an append allocates nothing except the
//! amortised growth of the in-memory index. A follower (or a crash) therefore sees either
//! nothing or a whole frame plus possibly a torn tail that the reader recognises and drops.

use std::io::Write;
use std::path::{Path, PathBuf};

use rkyv::rancor;
use rkyv::ser::allocator::Arena;
use rkyv::util::AlignedVec;

use crate::append::{AppendFile, Stage};
use crate::error::{ReplayError, Result};
use crate::format::{
    align16, record_crc, FooterRecord, FrameInput, FrameMeta, FrameRecord, FrameSummary, Header,
    Prefix, FORMAT_MAJOR, FORMAT_MINOR, KIND_FOOTER, KIND_FRAME, PREFIX_SIZE, RECORD_HEAD_SIZE,
    TRAILER_MAGIC, TRAILER_SIZE,
};
use crate::scrub::{Spike, SpikeFinder};

/// When the writer asks the OS to make frames durable.
///
/// Every frame is always written whole with one `write` call as soon as it is appended, so
/// a follower in the same machine sees it at once; the policy only controls `fsync`, which
/// is what survives a power loss (and is slow: milliseconds on most disks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlushPolicy {
    /// Never `fsync` before [`LogWriter::finish`] (fastest; survives a killed process,
    /// not a power loss).
    #[default]
    OnFinish,
    /// `fsync` (data only) after every `n` frames.
    SyncEvery(u32),
}

/// How frames reach the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterOptions {
    /// When to `fsync`.
    pub flush: FlushPolicy,
    /// Hand each encoded frame to a writer thread instead of calling `write` on the caller's
    /// thread. When frames arrive slower than the thread writes them (one per multi-ms step),
    /// the caller pays only for the summary, the encoding and the checksum: measured ~100 µs
    /// for a 10,000-body, 10,000-joint frame (840 KB) against ~350 µs including the
    /// page-cache copy. Frames are still written whole, in order, by one `write` each. At
    /// most [`BACKGROUND_QUEUE`] frames are in flight (then `append` waits); an I/O error in
    /// the thread is returned by the next `append` or by `finish`.
    pub background: bool,
    /// Write whole 4 KiB blocks with direct I/O (`O_DIRECT`, Linux) and only the tail
    /// through the page cache: the same bytes, a tenth of the kernel CPU per MB (see
    /// `append.rs`). Falls back to buffered writes where the file system refuses it.
    pub direct_io: bool,
}

impl Default for WriterOptions {
    /// Sync on finish, writes on the caller's thread, direct I/O where available.
    fn default() -> Self {
        WriterOptions {
            flush: FlushPolicy::default(),
            background: false,
            direct_io: true,
        }
    }
}

/// Bytes of frames the direct sink stages before it writes them out, and the longest it
/// holds any: a frame of a small scene (the pendulum's is about 300 bytes) written with a
/// syscall of its own cost more than the substep it records (QA, 2026-12-05: `lavender run
/// pendulum --duration 300 --record` took 8x the unrecorded run, one `pwrite` per substep),
/// so small frames go out together. A frame at least this large goes out at once, as
/// before. A reader (a follower of a live log) sees frames at most this late; `flush`,
/// `finish` and dropping the writer write everything staged.
pub const COMMIT_BYTES: usize = 256 * 1024;
/// See [`COMMIT_BYTES`].
pub const COMMIT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// Frames in flight between `append` and the writer thread (bounded memory: this many
/// frame buffers plus the one being encoded).
pub const BACKGROUND_QUEUE: usize = 3;

enum Sink {
    Direct(AppendFile),
    Background {
        /// Filled buffers to the thread; dropped to stop it.
        full: Option<std::sync::mpsc::SyncSender<Stage>>,
        /// Written buffers back from the thread, for reuse.
        empty: std::sync::mpsc::Receiver<Stage>,
        /// Buffers allocated so far (at most `BACKGROUND_QUEUE + 1`).
        allocated: usize,
        thread: Option<std::thread::JoinHandle<std::io::Result<AppendFile>>>,
    },
}

/// What [`LogWriter::finish`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSummary {
    /// Number of frames written.
    pub frames: usize,
    /// Total file size in bytes.
    pub bytes: u64,
    /// The log's path.
    pub path: PathBuf,
}

/// Appends frames to a new log file.
///
/// Dropping the writer without calling [`finish`](LogWriter::finish) leaves a valid log
/// without a footer, which the reader opens by scanning.
pub struct LogWriter {
    sink: Sink,
    path: PathBuf,
    body_count: usize,
    joint_count: usize,
    /// Reused serialisation buffer of the background sink (the direct sink encodes into
    /// its file's staging buffer).
    buf: Stage,
    arena: Arena,
    index: Vec<FrameMeta>,
    flush: FlushPolicy,
    /// Current file length.
    offset: u64,
    unsynced: u32,
    /// When the direct sink last wrote its staged bytes out (see [`COMMIT_BYTES`]).
    last_commit: std::time::Instant,
    /// [`COMMIT_INTERVAL`] (a field so that tests can pin it).
    commit_interval: std::time::Duration,
    /// The spike index's finder (when the header asks for one) and the onsets so far.
    spike_finder: Option<SpikeFinder>,
    spikes: Vec<Spike>,
    /// A write failed and its error went to the caller: the file ends at the last complete
    /// frame (or inside the torn one), and dropping the writer adds nothing to it.
    failed: bool,
}

fn io_err<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> ReplayError + 'a {
    move |source| ReplayError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

impl LogWriter {
    /// Creates `path` and writes the prefix and header. An existing file there is unlinked
    /// first, never truncated in place, so a reader still mapping it is unaffected.
    pub fn create(path: impl AsRef<Path>, header: &Header) -> Result<LogWriter> {
        Self::create_with(path, header, WriterOptions::default())
    }

    /// Like [`create`](LogWriter::create) with explicit options.
    pub fn create_with(
        path: impl AsRef<Path>,
        header: &Header,
        options: WriterOptions,
    ) -> Result<LogWriter> {
        let path = path.as_ref();
        header.validate().map_err(ReplayError::InvalidHeader)?;
        let body =
            serde_json::to_vec(header).map_err(|e| ReplayError::InvalidHeader(e.to_string()))?;
        let prefix = Prefix {
            major: FORMAT_MAJOR,
            minor: FORMAT_MINOR,
            flags: 0,
            header_len: body.len() as u64,
            header_crc: crc32fast::hash(&body),
        };
        let mut bytes = Vec::with_capacity(align16(PREFIX_SIZE + body.len()));
        bytes.extend_from_slice(&prefix.encode());
        bytes.extend_from_slice(&body);
        bytes.resize(align16(bytes.len()), 0);

        crate::files::prepare_output(path)?;
        let mut file = crate::files::create_locked(path)?;
        file.write_all(&bytes).map_err(io_err("writing", path))?;
        let file = AppendFile::new(file, path, bytes.len() as u64, options.direct_io)
            .map_err(io_err("reading back", path))?;
        tracing::debug!(path = %path.display(), direct_io = file.is_direct(), "log created");
        let sink = if options.background {
            spawn_writer(file, options.flush)
        } else {
            Sink::Direct(file)
        };
        Ok(LogWriter {
            sink,
            path: path.to_path_buf(),
            body_count: header.body_count,
            joint_count: header.joint_count,
            flush: options.flush,
            buf: AlignedVec::new(),
            arena: Arena::new(),
            index: Vec::new(),
            offset: bytes.len() as u64,
            unsynced: 0,
            last_commit: std::time::Instant::now(),
            failed: false,
            commit_interval: COMMIT_INTERVAL,
            spike_finder: header
                .spike_index
                .as_ref()
                .map(|p| SpikeFinder::for_joints(header.joint_count, p))
                .transpose()?,
            spikes: Vec::new(),
        })
    }

    /// Number of frames appended so far.
    pub fn frames(&self) -> usize {
        self.index.len()
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.offset
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn check(&self, f: &FrameInput<'_>) -> Result<()> {
        f.check_shape(self.body_count, self.joint_count)?;
        f.check_follows(
            self.index
                .last()
                .map(|p| (p.summary.substep, p.summary.time)),
        )
    }

    /// Serialises `record` as one complete record (head, payload, padding) at the end of the
    /// buffer it will be written from: the direct sink's staging buffer (no copy), else
    /// `self.buf` (cleared first). Returns the payload length and the record's length.
    fn encode_record<T>(&mut self, kind: [u8; 4], record: &T) -> Result<(u64, u64)>
    where
        T: for<'x> rkyv::Serialize<
            rkyv::api::low::LowSerializer<
                &'x mut Stage,
                rkyv::ser::allocator::ArenaHandle<'x>,
                rancor::Error,
            >,
        >,
    {
        let buf = match &mut self.sink {
            Sink::Direct(file) => file.stage(),
            Sink::Background { .. } => {
                self.buf.clear();
                &mut self.buf
            }
        };
        // Every record is padded to 16 bytes, so `start` is 16-aligned and rkyv lays the
        // payload out exactly as it would at offset 0.
        let start = buf.len();
        buf.extend_from_slice(&[0u8; RECORD_HEAD_SIZE]);
        let encoded = rkyv::api::low::to_bytes_in_with_alloc::<_, _, rancor::Error>(
            record,
            &mut *buf,
            self.arena.acquire(),
        );
        if let Err(e) = encoded {
            buf.resize(start, 0);
            return Err(ReplayError::Encode(e.to_string()));
        }
        let payload_start = start + RECORD_HEAD_SIZE;
        let payload_len = (buf.len() - payload_start) as u64;
        let padded = align16(buf.len());
        buf.resize(padded, 0);
        buf[start..start + 4].copy_from_slice(&kind);
        buf[start + 8..start + 16].copy_from_slice(&payload_len.to_le_bytes());
        let end = payload_start + payload_len as usize;
        let crc = record_crc(&buf[start + 8..start + 16], &buf[payload_start..end]);
        buf[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
        Ok((payload_len, (padded - start) as u64))
    }

    /// Appends one frame. The arrays must match the header's body and joint counts, substeps
    /// must increase and times must not decrease.
    pub fn append(&mut self, frame: &FrameInput<'_>) -> Result<()> {
        self.check(frame)?;
        let summary = FrameSummary::compute(frame);
        if let Some(finder) = &mut self.spike_finder {
            finder.judge_frame(
                frame.substep,
                frame.time,
                frame.diagnostics,
                &mut self.spikes,
            );
        }
        let record = FrameRecord {
            substep: frame.substep,
            time: frame.time,
            total_energy: frame.total_energy,
            state_hash: frame.state_hash,
            summary,
            poses: frame.poses,
            velocities: frame.velocities,
            diagnostics: frame.diagnostics,
            solver_state: frame.solver_state,
        };
        let (len, written) = self.encode_record(KIND_FRAME, &record)?;
        let sync_due = match (self.flush, &self.sink) {
            (FlushPolicy::SyncEvery(n), Sink::Direct(_)) => self.unsynced + 1 >= n.max(1),
            _ => false,
        };
        let commit_due = match &self.sink {
            Sink::Direct(file) => {
                sync_due
                    || file.pending() >= COMMIT_BYTES
                    || self.last_commit.elapsed() >= self.commit_interval
            }
            Sink::Background { .. } => true,
        };
        if commit_due {
            self.commit_staged()?;
        }
        self.index.push(FrameMeta {
            offset: self.offset,
            len,
            state_hash: frame.state_hash,
            diagnostics_hash: lavender_engine::diagnostics_hash(frame.diagnostics),
            has_solver_state: frame.solver_state.is_some(),
            summary,
        });
        self.offset += written;
        if let (FlushPolicy::SyncEvery(_), Sink::Direct(file)) = (self.flush, &self.sink) {
            self.unsynced += 1;
            if sync_due {
                file.sync_data().map_err(io_err("syncing", &self.path))?;
                self.unsynced = 0;
            }
        }
        Ok(())
    }

    /// Writes out every frame staged so far (see [`COMMIT_BYTES`]): a reader then sees them.
    pub fn flush(&mut self) -> Result<()> {
        match &self.sink {
            Sink::Direct(file) if file.pending() > 0 => self.commit_staged(),
            _ => Ok(()),
        }
    }

    /// Writes out what is staged and restarts the [`COMMIT_INTERVAL`] clock.
    fn commit_staged(&mut self) -> Result<()> {
        self.write_buf("writing a frame to")?;
        self.last_commit = std::time::Instant::now();
        Ok(())
    }

    /// Writes `self.buf` whole (directly, or by handing it to the writer thread and taking
    /// an empty buffer in exchange).
    fn write_buf(&mut self, action: &'static str) -> Result<()> {
        let written = self.write_buf_once(action);
        self.failed |= written.is_err();
        written
    }

    fn write_buf_once(&mut self, action: &'static str) -> Result<()> {
        match &mut self.sink {
            Sink::Direct(file) => file.commit().map_err(io_err(action, &self.path)),
            Sink::Background {
                full,
                empty,
                allocated,
                ..
            } => {
                let spare = match empty.try_recv() {
                    Ok(b) => Some(b),
                    Err(_) if *allocated <= BACKGROUND_QUEUE => {
                        *allocated += 1;
                        Some(AlignedVec::with_capacity(self.buf.capacity()))
                    }
                    Err(_) => empty.recv().ok(),
                };
                let sent = match (spare, full.as_ref()) {
                    (Some(spare), Some(tx)) => {
                        let filled = std::mem::replace(&mut self.buf, spare);
                        tx.send(filled).is_ok()
                    }
                    _ => false,
                };
                if sent {
                    Ok(())
                } else {
                    // The thread stopped: it hit an I/O error; report it.
                    Err(self.join_writer().err().unwrap_or_else(|| ReplayError::Io {
                        action,
                        path: self.path.clone(),
                        source: std::io::Error::other("the log writer thread stopped"),
                    }))
                }
            }
        }
    }

    /// Stops the writer thread (after it wrote everything queued) and takes the file back.
    fn join_writer(&mut self) -> Result<()> {
        if let Sink::Background { full, thread, .. } = &mut self.sink {
            full.take();
            if let Some(handle) = thread.take() {
                let file = match handle.join() {
                    Ok(r) => r.map_err(io_err("writing (in the background) to", &self.path))?,
                    Err(_) => {
                        return Err(ReplayError::Io {
                            action: "writing (in the background) to",
                            path: self.path.clone(),
                            source: std::io::Error::other("the log writer thread panicked"),
                        })
                    }
                };
                self.sink = Sink::Direct(file);
            }
        }
        Ok(())
    }

    /// Writes the footer index and trailer, syncs the file and closes it.
    pub fn finish(mut self) -> Result<LogSummary> {
        if self.failed {
            // The index may list frames that never reached the file: no footer over them.
            return Err(ReplayError::RecordingStopped(format!(
                "a write to {} failed; it keeps the frames written before that, which readers \
                 recover, and `lavender export` writes a finished copy",
                self.path.display()
            )));
        }
        let index = std::mem::take(&mut self.index);
        let spikes = std::mem::take(&mut self.spikes);
        let footer = FooterRecord {
            body_count: self.body_count as u64,
            joint_count: self.joint_count as u64,
            frames: &index,
            spikes: &spikes,
        };
        // The footer goes out on this thread, after every queued frame.
        self.join_writer()?;
        let (_, written) = self.encode_record(KIND_FOOTER, &footer)?;
        let footer_offset = self.offset;
        let Sink::Direct(file) = &mut self.sink else {
            unreachable!("join_writer leaves the direct sink")
        };
        file.stage().extend_from_slice(&footer_offset.to_le_bytes());
        file.stage().extend_from_slice(&TRAILER_MAGIC);
        self.write_buf("writing the footer to")?;
        self.offset += written + TRAILER_SIZE as u64;
        if let Sink::Direct(file) = &self.sink {
            file.sync_all().map_err(io_err("syncing", &self.path))?;
        }
        Ok(LogSummary {
            frames: index.len(),
            bytes: self.offset,
            path: self.path.clone(),
        })
    }
}

impl Drop for LogWriter {
    /// Without `finish`, writes the staged frames (or waits for queued ones to be written),
    /// leaving a footer-less log.
    ///
    /// After a write error the caller already has, nothing more is written (a retry could
    /// append frames behind a torn one) and nothing is logged: the error said it (QA
    /// 2026-12-08: a full disk's error came twice, once as this warning).
    fn drop(&mut self) {
        if self.failed {
            let _ = self.join_writer();
            return;
        }
        if let Err(e) = self.flush().and_then(|()| self.join_writer()) {
            tracing::warn!(error = %e, "log writer dropped with an I/O error");
        }
    }
}

fn spawn_writer(mut file: AppendFile, flush: FlushPolicy) -> Sink {
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Stage>(BACKGROUND_QUEUE);
    let (empty_tx, empty_rx) = std::sync::mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("lavender-log-writer".into())
        .spawn(move || {
            let mut unsynced = 0u32;
            for buf in full_rx {
                file.write_all(&buf)?;
                if let FlushPolicy::SyncEvery(n) = flush {
                    unsynced += 1;
                    if unsynced >= n.max(1) {
                        file.sync_data()?;
                        unsynced = 0;
                    }
                }
                // The appender may be gone (finish or drop); then the buffer is just freed.
                let _ = empty_tx.send(buf);
            }
            Ok(file)
        })
        .expect("spawning the log writer thread");
    Sink::Background {
        full: Some(full_tx),
        empty: empty_rx,
        allocated: 1,
        thread: Some(thread),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;
    use crate::LogReader;

    fn round_trip(options: WriterOptions, finish: bool) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bg.lvlog");
        let header = testutil::header(4, 3);
        let frames = testutil::frames(4, 3, 40, 7);
        let mut w = LogWriter::create_with(&path, &header, options).unwrap();
        for f in &frames {
            w.append(&f.input()).unwrap();
        }
        let expected_bytes = w.bytes();
        if finish {
            let summary = w.finish().unwrap();
            assert_eq!(summary.frames, 40);
            assert_eq!(summary.bytes, std::fs::metadata(&path).unwrap().len());
        } else {
            drop(w);
            assert_eq!(std::fs::metadata(&path).unwrap().len(), expected_bytes);
        }
        // SAFETY: private temporary file, no writer left.
        let r = unsafe { LogReader::open(&path) }.unwrap();
        assert_eq!(r.len(), 40);
        assert_eq!(r.is_finished(), finish);
        if !finish {
            assert_eq!(r.recovery().unwrap().dropped_bytes, 0);
        }
        for (i, f) in frames.iter().enumerate() {
            let v = r.frame(i).unwrap();
            assert_eq!(v.state_hash(), f.state_hash);
            assert_eq!(v.poses(), &f.poses[..]);
            assert_eq!(v.diagnostics(), &f.diagnostics[..]);
            assert_eq!(v.solver_state(), f.solver_state.as_deref());
        }
    }

    #[test]
    fn background_writer_round_trips_and_drop_flushes_the_queue() {
        for direct_io in [true, false] {
            let bg = WriterOptions {
                background: true,
                flush: FlushPolicy::OnFinish,
                direct_io,
            };
            round_trip(bg, true);
            round_trip(bg, false);
            let synced = WriterOptions {
                background: true,
                flush: FlushPolicy::SyncEvery(16),
                direct_io,
            };
            round_trip(synced, true);
            round_trip(
                WriterOptions {
                    background: false,
                    flush: FlushPolicy::SyncEvery(8),
                    direct_io,
                },
                false,
            );
            round_trip(
                WriterOptions {
                    direct_io,
                    ..WriterOptions::default()
                },
                false,
            );
        }
    }

    #[test]
    fn small_frames_go_out_together_when_due_flushed_or_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small.lvlog");
        let header = testutil::header(2, 2);
        let frames = testutil::frames(2, 2, 12, 4);
        let file_len = || std::fs::metadata(&path).unwrap().len();
        let mut w = LogWriter::create(&path, &header).unwrap();
        let header_len = file_len();
        assert_eq!(w.bytes(), header_len);
        // Not due: the frames stay staged, the file keeps its header alone.
        w.commit_interval = std::time::Duration::from_secs(3600);
        for f in &frames[..3] {
            w.append(&f.input()).unwrap();
        }
        assert_eq!(file_len(), header_len);
        assert!(w.bytes() > header_len);
        w.flush().unwrap();
        assert_eq!(file_len(), w.bytes());
        // Due by time: each frame goes out as it comes.
        w.commit_interval = std::time::Duration::ZERO;
        w.append(&frames[3].input()).unwrap();
        assert_eq!(file_len(), w.bytes());
        // Due by size: a frame of at least `COMMIT_BYTES` goes out at once.
        let big_header = testutil::header(6000, 4000);
        const { assert!(6000 * 13 * 4 + 4000 * 8 * 4 >= COMMIT_BYTES) };
        let big = testutil::frames(6000, 4000, 1, 0);
        let big_path = dir.path().join("big.lvlog");
        let mut b = LogWriter::create(&big_path, &big_header).unwrap();
        b.commit_interval = std::time::Duration::from_secs(3600);
        b.append(&big[0].input()).unwrap();
        assert_eq!(std::fs::metadata(&big_path).unwrap().len(), b.bytes());
        // Dropped without `finish`: what was staged is written, a footer-less log.
        w.commit_interval = std::time::Duration::from_secs(3600);
        for f in &frames[4..] {
            w.append(&f.input()).unwrap();
        }
        let expected = w.bytes();
        assert!(file_len() < expected);
        drop(w);
        assert_eq!(file_len(), expected);
        // SAFETY: private temporary file, no writer left.
        let r = unsafe { LogReader::open(&path) }.unwrap();
        assert_eq!(r.len(), 12);
        assert_eq!(r.recovery().unwrap().dropped_bytes, 0);
        for (i, f) in frames.iter().enumerate() {
            assert_eq!(r.frame(i).unwrap().state_hash(), f.state_hash);
        }
    }

    #[test]
    fn direct_and_buffered_logs_are_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let header = testutil::header(30, 20);
        let frames = testutil::frames(30, 20, 60, 7);
        let write = |name: &str, direct_io: bool| {
            let path = dir.path().join(name);
            let options = WriterOptions {
                direct_io,
                ..WriterOptions::default()
            };
            let mut w = LogWriter::create_with(&path, &header, options).unwrap();
            for f in &frames {
                w.append(&f.input()).unwrap();
            }
            w.finish().unwrap();
            std::fs::read(path).unwrap()
        };
        assert!(write("direct.lvlog", true) == write("buffered.lvlog", false));
    }
}
