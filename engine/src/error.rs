//! The engine's error type: every message says what was wrong and what to do.

use thiserror::Error;

/// Everything the engine can refuse or report.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum EngineError {
    /// A world setting is out of range or not finite.
    #[error("invalid setting `{name}` = {value}: {reason}")]
    InvalidSetting {
        /// The setting's name as written in a scene file.
        name: &'static str,
        /// The offending value, printed.
        value: String,
        /// What the setting must satisfy.
        reason: &'static str,
    },
    /// A frame would run more substeps than [`crate::settings::MAX_SUBSTEPS_PER_FRAME`].
    #[error(
        "a frame of dt = {dt:e} s would run {} substeps of at most `max_substep` = \
         {max_substep:e} s, more than the {limit} a frame may run: lower dt (frames are \
         usually 1/60 s), or raise `max_substep` to at least {suggested} s (the default is \
         1/240 = 0.0041667 s; `Settings::max_substep`, a scene's `[world] max_substep`, \
         `--max-substep` on `lavender run`)",
        count(*.substeps)
    )]
    TooManySubsteps {
        /// The substep cap, s.
        max_substep: f32,
        /// The frame time step, s.
        dt: f32,
        /// The substeps the frame would run ([`crate::Settings::substeps_for`], unclamped).
        substeps: f64,
        /// [`crate::settings::MAX_SUBSTEPS_PER_FRAME`].
        limit: u32,
        /// The smallest cap that keeps a frame within the limit, rounded up, printed.
        suggested: String,
    },
    /// A body description is invalid.
    #[error("invalid body `{body}`: {reason}")]
    InvalidBody {
        /// The body's name.
        body: String,
        /// What was wrong and how to fix it.
        reason: String,
    },
    /// A joint description is invalid.
    #[error("invalid joint `{joint}`: {reason}")]
    InvalidJoint {
        /// The joint's name.
        joint: String,
        /// What was wrong and how to fix it.
        reason: String,
    },
    /// A body handle does not name a body of this world.
    #[error("no body with index {0} in this world (it has {1} bodies)")]
    NoSuchBody(usize, usize),
    /// A joint handle does not name a joint of this world.
    #[error("no joint with index {0} in this world (it has {1} joints)")]
    NoSuchJoint(usize, usize),
    /// A name lookup failed.
    #[error("no {kind} named `{name}` in this world")]
    NoSuchName {
        /// "body" or "joint".
        kind: &'static str,
        /// The name that was looked up.
        name: String,
    },
    /// The frame time step is not a positive finite number.
    #[error(
        "invalid time step dt = {}: it must be a finite number of seconds of at least \
         1.2e-38 (the smallest normal f32; the solver flushes smaller ones to zero)",
        plain(.0)
    )]
    InvalidTimeStep(f32),
    /// The solver produced a non-finite value; the world was restored to its
    /// state before the step.
    #[error(
        "the step produced a non-finite {quantity} on body `{body}` at substep {substep} \
         (joints touching it: {joints}); the world was rolled back to the state before this step. \
         {conditioning}Check masses, inertia and joint anchors of that body, or lower dt \
         (`max_substep`); a light body jointed to much heavier ones is the solver's hard case \
         (README: *Hubs* and *A light link carrying a heavy body*)"
    )]
    NonFinite {
        /// The body whose state went non-finite.
        body: String,
        /// Which quantity ("position", "orientation", "linear velocity", "angular velocity").
        quantity: &'static str,
        /// The global substep index at which it happened.
        substep: u64,
        /// Names of the joints attached to the body, comma separated.
        joints: String,
        /// What single precision could not hold at the state rolled back to, as sentences
        /// (empty when nothing stands out): see [`crate::World::lever_warning`].
        conditioning: String,
    },
    /// A scene file could not be read or parsed.
    #[error("scene {origin}: {message}")]
    Scene {
        /// The file path or `"<string>"`.
        origin: String,
        /// The parser's message (with line and column) or the semantic problem.
        message: String,
    },
}

/// Result alias for engine operations.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;

/// A count for a message: in full up to a billion, in scientific notation beyond.
fn count(n: f64) -> String {
    if n < 1e9 {
        format!("{n:.0}")
    } else {
        format!("{n:.3e}")
    }
}

/// A number for a message as written (`-1`, `0`, `0.5`), in scientific notation where the plain
/// form would run long (below 1e-4 or from 1e7), so that `-1` does not read `-1e0`.
fn plain(x: &f32) -> String {
    let a = x.abs();
    if a == 0.0 || (1e-4..1e7).contains(&a) || !a.is_finite() {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_step_in_a_message_reads_as_written() {
        let says = |dt: f32| EngineError::InvalidTimeStep(dt).to_string();
        assert!(says(-1.0).contains("dt = -1:"), "{}", says(-1.0));
        assert!(says(0.0).contains("dt = 0:"));
        assert!(says(f32::NAN).contains("dt = NaN:"));
        assert!(says(1e-39).contains("dt = 1e-39:"), "{}", says(1e-39));
        assert!(says(-2.5e9).contains("dt = -2.5e9:"));
    }
}
