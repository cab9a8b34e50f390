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

use crate::lanes::{Lane, V3};
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

/// The rows of one slot for every lane, as the joint types build them and prepare and
/// projection decouple them: Jacobian, `I^-1` times the angular parts (filled and transformed
/// with the rows by the decoupling), and error. A row inactive in a lane is zero there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowGeometryLanes<L> {
    pub linear: V3<L>,
    pub angular_a: V3<L>,
    pub angular_b: V3<L>,
    pub inv_i_angular_a: V3<L>,
    pub inv_i_angular_b: V3<L>,
    /// Position error `C`, m or rad.
    pub error: L,
}

impl<L: Lane> RowGeometryLanes<L> {
    pub(crate) fn zero() -> Self {
        RowGeometryLanes {
            linear: V3::zero(),
            angular_a: V3::zero(),
            angular_b: V3::zero(),
            inv_i_angular_a: V3::zero(),
            inv_i_angular_b: V3::zero(),
            error: L::splat(0.0),
        }
    }

    /// A row from its Jacobian and error (the `I^-1` products are filled by the decoupling).
    #[inline(always)]
    pub(crate) fn new(linear: V3<L>, angular_a: V3<L>, angular_b: V3<L>, error: L) -> Self {
        RowGeometryLanes {
            linear,
            angular_a,
            angular_b,
            inv_i_angular_a: V3::zero(),
            inv_i_angular_b: V3::zero(),
            error,
        }
    }

    /// `K = J M^-1 J^T` of the row, given `1/m_A + 1/m_B` (`inv_mass`) and the `I^-1` products
    /// the decoupling filled in.
    #[inline(always)]
    pub(crate) fn k(&self, inv_mass: L) -> L {
        inv_mass * self.linear.dot(self.linear)
            + self.angular_a.dot(self.inv_i_angular_a)
            + self.angular_b.dot(self.inv_i_angular_b)
    }

    /// Lane-wise `if mask { a } else { b }`.
    #[inline(always)]
    pub(crate) fn select(mask: L::Mask, a: &Self, b: &Self) -> Self {
        RowGeometryLanes {
            linear: V3::select(mask, a.linear, b.linear),
            angular_a: V3::select(mask, a.angular_a, b.angular_a),
            angular_b: V3::select(mask, a.angular_b, b.angular_b),
            inv_i_angular_a: V3::select(mask, a.inv_i_angular_a, b.inv_i_angular_a),
            inv_i_angular_b: V3::select(mask, a.inv_i_angular_b, b.inv_i_angular_b),
            error: L::select(mask, a.error, b.error),
        }
    }

    /// `self -= other * s` (Jacobian, its `I^-1` products and the error).
    #[inline(always)]
    pub(crate) fn sub_scaled(&mut self, other: &Self, s: L) {
        self.linear = self.linear - other.linear.scale(s);
        self.angular_a = self.angular_a - other.angular_a.scale(s);
        self.angular_b = self.angular_b - other.angular_b.scale(s);
        self.inv_i_angular_a = self.inv_i_angular_a - other.inv_i_angular_a.scale(s);
        self.inv_i_angular_b = self.inv_i_angular_b - other.inv_i_angular_b.scale(s);
        self.error = self.error - other.error * s;
    }

    #[inline(always)]
    pub(crate) fn scale(&mut self, s: L) {
        self.linear = self.linear.scale(s);
        self.angular_a = self.angular_a.scale(s);
        self.angular_b = self.angular_b.scale(s);
        self.inv_i_angular_a = self.inv_i_angular_a.scale(s);
        self.inv_i_angular_b = self.inv_i_angular_b.scale(s);
        self.error = self.error * s;
    }
}

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
