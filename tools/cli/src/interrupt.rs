//! Ctrl-C (SIGINT) and SIGTERM. A long command that can stop cleanly (a run that finishes its
//! log, an export that removes its temporary file) says so with [`stop_cleanly`]; the first
//! signal then sets a flag it polls ([`requested`]), and a second ends the process at once.
//! Any other command ends at once, as without a handler. Either way the exit code is
//! [`EXIT_CODE`] (128 + SIGINT, what shells report for a Ctrl-C).

use std::sync::atomic::{AtomicBool, Ordering};

/// The exit code of an interrupted command.
pub const EXIT_CODE: i32 = 130;

/// Whether the running command stops cleanly on a signal.
static CLEAN_STOP: AtomicBool = AtomicBool::new(false);

/// Set by the first signal while [`CLEAN_STOP`] is.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// An interrupted command's error: `output::finish` exits with [`EXIT_CODE`] on it.
#[derive(Debug)]
pub struct Interrupted(pub String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

/// Installs the handler (once, at start-up). Without one (the platform refused it) a signal
/// ends the process as it always would.
///
/// A stop at once ends as any failure does: the message on standard error and, under
/// `--json`, the error object or line on standard output (QA 2026-12-06: a second Ctrl-C of
/// `scrub --follow --json` ended its JSON lines without one).
pub fn install(json: crate::output::JsonErrors) {
    let installed = ctrlc::set_handler(move || {
        if CLEAN_STOP.load(Ordering::SeqCst) && !REQUESTED.swap(true, Ordering::SeqCst) {
            eprintln!(
                "{}interrupted: stopping cleanly (interrupt again to stop at once)",
                past_the_echo()
            );
        } else {
            eprint!("{}", past_the_echo());
            let stopped = Interrupted(what_a_hard_stop_leaves());
            crate::output::finish(Err(stopped.into()), json);
        }
    });
    if let Err(e) = installed {
        tracing::debug!("no signal handler: {e}");
    }
}

/// A line break that moves the message past the `^C` a terminal echoes at the cursor; none
/// when standard error is no terminal (QA 2026-12-07: a SIGTERM'd run's log began with an
/// empty line).
fn past_the_echo() -> &'static str {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        "\n"
    } else {
        ""
    }
}

/// From now on the first signal only sets [`requested`].
pub fn stop_cleanly() {
    CLEAN_STOP.store(true, Ordering::SeqCst);
}

/// Whether a signal asked the command to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The flag [`requested`] reads, for library code that polls one.
pub fn flag() -> &'static AtomicBool {
    &REQUESTED
}

/// The file the running command writes, for [`what_a_hard_stop_leaves`].
static OUTPUT: std::sync::Mutex<Option<std::path::PathBuf>> = std::sync::Mutex::new(None);

/// Names the file the command writes (a recording, an export), so that stopping at once
/// says what became of it.
pub fn writing(path: &std::path::Path) {
    if let Ok(mut output) = OUTPUT.lock() {
        *output = Some(path.to_path_buf());
    }
}

/// On a stop at once, what it left: an HDF5 file being written is not readable until
/// finished, so its temporary file is removed and the path left as it was; a log keeps every
/// complete frame.
fn what_a_hard_stop_leaves() -> String {
    let Some(path) = OUTPUT.lock().ok().and_then(|o| o.clone()) else {
        return "stopped at once".to_string();
    };
    let hdf5 = lavender_replay::recorder::OutputKind::of(&path)
        == lavender_replay::recorder::OutputKind::Hdf5;
    if hdf5 {
        lavender_replay::files::remove_own_partials(&path);
        format!(
            "stopped at once: the HDF5 file was not finished, so {} was left as it was",
            path.display()
        )
    } else if path.exists() {
        format!(
            "stopped at once: {} holds the frames written so far, without its footer (scrub, \
             export and resume recover every complete frame)",
            path.display()
        )
    } else {
        "stopped at once".to_string()
    }
}
