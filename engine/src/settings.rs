//! World settings: gravity, substep cap, iteration counts, stabilisation gains, sleeping.

use crate::error::{EngineError, Result};
use glam::Vec3;
use serde::{Deserialize, Serialize};

/// The most substeps one frame may run ([`Settings::check_substeps`]).
pub const MAX_SUBSTEPS_PER_FRAME: u32 = 100_000;

/// The most frames one run may ask for (the CLI's `--steps`/`--duration`, Python's
/// `Sim.run`): 1e12 frames of 1/60 s is 500 years of simulated time, beyond any run that
/// ends; a larger request is a mistake (a duration in the wrong unit, a tiny `dt`).
pub const MAX_RUN_FRAMES: u64 = 1_000_000_000_000;

/// The most worker threads a world's own pool may have ([`Settings::threads`]).
pub const MAX_THREADS: u32 = 1024;
const _: () = assert!(
    MAX_THREADS == 1024,
    "update the threads message in `validate`"
);

/// The world's solver and physics settings. Units are SI.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Gravitational acceleration, m/s^2.
    pub gravity: Vec3,
    /// The longest substep, s. A step of `dt` runs `ceil(dt / max_substep)` equal substeps.
    pub max_substep: f32,
    /// Sequential-impulse passes over the velocity rows per substep.
    pub velocity_iterations: u32,
    /// Split-impulse (error-reduction) passes per substep, each fused with one of the first
    /// velocity passes; `None` (the default): one with every velocity pass. At most
    /// `velocity_iterations`. Fewer bias passes cost less and leave more position error to the
    /// projection passes (Rapier's stabilisation iterations are the same knob).
    pub bias_iterations: Option<u32>,
    /// Positional projection passes per substep (0 disables projection).
    pub position_iterations: u32,
    /// Solve chains of joints directly (off by default): every path of hinges and ball joints
    /// (limited hinges too, their stops kept by an active-set solve) in the joint graph
    /// ([`crate::schedule::chains`]) is solved exactly in each velocity pass, by one forward
    /// and one backward sweep over its block-tridiagonal system, instead of row by row; the
    /// other joints are solved by the colours after it. Long chains and nets
    /// then converge in one or two passes where Gauss-Seidel needs many (see engine/DESIGN.md,
    /// "Direct chain solve"). Changes results (the default keeps every golden log).
    pub chain_solve: bool,
    /// Error-reduction factor in `[0, 1]`: the bias solve targets the corrective velocity
    /// `-error_reduction * C / h`, so that this fraction of each row's position error is removed
    /// by the pose integration of a substep (before the projection passes).
    pub error_reduction: f32,
    /// Fraction in `(0, 1]` of each row's position error that one projection pass removes.
    pub projection_factor: f32,
    /// Warm-start the velocity solve with the previous substep's impulses.
    pub warm_starting: bool,
    /// Integrate the gyroscopic term of a rotating body (`w x I w`, implicitly; see
    /// `rows::gyroscopic_lanes`): on by default, so that a free body keeps its angular
    /// momentum, an intermediate-axis spin flips and a top precesses. Off, angular velocity
    /// changes only through joints (as in engines that leave the term out); bodies whose
    /// three moments are equal are the same either way.
    pub gyroscopic: bool,
    /// Aim each velocity row along the chord of its constraint's curved path over the substep
    /// (`J v = -h/2 Jdot v`, see `joints::curvature_lanes`) instead of the tangent at its start:
    /// on by default. Off, a swinging or spinning body loses kinetic energy at first order in
    /// the substep (a pendulum released from 1 rad: 12 % of its swing energy in 10 s at 1/240
    /// s substeps), as in sequential-impulse engines that leave the term out. A limited joint
    /// running into its stop within the substep gets none (the impact ends the free motion they
    /// predict); one held on its stop keeps them and its stop's row gets one (engine/DESIGN.md).
    /// Logs recorded before this setting existed resume with it off.
    pub curvature: bool,
    /// Speculative limits (off by default): a limited joint whose coordinate would cross a
    /// stop within the substep at its velocity before the solve (`x + h xdot` past the bound)
    /// gets the stop's unilateral row already, with the speculative offset `C / h` (`C >= 0`
    /// the distance left to the stop), so the solve lets it reach the stop and not pass it,
    /// as Box2D v3 treats joint limits. Off, a limit adds its row only once the coordinate has
    /// crossed its bound (the tutorial chapter's rule) and a joint swinging fast into a stop
    /// passes it by up to `h |xdot|` before the row and the projection push it back.
    pub speculative_limits: bool,
    /// Worker threads for the step: 1 runs everything on the calling thread, `n >= 2` builds a
    /// rayon pool of `n` threads for this world, 0 (the default) uses rayon's global pool
    /// (`RAYON_NUM_THREADS`, else one per core) for a world of at least
    /// [`crate::AUTO_POOL_MIN_JOINTS`] joints or [`crate::AUTO_POOL_MIN_BODIES`] bodies and
    /// the calling thread for a smaller one, where threads cost more than they save. Results
    /// are bitwise identical for every value.
    pub threads: u32,
    /// Which instantiation of the joint kernels solves the colour batches. Both give bitwise
    /// identical results; `scalar` is the reference.
    pub solver_path: SolverPath,
    /// Let islands at rest sleep (off by default: offline runs step every body every substep).
    /// An island falls asleep when every body in it has stayed below both
    /// `sleep_linear_speed` and `sleep_angular_speed` for `time_to_sleep`; it wakes when one of
    /// its bodies is touched through the API (see [`crate::schedule::islands`]).
    pub sleeping: bool,
    /// Speed of a body's centre of mass below which it counts as resting, m/s (default 0.05).
    pub sleep_linear_speed: f32,
    /// Angular speed below which a body counts as resting, rad/s (default 0.05).
    pub sleep_angular_speed: f32,
    /// Time every body of an island must rest before the island falls asleep, s (default 0.5).
    pub time_to_sleep: f32,
}

/// The joint kernels' instantiation (see [`crate::lanes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SolverPath {
    /// Batches of 8 joints, solved lane-parallel with `wide::f32x8`.
    #[default]
    Wide,
    /// The scalar reference: batches of one joint, the same kernels over `f32`.
    Scalar,
}

impl SolverPath {
    /// `"wide"` or `"scalar"`.
    pub fn name(self) -> &'static str {
        match self {
            SolverPath::Wide => "wide",
            SolverPath::Scalar => "scalar",
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            max_substep: 1.0 / 240.0,
            velocity_iterations: 8,
            bias_iterations: None,
            position_iterations: 2,
            chain_solve: false,
            error_reduction: 0.2,
            projection_factor: 1.0,
            warm_starting: true,
            gyroscopic: true,
            curvature: true,
            speculative_limits: false,
            threads: 0,
            solver_path: SolverPath::Wide,
            sleeping: false,
            sleep_linear_speed: 0.05,
            sleep_angular_speed: 0.05,
            time_to_sleep: 0.5,
        }
    }
}

impl Settings {
    /// The settings that differ between `self` and `other` and change results, each as its
    /// name (the scene file's key) with the two values: every setting but `threads` and
    /// `solver_path`, which give the same results bit for bit. Empty when a run with either
    /// reproduces the other's bits.
    pub fn result_changes(&self, other: &Settings) -> Vec<(&'static str, String, String)> {
        let mut changes = Vec::new();
        let mut compare = |name: &'static str, a: String, b: String| {
            if a != b {
                changes.push((name, a, b));
            }
        };
        let bias = |s: &Settings| match s.bias_iterations {
            Some(n) => n.to_string(),
            None => "all".to_string(),
        };
        // Destructured whole, so that a new setting cannot be left out unnoticed.
        let Settings {
            gravity,
            max_substep,
            velocity_iterations,
            bias_iterations: _,
            position_iterations,
            chain_solve,
            error_reduction,
            projection_factor,
            warm_starting,
            gyroscopic,
            curvature,
            speculative_limits,
            threads: _,
            solver_path: _,
            sleeping,
            sleep_linear_speed,
            sleep_angular_speed,
            time_to_sleep,
        } = self;
        let o = other;
        let text = |x: &dyn std::fmt::Display| x.to_string();
        compare(
            "gravity",
            format!("{:?}", gravity.to_array()),
            format!("{:?}", o.gravity.to_array()),
        );
        // The rest by name, as the scene file's keys.
        macro_rules! compare_fields {
            ($($field:ident),*) => {
                $(compare(stringify!($field), text($field), text(&o.$field));)*
            };
        }
        compare_fields!(max_substep, velocity_iterations);
        compare("bias_iterations", bias(self), bias(o));
        compare_fields!(
            position_iterations,
            chain_solve,
            error_reduction,
            projection_factor,
            warm_starting,
            gyroscopic,
            curvature,
            speculative_limits,
            sleeping,
            sleep_linear_speed,
            sleep_angular_speed,
            time_to_sleep
        );
        changes
    }

    /// Bias passes per substep: [`Settings::bias_iterations`], else `velocity_iterations`.
    pub fn bias_passes(&self) -> u32 {
        self.bias_iterations.unwrap_or(self.velocity_iterations)
    }

    /// Checks every setting, returning the first one out of range.
    pub fn validate(&self) -> Result<()> {
        fn bad(name: &'static str, value: impl ToString, reason: &'static str) -> EngineError {
            EngineError::InvalidSetting {
                name,
                value: value.to_string(),
                reason,
            }
        }
        if !self.gravity.is_finite() {
            return Err(bad(
                "gravity",
                format!("{:?}", self.gravity.to_array()),
                "every component must be finite (m/s^2)",
            ));
        }
        if !(self.max_substep.is_finite() && self.max_substep > 0.0) {
            return Err(bad(
                "max_substep",
                self.max_substep,
                "must be a finite number of seconds greater than zero, e.g. 1/240 = 0.0041667",
            ));
        }
        if self.velocity_iterations == 0 {
            return Err(bad(
                "velocity_iterations",
                0,
                "at least one velocity pass is needed; the default is 8",
            ));
        }
        if self.velocity_iterations > 10_000 {
            return Err(bad(
                "velocity_iterations",
                self.velocity_iterations,
                "must be at most 10000; the default is 8",
            ));
        }
        if self.position_iterations > 10_000 {
            return Err(bad(
                "position_iterations",
                self.position_iterations,
                "must be at most 10000; the default is 2",
            ));
        }
        if let Some(n) = self
            .bias_iterations
            .filter(|&n| n > self.velocity_iterations)
        {
            return Err(bad(
                "bias_iterations",
                n,
                "must be at most velocity_iterations (each bias pass runs with a velocity pass); \
                 leave it unset for one per velocity pass",
            ));
        }
        if self.threads > MAX_THREADS {
            return Err(bad(
                "threads",
                self.threads,
                // The literal is `MAX_THREADS` (checked below: the reason is a static str).
                "must be at most 1024; 0 picks: one per core for a large world, the calling thread for a small one",
            ));
        }
        if !(self.error_reduction.is_finite() && (0.0..=1.0).contains(&self.error_reduction)) {
            return Err(bad(
                "error_reduction",
                self.error_reduction,
                "must lie in [0, 1]; the default is 0.2",
            ));
        }
        if !(self.projection_factor.is_finite()
            && self.projection_factor > 0.0
            && self.projection_factor <= 1.0)
        {
            return Err(bad(
                "projection_factor",
                self.projection_factor,
                "must lie in (0, 1]; the default is 1",
            ));
        }
        for (name, value, unit) in [
            ("sleep_linear_speed", self.sleep_linear_speed, "m/s"),
            ("sleep_angular_speed", self.sleep_angular_speed, "rad/s"),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(EngineError::InvalidSetting {
                    name,
                    value: value.to_string(),
                    reason: if unit == "m/s" {
                        "must be a finite speed >= 0 in m/s; the default is 0.05 (0 lets only \
                         bodies at exactly zero speed sleep)"
                    } else {
                        "must be a finite angular speed >= 0 in rad/s; the default is 0.05 (0 \
                         lets only bodies at exactly zero speed sleep)"
                    },
                });
            }
        }
        if !(self.time_to_sleep.is_finite() && self.time_to_sleep > 0.0) {
            return Err(bad(
                "time_to_sleep",
                self.time_to_sleep,
                "must be a finite number of seconds greater than zero; the default is 0.5 \
                 (to keep islands awake, set `sleeping = false` instead)",
            ));
        }
        Ok(())
    }

    /// A warning when [`Settings::threads`] asks for more threads than this machine runs at
    /// once: the results are the same bit for bit, but the step is slower (QA: `threads =
    /// 1000` started 1,003 threads and ran the 20 x 20 grid 12 times slower than one).
    pub fn threads_warning(&self) -> Option<String> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (self.threads as usize > cores).then(|| {
            format!(
                "threads = {} is more than the {cores} this machine runs at once: the results \
                 are the same bit for bit, but the step is slower (threads = 0 uses one per core)",
                self.threads
            )
        })
    }

    /// Number of substeps for a frame of `dt` seconds: `ceil(dt / max_substep)`, at least 1.
    ///
    /// A relative tolerance of 1e-5 absorbs rounding, so that 1/120 s with a 1/240 s cap is
    /// two substeps and not three, and a typed `0.0166667` four and not five; a frame's
    /// substeps may then be longer than the cap by up to 1e-5 of it.
    pub fn substeps_for(&self, dt: f32) -> u32 {
        self.substeps_exact(dt).max(1.0) as u32
    }

    /// `ceil(dt / max_substep)` with the tolerance of [`Settings::substeps_for`], unclamped.
    fn substeps_exact(&self, dt: f32) -> f64 {
        let ratio = f64::from(dt) / f64::from(self.max_substep);
        (ratio * (1.0 - 1e-5)).ceil()
    }

    /// Checks that a frame of `dt` seconds runs at most [`MAX_SUBSTEPS_PER_FRAME`] substeps.
    pub fn check_substeps(&self, dt: f32) -> Result<()> {
        let n = self.substeps_exact(dt);
        if n <= f64::from(MAX_SUBSTEPS_PER_FRAME) {
            return Ok(());
        }
        // dt / limit, rounded up to two significant digits.
        let least = f64::from(dt) / f64::from(MAX_SUBSTEPS_PER_FRAME);
        let exponent = least.log10().floor() as i32;
        let digits = (least / 10f64.powi(exponent - 1)).ceil();
        let suggested = format!("{}e{exponent}", digits / 10.0);
        Err(EngineError::TooManySubsteps {
            max_substep: self.max_substep,
            dt,
            substeps: n,
            limit: MAX_SUBSTEPS_PER_FRAME,
            suggested,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_threads_than_cores_is_a_warning_not_an_error() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let with = |threads| Settings {
            threads,
            ..Settings::default()
        };
        for fine in [0, 1, cores] {
            assert_eq!(with(fine).threads_warning(), None, "threads = {fine}");
        }
        let many = with(cores + 1);
        assert!(many.validate().is_ok());
        let text = many.threads_warning().expect("a warning");
        assert!(text.contains(&format!("threads = {}", cores + 1)), "{text}");
        assert!(text.contains("bit for bit"), "{text}");
    }

    #[test]
    fn substep_cap_splits_frames_as_documented() {
        let s = Settings::default();
        assert_eq!(s.substeps_for(1.0 / 240.0), 1);
        assert_eq!(s.substeps_for(1.0 / 120.0), 2);
        assert_eq!(s.substeps_for(1.0 / 60.0), 4);
        assert_eq!(s.substeps_for(1.0 / 30.0), 8);
        assert_eq!(s.substeps_for(1.0 / 1000.0), 1);
        assert_eq!(s.substeps_for(0.005), 2);
    }

    #[test]
    fn result_changes_name_every_setting_but_threads_and_path() {
        let a = Settings::default();
        let same = Settings {
            threads: 2,
            solver_path: SolverPath::Scalar,
            ..a
        };
        assert!(a.result_changes(&same).is_empty());
        let b = Settings {
            velocity_iterations: 32,
            bias_iterations: Some(4),
            chain_solve: true,
            ..a
        };
        let names: Vec<_> = a.result_changes(&b).into_iter().collect();
        assert_eq!(
            names,
            [
                ("velocity_iterations", "8".into(), "32".into()),
                ("bias_iterations", "all".into(), "4".into()),
                ("chain_solve", "false".into(), "true".into()),
            ]
        );
    }

    #[test]
    fn bad_settings_are_named() {
        let s = Settings {
            max_substep: f32::NAN,
            ..Settings::default()
        };
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("max_substep"), "{e}");
        let s = Settings {
            gravity: Vec3::new(0.0, f32::INFINITY, 0.0),
            ..Settings::default()
        };
        assert!(s.validate().unwrap_err().to_string().contains("gravity"));
        let s = Settings {
            velocity_iterations: 0,
            ..Settings::default()
        };
        assert!(s.validate().is_err());
        assert!(Settings::default().validate().is_ok());
    }

    #[test]
    fn sleeping_is_off_by_default_and_its_settings_are_checked() {
        let d = Settings::default();
        assert!(!d.sleeping);
        assert_eq!(
            (d.sleep_linear_speed, d.sleep_angular_speed, d.time_to_sleep),
            (0.05, 0.05, 0.5)
        );
        let cases = [
            (
                Settings {
                    sleep_linear_speed: -1.0,
                    ..d
                },
                "sleep_linear_speed",
                "m/s",
            ),
            (
                Settings {
                    sleep_angular_speed: f32::NAN,
                    ..d
                },
                "sleep_angular_speed",
                "rad/s",
            ),
            (
                Settings {
                    time_to_sleep: 0.0,
                    ..d
                },
                "time_to_sleep",
                "sleeping = false",
            ),
            (
                Settings {
                    time_to_sleep: f32::INFINITY,
                    ..d
                },
                "time_to_sleep",
                "seconds",
            ),
        ];
        for (s, name, hint) in cases {
            let e = s.validate().unwrap_err().to_string();
            assert!(e.contains(name) && e.contains(hint), "{e}");
        }
        // Zero thresholds are allowed, and the settings are checked even with sleeping off.
        let zero = Settings {
            sleep_linear_speed: 0.0,
            sleep_angular_speed: 0.0,
            sleeping: true,
            ..d
        };
        assert!(zero.validate().is_ok());
        // Serialised settings without the new fields still parse, with sleeping off.
        let parsed: Settings = toml::from_str("threads = 1").unwrap();
        assert!(!parsed.sleeping);
        let on: Settings = toml::from_str("sleeping = true\ntime_to_sleep = 1.0").unwrap();
        assert!(on.sleeping && on.time_to_sleep == 1.0);
    }
}
