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

use std::path::Path;

use lavender_engine::{BodyDesc, JointDesc, Quat, Settings, Vec3, World};
use serde_json::json;

use crate::{Options, Report, TutorialError};

/// The experiment's name.
pub const NAME: &str = "spherical-vs-fixed";

/// The twists applied, rad.
pub const TWISTS: [f32; 4] = [0.05, 0.3, 1.0, 2.5];

/// Tolerance on the fixed joint's angle, rad (float32 quaternion round trip).
pub const TOLERANCE: f32 = 1e-5;

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

pub(crate) fn run(_opts: &Options, _out: &Path) -> Result<Report, TutorialError> {
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
    Ok(Report {
        experiment: NAME,
        text,
        json: json!({ "axis": [1.0, 0.0, 0.0], "tolerance_rad": TOLERANCE, "rows": rows }),
        files: Vec::new(),
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
}
