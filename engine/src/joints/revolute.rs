//! Revolute (hinge) joint: the anchors coincide and the hinge axes stay aligned; rotation
//! about the axis is free, optionally limited to `[lo, hi]`.
//!
//! ```text
//! point:  C = p_B - p_A                              (slots 0..3)
//! axis:   a = q_A axis_a,  b = q_B axis_b,  t_1, t_2 perpendicular to a (fixed in A)
//!         u_k = a x t_k,  E = 2 vec(shortest rotation taking a onto b)
//!           = (a x b) sqrt(2 / (1 + a . b))   (|E| = 2 sin(phi / 2), phi the misalignment)
//!         C_k = u_k . E = (t_k . b) sqrt(2 / (1 + a . b)),   Cdot_k = (w_B - w_A) . u_k
//!                                                                 (slots 3, 4)
//! angle:  q_rel = (q_A q_ref)^-1 q_B,  theta = 2 atan2(vec(q_rel) . (q_ref^-1 axis_a), w)
//!         thetadot = (w_B - w_A) . a
//! limit:  theta read within pi of (lo + hi) / 2 (wrapped by 2 pi there),
//!         theta < lo: C = theta - lo >= 0;  theta > hi: C = hi - theta >= 0   (slot 5)
//! ```

#[cfg(test)]
use super::limit_row;
#[cfg(test)]
use super::{columns, limit_violation, Anchors, JointParams, PosePair, VelocityPair};
use super::{
    columns_lanes, limit_row_lanes, limit_violation_lanes, AnchorLanes, ParamLanes, PoseLanes,
};
use crate::lanes::{atan2, Lane, PairVelocities, V3};
#[cfg(test)]
use crate::rows::{RowGeometry, RowSet};
use crate::rows::{RowGeometryLanes, LIMIT_SLOT, MAX_ROWS_PER_JOINT};
use glam::Vec3;

#[cfg(test)]
/// The hinge angle theta, rad in `[-pi, pi]`, zero at the reference orientation.
pub(crate) fn angle(p: &PosePair, j: &JointParams) -> f32 {
    let mut q_rel = (p.rotation_a * j.reference).inverse() * p.rotation_b;
    if q_rel.w < 0.0 {
        q_rel = -q_rel;
    }
    let axis_in_ref = j.reference.inverse() * j.axis_a;
    2.0 * q_rel.xyz().dot(axis_in_ref).atan2(q_rel.w)
}

/// The hinge angle `theta` (in `[-pi, pi]`) read within pi of the middle of the limits
/// `[lo, hi]`, rad: the angle is known modulo 2 pi, and read in `[-pi, pi]` a hinge driven
/// past a stop near +-pi wraps to the far side of the other stop, whose row then pushes it
/// on round (QA, 2026-12-05: a hinge spun at 90 rad/s into a stop at 3.1 rad passed
/// through). Read about the middle it stays past the stop it crossed until it is half the
/// forbidden arc beyond it. Bit for bit `theta` for limits symmetric about 0 and for lanes
/// without a limit (`lo = -inf`, `hi = inf`: the middle is NaN, both tests fail).
fn about_limits<L: Lane>(theta: L, lo: L, hi: L) -> L {
    use std::f32::consts::{PI, TAU};
    let from_middle = theta - (lo + hi) * L::splat(0.5);
    let above = from_middle.gt(L::splat(PI));
    let below = L::splat(-PI).gt(from_middle);
    L::select(
        above,
        theta - L::splat(TAU),
        L::select(below, theta + L::splat(TAU), theta),
    )
}

#[cfg(test)]
/// [`angle`] as the limit reads it ([`about_limits`]).
fn limited_angle(p: &PosePair, j: &JointParams) -> f32 {
    let [lo, hi] = j.limit.unwrap_or([f32::NEG_INFINITY, f32::INFINITY]);
    about_limits(angle(p, j), lo, hi)
}

#[cfg(test)]
/// World hinge axes of A and B.
fn world_axes(p: &PosePair, j: &JointParams) -> (Vec3, Vec3) {
    (p.rotation_a * j.axis_a, p.rotation_b * j.axis_b)
}

#[cfg(test)]
/// Rows: point rows (0..3), axis alignment (3, 4), limit (5) while crossed.
pub(crate) fn rows(p: &PosePair, j: &JointParams) -> RowSet {
    let mut rows = RowSet::default();
    Anchors::of(p, j).point_rows(&mut rows);
    let (a, b) = world_axes(p, j);
    let (t1_local, t2_local) = j.axis_a.any_orthonormal_pair();
    let (t1, t2) = (p.rotation_a * t1_local, p.rotation_a * t2_local);
    let mut errors = swing_errors(a.dot(b), t1.dot(b), t2.dot(b));
    if 1.0 + a.dot(b) < OPPOSED {
        let centre = -(p.rotation_b * j.anchor_b);
        let across = 2.0 * opposed_turn_axis(a, centre, a.cross(t1));
        errors = (a.cross(t1).dot(across), a.cross(t2).dot(across));
    }
    for (slot, t, error) in [(3, t1, errors.0), (4, t2, errors.1)] {
        let u = a.cross(t);
        rows.set(
            slot,
            RowGeometry {
                linear: Vec3::ZERO,
                angular_a: -u,
                angular_b: u,
                error,
                unilateral: false,
            },
        );
    }
    if let Some(limit) = j.limit {
        let theta = limited_angle(p, j);
        let g = RowGeometry {
            linear: Vec3::ZERO,
            angular_a: -a,
            angular_b: a,
            error: 0.0,
            unilateral: true,
        };
        if let Some(row) = limit_row(theta, limit, g) {
            rows.set(5, row);
        }
    }
    rows
}

/// [`rows`] for every lane; returns the hinge angle's row as the limit reads it (Jacobian
/// `(0, -a, a)`, `error` the angle, [`about_limits`]) where `limited`, a zero row otherwise.
pub(crate) fn rows_lanes<L: Lane>(
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    limited: bool,
    out: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
) -> RowGeometryLanes<L> {
    let anchors = AnchorLanes::of(p, j);
    anchors.point_rows(out);
    let a = p.rotation_a.rotate(j.axis_a);
    let b = p.rotation_b.rotate(j.axis_b);
    let t1 = p.rotation_a.rotate(j.perpendicular_1);
    let t2 = p.rotation_a.rotate(j.perpendicular_2);
    let (u1, u2) = (a.cross(t1), a.cross(t2));
    let (mut e1, mut e2, opposed) = swing_errors_lanes(a.dot(b), t1.dot(b), t2.dot(b));
    if L::mask_bits(opposed) != 0 {
        // Opposed axes (rare: a hinge built upside down): turned over about the line from
        // the anchor to B's centre, which leaves B where it is.
        let across = opposed_turn_axis_lanes(a, -anchors.r_b, u1).scale(L::splat(2.0));
        e1 = L::select(opposed, u1.dot(across), e1);
        e2 = L::select(opposed, u2.dot(across), e2);
    }
    out[3] = RowGeometryLanes::new(V3::zero(), -u1, u1, e1);
    out[4] = RowGeometryLanes::new(V3::zero(), -u2, u2, e2);
    if !limited {
        return RowGeometryLanes::zero();
    }
    let theta = about_limits(angle_lanes(p, j), j.lo, j.hi);
    let g = RowGeometryLanes::new(V3::zero(), -a, a, theta);
    out[LIMIT_SLOT] = limit_row_lanes(theta, j.lo, j.hi, &g);
    g
}

/// Curvature offsets ([`super::curvature_lanes`]): the point rows' and the axis rows'. The
/// axis rows' Jacobians `u_k = a x t_k` turn with A, so `Jdot v = (w_A x u_k) . (w_B - w_A)`:
/// nonzero where the hinge turns while its axis is swung round (a wheel on a turning frame,
/// `s w_A . t_k` for a spin `s` about the axis).
pub(crate) fn curvature_lanes<L: Lane>(
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    v: &PairVelocities<L>,
    half_h: L,
    out: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
) {
    AnchorLanes::of(p, j).point_curvature(v, half_h, out);
    let a = p.rotation_a.rotate(j.axis_a);
    let relative = v.angular_b - v.angular_a;
    for (slot, t_local) in [(3, j.perpendicular_1), (4, j.perpendicular_2)] {
        let u = a.cross(p.rotation_a.rotate(t_local));
        out[slot].curvature = v.angular_a.cross(u).dot(relative) * half_h;
    }
}

/// Below this `1 + a . b` the axes count as opposed (misaligned by more than pi - 1.4e-3
/// rad): the shortest rotation's axis is then lost in round-off, and any axis across `a`
/// serves.
const OPPOSED: f32 = 1e-6;

/// The axis rows' errors `u_k . E`: the hinge axes' misalignment as a rotation vector
/// `E = 2 vec(q_s)` of the shortest rotation `q_s` taking `a` onto `b`, `(a x b) sqrt(2 /
/// (1 + a . b))`, of length `2 sin(phi / 2)` for a misalignment `phi`, along the rows' axes
/// `u_k = a x t_k`. As `(a x t_k) . (a x b) = t_k . b` (`t_k` across the unit `a`), they
/// are `t_k . b` scaled: from `cos = a . b` and `t_k . b`. Where the axes are opposed the
/// shortest rotation is any half turn across `a`: `(2, 0)` here, and the caller picks the
/// turn ([`opposed_turn_axis`]). They turn B back onto `a` from any misalignment: `t_k . b`
/// alone (as these rows read it before 2026-12-07) vanishes at pi, and its Jacobian
/// `b x t_k` at pi / 2, where a hinge stayed misaligned (QA).
#[cfg(test)]
fn swing_errors(cos: f32, t1_b: f32, t2_b: f32) -> (f32, f32) {
    let one_plus_cos = 1.0 + cos;
    if one_plus_cos < OPPOSED {
        (2.0, 0.0)
    } else {
        let scale = (2.0 / one_plus_cos).sqrt();
        (scale * t1_b, scale * t2_b)
    }
}

/// [`swing_errors`] for every lane, with the lanes whose axes are opposed.
fn swing_errors_lanes<L: Lane>(cos: L, t1_b: L, t2_b: L) -> (L, L, L::Mask) {
    let one_plus_cos = L::splat(1.0) + cos;
    let opposed = L::splat(OPPOSED).gt(one_plus_cos);
    let safe = L::select(opposed, L::splat(1.0), one_plus_cos);
    let scale = (L::splat(2.0) / safe).sqrt();
    (
        L::select(opposed, L::splat(2.0), scale * t1_b),
        L::select(opposed, L::splat(0.0), scale * t2_b),
        opposed,
    )
}

/// The axis (unit, across `a`) a hinge whose axes are opposed is turned over about: the
/// direction from its anchor to B's centre (`centre`, from the anchor), across `a`, so that
/// the half turn leaves B's centre where it is (QA 2026-12-07: a fixed axis across the hinge
/// threw an arm built upside down over to its mirror image, 2 m away); `fallback` where B's
/// centre lies on the hinge's line (a wheel). The default reference of such a hinge is
/// turned about the same axis (`joints::hinge_reference`), so the angle reads 0 there.
pub(crate) fn opposed_turn_axis(a: Vec3, centre: Vec3, fallback: Vec3) -> Vec3 {
    let across = centre - a * a.dot(centre);
    if across.length_squared() > OPPOSED_MIN_LEVER * OPPOSED_MIN_LEVER {
        across.normalize()
    } else {
        fallback
    }
}

/// [`opposed_turn_axis`] for every lane.
fn opposed_turn_axis_lanes<L: Lane>(a: V3<L>, centre: V3<L>, fallback: V3<L>) -> V3<L> {
    let across = centre - a.scale(a.dot(centre));
    let length_squared = across.dot(across);
    let min = L::splat(OPPOSED_MIN_LEVER * OPPOSED_MIN_LEVER);
    let long = length_squared.gt(min);
    let length = L::select(long, length_squared, L::splat(1.0)).sqrt();
    V3::select(long, across.scale(L::splat(1.0) / length), fallback)
}

/// Below this distance (m) of B's centre from a hinge's line, an opposed hinge is turned
/// over about its fixed perpendicular instead ([`opposed_turn_axis`]).
const OPPOSED_MIN_LEVER: f32 = 1e-6;

/// `Jdot v` of the hinge angle the limit reads (Jacobian `(0, -a, a)`, `a` turning with A):
/// `(w_A x a) . (w_B - w_A)`, the offset of a hinge held on its stop; zero where the two
/// bodies turn together.
pub(crate) fn limit_curvature_lanes<L: Lane>(
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    v: &PairVelocities<L>,
) -> L {
    let a = p.rotation_a.rotate(j.axis_a);
    v.angular_a.cross(a).dot(v.angular_b - v.angular_a)
}

/// [`angle`] for every lane, rad.
fn angle_lanes<L: Lane>(p: &PoseLanes<L>, j: &ParamLanes<L>) -> L {
    let q_rel = p
        .rotation_a
        .product(j.reference)
        .conjugate()
        .product(p.rotation_b);
    let q_rel = q_rel.negate_where(L::splat(0.0).gt(q_rel.w));
    let axis_in_ref = j.reference.conjugate().rotate(j.axis_a);
    L::splat(2.0) * atan2(q_rel.vector().dot(axis_in_ref), q_rel.w)
}

/// [`diagnose`] for every lane.
pub(crate) fn diagnose_lanes<L: Lane>(
    p: &PoseLanes<L>,
    v: &PairVelocities<L>,
    j: &ParamLanes<L>,
) -> [L; 8] {
    let anchors = AnchorLanes::of(p, j);
    let a = p.rotation_a.rotate(j.axis_a);
    let b = p.rotation_b.rotate(j.axis_b);
    let misalignment = atan2(a.cross(b).length(), a.dot(b));
    let theta = about_limits(angle_lanes(p, j), j.lo, j.hi);
    columns_lanes(
        anchors.separation,
        misalignment,
        limit_violation_lanes(theta, j.lo, j.hi),
        anchors.relative_velocity(v).length(),
        theta,
    )
}

#[cfg(test)]
/// Columns: anchor error; angular error = angle between the hinge axes, rad; limit
/// violation, rad; anchor relative speed; coordinate = hinge angle, rad (read about the
/// limits' middle, [`about_limits`]).
pub(crate) fn diagnose(p: &PosePair, v: &VelocityPair, j: &JointParams) -> [f32; 8] {
    let anchors = Anchors::of(p, j);
    let (a, b) = world_axes(p, j);
    let misalignment = a.cross(b).length().atan2(a.dot(b));
    let theta = limited_angle(p, j);
    columns(
        anchors.separation,
        misalignment,
        limit_violation(theta, j.limit),
        anchors.relative_velocity(v).length(),
        theta,
    )
}

#[cfg(test)]
mod tests {
    use super::about_limits;
    use std::f32::consts::PI;

    #[test]
    fn the_angle_is_read_about_the_limits_middle_and_unchanged_where_that_is_zero() {
        // Every angle the hinge can read, symmetric limits and no limit: the same bits.
        for k in 0..=2000 {
            let theta = -PI + 2.0 * PI * k as f32 / 2000.0;
            for (lo, hi) in [(-0.5, 0.5), (-PI, PI), (f32::NEG_INFINITY, f32::INFINITY)] {
                assert_eq!(about_limits(theta, lo, hi).to_bits(), theta.to_bits());
            }
            // Limits [2, 3] (middle 2.5): angles below -0.64 read 2 pi higher.
            let read = about_limits(theta, 2.0, 3.0);
            assert!((read - 2.5).abs() <= PI + 1e-6, "{theta} read as {read}");
            assert!(read == theta || (read - theta - 2.0 * PI).abs() < 1e-6);
        }
        // Past the upper stop at 3.1 by 0.2 rad: read as 3.3, not as -2.98.
        let past = 3.3 - 2.0 * PI;
        assert!((about_limits(past, -1.0, 3.1) - 3.3).abs() < 1e-6);
    }
}
