//! Paw-check: the same twist on a spherical and on a fixed joint.
//!
//! Setup (gravity off, no time advanced): two static grounds at the origin, each with a 1 kg body
//! whose centre is the joint anchor (anchors `(0, 0, 0)` on both sides), one joined by a spherical
//! joint and one by a fixed joint. Each body is then rotated in place about +x by the same
//! [`TWISTS`] angle with `set_body_pose`.
//!
//! A spherical joint constrains only the anchor point, so it has no angular rows: its angular
//! residual (column 4) is 0 whatever the orientation. A fixed joint also constrains the relative
//! orientation, so its column 4 is the rotation angle away from the reference orientation: the
//! twist itself. The anchors stay together in both cases (column 3 is 0).
//!
//! The plot sweeps the twist over a whole turn ([`SWEEP_POINTS`] angles from 0 to 2 pi): the
//! fixed joint's residual is the angle of the *shortest* rotation back, `min(t, 2 pi - t)`, a
//! tent that peaks at pi and returns to 0 at a whole turn, since the orientation it measures
//! cannot tell a twist of `t` from one of `t - 2 pi`.

use std::path::Path;

use lavender_engine::{BodyDesc, JointDesc, Quat, Settings, Vec3, World};
use serde_json::json;

use crate::plot::{self, Corner, LineChart, Series};
use crate::{Options, Report, TutorialError};

/// The experiment's name.
pub const NAME: &str = "spherical-vs-fixed";

/// The twists applied, rad.
pub const TWISTS: [f32; 4] = [0.05, 0.3, 1.0, 2.5];

/// Tolerance on the fixed joint's angle, rad (float32 quaternion round trip).
pub const TOLERANCE: f32 = 1e-5;

/// Twists in the plot's sweep, evenly spaced from 0 to 2 pi inclusive.
pub const SWEEP_POINTS: usize = 181;

/// Tolerance on the swept fixed joint's angle against `min(t, 2 pi - t)`, rad (measured
/// 2.4e-7 rad at worst, 2026-12-07).
pub const SWEEP_TOLERANCE: f32 = TOLERANCE;

/// `(twist, spherical angular error, fixed angular error)` over a whole turn, rad.
pub fn sweep() -> Result<Vec<(f32, f32, f32)>, TutorialError> {
    (0..SWEEP_POINTS)
        .map(|i| {
            let angle = std::f32::consts::TAU * i as f32 / (SWEEP_POINTS - 1) as f32;
            let (s, f) = measure(angle)?;
            Ok((angle, s[4], f[4]))
        })
        .collect()
}

/// The fixed joint's expected angular residual after a twist `angle` in [0, 2 pi]: the angle
/// of the shortest rotation back, rad.
pub fn shortest_angle(angle: f32) -> f32 {
    angle.min(std::f32::consts::TAU - angle)
}

/// `(spherical row, fixed row)` of the diagnostics after twisting both bodies by `angle`.
pub fn measure(angle: f32) -> Result<([f32; 8], [f32; 8]), TutorialError> {
    let mut world = World::new(Settings {
        gravity: Vec3::ZERO,
        ..Settings::default()
    })?;
    let mut bodies = Vec::new();
    for (kind, make) in [
        (
            "spherical",
            JointDesc::spherical as fn(String, _, _) -> JointDesc,
        ),
        ("fixed", JointDesc::fixed as fn(String, _, _) -> JointDesc),
    ] {
        let ground = world.add_body(BodyDesc::fixed(format!("{kind}-ground")))?;
        let body = world.add_body(BodyDesc::dynamic(format!("{kind}-body")))?;
        world.add_joint(
            make(format!("{kind}-joint"), ground, body).anchors(Vec3::ZERO, Vec3::ZERO),
        )?;
        bodies.push(body);
    }
    for body in bodies {
        world.set_body_pose(body, Vec3::ZERO, Quat::from_rotation_x(angle))?;
    }
    world.sync();
    let data = world.constraint_data();
    let (s, f) = (data[0], data[1]);
    if s.iter().chain(&f).any(|v| !v.is_finite()) {
        return Err(TutorialError::Check(format!(
            "non-finite diagnostics {s:?} {f:?}"
        )));
    }
    Ok((s, f))
}

pub(crate) fn run(_opts: &Options, out: &Path) -> Result<Report, TutorialError> {
    let mut rows = Vec::new();
    let mut text = String::from(
        "Spherical vs fixed joint under the same twist (about +x, in place, no time advanced)\n\
         setup: static ground + 1 kg body per joint, anchors at both centres, gravity off\n\n\
         twist (rad)   spherical angular error (rad)   fixed angular error (rad)   anchor errors (m)\n",
    );
    for angle in TWISTS {
        let (s, f) = measure(angle)?;
        text.push_str(&format!(
            "{angle:>11}   {:>29.7}   {:>25.7}   {:.1e}, {:.1e}\n",
            s[4], f[4], s[3], f[3]
        ));
        if s[4] != 0.0 || (f[4] - angle).abs() > TOLERANCE {
            return Err(TutorialError::Check(format!(
                "twist {angle}: spherical angular error {} (expected 0), fixed {} (expected {angle})",
                s[4], f[4]
            )));
        }
        rows.push(json!({"twist_rad": angle, "spherical_angular_error": s[4],
            "fixed_angular_error": f[4], "spherical_anchor_error": s[3], "fixed_anchor_error": f[3]}));
    }
    text.push_str(
        "\nThe spherical joint has no orientation rows, so its angular residual is 0; \
                   the fixed joint reports the twist angle itself.\n",
    );
    // Over a whole turn: the fixed joint's residual is the shortest rotation back.
    let swept = sweep()?;
    let worst = swept
        .iter()
        .map(|&(t, _, f)| (f - shortest_angle(t)).abs())
        .fold(0.0f32, f32::max);
    if swept.iter().any(|s| s.1 != 0.0) || worst > SWEEP_TOLERANCE {
        return Err(TutorialError::Check(format!(
            "over a whole turn: fixed angular error {worst:.2e} rad from min(t, 2 pi - t) \
             (tolerance {SWEEP_TOLERANCE:.0e}), or a spherical one not 0"
        )));
    }
    text.push_str(&format!(
        "Over a whole turn ({SWEEP_POINTS} twists, 0 to 2 pi) the fixed joint's residual is \
         the shortest rotation back, min(t, 2 pi - t), within {worst:.1e} rad: it peaks at pi \
         and is 0 again after a whole turn.\n"
    ));
    let points = |column: fn(&(f32, f32, f32)) -> f32| -> Vec<(f64, f64)> {
        swept
            .iter()
            .map(|s| (f64::from(s.0), f64::from(column(s))))
            .collect()
    };
    let files = plot::line_charts(
        &out.join("twist"),
        &[LineChart {
            title: "Angular residual (column 4) of the same twist about +x".into(),
            x_label: "twist (rad)".into(),
            y_label: "angular error (rad)".into(),
            series: vec![
                Series::new("fixed joint", points(|s| s.2), plot::color(0)),
                Series::new(
                    "min(twist, 2 pi - twist)",
                    points(|s| shortest_angle(s.0)),
                    plot::color(1),
                )
                .dashed(),
                Series::new("spherical joint", points(|s| s.1), plot::color(3)),
            ],
            log_floor: None,
            log_x: false,
            legend: Corner::UpperRight,
        }],
        (1000, 500),
    )?;
    Ok(Report {
        experiment: NAME,
        text,
        json: json!({
            "axis": [1.0, 0.0, 0.0],
            "tolerance_rad": TOLERANCE,
            "rows": rows,
            "whole_turn": {
                "twists": SWEEP_POINTS,
                "max_fixed_error_from_shortest_rad": worst,
                "tolerance_rad": SWEEP_TOLERANCE,
            },
        }),
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spherical_has_zero_angular_residual_fixed_shows_the_twist() {
        for angle in TWISTS {
            let (s, f) = measure(angle).unwrap();
            assert_eq!(s[4], 0.0, "spherical angular error at twist {angle}");
            assert!(
                (f[4] - angle).abs() < TOLERANCE,
                "fixed {} vs twist {angle}",
                f[4]
            );
            // Rotating in place about the anchor keeps the anchors together.
            assert!(s[3] < 1e-6 && f[3] < 1e-6);
        }
    }

    /// Past pi the residual falls again: a twist of 2 pi - t reads as t, a whole turn as 0.
    #[test]
    fn over_a_whole_turn_the_fixed_residual_is_the_shortest_rotation_back() {
        let swept = sweep().unwrap();
        assert_eq!(swept.len(), SWEEP_POINTS);
        for (t, s, f) in &swept {
            assert_eq!(*s, 0.0, "spherical at {t}");
            assert!(
                (f - shortest_angle(*t)).abs() < SWEEP_TOLERANCE,
                "fixed {f} at twist {t}"
            );
        }
        let peak = swept.iter().map(|s| s.2).fold(0.0f32, f32::max);
        assert!(
            (peak - std::f32::consts::PI).abs() < SWEEP_TOLERANCE,
            "{peak}"
        );
        let (_, _, last) = swept[SWEEP_POINTS - 1];
        assert!(last < SWEEP_TOLERANCE, "a whole turn reads {last}");
        let (t, _, f) = measure(4.0).map(|(s, f)| (4.0, s[4], f[4])).unwrap();
        assert!((f - (std::f32::consts::TAU - t)).abs() < TOLERANCE, "{f}");
    }
}
