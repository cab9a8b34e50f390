//! Scalar constraint rows: Jacobians, effective mass, impulses and clamps.
//!
//! A row constrains one scalar function `C(q)` of the two bodies' poses. Its velocity
//! Jacobian is stored as three vectors:
//!
//! ```text
//! Cdot = linear . (v_B - v_A) + angular_a . w_A + angular_b . w_B
//! K    = (1/m_A + 1/m_B) |linear|^2 + angular_a . I_A^-1 angular_a + angular_b . I_B^-1 angular_b
//! ```
//!
//! `effective_mass = 1 / K`. An impulse `lambda` along the row changes the velocities by
//! `M^-1 J^T lambda`. Bilateral rows keep `C = 0`; unilateral rows (limits) keep `C >= 0`
//! with `lambda >= 0`.

use glam::{Quat, Vec3};

/// Most rows one joint can produce (fixed: 6; revolute and prismatic with limit: 6).
pub const MAX_ROWS_PER_JOINT: usize = 6;

/// Geometry of one scalar row at the current poses.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RowGeometry {
    /// Linear Jacobian: `+linear` acts on body B, `-linear` on body A.
    pub linear: Vec3,
    /// Angular Jacobian of body A.
    pub angular_a: Vec3,
    /// Angular Jacobian of body B.
    pub angular_b: Vec3,
    /// Position error `C` of the row, m or rad.
    pub error: f32,
    /// Unilateral rows hold `C >= 0` with a non-negative impulse.
    pub unilateral: bool,
}

/// The rows of one joint, in fixed slots so that warm-start impulses keep their meaning.
#[derive(Debug, Clone, Copy, Default)]
pub struct RowSet {
    /// Row geometry per slot.
    pub rows: [RowGeometry; MAX_ROWS_PER_JOINT],
    /// Which slots are active at these poses (limit rows only while their bound is crossed).
    pub active: [bool; MAX_ROWS_PER_JOINT],
}

impl RowSet {
    /// Activates slot `slot` with geometry `row`.
    #[inline]
    pub fn set(&mut self, slot: usize, row: RowGeometry) {
        self.rows[slot] = row;
        self.active[slot] = true;
    }
}

// Decoupling (`K = J M^-1 J^T = L D L^T`, rows replaced by `D^-1/2 L^-1 J`) is done for
// eight joints at once by `solver::decouple_lanes`, which documents why.

/// Rows below this `K` (both ends immovable along the row) are skipped.
pub(crate) const MIN_K: f32 = 1e-12;

/// Rotates `q` by the small rotation vector `dtheta` (rad, world frame) and renormalises:
/// `q <- normalize(q + 1/2 [dtheta, 0] q)`.
#[inline]
pub fn integrate_rotation(q: Quat, dtheta: Vec3) -> Quat {
    let dq = Quat::from_xyzw(dtheta.x, dtheta.y, dtheta.z, 0.0) * q;
    let r = Quat::from_xyzw(
        q.x + 0.5 * dq.x,
        q.y + 0.5 * dq.y,
        q.z + 0.5 * dq.z,
        q.w + 0.5 * dq.w,
    );
    r.normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrate_rotation_matches_exact_small_rotation() {
        let q = Quat::from_rotation_y(0.3);
        let d = Vec3::new(1e-3, -2e-3, 5e-4);
        let exact = Quat::from_scaled_axis(d) * q;
        let approx = integrate_rotation(q, d);
        assert!(approx.dot(exact).abs() > 1.0 - 1e-9);
        assert!((approx.length() - 1.0).abs() < 1e-6);
    }
}
