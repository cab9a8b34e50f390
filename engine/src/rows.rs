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

use crate::lanes::{Lane, Q, V3};
use glam::{Quat, Vec3};

/// Most rows one joint can produce (fixed: 6; revolute and prismatic with limit: 6).
pub const MAX_ROWS_PER_JOINT: usize = 6;

/// The slot of a limited joint's limit row (after its five bilateral rows: the unilateral
/// row comes last, see `solver::decouple_lanes`).
pub const LIMIT_SLOT: usize = 5;

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
#[repr(C)]
pub(crate) struct RowGeometryLanes<L> {
    pub linear: V3<L>,
    pub angular_a: V3<L>,
    pub angular_b: V3<L>,
    pub inv_i_angular_a: V3<L>,
    pub inv_i_angular_b: V3<L>,
    /// Position error `C`, m or rad.
    pub error: L,
    /// Curvature offset of the velocity row, `h/2 Jdot v` (m/s or rad/s): the velocity the
    /// row aims for is `J v = -h/2 Jdot v`, the chord of the constraint's curved path over the
    /// substep, not its tangent at the start (see `joints::curvature_lanes`). Zero where a
    /// joint type does not set it, and in projection.
    pub curvature: L,
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
            curvature: L::splat(0.0),
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
            curvature: L::splat(0.0),
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

    /// The row's seventeen values (`linear`, `angular_a`, `angular_b`, `inv_i_angular_a`,
    /// `inv_i_angular_b`, each x, y, z, then `error` and `curvature`), for loops that treat
    /// them alike.
    #[inline(always)]
    pub(crate) fn values_mut(&mut self) -> &mut [L; ROW_VALUES] {
        // SAFETY: `RowGeometryLanes` is `repr(C)` with five `V3<L>` (each `repr(C)` with three
        // `L`) and then two `L`: seventeen `L` one after another, with no padding between them
        // (all have the same size and alignment) and none at the end (the size is a multiple
        // of the alignment), which is the layout of `[L; 17]`. The borrow is exclusive for as
        // long as the array's, and every bit pattern of `L` is valid through either view.
        unsafe { &mut *(self as *mut Self).cast::<[L; ROW_VALUES]>() }
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
            curvature: L::select(mask, a.curvature, b.curvature),
        }
    }

    /// `self -= other * s` (Jacobian, its `I^-1` products, the error and the curvature).
    #[inline(always)]
    pub(crate) fn sub_scaled(&mut self, other: &Self, s: L) {
        self.linear = self.linear - other.linear.scale(s);
        self.angular_a = self.angular_a - other.angular_a.scale(s);
        self.angular_b = self.angular_b - other.angular_b.scale(s);
        self.inv_i_angular_a = self.inv_i_angular_a - other.inv_i_angular_a.scale(s);
        self.inv_i_angular_b = self.inv_i_angular_b - other.inv_i_angular_b.scale(s);
        self.error = self.error - other.error * s;
        self.curvature = self.curvature - other.curvature * s;
    }

    #[inline(always)]
    pub(crate) fn scale(&mut self, s: L) {
        self.linear = self.linear.scale(s);
        self.angular_a = self.angular_a.scale(s);
        self.angular_b = self.angular_b.scale(s);
        self.inv_i_angular_a = self.inv_i_angular_a.scale(s);
        self.inv_i_angular_b = self.inv_i_angular_b.scale(s);
        self.error = self.error * s;
        self.curvature = self.curvature * s;
    }
}

/// Values of a [`RowGeometryLanes`] (five 3-vectors, the error and the curvature).
pub(crate) const ROW_VALUES: usize = 17;

const _: () = assert!(
    std::mem::size_of::<RowGeometryLanes<f32>>() == ROW_VALUES * std::mem::size_of::<f32>()
);

/// Rows below this `K` (both ends immovable along the row) are skipped.
pub(crate) const MIN_K: f32 = 1e-12;

/// The angular velocity after one substep of `h` of torque-free rotation (the gyroscopic
/// term of Euler's equations), for bodies of orientation `q`, world angular velocity `omega`
/// (rad/s) and principal moments `inertia` (kg m^2, body frame).
///
/// In the body frame, the implicit midpoint rule `I (w2 - w1) + h m x I m = 0`, `m = (w1 +
/// w2) / 2`, solved for `w2` by one Newton step from `w2 = w1` (a linearly implicit midpoint
/// step): with the residual `g = h w1 x I w1` and the Jacobian `J = I + h/2 (skew(m) I -
/// skew(I m))`, whose column `k` is `I_k e_k + h/2 (I_k m - I m) x e_k`, `w2 = w1 - J^-1 g`
/// (Cramer's rule). The change is rotated back to the world frame and subtracted there, so a
/// body whose term is zero (spinning about a principal axis) keeps its velocity bit for bit.
/// The midpoint rule keeps the two invariants of a free body, its kinetic energy and the
/// length of its angular momentum, to second order: a body of moments [1, 2, 3] kg m^2
/// spinning at [1, 1, 1] rad/s keeps both within 5e-6 over 60 s of 1/240 s substeps, where
/// the implicit Euler step (`J = I + h (...)`, Catto, GDC 2015) lost 11 % of its energy. The
/// direction of the momentum, which the later pose update turns by first-order splitting,
/// stays within 0.2 degrees. Without this term a free body turns about a fixed world axis: its
/// momentum swings round (44 degrees there), an intermediate-axis spin never flips, and a top
/// precesses wrongly (QA, 2026-12-05).
#[inline(always)]
pub(crate) fn gyroscopic_lanes<L: Lane>(q: Q<L>, omega: V3<L>, inertia: V3<L>, h: L) -> V3<L> {
    let w1 = q.conjugate().rotate(omega);
    let mut w2 = w1;
    for _ in 0..GYROSCOPIC_NEWTON_STEPS {
        // Midpoint m = (w1 + w2) / 2; residual g = I (w2 - w1) + h m x I m.
        let m = (w1 + w2).scale(L::splat(0.5));
        let im = times_inertia(inertia, m);
        let g = times_inertia(inertia, w2 - w1) + m.cross(im).scale(h);
        w2 = w2 - midpoint_jacobian_solve(m, im, inertia, h, g);
    }
    omega - q.rotate(w1 - w2)
}

/// `I v` for principal moments `inertia` (body frame).
#[inline(always)]
fn times_inertia<L: Lane>(inertia: V3<L>, v: V3<L>) -> V3<L> {
    V3 {
        x: inertia.x * v.x,
        y: inertia.y * v.y,
        z: inertia.z * v.z,
    }
}

/// `J^-1 g` for the Jacobian of the midpoint rule's residual at the midpoint `m` (`im` = `I
/// m`): `J = I + h/2 (skew(m) I - skew(I m))`, column `k` = `I_k e_k + h/2 (I_k m - I m) x
/// e_k`, by Cramer's rule. Body frame.
#[inline(always)]
fn midpoint_jacobian_solve<L: Lane>(m: V3<L>, im: V3<L>, inertia: V3<L>, h: L, g: V3<L>) -> V3<L> {
    let half = h * L::splat(0.5);
    let (ax, ay, az) = (
        m.scale(inertia.x) - im,
        m.scale(inertia.y) - im,
        m.scale(inertia.z) - im,
    );
    // (a x e_x) = (0, a.z, -a.y), (a x e_y) = (-a.z, 0, a.x), (a x e_z) = (a.y, -a.x, 0).
    let cx = V3 {
        x: inertia.x,
        y: half * ax.z,
        z: -(half * ax.y),
    };
    let cy = V3 {
        x: -(half * ay.z),
        y: inertia.y,
        z: half * ay.x,
    };
    let cz = V3 {
        x: half * az.y,
        y: -(half * az.x),
        z: inertia.z,
    };
    let (yz, zx, xy) = (cy.cross(cz), cz.cross(cx), cx.cross(cy));
    let det = cx.dot(yz);
    V3 {
        x: yz.dot(g) / det,
        y: zx.dot(g) / det,
        z: xy.dot(g) / det,
    }
}

/// The gyroscopic coupling between velocity passes: one Newton step of a spinning body's
/// midpoint equation `I (w2 - w1) + h m x I m = T` with the joints' angular impulse `T` (body
/// frame) held, returned as the change of the world angular velocity (rad/s).
///
/// The velocity passes apply the joints' impulses through `I^-1` alone, as if the body did not
/// spin; a fast-spinning body answers a transverse impulse by precessing instead, through the
/// term the passes leave out. `omega_start` is the angular velocity at the substep's start,
/// `omega_free` its part without the joints' impulses (after [`gyroscopic_lanes`], plus every
/// correction so far), `omega` the current one; so `T = I (w - w_free)` and the residual is
/// `I (w_free - w1) + h m x I m` at `m = (w1 + w)/2`. Zero, bit for bit, for a body turning
/// about one principal axis.
#[inline(always)]
pub(crate) fn gyroscopic_coupling_lanes<L: Lane>(
    q: Q<L>,
    (omega_start, omega_free, omega): (V3<L>, V3<L>, V3<L>),
    inertia: V3<L>,
    h: L,
) -> V3<L> {
    let to_body = q.conjugate();
    let w1 = to_body.rotate(omega_start);
    let m = (w1 + to_body.rotate(omega)).scale(L::splat(0.5));
    let im = times_inertia(inertia, m);
    let g = times_inertia(inertia, to_body.rotate(omega_free) - w1) + m.cross(im).scale(h);
    -q.rotate(midpoint_jacobian_solve(m, im, inertia, h, g))
}

/// Newton steps of the midpoint rule in [`gyroscopic_lanes`]: one is second order already.
const GYROSCOPIC_NEWTON_STEPS: usize = 1;

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

/// [`integrate_rotation`] for every lane, with the same bits: glam's SSE2 quaternion product
/// and `Vec4::normalize` spelled out in lanes, in their order of operations. The product
/// `[w, 0] q` is glam's `(l_w r + (+-l_x) r_wzyx) + ((+-l_z) r_yxwz + (+-l_y) r_zwxy)`
/// (multiplying by its +-1 constants is exact, so a fused multiply-add there rounds the same);
/// the norm is `sqrt((x x + z z) + (y y + w w))`, and each component is divided by it.
#[inline(always)]
pub(crate) fn integrate_rotation_lanes<L: Lane>(q: Q<L>, dtheta: V3<L>) -> Q<L> {
    let (lx, ly, lz, lw) = (dtheta.x, dtheta.y, dtheta.z, L::splat(0.0));
    let (rx, ry, rz, rw) = (q.x, q.y, q.z, q.w);
    let dq = Q {
        x: (lw * rx + lx * rw) + (-(lz * ry) + ly * rz),
        y: (lw * ry + -(lx * rz)) + (lz * rx + ly * rw),
        z: (lw * rz + lx * ry) + (lz * rw + -(ly * rx)),
        w: (lw * rw + -(lx * rx)) + (-(lz * rz) + -(ly * ry)),
    };
    let half = L::splat(0.5);
    let r = Q {
        x: q.x + half * dq.x,
        y: q.y + half * dq.y,
        z: q.z + half * dq.z,
        w: q.w + half * dq.w,
    };
    let length = ((r.x * r.x + r.z * r.z) + (r.y * r.y + r.w * r.w)).sqrt();
    Q {
        x: r.x / length,
        y: r.y / length,
        z: r.z / length,
        w: r.w / length,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::Wide;

    /// The lane version gives glam's bits, for rotations from tiny to large and for inputs
    /// with zeros of both signs.
    #[test]
    fn integrate_rotation_lanes_matches_the_scalar_bits() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
        for case in 0..4000 {
            let scale = [1e-6, 1e-3, 0.1, 2.0][case % 4];
            let q = Quat::from_xyzw(next(), next(), next(), next()).normalize();
            let mut d = Vec3::new(next(), next(), next()) * scale;
            if case % 7 == 0 {
                d = Vec3::new(0.0, -0.0, d.z);
            }
            let expected = integrate_rotation(q, d);
            let mut ql = Q::<Wide>::identity();
            let mut dl = V3::<Wide>::zero();
            for lane in 0..8 {
                ql.set_lane(lane, q);
                dl.set_lane(lane, d);
            }
            let wide = integrate_rotation_lanes(ql, dl);
            let one = integrate_rotation_lanes(
                Q {
                    x: q.x,
                    y: q.y,
                    z: q.z,
                    w: q.w,
                },
                V3 {
                    x: d.x,
                    y: d.y,
                    z: d.z,
                },
            );
            for got in [wide.lane(3), one.lane(0)] {
                assert_eq!(
                    got.to_array().map(f32::to_bits),
                    expected.to_array().map(f32::to_bits),
                    "case {case}: q {q:?}, d {d:?}"
                );
            }
        }
    }

    /// `values_mut` views the row's fields in their documented order, on both lane types.
    #[test]
    fn row_values_are_the_fields_in_order() {
        fn check<L: Lane>(value: impl Fn(f32) -> L, first_lane: impl Fn(L) -> f32) {
            let v3 = |k: f32| V3 {
                x: value(k),
                y: value(k + 1.0),
                z: value(k + 2.0),
            };
            let mut row = RowGeometryLanes {
                linear: v3(0.0),
                angular_a: v3(3.0),
                angular_b: v3(6.0),
                inv_i_angular_a: v3(9.0),
                inv_i_angular_b: v3(12.0),
                error: value(15.0),
                curvature: value(16.0),
            };
            let values = row.values_mut();
            for (k, x) in values.iter().enumerate() {
                assert_eq!(first_lane(*x), k as f32);
            }
            values[4] = value(-1.0);
            values[15] = value(-2.0);
            values[16] = value(-3.0);
            assert_eq!(first_lane(row.angular_a.y), -1.0);
            assert_eq!(first_lane(row.error), -2.0);
            assert_eq!(first_lane(row.curvature), -3.0);
        }
        check::<f32>(|x| x, |x| x);
        check::<Wide>(Wide::splat, |x| x.lane(0));
    }

    #[test]
    fn integrate_rotation_matches_exact_small_rotation() {
        let q = Quat::from_rotation_y(0.3);
        let d = Vec3::new(1e-3, -2e-3, 5e-4);
        let exact = Quat::from_scaled_axis(d) * q;
        let approx = integrate_rotation(q, d);
        assert!(approx.dot(exact).abs() > 1.0 - 1e-9);
        assert!((approx.length() - 1.0).abs() < 1e-6);
    }

    fn lane0_q(q: Quat) -> Q<f32> {
        let mut out = Q::<f32>::identity();
        out.set_lane(0, q);
        out
    }

    /// Without joints (`T = 0`) repeated couplings are Newton steps of the midpoint rule: they
    /// converge to its solution, which keeps a free body's kinetic energy and the length of
    /// its angular momentum (f32 rounding); about a principal axis the coupling is zero, bit
    /// for bit.
    #[test]
    fn the_coupling_converges_to_the_midpoint_rule_and_is_zero_about_a_principal_axis() {
        let inertia = Vec3::new(1.0, 2.0, 3.0);
        let q = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1);
        let omega = q * Vec3::new(4.0, 9.0, -6.0);
        // A long step, 0.6 rad of turn, so that the single Newton step is visibly off.
        let h = 0.05;
        let energy = |w: Vec3| {
            let b = q.conjugate() * w;
            0.5 * (inertia * b).dot(b)
        };
        let momentum = |w: Vec3| (inertia * (q.conjugate() * w)).length();
        let (q8, i8) = (lane0_q(q), V3::<f32>::splat(inertia));
        let free = gyroscopic_lanes::<f32>(q8, V3::splat(omega), i8, h).lane(0);
        let mut w = free;
        let mut steps = Vec::new();
        for _ in 0..4 {
            let d = gyroscopic_coupling_lanes::<f32>(
                q8,
                (V3::splat(omega), V3::splat(w), V3::splat(w)),
                i8,
                h,
            )
            .lane(0);
            steps.push(d.length());
            w += d;
        }
        // Newton: the second step far smaller than the first, then f32 rounding of |w| ~ 12.
        assert!(steps[0] > 1e-3 && steps[1] < 1e-2 * steps[0], "{steps:?}");
        assert!(steps[3] < 4e-6, "{steps:?}");
        // Energy and momentum: the converged midpoint rule keeps both to f32 rounding.
        let (e0, e1) = (energy(omega), energy(w));
        assert!((e1 - e0).abs() < 2e-6 * e0, "energy {e0} -> {e1}");
        let (l0, l1) = (momentum(omega), momentum(w));
        assert!((l1 - l0).abs() < 2e-6 * l0, "momentum {l0} -> {l1}");
        // About a principal axis: zero, bit for bit, whatever the joints did.
        let q = Quat::from_rotation_z(0.4);
        let start = Vec3::new(0.0, 0.0, 5.0);
        let after = Vec3::new(0.0, 0.0, 4.5);
        let d = gyroscopic_coupling_lanes::<f32>(
            lane0_q(q),
            (V3::splat(start), V3::splat(start), V3::splat(after)),
            i8,
            1.0 / 240.0,
        )
        .lane(0);
        assert_eq!(after + d, after);
    }
}
