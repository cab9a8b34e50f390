//! Output files: replacing an existing file without pulling it from under its readers, and
//! refusing to write over the file a command reads.

use crate::error::{ReplayError, Result};
use std::path::Path;

fn io_error(
    action: &'static str,
    path: &Path,
    kind: std::io::ErrorKind,
    what: &str,
) -> ReplayError {
    ReplayError::Io {
        action,
        path: path.to_path_buf(),
        source: std::io::Error::new(kind, what.to_string()),
    }
}

/// The file a write to `path` lands in: the target of a symbolic link, followed through
/// chains of links and to a target that does not exist yet (so that replacing or creating it
/// keeps the link), `path` itself otherwise.
pub fn output_target(path: &Path) -> std::path::PathBuf {
    let mut target = path.to_path_buf();
    // As many links as the kernel follows before it gives up on a loop.
    for _ in 0..40 {
        let is_link = std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink());
        let Some(next) = is_link.then(|| std::fs::read_link(&target).ok()).flatten() else {
            return target;
        };
        target = match target.parent() {
            Some(dir) if next.is_relative() => dir.join(next),
            _ => next,
        };
    }
    target
}

/// Checks that a new file can be written at `path` before any work is done (not a
/// directory, its directory exists, an existing file there is not write-protected), then
/// unlinks an existing regular file there (through a symbolic link: its target), so that the
/// file about to be created gets a new inode. A reader that still maps the old file (a
/// `LogReader`, a `lavender.Log` in Python, `scrub --follow` in another process) keeps
/// reading its contents; truncating in place would make its mapped pages vanish and kill it
/// with SIGBUS. Devices and pipes are left for `open` to judge.
pub fn prepare_output(path: &Path) -> Result<()> {
    let target = output_target(path);
    check_target(path, &target)?;
    if std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_file()) {
        // Unlinked under a shared lock: a writer that created this file a moment ago and has
        // not locked it yet then fails to (and says so) instead of writing on, unseen, into
        // a file no longer in the directory.
        let held = open_shared(&target).map_err(|WriterHolds| still_being_written(path))?;
        std::fs::remove_file(&target).map_err(|source| ReplayError::Io {
            action: "replacing",
            path: path.to_path_buf(),
            source,
        })?;
        drop(held);
    }
    Ok(())
}

/// Opens the log file at `path` for writing, creating it if needed but never truncating it
/// before it holds the writer's exclusive lock ([`lock_for_writing`]), checks that `path`
/// still names the file it locked, and only then empties it. Two recordings started on one
/// path at the same moment: one writes, the other gets an error, and neither empties nor
/// unlinks the file the other writes.
pub fn create_locked(path: &Path) -> Result<std::fs::File> {
    let io = |source| ReplayError::Io {
        action: "creating",
        path: path.to_path_buf(),
        source,
    };
    // Readable too: the direct appender reads back the header's last partial block.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    lock_for_writing(&file, path)?;
    if !names_file(path, &file) {
        return Err(io_error(
            "creating",
            path,
            std::io::ErrorKind::ResourceBusy,
            "another recording replaced the file at this path while this one was creating it; \
             choose another path",
        ));
    }
    file.set_len(0).map_err(io)?;
    Ok(file)
}

/// Whether `path` (followed through links) is the file `file` has open: the same device and
/// inode (Unix; elsewhere assumed).
fn names_file(path: &Path, file: &std::fs::File) -> bool {
    match (std::fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => same_inode(&a, &b).unwrap_or(true),
        _ => false,
    }
}

/// Whether two files' metadata are of one file: the same device and inode (Unix; `None`
/// elsewhere, where metadata does not say).
fn same_inode(a: &std::fs::Metadata, b: &std::fs::Metadata) -> Option<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(a.dev() == b.dev() && a.ino() == b.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        None
    }
}

/// The checks of [`prepare_output`], without touching anything.
pub fn check_output(path: &Path) -> Result<()> {
    check_target(path, &output_target(path))
}

/// [`check_output`] of `path`, whose writes land in `target`.
fn check_target(path: &Path, target: &Path) -> Result<()> {
    use std::io::ErrorKind as K;
    if target.is_dir() {
        return Err(io_error(
            "writing",
            path,
            K::IsADirectory,
            "it is a directory",
        ));
    }
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            let (kind, why) = if dir.exists() {
                (K::NotADirectory, "is a file, not a directory")
            } else {
                (K::NotFound, "does not exist")
            };
            return Err(io_error(
                "writing",
                path,
                kind,
                &format!("the directory {} {why}", dir.display()),
            ));
        }
    }
    // A writer of HDF5 writes a temporary file next to it until it finishes.
    if being_written(target) || partials_of(target).iter().any(|(p, _)| being_written(p)) {
        return Err(still_being_written(path));
    }
    if let Ok(m) = std::fs::metadata(target) {
        if m.is_file() && m.permissions().readonly() {
            return Err(io_error(
                "replacing",
                path,
                K::PermissionDenied,
                "the existing file is write-protected; make it writable to replace it, or \
                 choose another path",
            ));
        }
    }
    Ok(())
}

/// The error for an output a writer holds.
fn still_being_written(path: &Path) -> ReplayError {
    io_error(
        "replacing",
        path,
        std::io::ErrorKind::ResourceBusy,
        "a recording or export is still writing it (in this process or another: a `lavender \
         run --record`, a Python `Sim.record`); stop that one first, or choose another path",
    )
}

/// Whether a writer holds `path` locked: Lavender's log writers hold an exclusive advisory
/// lock (`flock`) on their file while they write, and so does the HDF5 library on a file it
/// writes. A shared lock is refused only while such a writer holds it (readers, h5py
/// included, take shared locks or none), so the probe never waits and never blocks them.
/// Where locks are not supported, nothing counts as being written.
pub fn being_written(path: &Path) -> bool {
    open_shared(path).is_err()
}

/// A writer holds the file's exclusive lock (see [`open_shared`]).
struct WriterHolds;

/// `path` opened as a reader holds it, its shared lock taken where locks work: `Ok(None)` when
/// it is not a regular file that opens, `Err` when a writer holds its exclusive lock.
fn open_shared(path: &Path) -> std::result::Result<Option<std::fs::File>, WriterHolds> {
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(None);
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    match file.try_lock_shared() {
        Err(std::fs::TryLockError::WouldBlock) => Err(WriterHolds),
        _ => Ok(Some(file)),
    }
}

/// Whether no writer holds `path` locked, known for sure: `Some(true)` when a shared lock
/// could be taken (locks work there and no writer holds one), `Some(false)` when a writer
/// holds it, `None` where locks are not supported or the file cannot be opened (a slow writer
/// there looks the same as a dead one). For a follower deciding that a log without a footer
/// will not grow again.
pub fn no_writer(path: &Path) -> Option<bool> {
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return None;
    }
    match file.try_lock_shared() {
        Ok(()) => Some(true),
        Err(std::fs::TryLockError::WouldBlock) => Some(false),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// Takes the exclusive lock a writer holds on its new file (see [`being_written`]). Another
/// writer that got there first is an error; a file system without locks is not.
pub fn lock_for_writing(file: &std::fs::File, path: &Path) -> Result<()> {
    match file.try_lock() {
        Err(std::fs::TryLockError::WouldBlock) => Err(io_error(
            "creating",
            path,
            std::io::ErrorKind::ResourceBusy,
            "another recording started writing the same path at the same moment; choose \
             another path",
        )),
        Ok(()) | Err(std::fs::TryLockError::Error(_)) => Ok(()),
    }
}

/// `dir/.name.PID-N.partial`: where an HDF5 file for `path` (an export, a recording) is
/// written before it is renamed to `path`, a name of its own for every writer (two writers
/// to one path, from two processes or two threads, each rename their own file).
pub fn partial_path(path: &Path) -> std::path::PathBuf {
    static WRITERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    path.with_file_name(format!(
        ".{}.{}-{n}.partial",
        partial_stem(path),
        std::process::id()
    ))
}

/// The output's file name in its [`partial_path`], cut to 200 bytes (at a character
/// boundary) so that the temporary name fits the usual 255-byte limit of a file name (QA: a
/// 250-character `.h5` name failed where the same `.lvlog` name worked).
fn partial_stem(path: &Path) -> String {
    let mut name = path
        .file_name()
        .map_or_else(|| "export".into(), |n| n.to_string_lossy().into_owned());
    if name.len() > 200 {
        let mut cut = 200;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        name.truncate(cut);
    }
    name
}

/// Removes the [`partial_path`] files of writers to `path` whose process no longer runs (a
/// killed export's or recording's), where `/proc` says which processes run (Linux); returns
/// how many. Best effort: a file it cannot remove stays.
pub fn remove_stale_partials(path: &Path) -> usize {
    let mut removed = 0;
    for (partial, pid) in partials_of(path) {
        let running = Path::new("/proc").join(pid.to_string()).exists();
        if !running && std::fs::remove_file(&partial).is_ok() {
            tracing::info!(file = %partial.display(), "removed a killed writer's temporary file");
            removed += 1;
        }
    }
    removed
}

/// Removes the [`partial_path`] files this process is writing for `path` (a command
/// stopped at once by a second Ctrl-C, whose unfinished HDF5 file cannot be read); returns
/// how many. Best effort.
pub fn remove_own_partials(path: &Path) -> usize {
    let me = std::process::id();
    partials_of(&output_target(path))
        .into_iter()
        .filter(|(partial, pid)| *pid == me && std::fs::remove_file(partial).is_ok())
        .count()
}

/// The [`partial_path`] files of writers to `path` with their process ids, where `/proc`
/// says which processes run (Linux; elsewhere none).
fn partials_of(path: &Path) -> Vec<(std::path::PathBuf, u32)> {
    if !Path::new("/proc/self").exists() {
        return Vec::new();
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let prefix = format!(".{}.", partial_stem(path));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = (name.strip_prefix(&prefix))
                .and_then(|rest| rest.strip_suffix(".partial"))
                .and_then(|rest| rest.split_once('-'))
                .and_then(|(pid, n)| n.parse::<u64>().is_ok().then_some(pid))
                .and_then(|pid| pid.parse::<u32>().ok())?;
            Some((entry.path(), pid))
        })
        .collect()
}

/// Extensions of the formats a recording can be written in: a Lavender log, or HDF5.
pub const RECORD_EXTENSIONS: [&str; 4] = ["lvlog", "h5", "hdf5", "he5"];
/// Extensions of HDF5 files.
pub const HDF5_EXTENSIONS: [&str; 3] = ["h5", "hdf5", "he5"];

/// A file name's extension, lower case (what chooses a format).
pub fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

/// An error unless `path` ends in one of `extensions` (any case); `what` says what is
/// written and `advice` what to name it.
pub fn check_extension(path: &Path, extensions: &[&str], what: &str, advice: &str) -> Result<()> {
    // A directory first: "the name has no extension" misleads there (QA 2026-12-08).
    if path.is_dir() {
        return Err(ReplayError::InvalidArgument(format!(
            "cannot write {what} to {}: it is a directory; name a file in it ({advice})",
            path.display()
        )));
    }
    let ext = extension(path);
    if ext.as_deref().is_some_and(|e| extensions.contains(&e)) {
        return Ok(());
    }
    Err(ReplayError::InvalidArgument(format!(
        "cannot write {what} to {}: {}; {advice}",
        path.display(),
        match ext {
            Some(e) => format!("the extension `.{e}` is not one {what} is written in"),
            None => "the name has no extension to choose the format by".into(),
        }
    )))
}

/// A recording's path: `.lvlog` (a Lavender log) or `.h5`/`.hdf5`/`.he5` (HDF5).
pub fn check_record_extension(path: &Path) -> Result<()> {
    check_extension(
        path,
        &RECORD_EXTENSIONS,
        "a recording",
        "name it NAME.lvlog for a Lavender log (what scrub, diff and resume read) or NAME.h5 \
         for HDF5",
    )
}

/// An HDF5 export's path: `.h5`, `.hdf5` or `.he5`.
pub fn check_hdf5_extension(path: &Path) -> Result<()> {
    check_extension(
        path,
        &HDF5_EXTENSIONS,
        "an HDF5 export",
        "name it NAME.h5 (or .hdf5)",
    )
}

/// Everything a recording's path must pass before the run starts: a `.lvlog` or HDF5
/// extension, none of `inputs` (the scene file, the log a run was resumed from), which
/// recording would replace, and [`check_output`]. What `lavender run --record`, `resume
/// --record` and Python's `Sim.record` check; [`crate::recorder::Recorder`] itself takes any
/// path.
pub fn check_record_output(path: &Path, inputs: &[&Path]) -> Result<()> {
    check_record_extension(path)?;
    for input in inputs {
        refuse_to_overwrite_input(input, path)?;
    }
    check_output(path)
}

/// True when `a` and `b` name the same existing file: the same device and inode on Unix (so
/// a symbolic or hard link counts), the same canonical path elsewhere.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => same_inode(&x, &y).unwrap_or_else(
            || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y),
        ),
        _ => false,
    }
}

/// An error when `output` names the file `input`, which writing `output` would destroy.
pub fn refuse_to_overwrite_input(input: &Path, output: &Path) -> Result<()> {
    if same_file(input, output) {
        return Err(ReplayError::OutputIsInput {
            input: input.to_path_buf(),
            output: output.to_path_buf(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA (2026-12-08): an export to an existing directory said "the name has no extension";
    /// an export to a log's extension that the name "names no format Lavender writes".
    #[test]
    fn an_output_that_is_a_directory_or_another_formats_says_which() {
        let dir = tempfile::tempdir().unwrap();
        let err = check_hdf5_extension(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("it is a directory; name a file in it (name it NAME.h5"),
            "{err}"
        );
        let err = check_hdf5_extension(&dir.path().join("copy.lvlog"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("the extension `.lvlog` is not one an HDF5 export is written in"),
            "{err}"
        );
        assert!(check_hdf5_extension(&dir.path().join("run.H5")).is_ok());
    }

    /// A second writer that opens the path while the first holds its lock gets an error and
    /// leaves the first's bytes as they are (the file is emptied only under the lock).
    #[test]
    fn a_writer_that_loses_the_race_for_a_path_empties_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.lvlog");
        let first = create_locked(&path).unwrap();
        std::fs::write(&path, b"the first writer's frames").unwrap();
        let err = create_locked(&path).unwrap_err().to_string();
        assert!(err.contains("another recording"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"the first writer's frames");
        drop(first);
        // Unlocked, the path is a writer's again, emptied.
        let again = create_locked(&path).unwrap();
        assert_eq!(again.metadata().unwrap().len(), 0);
    }

    /// A writer whose freshly created file was replaced at its path before it took the lock
    /// (another recording's `prepare_output` unlinked it) says so instead of writing into a
    /// file no longer in the directory.
    #[test]
    fn a_writer_whose_file_was_replaced_before_it_locked_it_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.lvlog");
        let orphan = std::fs::File::create(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, b"the other recording").unwrap();
        assert!(!names_file(&path, &orphan));
        let replaced = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        assert!(names_file(&path, &replaced));
        // Unlinked and not replaced: no file to name.
        std::fs::remove_file(&path).unwrap();
        assert!(!names_file(&path, &replaced));
    }

    /// `prepare_output` will not unlink a file a writer holds, even one that appeared after
    /// `check_output` ran.
    #[test]
    fn preparing_an_output_a_writer_holds_is_refused_and_leaves_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.lvlog");
        let writer = create_locked(&path).unwrap();
        std::fs::write(&path, b"frames").unwrap();
        let err = prepare_output(&path).unwrap_err().to_string();
        assert!(
            err.contains("still writing") || err.contains("another recording"),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"frames");
        drop(writer);
        prepare_output(&path).unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn a_temporary_name_fits_a_file_name_however_long_the_output() {
        let dir = tempfile::tempdir().unwrap();
        let long = format!("{}.h5", "ä".repeat(125));
        assert_eq!(long.len(), 253);
        let partial = partial_path(&dir.path().join(&long));
        let name = partial.file_name().unwrap().to_str().unwrap();
        assert!(name.len() <= 255, "{}", name.len());
        std::fs::write(&partial, b"x").unwrap();
        // And it is still found as this output's temporary file.
        assert_eq!(partials_of(&dir.path().join(&long)).len(), 1);
    }

    /// What a second Ctrl-C removes: this process's temporary files for the output, not
    /// another process's, nor another output's.
    #[test]
    fn a_hard_stop_removes_only_its_own_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.h5");
        let mine = partial_path(&out);
        let other_pid = dir
            .path()
            .join(format!(".run.h5.{}-0.partial", std::process::id() + 1));
        let other_output = partial_path(&dir.path().join("other.h5"));
        for f in [&mine, &other_pid, &other_output] {
            std::fs::write(f, b"x").unwrap();
        }
        assert_eq!(remove_own_partials(&out), 1);
        assert!(!mine.exists() && other_pid.exists() && other_output.exists());
    }

    #[test]
    fn an_output_under_a_file_or_a_missing_directory_says_which() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("afile");
        std::fs::write(&file, b"x").unwrap();
        let err = check_output(&file.join("x.lvlog")).unwrap_err().to_string();
        assert!(err.contains("is a file, not a directory"), "{err}");
        let err = check_output(&dir.path().join("none").join("x.lvlog"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not exist"), "{err}");
    }

    #[test]
    fn same_file_sees_through_links_and_relative_paths() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.lvlog");
        std::fs::write(&a, b"x").unwrap();
        let b = dir.path().join("b.lvlog");
        std::fs::write(&b, b"x").unwrap();
        assert!(same_file(&a, &a));
        assert!(same_file(&a, &dir.path().join(".").join("a.lvlog")));
        assert!(!same_file(&a, &b));
        assert!(!same_file(&a, &dir.path().join("missing")));
        #[cfg(unix)]
        {
            let link = dir.path().join("link.h5");
            std::os::unix::fs::symlink(&a, &link).unwrap();
            assert!(same_file(&a, &link));
            let hard = dir.path().join("hard.h5");
            std::fs::hard_link(&a, &hard).unwrap();
            assert!(same_file(&hard, &a));
        }
        let err = refuse_to_overwrite_input(&a, &a).unwrap_err().to_string();
        assert!(err.contains("is the file being read"), "{err}");
        refuse_to_overwrite_input(&a, &b).unwrap();
    }

    /// A replaced file gets a new inode: a reader holding the old one keeps its bytes.
    #[test]
    fn unlinking_leaves_open_readers_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.lvlog");
        std::fs::write(&p, b"old contents").unwrap();
        let held = std::fs::File::open(&p).unwrap();
        prepare_output(&p).unwrap();
        std::fs::write(&p, b"new").unwrap();
        let mut old = String::new();
        std::io::Read::read_to_string(&mut &held, &mut old).unwrap();
        assert_eq!(old, "old contents");
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        // Nothing there: fine. A directory, a missing directory, a write-protected file:
        // refused, and left alone.
        prepare_output(&dir.path().join("none")).unwrap();
        let err = prepare_output(dir.path()).unwrap_err().to_string();
        assert!(err.contains("it is a directory"), "{err}");
        let err = prepare_output(&dir.path().join("no/x.lvlog"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not exist"), "{err}");
        let locked = dir.path().join("locked.lvlog");
        std::fs::write(&locked, b"golden").unwrap();
        let mut perms = std::fs::metadata(&locked).unwrap().permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(&locked, perms).unwrap();
        let err = prepare_output(&locked).unwrap_err().to_string();
        assert!(err.contains("write-protected"), "{err}");
        assert_eq!(std::fs::read(&locked).unwrap(), b"golden");
    }

    /// Through a symbolic link the target is replaced by a new file and the link kept: a
    /// reader of the old target keeps its bytes.
    #[cfg(unix)]
    #[test]
    fn a_link_keeps_pointing_at_a_new_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.lvlog");
        std::fs::write(&target, b"old contents").unwrap();
        let link = dir.path().join("link.lvlog");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let held = std::fs::File::open(&target).unwrap();
        prepare_output(&link).unwrap();
        assert!(!target.exists());
        std::fs::write(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        let mut old = String::new();
        std::io::Read::read_to_string(&mut &held, &mut old).unwrap();
        assert_eq!(old, "old contents");
        assert_eq!(output_target(&link), target);
        // A link to a file not there yet, relative and through another link: its target.
        let dangling = dir.path().join("dangling.h5");
        std::os::unix::fs::symlink("sub/new.h5", &dangling).unwrap();
        let second = dir.path().join("second.h5");
        std::os::unix::fs::symlink(&dangling, &second).unwrap();
        assert_eq!(output_target(&second), dir.path().join("sub/new.h5"));
    }

    #[test]
    fn a_recording_needs_a_known_extension_and_never_replaces_an_input() {
        let dir = tempfile::tempdir().unwrap();
        let scene = dir.path().join("scene.toml");
        std::fs::write(&scene, "").unwrap();
        for ok in ["run.lvlog", "run.h5", "RUN.HDF5"] {
            check_record_output(&dir.path().join(ok), &[&scene]).unwrap();
        }
        for bad in ["run.hdf", "run", "run.txt"] {
            let err = check_record_output(&dir.path().join(bad), &[]).unwrap_err();
            assert!(err.to_string().contains("NAME.lvlog"), "{err}");
        }
        // The scene file has an extension of its own, but a link to it need not.
        #[cfg(unix)]
        {
            let link = dir.path().join("scene.lvlog");
            std::os::unix::fs::symlink(&scene, &link).unwrap();
            let err = check_record_output(&link, &[&scene]).unwrap_err();
            assert!(err.to_string().contains("is the file being read"), "{err}");
        }
    }

    #[test]
    fn extensions_choose_the_format_or_are_refused() {
        for ok in ["a.lvlog", "a.H5", "a.hdf5"] {
            check_record_extension(Path::new(ok)).unwrap();
        }
        for bad in ["a.hdf", "a", "a.toml"] {
            let err = check_record_extension(Path::new(bad))
                .unwrap_err()
                .to_string();
            assert!(err.contains("NAME.lvlog"), "{err}");
        }
        check_hdf5_extension(Path::new("x.h5")).unwrap();
        assert!(check_hdf5_extension(Path::new("x.lvlog")).is_err());
    }
}
