//! Paw-check: the circle multiplier under a constant external force, against its closed form.
//!
//! Derivation. With `M = m I`, `J = x^T` and an unknown multiplier `lambda`, Newton's law reads
//!
//! ```text
//! m a = f + J^T lambda = f + lambda x.
//! ```
//!
//! The constraint must hold at the acceleration level, `Cddot = x.a + v.v = 0`. Substituting
//! `a = (f + lambda x) / m`:
//!
//! ```text
//! x.f / m + lambda (x.x) / m + v.v = 0   =>   lambda = -(m v.v + x.f) / (x.x).
//! ```
//!
//! This is the Schur-complement system `(J M^-1 J^T) lambda = -Jdot qdot - J M^-1 f` written out:
//! `J M^-1 J^T = x.x / m`, `Jdot qdot = v.v`, `J M^-1 f = x.f / m`. On the circle (`x.x = r^2`,
//! `v` tangent, speed `s`) the constraint force `lambda x` has the radial component
//! `lambda r = -(m s^2 / r + f.x/r)`: it supplies the centripetal force `m s^2 / r` and cancels the
//! radial part of `f`. The force is along `J^T`, so its power `lambda x.v = lambda Cdot` vanishes on
//! valid velocities.
//!
//! The check integrates a particle under a constant force (gravity plus a horizontal push) with the
//! multiplier step and projection, and at every step compares `lambda` from the general matrix form
//! ([`crate::circle::schur_multiplier`]) with the closed form ([`closed_form`]): they agree to
//! 1e-12 N/m. It also checks that the computed `lambda` makes `Cddot` vanish.

use std::path::Path;

use serde_json::json;

use crate::circle::{self, CircleSetup, Treatment, Vec2, INTEGRATOR};
use crate::plot::{self, Corner, LineChart, Series};
use crate::{ensure_finite, Options, Report, TutorialError};

/// The experiment's name.
pub const NAME: &str = "circle-multiplier-force";

/// The required agreement between the matrix form and the closed form, N/m.
pub const TOLERANCE: f64 = 1e-12;

/// `lambda = -(m v.v + x.f) / (x.x)`, N/m.
pub fn closed_form(x: Vec2, v: Vec2, mass: f64, force: Vec2) -> f64 {
    -(mass * v.dot(v) + x.dot(force)) / x.dot(x)
}

/// The documented setup: a 3 kg particle on a 1.5 m circle, pushed by gravity (-29.43 N) and a
/// constant 3 N horizontal force, starting at `(1.5, 0)` m with `(0, 2)` m/s; semi-implicit Euler
/// with `dt = 1 ms` plus projection; 2 s quick, 20 s full.
pub fn setup(quick: bool) -> CircleSetup {
    CircleSetup {
        radius: 1.5,
        // 3 kg rather than 2 kg: with a power-of-two mass both formulas round identically and the
        // comparison would be trivially exact.
        mass: 3.0,
        x0: [1.5, 0.0],
        v0: [0.0, 2.0],
        force: [3.0, -3.0 * 9.81],
        dt: 1e-3,
        steps: if quick { 2_000 } else { 20_000 },
        integrator: INTEGRATOR,
    }
}

/// The comparison along one trajectory.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// `(t, lambda from the matrix form, lambda from the closed form)` at each step's start state.
    pub lambdas: Vec<(f64, f64, f64)>,
    /// max |matrix - closed|, N/m.
    pub max_abs_difference: f64,
    /// max |matrix - closed| / |closed|.
    pub max_rel_difference: f64,
    /// max |Cddot| with the matrix-form lambda, m^2/s^2.
    pub max_abs_cddot: f64,
    /// max |lambda x.v|, the constraint force's power, W.
    pub max_abs_power: f64,
}

/// Integrates `setup` (multiplier + projection) and compares the two multipliers at every state.
pub fn compare(setup: &CircleSetup) -> Result<Comparison, TutorialError> {
    let samples = circle::simulate(setup, Treatment::Projection { velocity: true })?;
    let f = Vec2::from(setup.force);
    let m = setup.mass;
    let mut out = Comparison {
        lambdas: Vec::with_capacity(samples.len()),
        max_abs_difference: 0.0,
        max_rel_difference: 0.0,
        max_abs_cddot: 0.0,
        max_abs_power: 0.0,
    };
    for (step, s) in samples.iter().enumerate() {
        let matrix = circle::schur_multiplier(s.x, s.v, m, f, 0.0, true)?;
        let closed = ensure_finite(
            NAME,
            "closed-form lambda",
            step,
            closed_form(s.x, s.v, m, f),
        )?;
        let a = (f + s.x * matrix) / m;
        let diff = (matrix - closed).abs();
        out.max_abs_difference = out.max_abs_difference.max(diff);
        out.max_rel_difference = out.max_rel_difference.max(diff / closed.abs().max(1e-300));
        out.max_abs_cddot = out
            .max_abs_cddot
            .max(circle::residual_accel(s.x, s.v, a).abs());
        out.max_abs_power = out.max_abs_power.max((matrix * s.x.dot(s.v)).abs());
        out.lambdas.push((s.t, matrix, closed));
    }
    Ok(out)
}

pub(crate) fn run(opts: &Options, out: &Path) -> Result<Report, TutorialError> {
    let s = setup(opts.quick);
    let c = compare(&s)?;
    let (lo, hi) = c
        .lambdas
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), l| {
            (lo.min(l.1), hi.max(l.1))
        });
    let json = json!({
        "setup": {
            "radius_m": s.radius,
            "mass_kg": s.mass,
            "x0_m": s.x0,
            "v0_m_per_s": s.v0,
            "force_n": s.force,
            "dt_s": s.dt,
            "steps": s.steps,
            "duration_s": s.duration(),
            "integrator": s.integrator,
            "treatment": "multiplier step + projection",
        },
        "closed_form": "lambda = -(m v.v + x.f) / (x.x)",
        "states_compared": c.lambdas.len(),
        "tolerance": TOLERANCE,
        "max_abs_lambda_difference": c.max_abs_difference,
        "max_rel_lambda_difference": c.max_rel_difference,
        "max_abs_cddot": c.max_abs_cddot,
        "max_abs_constraint_power": c.max_abs_power,
        "lambda_min": lo,
        "lambda_max": hi,
        "agrees": c.max_abs_difference <= TOLERANCE,
    });
    let text = format!(
        "Circle multiplier under a constant force, closed form lambda = -(m v.v + x.f)/(x.x)\n\
         setup: r = {} m, m = {} kg, f = ({}, {}) N, x0 = ({}, {}) m, v0 = ({}, {}) m/s, \
         dt = {} s, T = {} s ({} steps), {} + projection\n\
         states compared:            {}\n\
         lambda range:               [{lo:.4}, {hi:.4}] N/m\n\
         max |matrix - closed form|: {:.3e} N/m (relative {:.3e}; tolerance {TOLERANCE:e} N/m)\n\
         max |Cddot| with lambda:    {:.3e} m^2/s^2\n\
         max |constraint power|:     {:.3e} W\n",
        s.radius,
        s.mass,
        s.force[0],
        s.force[1],
        s.x0[0],
        s.x0[1],
        s.v0[0],
        s.v0[1],
        s.dt,
        s.duration(),
        s.steps,
        s.integrator,
        c.lambdas.len(),
        c.max_abs_difference,
        c.max_rel_difference,
        c.max_abs_cddot,
        c.max_abs_power,
    );
    if c.max_abs_difference > TOLERANCE {
        return Err(TutorialError::Check(format!(
            "the matrix-form multiplier differs from the closed form by {:e} N/m > {TOLERANCE:e}",
            c.max_abs_difference
        )));
    }
    let stride = (c.lambdas.len() / 2000).max(1);
    let pick = |f: fn(&(f64, f64, f64)) -> f64| -> Vec<(f64, f64)> {
        c.lambdas
            .iter()
            .step_by(stride)
            .map(|l| (l.0, f(l)))
            .collect()
    };
    let files = plot::line_charts(
        &out.join("multiplier"),
        &[
            LineChart {
                title: format!(
                    "Multiplier lambda, m = {} kg, r = {} m, f = ({}, {}) N",
                    s.mass, s.radius, s.force[0], s.force[1]
                ),
                x_label: "time (s)".into(),
                y_label: "lambda (N/m)".into(),
                series: vec![
                    Series::new(
                        "Schur complement (matrix form)",
                        pick(|l| l.1),
                        plot::color(0),
                    ),
                    Series::new(
                        "closed form -(m v.v + x.f)/(x.x)",
                        pick(|l| l.2),
                        plot::color(1),
                    )
                    .dashed(),
                ],
                log_floor: None,
                log_x: false,
                legend: Corner::LowerRight,
            },
            LineChart {
                title: "Difference between the two".into(),
                x_label: "time (s)".into(),
                y_label: "|difference| (N/m)".into(),
                series: vec![Series::new(
                    format!("|matrix - closed| (tolerance {TOLERANCE:e})"),
                    pick(|l| (l.1 - l.2).abs()),
                    plot::color(3),
                )],
                log_floor: Some(1e-18),
                log_x: false,
                legend: Corner::UpperRight,
            },
        ],
        (1000, 850),
    )?;
    Ok(Report {
        experiment: NAME,
        text,
        json,
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_form_matches_closed_form_along_a_trajectory() {
        let c = compare(&setup(true)).unwrap();
        assert_eq!(c.lambdas.len(), 2001);
        assert!(
            c.max_abs_difference <= TOLERANCE,
            "max difference {:e}",
            c.max_abs_difference
        );
        // The computed lambda really enforces the acceleration constraint...
        assert!(c.max_abs_cddot < 1e-12, "{:e}", c.max_abs_cddot);
        // ...and the constraint force does no work on the projected (valid) velocities.
        assert!(c.max_abs_power < 1e-12, "{:e}", c.max_abs_power);
        // lambda is a real, varying force (not trivially zero): gravity speeds the particle up
        // and slows it down along the circle.
        let (lo, hi) = c
            .lambdas
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), l| {
                (a.min(l.1), b.max(l.1))
            });
        assert!(hi - lo > 5.0, "lambda range [{lo}, {hi}]");
    }

    #[test]
    fn closed_form_is_the_centripetal_balance_on_the_circle() {
        // At x = (r, 0), v = (0, s), f = (fx, fy): lambda r = -(m s^2 / r + fx).
        let (r, m, s, fx, fy) = (1.5, 2.0, 3.0, 4.0, -19.62);
        let lambda = closed_form(Vec2::new(r, 0.0), Vec2::new(0.0, s), m, Vec2::new(fx, fy));
        assert!((lambda * r + (m * s * s / r + fx)).abs() < 1e-12);
    }

    #[test]
    fn a_wrong_multiplier_would_be_caught() {
        // Dropping the external force term changes lambda by x.f / x.x, far above the tolerance:
        // the comparison is sensitive.
        let s = setup(true);
        let x = Vec2::from(s.x0);
        let v = Vec2::from(s.v0);
        let f = Vec2::from(s.force);
        let right = closed_form(x, v, s.mass, f);
        let wrong = circle::schur_multiplier(x, v, s.mass, Vec2::ZERO, 0.0, true).unwrap();
        assert!((right - wrong).abs() > 1.0);
    }
}
