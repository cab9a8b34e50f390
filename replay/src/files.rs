//! Output files: replacing an existing file without pulling it from under its readers, and
//! refusing to write over the file a command reads.

use crate::error::{ReplayError, Result};
use std::path::Path;

/// Unlinks `path` if it is an existing regular file, so that the file about to be created
/// gets a new inode. A reader that still maps the old file (a `LogReader`, a `lavender.Log`
/// in Python, `scrub --follow` in another process) keeps reading its contents; truncating in
/// place would make its mapped pages vanish and kill it with SIGBUS. Directories, devices and
/// pipes are left for `open` to judge.
pub(crate) fn unlink_existing(path: &Path) -> Result<()> {
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    if regular {
        std::fs::remove_file(path).map_err(|source| ReplayError::Io {
            action: "replacing",
            path: path.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

/// True when `a` and `b` name the same existing file: the same device and inode on Unix (so
/// a symbolic or hard link counts), the same canonical path elsewhere.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (a.canonicalize(), b.canonicalize()) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
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
        unlink_existing(&p).unwrap();
        std::fs::write(&p, b"new").unwrap();
        let mut old = String::new();
        std::io::Read::read_to_string(&mut &held, &mut old).unwrap();
        assert_eq!(old, "old contents");
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        // Nothing there, or a directory: left alone.
        unlink_existing(&dir.path().join("none")).unwrap();
        unlink_existing(dir.path()).unwrap();
        assert!(dir.path().is_dir());
    }
}
