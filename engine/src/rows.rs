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

use glam::{Mat3, Quat, Vec3};

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

impl RowGeometry {
    /// `self - s * other` on the Jacobian and the error.
    #[inline]
    fn sub_scaled(&mut self, other: &RowGeometry, s: f32) {
        self.linear -= other.linear * s;
        self.angular_a -= other.angular_a * s;
        self.angular_b -= other.angular_b * s;
        self.error -= other.error * s;
    }

    /// Scales the Jacobian and the error.
    #[inline]
    fn scale(&mut self, s: f32) {
        self.linear *= s;
        self.angular_a *= s;
        self.angular_b *= s;
        self.error *= s;
    }
}

impl RowSet {
    /// Decouples the joint's bilateral rows: with `K = J M^-1 J^T = L L^T` (Cholesky), the rows
    /// are replaced by `L^-1 J` with errors `L^-1 C`, whose `K` is the identity.
    ///
    /// Why: the three point rows along world axes are strongly coupled through the bodies'
    /// rotation when the anchor's lever arm is long against the radius of gyration (a 1 m
    /// pendulum arm on a 0.1 m cube has K eigenvalues 1 and 600 kg^-1). Gauss-Seidel over such
    /// rows converges at `1 - 1/600` per pass, so eight passes left centimetres of error and
    /// the run gained energy. After decoupling, one pass solves an isolated joint exactly
    /// (a block solve written as scalar rows), and coupling remains only between joints.
    ///
    /// Rows that are linearly dependent on earlier ones (pivot below `1e-6` of their diagonal)
    /// are deactivated. A unilateral (limit) row must come after every bilateral row in slot
    /// order: its decoupled form is then the limit direction with the bilateral rows'
    /// components removed, scaled by `1 / L_ll > 0`, so `lambda' >= 0` still means
    /// `lambda >= 0` and `C' >= 0` still means the bound holds (with the bilateral rows
    /// satisfied). Without this, the limit row fought the point rows through the lever arm and
    /// a pendulum hitting its stop bounced higher than it was released.
    // Index loops keep the Cholesky recurrences in their textbook form.
    #[allow(clippy::needless_range_loop)]
    pub(crate) fn decouple(&mut self, mass: &PairMass) {
        let mut idx = [0usize; MAX_ROWS_PER_JOINT];
        let mut n = 0;
        for slot in 0..MAX_ROWS_PER_JOINT {
            if self.active[slot] {
                debug_assert!(
                    n == 0 || !self.rows[idx[n - 1]].unilateral,
                    "unilateral rows must come last"
                );
                idx[n] = slot;
                n += 1;
            }
        }
        if n < 2 {
            return;
        }
        // Rows are replaced in slot order and row i's replacement needs only the original
        // row i and the replaced rows before it, so this works in place (no copy).
        // K_ij over the original rows.
        let mut k = [[0.0f32; MAX_ROWS_PER_JOINT]; MAX_ROWS_PER_JOINT];
        for i in 0..n {
            let gi = &self.rows[idx[i]];
            let mi_a = mass.inv_inertia_a * gi.angular_a;
            let mi_b = mass.inv_inertia_b * gi.angular_b;
            for j in 0..=i {
                let gj = &self.rows[idx[j]];
                k[i][j] = (mass.inv_mass_a + mass.inv_mass_b) * gi.linear.dot(gj.linear)
                    + gj.angular_a.dot(mi_a)
                    + gj.angular_b.dot(mi_b);
            }
        }
        // K = L D L^T (L unit lower triangular), row by row, with `a[i][j] = l_ij d_j`.
        // Without square roots, the critical path through the pivots is one division each
        // (a Cholesky factor needs a square root and a division per pivot; this form
        // measured 2 to 3 % faster steps on the chain and grid benches, same errors).
        // Dropped rows get a zero row and column.
        let mut l = [[0.0f32; MAX_ROWS_PER_JOINT]; MAX_ROWS_PER_JOINT];
        let mut a = [[0.0f32; MAX_ROWS_PER_JOINT]; MAX_ROWS_PER_JOINT];
        let mut inv_d = [0.0f32; MAX_ROWS_PER_JOINT];
        let mut kept = [false; MAX_ROWS_PER_JOINT];
        for i in 0..n {
            for j in 0..i {
                if !kept[j] {
                    continue;
                }
                let mut sum = k[i][j];
                for m in 0..j {
                    sum -= a[i][m] * l[j][m];
                }
                a[i][j] = sum;
                l[i][j] = sum * inv_d[j];
            }
            let mut d = k[i][i];
            for m in 0..i {
                d -= a[i][m] * l[i][m];
            }
            if d > 1e-6 * k[i][i] && d > MIN_K {
                inv_d[i] = 1.0 / d;
                kept[i] = true;
            } else {
                l[i] = [0.0; MAX_ROWS_PER_JOINT];
            }
        }
        // The Cholesky factor is `L D^1/2`, so the decoupled rows are
        // `row'_i = r_i / sqrt(d_i)` with `r_i = row_i - sum_{m<i} l_im r_m` (a unit lower
        // solve). Rows are replaced in slot order and r_i needs only the original row i and
        // the r_m before it, so this works in place; the scaling comes after, off the chain.
        for i in 0..n {
            let slot = idx[i];
            if !kept[i] {
                self.active[slot] = false;
                continue;
            }
            let mut g = self.rows[slot];
            for m in 0..i {
                if kept[m] {
                    g.sub_scaled(&self.rows[idx[m]], l[i][m]);
                }
            }
            self.rows[slot] = g;
        }
        for i in 0..n {
            if kept[i] {
                self.rows[idx[i]].scale(inv_d[i].sqrt());
            }
        }
    }
}

/// Mass properties of a body pair as the rows see them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PairMass {
    pub inv_mass_a: f32,
    pub inv_mass_b: f32,
    pub inv_inertia_a: Mat3,
    pub inv_inertia_b: Mat3,
}

impl PairMass {
    /// `K = J M^-1 J^T` of a row.
    #[inline]
    pub fn k(&self, g: &RowGeometry) -> f32 {
        (self.inv_mass_a + self.inv_mass_b) * g.linear.length_squared()
            + g.angular_a.dot(self.inv_inertia_a * g.angular_a)
            + g.angular_b.dot(self.inv_inertia_b * g.angular_b)
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
