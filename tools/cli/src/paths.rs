//! Checks on output paths before any work: a known format for the extension, a place a file
//! can be written, and never the file a command reads.

use lavender_replay::files::{
    check_hdf5_extension, check_output, check_record_extension, refuse_to_overwrite_input,
};
use std::path::Path;

/// A recording's path: `.lvlog` (a Lavender log) or `.h5`/`.hdf5`/`.he5` (HDF5), writable,
/// and none of `inputs` (the scene file, the log being resumed), which recording would
/// replace.
pub fn check_record_path(path: &Path, inputs: &[&Path]) -> anyhow::Result<()> {
    check_record_extension(path)?;
    for input in inputs {
        refuse_to_overwrite_input(input, path)?;
    }
    check_output(path)?;
    Ok(())
}

/// An HDF5 export's path: `.h5`, `.hdf5` or `.he5`, writable, and not the log being
/// exported.
pub fn check_export_path(path: &Path, log: &Path) -> anyhow::Result<()> {
    check_hdf5_extension(path)?;
    refuse_to_overwrite_input(log, path)?;
    check_output(path)?;
    Ok(())
}

/// A plot's path: `.png` or `.svg`, writable, and not the log being drawn.
pub fn check_plot_path(path: &Path, log: &Path) -> anyhow::Result<()> {
    lavender_replay::files::check_extension(
        path,
        &["png", "svg"],
        "a plot",
        "name it NAME.png or NAME.svg",
    )?;
    refuse_to_overwrite_input(log, path)?;
    check_output(path)?;
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
        // A plot is no different: never over the log it draws.
        let svg = dir.path().join("log.svg");
        std::fs::copy(&log, &svg).unwrap();
        assert!(check_plot_path(&svg, &svg).is_err());
        assert!(check_plot_path(&dir.path().join("t"), &log).is_err());
        check_plot_path(&dir.path().join("t.png"), &log).unwrap();
    }
}
