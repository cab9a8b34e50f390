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

use crate::bodies::Bodies;
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
        let original = self.rows;
        // K_ij over the original rows.
        let mut k = [[0.0f32; MAX_ROWS_PER_JOINT]; MAX_ROWS_PER_JOINT];
        for i in 0..n {
            let gi = &original[idx[i]];
            let mi_a = mass.inv_inertia_a * gi.angular_a;
            let mi_b = mass.inv_inertia_b * gi.angular_b;
            for j in 0..=i {
                let gj = &original[idx[j]];
                k[i][j] = (mass.inv_mass_a + mass.inv_mass_b) * gi.linear.dot(gj.linear)
                    + gj.angular_a.dot(mi_a)
                    + gj.angular_b.dot(mi_b);
            }
        }
        // Cholesky, row by row; `l[i][j]` for j <= i. Dropped rows get a zero row and column.
        let mut l = [[0.0f32; MAX_ROWS_PER_JOINT]; MAX_ROWS_PER_JOINT];
        let mut kept = [false; MAX_ROWS_PER_JOINT];
        for i in 0..n {
            for j in 0..i {
                if !kept[j] {
                    continue;
                }
                let mut sum = k[i][j];
                for m in 0..j {
                    sum -= l[i][m] * l[j][m];
                }
                l[i][j] = sum / l[j][j];
            }
            let mut d = k[i][i];
            for m in 0..i {
                d -= l[i][m] * l[i][m];
            }
            if d > 1e-6 * k[i][i] && d > MIN_K {
                l[i][i] = d.sqrt();
                kept[i] = true;
            } else {
                l[i] = [0.0; MAX_ROWS_PER_JOINT];
            }
        }
        // Forward substitution: row'_i = (row_i - sum_{m<i} l_im row'_m) / l_ii.
        for i in 0..n {
            let slot = idx[i];
            if !kept[i] {
                self.active[slot] = false;
                continue;
            }
            let mut g = original[slot];
            for m in 0..i {
                if kept[m] {
                    g.sub_scaled(&self.rows[idx[m]], l[i][m]);
                }
            }
            g.scale(1.0 / l[i][i]);
            self.rows[slot] = g;
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
    pub fn of(bodies: &Bodies, a: usize, b: usize) -> Self {
        PairMass {
            inv_mass_a: bodies.inv_mass[a],
            inv_mass_b: bodies.inv_mass[b],
            inv_inertia_a: bodies.inv_inertia_world[a],
            inv_inertia_b: bodies.inv_inertia_world[b],
        }
    }

    /// `K = J M^-1 J^T` of a row.
    #[inline]
    pub fn k(&self, g: &RowGeometry) -> f32 {
        (self.inv_mass_a + self.inv_mass_b) * g.linear.length_squared()
            + g.angular_a.dot(self.inv_inertia_a * g.angular_a)
            + g.angular_b.dot(self.inv_inertia_b * g.angular_b)
    }
}

/// Rows below this `K` (both ends immovable along the row) are skipped.
const MIN_K: f32 = 1e-12;

/// Prepared velocity rows, structure of arrays. Rebuilt every substep by the prepare stage.
#[derive(Debug, Clone, Default)]
pub struct VelocityRows {
    pub(crate) joint: Vec<u32>,
    pub(crate) slot: Vec<u8>,
    pub(crate) body_a: Vec<u32>,
    pub(crate) body_b: Vec<u32>,
    pub(crate) linear: Vec<Vec3>,
    pub(crate) angular_a: Vec<Vec3>,
    pub(crate) angular_b: Vec<Vec3>,
    /// `I_A^-1 angular_a`: the angular velocity change of A per unit impulse.
    pub(crate) inv_i_angular_a: Vec<Vec3>,
    /// `I_B^-1 angular_b`.
    pub(crate) inv_i_angular_b: Vec<Vec3>,
    pub(crate) inv_mass_a: Vec<f32>,
    pub(crate) inv_mass_b: Vec<f32>,
    /// `1 / K`, kg (linear rows) or kg m^2 (angular rows).
    pub(crate) effective_mass: Vec<f32>,
    /// Target velocity offset of the bias solve, `error_reduction * C / h` (unilateral rows:
    /// only while violated, `C < 0`).
    pub(crate) bias: Vec<f32>,
    /// Speculative offset of the real solve: a unilateral row with `C > 0` still allows the
    /// approach `Cdot >= -C / h` that just reaches the bound; 0 for bilateral rows.
    pub(crate) speculative: Vec<f32>,
    pub(crate) lower: Vec<f32>,
    pub(crate) upper: Vec<f32>,
    /// Accumulated impulse over the substep, N s or N m s.
    pub(crate) impulse: Vec<f32>,
    /// Accumulated split (bias) impulse of the substep: it acts on the bias velocities only.
    pub(crate) bias_impulse: Vec<f32>,
}

/// Bias ("split") velocities: the corrective velocities the error-reduction bias asks for.
/// They move the poses in the substep they are computed in, then are discarded, so the
/// bias never adds kinetic energy nor enters the warm start.
#[derive(Debug, Clone, Default)]
pub struct BiasVelocities {
    pub(crate) linear: Vec<Vec3>,
    pub(crate) angular: Vec<Vec3>,
}

impl BiasVelocities {
    /// Zeroes the velocities for `n` bodies.
    pub(crate) fn reset(&mut self, n: usize) {
        self.linear.clear();
        self.linear.resize(n, Vec3::ZERO);
        self.angular.clear();
        self.angular.resize(n, Vec3::ZERO);
    }
}

impl VelocityRows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.joint.len()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.joint.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        self.joint.clear();
        self.slot.clear();
        self.body_a.clear();
        self.body_b.clear();
        self.linear.clear();
        self.angular_a.clear();
        self.angular_b.clear();
        self.inv_i_angular_a.clear();
        self.inv_i_angular_b.clear();
        self.inv_mass_a.clear();
        self.inv_mass_b.clear();
        self.effective_mass.clear();
        self.bias.clear();
        self.speculative.clear();
        self.lower.clear();
        self.upper.clear();
        self.impulse.clear();
        self.bias_impulse.clear();
    }

    /// Appends a row prepared from its geometry. `warm_impulse` is the previous substep's
    /// impulse of the same joint slot; `bias_rate = error_reduction / h`; `inv_h = 1 / h`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push(
        &mut self,
        joint: u32,
        slot: u8,
        body_a: u32,
        body_b: u32,
        mass: &PairMass,
        g: &RowGeometry,
        bias_rate: f32,
        inv_h: f32,
        warm_impulse: f32,
    ) {
        let k = mass.k(g);
        if k <= MIN_K {
            return;
        }
        self.joint.push(joint);
        self.slot.push(slot);
        self.body_a.push(body_a);
        self.body_b.push(body_b);
        self.linear.push(g.linear);
        self.angular_a.push(g.angular_a);
        self.angular_b.push(g.angular_b);
        self.inv_i_angular_a.push(mass.inv_inertia_a * g.angular_a);
        self.inv_i_angular_b.push(mass.inv_inertia_b * g.angular_b);
        self.inv_mass_a.push(mass.inv_mass_a);
        self.inv_mass_b.push(mass.inv_mass_b);
        self.effective_mass.push(1.0 / k);
        let separated = g.unilateral && g.error > 0.0;
        self.bias
            .push(if separated { 0.0 } else { bias_rate * g.error });
        self.speculative
            .push(if separated { g.error * inv_h } else { 0.0 });
        let (lower, upper) = if g.unilateral {
            (0.0, f32::INFINITY)
        } else {
            (f32::NEG_INFINITY, f32::INFINITY)
        };
        self.lower.push(lower);
        self.upper.push(upper);
        self.impulse.push(warm_impulse.clamp(lower, upper));
        self.bias_impulse.push(0.0);
    }

    /// Applies row `i`'s impulse `lambda` to the bodies: `v += M^-1 J^T lambda`.
    #[inline]
    fn apply(&self, i: usize, bodies: &mut Bodies, lambda: f32) {
        let a = self.body_a[i] as usize;
        let b = self.body_b[i] as usize;
        let p = self.linear[i] * lambda;
        bodies.linear_velocity[a] -= p * self.inv_mass_a[i];
        bodies.angular_velocity[a] += self.inv_i_angular_a[i] * lambda;
        bodies.linear_velocity[b] += p * self.inv_mass_b[i];
        bodies.angular_velocity[b] += self.inv_i_angular_b[i] * lambda;
    }

    /// Warm start: applies every row's carried-over impulse once.
    pub(crate) fn warm_start(&self, bodies: &mut Bodies) {
        for i in 0..self.len() {
            let lambda = self.impulse[i];
            if lambda != 0.0 {
                self.apply(i, bodies, lambda);
            }
        }
    }

    /// `Cdot` of row `i` at the bodies' current velocities.
    #[inline]
    pub(crate) fn velocity_error(&self, i: usize, bodies: &Bodies) -> f32 {
        let a = self.body_a[i] as usize;
        let b = self.body_b[i] as usize;
        self.linear[i].dot(bodies.linear_velocity[b] - bodies.linear_velocity[a])
            + self.angular_a[i].dot(bodies.angular_velocity[a])
            + self.angular_b[i].dot(bodies.angular_velocity[b])
    }

    /// One sequential-impulse pass over the rows, in order (Gauss-Seidel):
    /// `d = -m_eff (Cdot + speculative)`, accumulated impulse clamped to `[lower, upper]`.
    pub(crate) fn solve_pass(&mut self, bodies: &mut Bodies) {
        for i in 0..self.len() {
            let cdot = self.velocity_error(i, bodies);
            let delta = -self.effective_mass[i] * (cdot + self.speculative[i]);
            let old = self.impulse[i];
            let new = (old + delta).clamp(self.lower[i], self.upper[i]);
            self.impulse[i] = new;
            let applied = new - old;
            if applied != 0.0 {
                self.apply(i, bodies, applied);
            }
        }
    }

    /// One pass of the error-reduction solve on the bias velocities `u`:
    /// `d = -m_eff (J u + error_reduction C / h)`, so that `J u -> -error_reduction C / h`,
    /// the corrective velocity; clamped like the real impulse.
    pub(crate) fn solve_bias_pass(&mut self, u: &mut BiasVelocities) {
        for i in 0..self.len() {
            let a = self.body_a[i] as usize;
            let b = self.body_b[i] as usize;
            let cdot = self.linear[i].dot(u.linear[b] - u.linear[a])
                + self.angular_a[i].dot(u.angular[a])
                + self.angular_b[i].dot(u.angular[b]);
            let delta = -self.effective_mass[i] * (cdot + self.bias[i]);
            let old = self.bias_impulse[i];
            let new = (old + delta).clamp(self.lower[i], self.upper[i]);
            self.bias_impulse[i] = new;
            let applied = new - old;
            if applied != 0.0 {
                let p = self.linear[i] * applied;
                u.linear[a] -= p * self.inv_mass_a[i];
                u.angular[a] += self.inv_i_angular_a[i] * applied;
                u.linear[b] += p * self.inv_mass_b[i];
                u.angular[b] += self.inv_i_angular_b[i] * applied;
            }
        }
    }
}

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

/// One positional projection pass over a joint's decoupled rows (computed once at the poses
/// before the pass; the rows are independent at that linearisation point).
pub(crate) fn project_rows(bodies: &mut Bodies, a: usize, b: usize, set: &RowSet, factor: f32) {
    for slot in 0..MAX_ROWS_PER_JOINT {
        if set.active[slot] {
            project_row(bodies, a, b, &set.rows[slot], factor);
        }
    }
}

/// One positional projection of row geometry `g` between bodies `a` and `b`:
/// `delta = -factor C / K`, then `x += M^-1 J^T delta` on positions and orientations.
/// Unilateral rows move only when violated (`C < 0`).
pub(crate) fn project_row(bodies: &mut Bodies, a: usize, b: usize, g: &RowGeometry, factor: f32) {
    if g.unilateral && g.error >= 0.0 {
        return;
    }
    let mass = PairMass::of(bodies, a, b);
    let k = mass.k(g);
    if k <= MIN_K {
        return;
    }
    let delta = -factor * g.error / k;
    let p = g.linear * delta;
    if mass.inv_mass_a > 0.0 {
        bodies.position[a] -= p * mass.inv_mass_a;
        bodies.rotation[a] =
            integrate_rotation(bodies.rotation[a], mass.inv_inertia_a * g.angular_a * delta);
    }
    if mass.inv_mass_b > 0.0 {
        bodies.position[b] += p * mass.inv_mass_b;
        bodies.rotation[b] =
            integrate_rotation(bodies.rotation[b], mass.inv_inertia_b * g.angular_b * delta);
    }
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
