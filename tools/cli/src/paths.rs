//! Checks on a plot's path before any work (a recording's path is checked by
//! `lavender_replay::files::check_record_output`, an export's by the export itself).

use lavender_replay::files::{check_output, refuse_to_overwrite_input};
use std::path::Path;

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
    fn a_plot_needs_png_or_svg_and_never_goes_over_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("run.lvlog");
        std::fs::write(&log, "").unwrap();
        let svg = dir.path().join("log.svg");
        std::fs::copy(&log, &svg).unwrap();
        assert!(check_plot_path(&svg, &svg).is_err());
        assert!(check_plot_path(&dir.path().join("t"), &log).is_err());
        check_plot_path(&dir.path().join("t.png"), &log).unwrap();
    }
}
