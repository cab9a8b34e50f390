//! Paw-check: energy alongside residual for projection.
//!
//! Projection is geometric: it moves the state back onto the manifold without asking what that
//! does to the energy. Each step of the projected run is split into
//! - the integration part (the multiplier step, semi-implicit Euler), whose energy change is
//!   `dE_int`, and
//! - the projection part (`x <- r x/|x|`, `v <- v - x (x.v)/r^2`), whose energy change is `dE_proj`.
//!
//! Removing the radial velocity always removes kinetic energy, `-1/2 m (x.v)^2/r^2 <= 0`; moving the
//! position changes the potential energy of the external force, which can go either way.
//!
//! Two documented setups, both 1 kg on the unit circle, semi-implicit Euler, `dt = 0.01` s, 10 s:
//! - `circle`: the `particle-circle` setup (no gravity, `x0 = (1, 0)` m, `v0 = (0, 1)` m/s);
//! - `pendulum`: gravity `f = (0, -9.81)` N, released from rest at `x0 = (1, 0)` m.
//!
//! A timestep study of both setups follows (the net drift over 10 s shrinks in proportion to
//! `dt`: the method is first order). The pendulum gains more than the 9.81 J its fall is worth
//! at `dt = 0.01` s (+12.4 J): it whirls over the top, which the exact motion, released from
//! rest level with the pivot, never does; halving `dt` roughly halves the gain (0.40 J at
//! 0.000625 s). The engine's own pendulum scene over 10 s stays within 3.2e-4 J of its start
//! (README): its projection passes move positions only and each substep's velocity rows see
//! the projected poses.

use std::path::Path;

use serde_json::json;

use crate::circle::{self, CircleSetup, Sample, Treatment, INTEGRATOR};
use crate::plot::{self, Corner, LineChart, Series};
use crate::{Options, Report, TutorialError};

/// The experiment's name.
pub const NAME: &str = "projection-energy";

/// The two documented setups, `(name, setup)`.
pub fn setups() -> [(&'static str, CircleSetup); 2] {
    let circle = CircleSetup {
        radius: 1.0,
        mass: 1.0,
        x0: [1.0, 0.0],
        v0: [0.0, 1.0],
        force: [0.0, 0.0],
        dt: 0.01,
        steps: 1000,
        integrator: INTEGRATOR,
    };
    let pendulum = CircleSetup {
        v0: [0.0, 0.0],
        force: [0.0, -9.81],
        ..circle
    };
    [("circle", circle), ("pendulum", pendulum)]
}

/// The timesteps of the timestep study, s.
pub fn study_dts(quick: bool) -> Vec<f64> {
    if quick {
        vec![0.02, 0.01, 0.005]
    } else {
        vec![0.04, 0.02, 0.01, 0.005, 0.0025, 0.00125]
    }
}

/// `setup` over the same duration in steps of `dt` s (the timestep studies).
pub fn with_timestep(setup: &CircleSetup, dt: f64) -> CircleSetup {
    CircleSetup {
        dt,
        steps: (setup.duration() / dt).round() as usize,
        ..*setup
    }
}

/// The energy budget of one projected run.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Budget {
    /// Initial energy, J.
    pub initial_energy: f64,
    /// E(end) - E(0), J.
    pub net_drift: f64,
    /// Sum of the integration steps' energy changes, J.
    pub integration_total: f64,
    /// Sum of the projections' energy changes, J.
    pub projection_total: f64,
    /// Mean energy change per projection, J.
    pub projection_mean_per_step: f64,
    /// Largest single projection energy change, by magnitude (signed), J.
    pub projection_extreme_per_step: f64,
    /// The most energy one projection removed (the most negative change; 0 if none did), J.
    pub projection_largest_removal: f64,
    /// The most energy one projection injected (the most positive change; 0 if none did), J.
    pub projection_largest_injection: f64,
    /// The highest point of the projected run, m (the exact pendulum, released from rest at
    /// height 0, never rises above 0).
    pub max_height: f64,
    /// Fraction of steps whose projection removed energy.
    pub projection_removing_fraction: f64,
    /// Mean energy change per integration step, J.
    pub integration_mean_per_step: f64,
    /// max |C| of the projected run, m^2.
    pub max_abs_c: f64,
    /// E(end) - E(0) of the same setup with the multiplier alone (no projection), J.
    pub multiplier_only_drift: f64,
    /// Final |C| with the multiplier alone, m^2.
    pub multiplier_only_final_abs_c: f64,
}

/// Splits the energy change of a projected run into integration and projection.
pub fn budget(setup: &CircleSetup) -> Result<(Budget, Vec<Sample>, Vec<Sample>), TutorialError> {
    let proj = circle::simulate(setup, Treatment::Projection { velocity: true })?;
    let mult = circle::simulate(setup, Treatment::Multiplier { curvature: true })?;
    let steps = &proj[1..];
    let n = steps.len().max(1) as f64;
    let projection_total: f64 = steps.iter().map(|s| s.de_project).sum();
    let integration_total: f64 = steps.iter().map(|s| s.de_integrate).sum();
    let extreme =
        steps
            .iter()
            .map(|s| s.de_project)
            .fold(0.0f64, |a, b| if b.abs() > a.abs() { b } else { a });
    let removing = steps.iter().filter(|s| s.de_project < 0.0).count() as f64;
    let largest_removal = steps.iter().map(|s| s.de_project).fold(0.0f64, f64::min);
    let largest_injection = steps.iter().map(|s| s.de_project).fold(0.0f64, f64::max);
    let max_height = proj.iter().map(|s| s.x.y).fold(f64::NEG_INFINITY, f64::max);
    let ps = circle::summarize(&proj);
    let ms = circle::summarize(&mult);
    let b = Budget {
        initial_energy: proj[0].energy,
        net_drift: ps.energy_drift,
        integration_total,
        projection_total,
        projection_mean_per_step: projection_total / n,
        projection_extreme_per_step: extreme,
        projection_largest_removal: largest_removal,
        projection_largest_injection: largest_injection,
        max_height,
        projection_removing_fraction: removing / n,
        integration_mean_per_step: integration_total / n,
        max_abs_c: ps.max_abs_c,
        multiplier_only_drift: ms.energy_drift,
        multiplier_only_final_abs_c: ms.final_abs_c,
    };
    Ok((b, proj, mult))
}

pub(crate) fn run(opts: &Options, out: &Path) -> Result<Report, TutorialError> {
    let mut files = Vec::new();
    let mut cases = serde_json::Map::new();
    let mut text = String::from(
        "Projection and energy: each projected step = multiplier step (dE_int) + projection (dE_proj)\n",
    );
    for (name, s) in setups() {
        let (b, proj, mult) = budget(&s)?;
        cases.insert(
            name.to_string(),
            json!({
                "setup": {
                    "radius_m": s.radius, "mass_kg": s.mass, "x0_m": s.x0, "v0_m_per_s": s.v0,
                    "force_n": s.force, "dt_s": s.dt, "steps": s.steps,
                    "duration_s": s.duration(), "integrator": s.integrator,
                },
                "budget": b,
            }),
        );
        text.push_str(&format!(
            "\n[{name}] r = {} m, m = {} kg, f = ({}, {}) N, x0 = ({}, {}) m, v0 = ({}, {}) m/s, dt = {} s, T = {} s\n\
             \x20 E0 = {:.6} J; projected run: net drift {:+.4e} J = integration {:+.4e} J + projection {:+.4e} J\n\
             \x20 per step: integration {:+.3e} J on average; projection {:+.3e} J on average, from {:+.3e} to {:+.3e} J, \
             removes energy in {:.1}% of steps\n\
             \x20 max |C| with projection {:.2e} m^2; highest point y = {:.4} m; multiplier alone: drift {:+.4e} J, final |C| {:.3e} m^2\n",
            s.radius, s.mass, s.force[0], s.force[1], s.x0[0], s.x0[1], s.v0[0], s.v0[1], s.dt, s.duration(),
            b.initial_energy, b.net_drift, b.integration_total, b.projection_total,
            b.integration_mean_per_step, b.projection_mean_per_step, b.projection_largest_removal,
            b.projection_largest_injection, 100.0 * b.projection_removing_fraction, b.max_abs_c,
            b.max_height, b.multiplier_only_drift,
            b.multiplier_only_final_abs_c,
        ));
        let series = |f: fn(&Sample) -> f64, runs: &[(&str, &[Sample])]| -> Vec<Series> {
            runs.iter()
                .enumerate()
                .map(|(i, (label, samples))| {
                    Series::new(
                        *label,
                        samples.iter().map(|p| (p.t, f(p))).collect(),
                        plot::color(i + 1),
                    )
                })
                .collect()
        };
        let both: [(&str, &[Sample]); 2] = [
            ("multiplier + projection", &proj),
            ("multiplier alone", &mult),
        ];
        let steps: Vec<&Sample> = proj.iter().skip(1).collect();
        files.extend(plot::line_charts(
            &out.join(format!("energy-{name}")),
            &[
                LineChart {
                    title: format!("[{name}] Total energy (E0 = {:.4} J)", b.initial_energy),
                    x_label: "time (s)".into(),
                    y_label: "energy (J)".into(),
                    series: series(|p| p.energy, &both),
                    log_floor: None,
                    log_x: false,
                    legend: Corner::UpperLeft,
                },
                LineChart {
                    title: format!("[{name}] Position residual |C|"),
                    x_label: "time (s)".into(),
                    y_label: "|C| (m^2)".into(),
                    series: series(|p| p.c.abs(), &both),
                    log_floor: Some(1e-18),
                    log_x: false,
                    legend: Corner::MiddleRight,
                },
                LineChart {
                    title: format!("[{name}] Energy change per step of the projected run"),
                    x_label: "time (s)".into(),
                    y_label: "dE per step (J)".into(),
                    series: vec![
                        Series::new(
                            "integration (multiplier step)",
                            steps.iter().map(|p| (p.t, p.de_integrate)).collect(),
                            plot::color(0),
                        ),
                        // Its size in the label: next to the integration's change, a
                        // projection of 1e-13 J per step is flat at 0 on this axis (QA).
                        Series::new(
                            format!(
                                "projection (at most {:.1e} J a step)",
                                b.projection_extreme_per_step.abs()
                            ),
                            steps.iter().map(|p| (p.t, p.de_project)).collect(),
                            plot::color(3),
                        ),
                    ],
                    log_floor: None,
                    log_x: false,
                    legend: Corner::UpperRight,
                },
            ],
            (1000, 1200),
        )?);
    }
    // Timestep study of both setups over the same 10 s.
    let (mut study, mut pendulum_study) = (Vec::new(), Vec::new());
    for ((name, base), rows) in setups().into_iter().zip([&mut study, &mut pendulum_study]) {
        // The highest point tells only for the pendulum (the free circle's is its radius).
        let pendulum = name == "pendulum";
        text.push_str(&format!(
            "\n[{name}] timestep study over 10 s (projected run):\n  dt (s)     net drift (J)   \
             projection total (J)   integration total (J){}\n",
            if pendulum { "   highest point (m)" } else { "" }
        ));
        for dt in study_dts(opts.quick) {
            let s = with_timestep(&base, dt);
            let (b, _, _) = budget(&s)?;
            let height = if pendulum {
                format!("             {:+.4}", b.max_height)
            } else {
                String::new()
            };
            text.push_str(&format!(
                "  {dt:<9} {:+.4e}     {:+.4e}            {:+.4e}{height}\n",
                b.net_drift, b.projection_total, b.integration_total
            ));
            rows.push(json!({"dt_s": dt, "net_drift": b.net_drift,
                "projection_total": b.projection_total, "integration_total": b.integration_total,
                "max_height_m": b.max_height}));
        }
    }
    text.push_str(
        "  (the pendulum, released from rest level with its pivot, should never rise above y = 0: \
         where the gain passes the fall's 9.81 J it whirls over the top)\n",
    );
    let json = json!({ "cases": cases, "dt_study": study, "pendulum_dt_study": pendulum_study });
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
    fn budget_adds_up() {
        for (_, s) in setups() {
            let (b, _, _) = budget(&s).unwrap();
            let sum = b.integration_total + b.projection_total;
            assert!((sum - b.net_drift).abs() < 1e-9 * (1.0 + b.initial_energy.abs()));
            assert!(b.max_abs_c < 3e-16);
        }
    }

    #[test]
    fn on_the_free_circle_projection_only_removes_and_the_integrator_injects() {
        let (b, _, _) = budget(&setups()[0].1).unwrap();
        // Removing radial velocity can only remove kinetic energy, and here it does at every step,
        // but very little: the multiplier step leaves Cdot = O(dt^2).
        assert_eq!(b.projection_removing_fraction, 1.0);
        // The README's -6.2e-13 J per step (measured 2026-12-07: -6.195e-13), to 1 % (QA
        // 2026-12-07: only its sign and a 1e-8 J bound were checked).
        assert!(
            (b.projection_mean_per_step / -6.195e-13 - 1.0).abs() < 0.01,
            "{}",
            b.projection_mean_per_step
        );
        // The multiplier step injects about 5.6e-5 J per step, 0.0555 J over the run (11 % of E0).
        assert!(
            (b.integration_total / 0.05555 - 1.0).abs() < 0.01,
            "{}",
            b.integration_total
        );
        assert!((b.net_drift - b.integration_total).abs() < 1e-8);
    }

    #[test]
    fn under_gravity_projection_both_removes_and_injects() {
        let (b, proj, _) = budget(&setups()[1].1).unwrap();
        assert!(
            (0.3..0.8).contains(&b.projection_removing_fraction),
            "{}",
            b.projection_removing_fraction
        );
        assert!(
            proj.iter().any(|p| p.de_project > 1e-4),
            "some projections inject"
        );
        assert!(
            proj.iter().any(|p| p.de_project < -1e-3),
            "some projections remove"
        );
        // Net over the run projection removes about 2.9 J, the integrator injects about 15.3 J.
        assert!(
            (-3.5..-2.3).contains(&b.projection_total),
            "{}",
            b.projection_total
        );
        assert!(
            (13.0..17.0).contains(&b.integration_total),
            "{}",
            b.integration_total
        );
        // The README's figures (measured 2026-12-06): 15.31 J in, 2.907 J out, net +12.405 J,
        // removing in 55.4 % of the steps; 0.5 % tolerance.
        let near = |x: f64, want: f64| (x / want - 1.0).abs() < 5e-3;
        assert!(near(b.integration_total, 15.312), "{b:?}");
        assert!(near(b.projection_total, -2.9071), "{b:?}");
        assert!(near(b.net_drift, 12.405), "{b:?}");
        assert!(near(b.projection_removing_fraction, 0.554), "{b:?}");
        // Both ends of the per-step change, printed (QA 2026-12-08: only the larger, a
        // removal, was): -1.967e-2 and +4.209e-3 J.
        assert!(near(b.projection_largest_removal, -1.967e-2), "{b:?}");
        assert!(near(b.projection_largest_injection, 4.209e-3), "{b:?}");
        // The gain exceeds the 9.81 J the fall is worth: the pendulum whirls over the top.
        assert!(b.max_height > 0.999, "{b:?}");
    }

    /// QA (2026-12-08): the pendulum's +12.4 J was quoted without saying that it takes the
    /// pendulum over the top, nor how it depends on `dt`. Measured 2026-12-08 (and by a
    /// separate NumPy implementation of the same scheme): 12.405, 4.4747, 1.7794 and 0.8250
    /// J at 0.01, 0.005, 0.0025 and 0.00125 s, the highest point 1.0, 0.4563, 0.1843 and
    /// 0.0841 m. From 0.01 s down each halving of `dt` divides the gain by 2.8, 2.5, 2.2:
    /// towards first order. At 0.02 and 0.04 s the scheme pumps hundreds of joules.
    #[test]
    fn the_pendulums_gain_whirls_it_over_the_top_and_falls_with_the_timestep() {
        let base = setups()[1].1;
        let run = |dt: f64| {
            let s = with_timestep(&base, dt);
            budget(&s).unwrap().0
        };
        let measured = [
            (0.01, 12.405, 1.0),
            (0.005, 4.4747, 0.4563),
            (0.0025, 1.7794, 0.1843),
            (0.00125, 0.8250, 0.0841),
        ];
        let mut gains = Vec::new();
        for (dt, gain, height) in measured {
            let b = run(dt);
            assert!((b.net_drift / gain - 1.0).abs() < 1e-3, "{dt}: {b:?}");
            assert!((b.max_height - height).abs() < 1e-3, "{dt}: {b:?}");
            gains.push(b.net_drift);
        }
        let ratios: Vec<f64> = gains.windows(2).map(|w| w[0] / w[1]).collect();
        assert!(ratios.windows(2).all(|r| r[1] < r[0]), "{ratios:?}");
        assert!(
            ratios.iter().all(|&r| (2.0..3.0).contains(&r)),
            "{ratios:?}"
        );
        assert!(run(0.02).net_drift > 100.0 && run(0.04).net_drift > 100.0);
    }

    #[test]
    fn drift_is_first_order_in_the_timestep() {
        let base = setups()[0].1;
        let drift = |dt: f64| {
            let s = with_timestep(&base, dt);
            budget(&s).unwrap().0.net_drift
        };
        let dts = study_dts(true);
        for w in dts.windows(2) {
            let ratio = drift(w[0]) / drift(w[1]);
            assert!(
                (1.8..2.4).contains(&ratio),
                "dt {} -> {}: ratio {ratio}",
                w[0],
                w[1]
            );
        }
        // Full mode's six dts: halving dt divides the drift by 2.66, 2.25, 2.11, 2.05 and
        // 2.03 (measured 2026-12-06): the ratio falls towards 2, first order as dt -> 0 (the
        // largest step, 0.04 s, still has higher-order terms).
        let drifts: Vec<f64> = study_dts(false).into_iter().map(drift).collect();
        let ratios: Vec<f64> = drifts.windows(2).map(|w| w[0] / w[1]).collect();
        assert!(ratios.windows(2).all(|r| r[1] < r[0]), "{ratios:?}");
        assert!((ratios[ratios.len() - 1] - 2.0).abs() < 0.05, "{ratios:?}");
        assert!(ratios[0] > 2.4, "{ratios:?}");
    }
}
