//! Experiment 2: perturb a joint by a known amount and read the public diagnostics.
//!
//! Setup: gravity off, a static `ground` at the origin and a 1 kg dynamic `arm` at `(1, 0, 0)` m,
//! joined by a revolute joint about +z with anchors `(0, 0, 0)` on the ground and `(-1, 0, 0)` on
//! the arm, so the anchors coincide. The arm is then moved to `(1.02, 0.03, 0)` m, i.e. translated
//! by `d = [0.02, 0.03, 0]` m, with `set_body_pose` (no time passes, the diagnostics are
//! refreshed from the poses).
//!
//! Hand calculation: the anchor on B moves with the arm, the anchor on A does not, so the anchor
//! error vector (B minus A) is `d` itself and its norm is `sqrt(0.02^2 + 0.03^2) = 0.0360555` m;
//! a pure translation leaves the hinge axes aligned (angular error 0), the angle 0 (no limit
//! violation), and nothing moves (relative speed 0). The engine computes in `f32`; the check
//! allows 1e-6 m.

use std::path::Path;

use lavender_engine::{BodyDesc, JointDesc, Settings, Vec3, World, COLUMN_NAMES, COLUMN_UNITS};
use serde_json::json;

use crate::{Options, Report, TutorialError};

/// The experiment's name.
pub const NAME: &str = "diagnostics";

/// The translation applied to the arm, m.
pub const OFFSET: [f32; 3] = [0.02, 0.03, 0.0];

/// The tolerance of the comparison with the hand calculation, m (float32 arithmetic on
/// coordinates of order 1 m).
pub const TOLERANCE: f64 = 1e-6;

/// The expected row: anchor error `OFFSET`, its norm, and zeros.
pub fn expected_row() -> [f64; 8] {
    let [x, y, z] = OFFSET.map(f64::from);
    [x, y, z, (x * x + y * y + z * z).sqrt(), 0.0, 0.0, 0.0, 0.0]
}

/// Builds the scene, applies the translation and returns the joint's diagnostics row.
pub fn measure() -> Result<[f32; 8], TutorialError> {
    let mut world = World::new(Settings {
        gravity: Vec3::ZERO,
        ..Settings::default()
    })?;
    let ground = world.add_body(BodyDesc::fixed("ground"))?;
    let arm = world.add_body(BodyDesc::dynamic("arm").position(Vec3::new(1.0, 0.0, 0.0)))?;
    world.add_joint(
        JointDesc::revolute("hinge", ground, arm)
            .anchors(Vec3::ZERO, Vec3::new(-1.0, 0.0, 0.0))
            .axis(Vec3::Z),
    )?;
    let before = world.constraint_data()[0];
    if before[3] != 0.0 {
        return Err(TutorialError::Check(format!(
            "the unperturbed joint should report zero anchor error, got {} m",
            before[3]
        )));
    }
    let (position, rotation) = world.body_pose(arm)?;
    world.set_body_pose(arm, position + Vec3::from(OFFSET), rotation)?;
    world.sync();
    let row = world.constraint_data()[0];
    if row.iter().any(|v| !v.is_finite()) {
        return Err(TutorialError::Check(format!(
            "non-finite diagnostics {row:?}"
        )));
    }
    Ok(row)
}

pub(crate) fn run(_opts: &Options, _out: &Path) -> Result<Report, TutorialError> {
    let row = measure()?;
    let expected = expected_row();
    let max_diff = row
        .iter()
        .zip(expected)
        .map(|(&r, e)| (f64::from(r) - e).abs())
        .fold(0.0, f64::max);
    let mut text = format!(
        "Public diagnostics of a revolute joint whose child is translated by [{}, {}, {}] m \
         without advancing time\n\
         setup: static ground at 0, 1 kg arm at (1, 0, 0) m, revolute about +z, anchors (0, 0, 0) \
         on the ground and (-1, 0, 0) on the arm, gravity off\n\n\
         {:<3} {:<24} {:<7} {:>14} {:>14}\n",
        OFFSET[0], OFFSET[1], OFFSET[2], "col", "name", "unit", "engine", "by hand"
    );
    for (i, ((name, unit), (&r, e))) in COLUMN_NAMES
        .iter()
        .zip(COLUMN_UNITS)
        .zip(row.iter().zip(expected))
        .enumerate()
    {
        text.push_str(&format!(
            "{i:<3} {name:<24} {unit:<7} {r:>14.7} {e:>14.7}\n"
        ));
    }
    text.push_str(&format!(
        "\nlargest difference {max_diff:.2e} (tolerance {TOLERANCE:e}); \
         expected norm sqrt(0.02^2 + 0.03^2) = {:.5} m\n",
        expected[3]
    ));
    if max_diff > TOLERANCE {
        return Err(TutorialError::Check(format!(
            "diagnostics differ from the hand calculation by {max_diff:e} > {TOLERANCE:e}:\n{text}"
        )));
    }
    let json = json!({
        "columns": COLUMN_NAMES,
        "units": COLUMN_UNITS,
        "row": row,
        "expected_row": expected,
        "expected_norm": expected[3],
        "max_abs_difference": max_diff,
        "tolerance": TOLERANCE,
        "offset_m": OFFSET,
    });
    Ok(Report {
        experiment: NAME,
        text,
        json,
        files: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_reports_the_hand_calculated_anchor_error() {
        let row = measure().unwrap();
        assert!((f64::from(row[0]) - 0.02).abs() < TOLERANCE, "{row:?}");
        assert!((f64::from(row[1]) - 0.03).abs() < TOLERANCE, "{row:?}");
        assert!(f64::from(row[2]).abs() < TOLERANCE, "{row:?}");
        assert!(
            (f64::from(row[3]) - 0.036_055_5).abs() < TOLERANCE,
            "norm {}",
            row[3]
        );
        // A pure translation: hinge axes aligned, angle 0, nothing moving.
        for (col, v) in row.iter().enumerate().skip(4) {
            assert!(f64::from(*v).abs() < TOLERANCE, "column {col} = {v}");
        }
    }

    #[test]
    fn report_lists_all_eight_columns() {
        let r = crate::run(
            NAME,
            &Options {
                quick: true,
                out_dir: Some(std::env::temp_dir().join("lavender-diag-test")),
                progress: false,
            },
        )
        .unwrap();
        assert_eq!(r.json["columns"].as_array().unwrap().len(), 8);
        assert_eq!(r.json["row"].as_array().unwrap().len(), 8);
        assert!((r.json["expected_norm"].as_f64().unwrap() - 0.0360555).abs() < 1e-6);
        for name in COLUMN_NAMES {
            assert!(r.text.contains(name));
        }
    }
}
