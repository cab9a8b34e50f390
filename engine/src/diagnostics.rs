//! The public diagnostics: eight `f32` columns per joint, and joint forces.
//!
//! | column | name | unit | meaning |
//! |---|---|---|---|
//! | 0-2 | `anchor_error_x/y/z` | m | anchor on B minus anchor on A, world frame (prismatic: the part across the axis) |
//! | 3 | `anchor_error_norm` | m | norm of columns 0-2 |
//! | 4 | `angular_error` | rad | revolute: angle between the hinge axes; fixed, prismatic: relative rotation angle against the reference; spherical: 0 |
//! | 5 | `limit_violation` | rad or m | how far the coordinate is past its active bound, 0 inside |
//! | 6 | `anchor_relative_speed` | m/s | speed of B's anchor relative to A's (prismatic: across the axis) |
//! | 7 | `joint_coordinate` | rad or m | revolute angle, prismatic translation, 0 otherwise |

use glam::Vec3;

/// Number of diagnostic columns per joint.
pub const COLUMN_COUNT: usize = 8;

/// Column names, in order.
pub const COLUMN_NAMES: [&str; COLUMN_COUNT] = [
    "anchor_error_x",
    "anchor_error_y",
    "anchor_error_z",
    "anchor_error_norm",
    "angular_error",
    "limit_violation",
    "anchor_relative_speed",
    "joint_coordinate",
];

/// Column units, in order ("rad|m": radians for revolute joints, metres for prismatic).
pub const COLUMN_UNITS: [&str; COLUMN_COUNT] = ["m", "m", "m", "m", "rad", "rad|m", "m/s", "rad|m"];

/// Column index of the anchor error vector's x component (y and z follow).
pub const ANCHOR_ERROR_X: usize = 0;
/// Column index of the anchor error norm.
pub const ANCHOR_ERROR_NORM: usize = 3;
/// Column index of the angular error.
pub const ANGULAR_ERROR: usize = 4;
/// Column index of the limit violation.
pub const LIMIT_VIOLATION: usize = 5;
/// Column index of the anchor relative speed.
pub const ANCHOR_RELATIVE_SPEED: usize = 6;
/// Column index of the joint coordinate.
pub const JOINT_COORDINATE: usize = 7;

/// Constraint force and torques of one joint over the last substep: the multipliers of the
/// constraint rows divided by the substep length.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct JointForce {
    /// Force on body B, N. Body A receives the opposite force.
    pub force_on_b: Vec3,
    /// Torque on body B about its centre of mass, N m.
    pub torque_on_b: Vec3,
    /// Torque on body A about its centre of mass, N m.
    pub torque_on_a: Vec3,
}

impl JointForce {
    /// Force on body A, N.
    pub fn force_on_a(&self) -> Vec3 {
        -self.force_on_b
    }
}

/// A per-run summary of the diagnostics, folded substep by substep.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ResidualMax {
    /// Largest anchor error norm seen, m.
    pub anchor_error: f32,
    /// Joint holding it.
    pub anchor_joint: usize,
    /// Largest angular error seen, rad.
    pub angular_error: f32,
    /// Joint holding it.
    pub angular_joint: usize,
    /// Largest limit violation seen.
    pub limit_violation: f32,
    /// Joint holding it.
    pub limit_joint: usize,
}

impl ResidualMax {
    /// Folds one diagnostics buffer into the maxima.
    pub fn fold(&mut self, data: &[[f32; COLUMN_COUNT]]) {
        for (j, row) in data.iter().enumerate() {
            if row[ANCHOR_ERROR_NORM] > self.anchor_error {
                self.anchor_error = row[ANCHOR_ERROR_NORM];
                self.anchor_joint = j;
            }
            if row[ANGULAR_ERROR] > self.angular_error {
                self.angular_error = row[ANGULAR_ERROR];
                self.angular_joint = j;
            }
            if row[LIMIT_VIOLATION] > self.limit_violation {
                self.limit_violation = row[LIMIT_VIOLATION];
                self.limit_joint = j;
            }
        }
    }
}
