//! The log file as the writer appends to it: whole blocks with direct I/O, the tail through
//! the page cache.
//!
//! Why: on the machines Lavender is measured on, a buffered `write` of a recorded frame cost
//! 0.2 to 2.3 ms of kernel CPU per MB (page-cache allocation and copy, then the flusher
//! threads' writeback), taken from the engine's worker threads on a 2-core machine. An
//! `O_DIRECT` write of the same MB costs about 0.09 ms of CPU (`dd ... oflag=direct`: 1 GB
//! in 0.09 s of system time against 2.31 s buffered).
//!
//! How: direct I/O moves whole aligned blocks only. Every append copies the bytes after the
//! last whole block (the tail, under [`BLOCK`] bytes) and the new data into an aligned
//! staging buffer, writes its whole blocks with the direct descriptor and the remainder with
//! an ordinary buffered `pwrite`. So the file always has exactly the bytes appended, no
//! padding: a reader (or a follower of a live log) sees every complete frame at once, as
//! with plain writes. The next append rewrites the tail's block, with the same bytes, now
//! followed by more; the kernel keeps the page cache coherent with direct writes.
//!
//! Where direct I/O is not available (tmpfs, some network file systems, other systems) or a
//! direct write is refused, the file falls back to plain buffered appends, with the same
//! bytes on disk.

use std::fs::File;
use std::io;
use std::path::Path;

use rkyv::util::AlignedVec;

/// Alignment and size unit of direct writes (covers 512-byte and 4 KiB logical blocks).
pub(crate) const BLOCK: usize = 4096;

/// The staging buffer: page-aligned, as direct I/O needs.
pub(crate) type Stage = AlignedVec<BLOCK>;

/// An append-only file (see the module docs).
///
/// Writers append in place: [`stage`](AppendFile::stage) lends the staging buffer (holding
/// the current tail in direct mode, empty otherwise), the caller encodes its record after
/// what is there, and [`commit`](AppendFile::commit) writes the new bytes out. So a record
/// is encoded straight into the buffer the kernel reads from (no copy).
pub(crate) struct AppendFile {
    /// Buffered descriptor: the tail bytes, `fsync`, and every write when `direct` is None.
    file: File,
    /// Descriptor opened with `O_DIRECT`, for whole blocks.
    direct: Option<File>,
    /// Bytes in the file.
    len: u64,
    /// In direct mode, the tail (bytes after the last whole block of the file), then bytes
    /// staged since; in buffered mode, bytes staged since the last commit.
    stage: Stage,
    /// Length of `stage` at the last commit.
    committed: usize,
}

impl AppendFile {
    /// Wraps `file` (opened for reading and writing at `path`, holding `len` bytes already)
    /// and, if `try_direct`, tries to open a direct descriptor beside it.
    pub(crate) fn new(file: File, path: &Path, len: u64, try_direct: bool) -> io::Result<Self> {
        let direct = if try_direct { open_direct(path) } else { None };
        let mut stage = Stage::new();
        if direct.is_some() {
            // The current tail, so the first direct write can rewrite its block whole.
            let tail = (len % BLOCK as u64) as usize;
            stage.resize(tail, 0);
            read_exact_at(&file, stage.as_mut_slice(), len - tail as u64)?;
        }
        let committed = stage.len();
        Ok(AppendFile {
            file,
            direct,
            len,
            stage,
            committed,
        })
    }

    /// True if whole blocks go through direct I/O.
    pub(crate) fn is_direct(&self) -> bool {
        self.direct.is_some()
    }

    /// The staging buffer, to append bytes to (then [`commit`](AppendFile::commit); a caller
    /// that gives up truncates it back to the length it found). Its length is a multiple of
    /// 16 whenever everything appended so far is.
    pub(crate) fn stage(&mut self) -> &mut Stage {
        &mut self.stage
    }

    /// Bytes staged since the last commit (not in the file yet).
    pub(crate) fn pending(&self) -> usize {
        self.stage.len() - self.committed
    }

    /// Appends `data` at the end of the file.
    pub(crate) fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.stage.extend_from_slice(data);
        self.commit()
    }

    /// Writes the bytes staged since the last commit at the end of the file.
    pub(crate) fn commit(&mut self) -> io::Result<()> {
        let new = (self.stage.len() - self.committed) as u64;
        let block_start = self.len - self.committed as u64;
        if self.direct.is_some() {
            let whole = self.stage.len() / BLOCK * BLOCK;
            let direct = self.direct.as_ref().expect("checked above");
            let done = if whole > 0 {
                write_all_at(direct, &self.stage[..whole], block_start)
            } else {
                Ok(())
            };
            match done {
                Ok(()) => {
                    write_all_at(&self.file, &self.stage[whole..], block_start + whole as u64)?;
                    // Keep the tail at the start of the (still aligned) stage.
                    let end = self.stage.len();
                    self.stage.as_mut_slice().copy_within(whole..end, 0);
                    self.stage.resize(end - whole, 0);
                }
                Err(e) => {
                    // Refused (e.g. EINVAL on a file system that accepted O_DIRECT at open):
                    // fall back for good, writing what the stage holds through the page cache.
                    tracing::debug!(error = %e, "direct write refused; appending buffered");
                    self.direct = None;
                    write_all_at(&self.file, &self.stage, block_start)?;
                    self.stage.clear();
                }
            }
        } else {
            write_all_at(&self.file, &self.stage[self.committed..], self.len)?;
            self.stage.clear();
        }
        self.committed = self.stage.len();
        self.len += new;
        Ok(())
    }

    /// `fsync` of the data.
    pub(crate) fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// `fsync` of data and metadata.
    pub(crate) fn sync_all(&self) -> io::Result<()> {
        self.file.sync_all()
    }
}

#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| tracing::debug!(error = %e, "no direct I/O for the log; appending buffered"))
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_path: &Path) -> Option<File> {
    None
}

#[cfg(unix)]
fn write_all_at(file: &File, data: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, data, offset)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn write_all_at(mut file: &File, data: &[u8], offset: u64) -> io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    file.seek(SeekFrom::Start(offset))?;
    file.write_all(data)
}

#[cfg(not(unix))]
fn read_exact_at(mut file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends chunks of awkward sizes and checks the file after every append.
    fn appends_exactly(dir: &Path, try_direct: bool) -> bool {
        let path = dir.join(format!("append-{try_direct}.bin"));
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let head = b"0123456789abcdefhead";
        std::io::Write::write_all(&mut file, head).unwrap();
        let mut f = AppendFile::new(file, &path, head.len() as u64, try_direct).unwrap();
        let direct = f.is_direct();
        let mut expected = head.to_vec();
        let mut x = 7u32;
        for size in [1, 4075, 4096, 5000, 1 << 20, 3, 8191, 12288, 0, 77_777] {
            let chunk: Vec<u8> = (0..size)
                .map(|_| {
                    x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    (x >> 24) as u8
                })
                .collect();
            f.write_all(&chunk).unwrap();
            expected.extend_from_slice(&chunk);
            // The file holds exactly the appended bytes after every append (a follower
            // reading it sees no padding).
            assert_eq!(
                std::fs::read(&path).unwrap(),
                expected,
                "after {size} bytes"
            );
        }
        f.sync_all().unwrap();
        direct
    }

    #[test]
    fn appends_hold_exactly_the_bytes_with_and_without_direct_io() {
        // Beside the test binary, on the build's disk, where Linux file systems (ext4, xfs,
        // btrfs) take O_DIRECT.
        let exe = std::env::current_exe().unwrap();
        let dir = tempfile::tempdir_in(exe.parent().unwrap()).unwrap();
        assert!(!appends_exactly(dir.path(), false));
        let direct = appends_exactly(dir.path(), true);
        if cfg!(target_os = "linux") {
            assert!(direct, "the build directory's file system refused O_DIRECT");
        }
    }

    #[test]
    fn tmpfs_falls_back_to_buffered_appends() {
        let shm = Path::new("/dev/shm");
        if !shm.is_dir() {
            return;
        }
        let dir = tempfile::tempdir_in(shm).unwrap();
        // tmpfs may or may not take O_DIRECT (Linux 6.6+ does); either way the bytes match.
        appends_exactly(dir.path(), true);
    }
}
