//! Checks on output paths before any work: a known format for the extension, and never the
//! file a command reads.

use anyhow::bail;
use lavender_replay::files::refuse_to_overwrite_input;
use std::path::Path;

/// What a file name's extension says it holds.
fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

/// A recording's path: `.lvlog` (a Lavender log) or `.h5`/`.hdf5`/`.he5` (HDF5), and none of
/// `inputs` (the scene file, the log being resumed), which recording would replace.
pub fn check_record_path(path: &Path, inputs: &[&Path]) -> anyhow::Result<()> {
    match extension(path).as_deref() {
        Some("lvlog" | "h5" | "hdf5" | "he5") => {}
        other => bail!(
            "cannot record to {}: {}; name it NAME.lvlog for a Lavender log (what scrub, diff \
             and resume read) or NAME.h5 for HDF5",
            path.display(),
            match other {
                Some(e) => format!("the extension `.{e}` names no format Lavender writes"),
                None => "the name has no extension to choose the format by".into(),
            }
        ),
    }
    for input in inputs {
        refuse_to_overwrite_input(input, path)?;
    }
    Ok(())
}

/// An HDF5 export's path: `.h5`, `.hdf5` or `.he5`, and not the log being exported.
pub fn check_export_path(path: &Path, log: &Path) -> anyhow::Result<()> {
    if !matches!(extension(path).as_deref(), Some("h5" | "hdf5" | "he5")) {
        bail!(
            "cannot export to {}: export writes HDF5; name the output NAME.h5 (or .hdf5)",
            path.display()
        );
    }
    refuse_to_overwrite_input(log, path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_and_export_paths_need_a_known_extension_and_not_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let scene = dir.path().join("scene.toml");
        std::fs::write(&scene, "").unwrap();
        for ok in ["run.lvlog", "run.h5", "RUN.HDF5"] {
            check_record_path(&dir.path().join(ok), &[&scene]).unwrap();
        }
        for bad in ["run.hdf", "run", "run.txt"] {
            let err = check_record_path(&dir.path().join(bad), &[]).unwrap_err();
            assert!(err.to_string().contains("NAME.lvlog"), "{err}");
        }
        // The scene file itself has an extension of its own, but a link to it need not.
        let link = dir.path().join("scene.lvlog");
        std::os::unix::fs::symlink(&scene, &link).unwrap();
        let err = check_record_path(&link, &[&scene]).unwrap_err();
        assert!(err.to_string().contains("is the file being read"), "{err}");

        let log = dir.path().join("run.lvlog");
        std::fs::write(&log, "").unwrap();
        check_export_path(&dir.path().join("run.h5"), &log).unwrap();
        assert!(check_export_path(&dir.path().join("out.lvlog"), &log).is_err());
        let h5link = dir.path().join("same.h5");
        std::os::unix::fs::symlink(&log, &h5link).unwrap();
        assert!(check_export_path(&h5link, &log).is_err());
    }
}
