//! The constraints tutorial (chapter 7), runnable.
//!
//! Every experiment and paw-check of the chapter is a function of this crate that returns a
//! [`Report`]: a human summary that states the setup it used, one JSON object with every number it
//! reports, and the plots it wrote (PNG, plus SVG where cheap). The `lavender tutorial constraints`
//! command is a thin layer over [`experiments`] and [`run`].
//!
//! The pure-math experiments (`particle-circle`, `circle-multiplier-force`, `baumgarte-stability`,
//! `projection-energy`) work on one particle in double precision and need no engine. The others
//! (`diagnostics`, `sweep`, `revolute-limit`, `spherical-vs-fixed`) drive `lavender_engine`.
//!
//! Plots are drawn with plotters and an embedded DejaVu Sans font (see [`plot`]), so they render on
//! a machine with no system fonts.
//!
//! ```no_run
//! use lavender_tutorial::{experiments, run, Options};
//!
//! for (name, summary) in experiments() {
//!     println!("{name:24} {summary}");
//! }
//! let opts = Options { quick: true, out_dir: Some("out/demo".into()), progress: false };
//! let report = run("particle-circle", &opts)?;
//! println!("{}", report.text);
//! println!("{}", report.json["methods"]["baumgarte"]["final_abs_c"]);
//! # Ok::<(), lavender_tutorial::TutorialError>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

pub mod baumgarte_stability;
pub mod circle;
pub mod circle_multiplier_force;
pub mod diagnostics;
pub mod particle_circle;
pub mod plot;
pub mod projection_energy;
pub mod revolute_limit;
pub mod spherical_vs_fixed;
pub mod sweep;

/// How to run an experiment.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Reduced resolution that finishes in a few seconds (the tests use it).
    pub quick: bool,
    /// Where the plots go; `None` means `out/tutorial/constraints/<experiment>/`.
    pub out_dir: Option<PathBuf>,
    /// Show indicatif progress bars (the CLI passes true only on a terminal).
    pub progress: bool,
}

/// What an experiment produced.
#[derive(Debug, Clone)]
pub struct Report {
    /// The experiment's name, as listed by [`experiments`].
    pub experiment: &'static str,
    /// A human summary, including the setup used.
    pub text: String,
    /// Every figure the experiment reports, as one JSON object.
    pub json: serde_json::Value,
    /// The plots written, in the order they were drawn.
    pub files: Vec<PathBuf>,
}

/// Everything that can go wrong in the tutorial.
#[derive(Debug, thiserror::Error)]
pub enum TutorialError {
    /// The name is not one of [`experiments`].
    #[error("unknown experiment `{name}`; valid names: {}", valid.join(", "))]
    UnknownExperiment {
        /// The name asked for.
        name: String,
        /// Every valid name.
        valid: Vec<&'static str>,
    },
    /// A quantity became NaN or infinite; the run is meaningless from there on.
    #[error("{what} became non-finite ({value}) at step {step} of `{experiment}`: the setup is unstable (timestep too large or gains too high for it)")]
    NonFinite {
        /// The experiment or treatment that diverged.
        experiment: String,
        /// The quantity that became non-finite.
        what: &'static str,
        /// The step (0 = initial state) at which it was detected.
        step: usize,
        /// The offending value.
        value: f64,
    },
    /// Projection onto the circle was asked to normalise a (nearly) zero position, whose
    /// direction is undefined.
    #[error("cannot project onto the circle: |x| = {norm:e} m is below {min:e} m, so x/|x| has no direction")]
    DegeneratePosition {
        /// The norm of the position that was to be normalised, m.
        norm: f64,
        /// The smallest norm accepted, m.
        min: f64,
    },
    /// A setup parameter is out of range.
    #[error("invalid setup: {0}")]
    InvalidSetup(String),
    /// Creating the output directory or writing a file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The path that could not be written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Drawing a plot failed.
    #[error("cannot draw {path}: {message}")]
    Plot {
        /// The plot being drawn.
        path: PathBuf,
        /// What plotters reported.
        message: String,
    },
    /// The embedded font could not be registered with plotters.
    #[error("the embedded DejaVu Sans font could not be registered with plotters")]
    Font,
    /// The engine refused a scene or a step.
    #[error("engine: {0}")]
    Engine(#[from] lavender_engine::EngineError),
    /// The engine ran but a relationship the experiment relies on did not hold.
    #[error("{0}")]
    Check(String),
}

/// One experiment: its name, a one-line summary and the function that runs it.
struct Entry {
    name: &'static str,
    summary: &'static str,
    /// What `--quick` changes.
    quick: &'static str,
    run: fn(&Options, &Path) -> Result<Report, TutorialError>,
}

const ENTRIES: &[Entry] = &[
    Entry {
        name: particle_circle::NAME,
        summary: "particle on a circle: unconstrained vs multiplier vs Baumgarte vs projection",
        quick: "nothing (the whole experiment takes about a millisecond)",
        run: particle_circle::run,
    },
    Entry {
        name: circle_multiplier_force::NAME,
        summary: "paw-check: the circle multiplier under a constant force matches its closed form",
        quick: "2 s of motion instead of 20 s",
        run: circle_multiplier_force::run,
    },
    Entry {
        name: baumgarte_stability::NAME,
        summary: "paw-check: map of stable and unstable Baumgarte gains (alpha, beta) at fixed dt",
        quick: "31 x 31 gain pairs instead of 151 x 151",
        run: baumgarte_stability::run,
    },
    Entry {
        name: projection_energy::NAME,
        summary: "paw-check: energy injected or removed by projection, per step and per run",
        quick: "a timestep study of 3 dt (0.02 to 0.005 s) instead of 6 (0.04 to 0.00125 s)",
        run: projection_energy::run,
    },
    Entry {
        name: diagnostics::NAME,
        summary: "engine: translate a revolute child by [0.02, 0.03, 0] m and read the 8 columns",
        quick: "nothing (one pose, then 55 offsets, each read once)",
        run: diagnostics::run,
    },
    Entry {
        name: sweep::NAME,
        summary: "engine: revolute residuals over frame dt x velocity iterations (heatmaps)",
        quick: "1 s per cell instead of 4 s",
        run: sweep::run,
    },
    Entry {
        name: revolute_limit::NAME,
        summary: "paw-check: trigger a revolute limit and plot column 5 (limit violation)",
        quick: "2 s of motion instead of 5 s",
        run: revolute_limit::run,
    },
    Entry {
        name: spherical_vs_fixed::NAME,
        summary: "paw-check: same twist, spherical angular residual 0 vs fixed = the twist angle",
        quick: "nothing (four twists, then 181 over a whole turn, each read once)",
        run: spherical_vs_fixed::run,
    },
];

/// Every experiment as `(name, one-line summary)`, in the chapter's order.
pub fn experiments() -> &'static [(&'static str, &'static str)] {
    const LIST: &[(&str, &str)] = &[
        (ENTRIES[0].name, ENTRIES[0].summary),
        (ENTRIES[1].name, ENTRIES[1].summary),
        (ENTRIES[2].name, ENTRIES[2].summary),
        (ENTRIES[3].name, ENTRIES[3].summary),
        (ENTRIES[4].name, ENTRIES[4].summary),
        (ENTRIES[5].name, ENTRIES[5].summary),
        (ENTRIES[6].name, ENTRIES[6].summary),
        (ENTRIES[7].name, ENTRIES[7].summary),
    ];
    LIST
}

/// What `--quick` changes in the experiment `name`, or `None` for an unknown name.
pub fn quick_mode(name: &str) -> Option<&'static str> {
    ENTRIES.iter().find(|e| e.name == name).map(|e| e.quick)
}

/// The directory an experiment writes to when [`Options::out_dir`] is `None`.
pub fn default_out_dir(experiment: &str) -> PathBuf {
    Path::new("out/tutorial/constraints").join(experiment)
}

/// Runs the experiment `name` (see [`experiments`]) and writes its plots.
pub fn run(name: &str, opts: &Options) -> Result<Report, TutorialError> {
    let entry = ENTRIES.iter().find(|e| e.name == name).ok_or_else(|| {
        TutorialError::UnknownExperiment {
            name: name.to_string(),
            valid: ENTRIES.iter().map(|e| e.name).collect(),
        }
    })?;
    let out = opts
        .out_dir
        .clone()
        .unwrap_or_else(|| default_out_dir(entry.name));
    // The plots create the directory when they are written: an experiment without plots
    // leaves no empty directory behind.
    tracing::info!(experiment = entry.name, quick = opts.quick, out = %out.display(), "running");
    (entry.run)(opts, &out)
}

/// Returns `Err(NonFinite)` unless `value` is finite.
pub(crate) fn ensure_finite(
    experiment: &str,
    what: &'static str,
    step: usize,
    value: f64,
) -> Result<f64, TutorialError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(TutorialError::NonFinite {
            experiment: experiment.to_string(),
            what,
            step,
            value,
        })
    }
}

/// A progress bar that is hidden unless `opts.progress`.
pub(crate) fn progress_bar(
    opts: &Options,
    len: u64,
    message: &'static str,
) -> indicatif::ProgressBar {
    if !opts.progress {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{msg:>12} [{bar:40}] {pos}/{len} ({elapsed}, eta {eta})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message);
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_name_lists_the_valid_ones() {
        let err = run("no-such-thing", &Options::default()).unwrap_err();
        let msg = err.to_string();
        for (name, _) in experiments() {
            assert!(msg.contains(name), "{msg} should list {name}");
        }
    }

    #[test]
    fn list_matches_dispatch_table() {
        let names: Vec<_> = experiments().iter().map(|(n, _)| *n).collect();
        let entries: Vec<_> = ENTRIES.iter().map(|e| e.name).collect();
        assert_eq!(names, entries);
    }

    #[test]
    fn default_out_dir_is_per_experiment() {
        assert_eq!(
            default_out_dir("sweep"),
            PathBuf::from("out/tutorial/constraints/sweep")
        );
    }
}
