//! A particle on a circle, in double precision: the constraint, its derivatives, the multiplier and
//! the four treatments the chapter compares.
//!
//! ```text
//! C(x)     = 1/2 (x.x - r^2)          position residual, m^2
//! J        = x^T                      Jacobian (1 x 2), m
//! Cdot     = J v      = x.v           velocity residual, m^2/s
//! Cddot    = J a + Jdot v = x.a + v.v acceleration residual, m^2/s^2
//! M a      = f + J^T lambda           M = m I; lambda in N/m, the force is lambda x
//! (J M^-1 J^T) lambda = -Jdot v - J M^-1 f - b   with b = 0 (multiplier)
//!                                                   or b = 2 alpha Cdot + beta^2 C (Baumgarte)
//! ```
//!
//! Every treatment integrates with semi-implicit (symplectic) Euler, `v += a dt; x += v dt`.
//! Projection applies `x <- r x/|x|`, `v <- v - x (x.v)/r^2` after each such step.

use glam::DVec2;
use serde::Serialize;

use crate::{ensure_finite, TutorialError};

/// A 2D vector in double precision (glam's `DVec2`).
pub type Vec2 = DVec2;

/// Positions with a norm below `MIN_PROJECTION_NORM * r` cannot be projected: their direction is
/// rounding noise.
pub const MIN_PROJECTION_NORM: f64 = 1e-9;

/// Position residual `C(x) = 1/2 (x.x - r^2)`, m^2.
pub fn residual(x: Vec2, r: f64) -> f64 {
    0.5 * (x.dot(x) - r * r)
}

/// Velocity residual `Cdot = J v = x.v`, m^2/s.
pub fn residual_rate(x: Vec2, v: Vec2) -> f64 {
    x.dot(v)
}

/// Acceleration residual `Cddot = x.a + v.v`, m^2/s^2.
pub fn residual_accel(x: Vec2, v: Vec2, a: Vec2) -> f64 {
    x.dot(a) + v.dot(v)
}

/// The multiplier from the Schur-complement system, written as the general matrix formula
/// `(J M^-1 J^T) lambda = -Jdot qdot - J M^-1 f - bias` with `J = x^T`, `M^-1 = I/m`,
/// `Jdot qdot = v.v` (dropped when `curvature` is false, to show that failure mode).
///
/// Returns lambda in N/m (the constraint force is `J^T lambda = lambda x`).
pub fn schur_multiplier(
    x: Vec2,
    v: Vec2,
    mass: f64,
    force: Vec2,
    bias: f64,
    curvature: bool,
) -> Result<f64, TutorialError> {
    let inv_mass = 1.0 / mass;
    // J M^-1 J^T, a 1 x 1 matrix: x^T (I/m) x.
    let effective = x.dot(x * inv_mass);
    if !(effective.is_finite() && effective > f64::MIN_POSITIVE) {
        return Err(TutorialError::DegeneratePosition {
            norm: x.length(),
            min: f64::MIN_POSITIVE.sqrt(),
        });
    }
    let jdot_qdot = if curvature { v.dot(v) } else { 0.0 };
    let rhs = -jdot_qdot - x.dot(force * inv_mass) - bias;
    Ok(rhs / effective)
}

/// Projects `x` onto the circle of radius `r` and, when `velocity` is true, removes the radial
/// velocity. Fails (instead of producing NaN) when `|x| < MIN_PROJECTION_NORM * r`.
pub fn project(x: Vec2, v: Vec2, r: f64, velocity: bool) -> Result<(Vec2, Vec2), TutorialError> {
    let norm = x.length();
    let min = MIN_PROJECTION_NORM * r;
    if !(norm.is_finite() && norm >= min) {
        return Err(TutorialError::DegeneratePosition { norm, min });
    }
    let x = x * (r / norm);
    let v = if velocity {
        v - x * (x.dot(v) / (r * r))
    } else {
        v
    };
    Ok((x, v))
}

/// How the constraint is treated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Treatment {
    /// No constraint force at all.
    Unconstrained,
    /// Acceleration-level Lagrange multiplier. `curvature: false` drops the `v.v` term (a failure
    /// mode of the chapter).
    Multiplier {
        /// Keep the `Jdot qdot = v.v` term.
        curvature: bool,
    },
    /// Multiplier with Baumgarte feedback `Cddot + 2 alpha Cdot + beta^2 C = 0`.
    Baumgarte {
        /// Damping gain, 1/s.
        alpha: f64,
        /// Stiffness gain, 1/s.
        beta: f64,
    },
    /// Multiplier step followed by projection of the position and (when `velocity`) the velocity.
    Projection {
        /// Also remove the radial velocity (`false` shows the failure mode).
        velocity: bool,
    },
}

impl Treatment {
    /// A short name for reports.
    pub fn label(&self) -> String {
        match self {
            Treatment::Unconstrained => "unconstrained".into(),
            Treatment::Multiplier { curvature: true } => "multiplier".into(),
            Treatment::Multiplier { curvature: false } => "multiplier without v.v".into(),
            Treatment::Baumgarte { alpha, beta } => {
                format!("Baumgarte (alpha {alpha} 1/s, beta {beta} 1/s)")
            }
            Treatment::Projection { velocity: true } => "projection".into(),
            Treatment::Projection { velocity: false } => "position-only projection".into(),
        }
    }
}

/// The particle, its start and the integration: everything a run depends on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CircleSetup {
    /// Circle radius r, m.
    pub radius: f64,
    /// Particle mass m, kg.
    pub mass: f64,
    /// Initial position, m.
    pub x0: [f64; 2],
    /// Initial velocity, m/s.
    pub v0: [f64; 2],
    /// Constant external force f, N (zero: no gravity).
    pub force: [f64; 2],
    /// Timestep, s.
    pub dt: f64,
    /// Number of steps; the run lasts `steps * dt` seconds.
    pub steps: usize,
    /// The integrator, for the record.
    pub integrator: &'static str,
}

/// The integrator every treatment uses.
pub const INTEGRATOR: &str = "semi-implicit Euler: v += a dt, then x += v dt";

impl CircleSetup {
    /// Duration of the run, s.
    pub fn duration(&self) -> f64 {
        self.steps as f64 * self.dt
    }

    fn validate(&self) -> Result<(), TutorialError> {
        let ok = self.radius.is_finite()
            && self.radius > 0.0
            && self.mass.is_finite()
            && self.mass > 0.0
            && self.dt.is_finite()
            && self.dt > 0.0
            && self
                .x0
                .iter()
                .chain(&self.v0)
                .chain(&self.force)
                .all(|c| c.is_finite());
        if ok {
            Ok(())
        } else {
            Err(TutorialError::InvalidSetup(format!(
                "radius, mass and dt must be finite and positive, vectors finite: {self:?}"
            )))
        }
    }

    /// Total energy `1/2 m v.v - f.x` (kinetic plus the potential of the constant force), J.
    pub fn energy(&self, x: Vec2, v: Vec2) -> f64 {
        0.5 * self.mass * v.dot(v) - Vec2::from(self.force).dot(x)
    }
}

/// One sample of a run (taken at the start and after every step).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Time, s.
    pub t: f64,
    /// Position, m.
    pub x: Vec2,
    /// Velocity, m/s.
    pub v: Vec2,
    /// Position residual C, m^2.
    pub c: f64,
    /// Velocity residual Cdot, m^2/s.
    pub cdot: f64,
    /// Total energy, J.
    pub energy: f64,
    /// The multiplier used in the step that ended here, N/m (0 for the initial sample).
    pub lambda: f64,
    /// Energy change of this step before projection (integration), J.
    pub de_integrate: f64,
    /// Energy change of this step's projection, J (0 without projection).
    pub de_project: f64,
}

/// The summary figures of one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// |C| at the end, m^2.
    pub final_abs_c: f64,
    /// max |C| over the run, m^2.
    pub max_abs_c: f64,
    /// |Cdot| at the end, m^2/s.
    pub final_abs_cdot: f64,
    /// max |Cdot| over the run, m^2/s.
    pub max_abs_cdot: f64,
    /// E(end) - E(0), J.
    pub energy_drift: f64,
}

/// Runs one treatment; every state is checked for finiteness.
pub fn simulate(setup: &CircleSetup, treatment: Treatment) -> Result<Vec<Sample>, TutorialError> {
    setup.validate()?;
    let label = treatment.label();
    let r = setup.radius;
    let m = setup.mass;
    let f = Vec2::from(setup.force);
    let dt = setup.dt;
    let mut x = Vec2::from(setup.x0);
    let mut v = Vec2::from(setup.v0);
    let mut out = Vec::with_capacity(setup.steps + 1);
    out.push(Sample {
        t: 0.0,
        x,
        v,
        c: residual(x, r),
        cdot: residual_rate(x, v),
        energy: setup.energy(x, v),
        lambda: 0.0,
        de_integrate: 0.0,
        de_project: 0.0,
    });
    for step in 1..=setup.steps {
        let e_before = setup.energy(x, v);
        let lambda = match treatment {
            Treatment::Unconstrained => 0.0,
            Treatment::Multiplier { curvature } => schur_multiplier(x, v, m, f, 0.0, curvature)?,
            Treatment::Baumgarte { alpha, beta } => {
                let bias = 2.0 * alpha * residual_rate(x, v) + beta * beta * residual(x, r);
                schur_multiplier(x, v, m, f, bias, true)?
            }
            Treatment::Projection { .. } => schur_multiplier(x, v, m, f, 0.0, true)?,
        };
        ensure_finite(&label, "lambda", step, lambda)?;
        let a = (f + x * lambda) / m;
        v += a * dt;
        x += v * dt;
        let e_integrated = setup.energy(x, v);
        if let Treatment::Projection { velocity } = treatment {
            (x, v) = project(x, v, r, velocity)?;
        }
        let energy = setup.energy(x, v);
        let c = residual(x, r);
        let cdot = residual_rate(x, v);
        ensure_finite(&label, "x", step, x.x + x.y)?;
        ensure_finite(&label, "v", step, v.x + v.y)?;
        ensure_finite(&label, "C", step, c)?;
        ensure_finite(&label, "energy", step, energy)?;
        out.push(Sample {
            t: step as f64 * dt,
            x,
            v,
            c,
            cdot,
            energy,
            lambda,
            de_integrate: e_integrated - e_before,
            de_project: energy - e_integrated,
        });
    }
    Ok(out)
}

/// Summarises a run.
pub fn summarize(samples: &[Sample]) -> Summary {
    let first = samples.first().copied();
    let last = samples.last().copied();
    let (e0, c_end, cdot_end, e_end) = match (first, last) {
        (Some(a), Some(b)) => (a.energy, b.c, b.cdot, b.energy),
        _ => (0.0, 0.0, 0.0, 0.0),
    };
    Summary {
        final_abs_c: c_end.abs(),
        max_abs_c: samples.iter().map(|s| s.c.abs()).fold(0.0, f64::max),
        final_abs_cdot: cdot_end.abs(),
        max_abs_cdot: samples.iter().map(|s| s.cdot.abs()).fold(0.0, f64::max),
        energy_drift: e_end - e0,
    }
}

/// The step of [`derivative_check`]'s central differences, s.
pub const DIFFERENCE_STEP: f64 = 1e-4;

/// The first and second central differences of `C` in time, step `h` s, along the path
/// `x(t) = x + v t + a t^2 / 2`: what `Cdot` and `Cddot` at `(x, v, a)` should match.
pub fn central_differences(x: Vec2, v: Vec2, a: Vec2, r: f64, h: f64) -> (f64, f64) {
    let at = |t: f64| residual(x + v * t + a * (0.5 * t * t), r);
    (
        (at(h) - at(-h)) / (2.0 * h),
        (at(h) - 2.0 * at(0.0) + at(-h)) / (h * h),
    )
}

/// The largest relative differences, over `states` (`(x, v)` pairs), between `Cdot` and
/// `Cddot` and central finite differences of `C` along the path `x(t) = x + v t + a t^2 / 2`
/// through each state, `a` the multiplier's acceleration there ([`schur_multiplier`] under
/// `force`): `|fd - exact| / (1 + |exact|)`, first `Cdot`, then `Cddot`. The chapter's "the
/// runnable test verifies Cdot against a finite difference of C", as a figure: central
/// differences of a quartic in `t` are off by about `h^2 |C'''|` plus rounding (`eps / h`
/// and `eps / h^2`), so a correct formula gives about 1e-8 and 1e-6 at `h = 1e-4` s, and a
/// wrong one (a missing `v.v`) about 1.
pub fn derivative_check(
    states: impl IntoIterator<Item = (Vec2, Vec2)>,
    r: f64,
    mass: f64,
    force: Vec2,
) -> Result<(f64, f64), TutorialError> {
    let (mut first, mut second) = (0.0f64, 0.0f64);
    for (x, v) in states {
        let a = (force + x * schur_multiplier(x, v, mass, force, 0.0, true)?) / mass;
        let (fd1, fd2) = central_differences(x, v, a, r, DIFFERENCE_STEP);
        let cdot = residual_rate(x, v);
        let cddot = residual_accel(x, v, a);
        first = first.max((fd1 - cdot).abs() / (1.0 + cdot.abs()));
        second = second.max((fd2 - cddot).abs() / (1.0 + cddot.abs()));
    }
    Ok((first, second))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Cdot` and `Cddot` agree with central finite differences of `C` along a smooth path
    /// `x(t) = x + v t + a t^2 / 2`.
    #[test]
    fn cdot_and_cddot_match_finite_differences_of_c() {
        let r = 1.3;
        let cases = [
            (
                Vec2::new(1.0, 0.0),
                Vec2::new(0.0, 1.0),
                Vec2::new(-1.0, 0.0),
            ),
            (
                Vec2::new(0.3, -1.2),
                Vec2::new(2.0, 0.7),
                Vec2::new(0.5, -9.81),
            ),
            (
                Vec2::new(-2.0, 0.4),
                Vec2::new(-0.1, 3.0),
                Vec2::new(4.0, 1.0),
            ),
        ];
        for (x, v, a) in cases {
            let (fd1, fd2) = central_differences(x, v, a, r, 1e-4);
            let cdot = residual_rate(x, v);
            let cddot = residual_accel(x, v, a);
            // Central differences of a quartic in t: truncation error ~ h^2 * |C'''|, rounding
            // ~ eps/h (first) and eps/h^2 (second).
            assert!(
                (fd1 - cdot).abs() < 1e-7 * (1.0 + cdot.abs()),
                "{fd1} vs {cdot}"
            );
            assert!(
                (fd2 - cddot).abs() < 1e-5 * (1.0 + cddot.abs()),
                "{fd2} vs {cddot}"
            );
        }
    }

    #[test]
    fn projection_of_nearly_zero_position_is_an_error_not_nan() {
        let err = project(Vec2::new(1e-12, -3e-13), Vec2::new(0.0, 1.0), 1.0, true).unwrap_err();
        assert!(
            matches!(err, TutorialError::DegeneratePosition { norm, .. } if norm < 1e-11),
            "{err}"
        );
        assert!(err.to_string().contains("no direction"));
        let err = project(Vec2::ZERO, Vec2::ZERO, 1.0, false).unwrap_err();
        assert!(matches!(err, TutorialError::DegeneratePosition { .. }));
        // A small but meaningful position still projects.
        let (x, v) = project(Vec2::new(1e-6, 0.0), Vec2::new(1.0, 1.0), 1.0, true).unwrap();
        assert!((x - Vec2::new(1.0, 0.0)).length() < 1e-15);
        assert!(v.x.abs() < 1e-15 && (v.y - 1.0).abs() < 1e-15);
    }

    #[test]
    fn multiplier_makes_cddot_vanish() {
        let x = Vec2::new(0.8, 0.9);
        let v = Vec2::new(-1.5, 0.4);
        let f = Vec2::new(0.3, -19.62);
        let m = 2.0;
        let lambda = schur_multiplier(x, v, m, f, 0.0, true).unwrap();
        let a = (f + x * lambda) / m;
        assert!(residual_accel(x, v, a).abs() < 1e-14);
    }

    #[test]
    fn degenerate_multiplier_is_an_error() {
        let err = schur_multiplier(Vec2::ZERO, Vec2::X, 1.0, Vec2::ZERO, 0.0, true).unwrap_err();
        assert!(matches!(err, TutorialError::DegeneratePosition { .. }));
    }

    #[test]
    fn invalid_setup_is_rejected() {
        let setup = CircleSetup {
            radius: 1.0,
            mass: 1.0,
            x0: [1.0, 0.0],
            v0: [0.0, 1.0],
            force: [0.0, 0.0],
            dt: f64::NAN,
            steps: 10,
            integrator: INTEGRATOR,
        };
        assert!(matches!(
            simulate(&setup, Treatment::Unconstrained),
            Err(TutorialError::InvalidSetup(_))
        ));
    }
}
