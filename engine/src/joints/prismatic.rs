//! Prismatic (slider) joint: B translates along an axis fixed in A; relative rotation locked;
//! optional translation limit `[lo, hi]`.
//!
//! ```text
//! d = p_B - p_A,  a = q_A axis_a,  t_1, t_2 perpendicular to a (fixed in A)
//! slide:  C_k = t_k . d                                      (slots 0, 1)
//!         Cdot_k = t_k . (v_B + w_B x r_B - v_A - w_A x r_A) + d . (w_A x t_k)
//!         so J_wA = -((r_A + d) x t_k), J_wB = r_B x t_k
//! angular lock as the fixed joint                            (slots 2..5)
//! limit:  s = a . d,  same Jacobian form along a             (slot 5)
//! ```

#[cfg(test)]
use super::{angular_lock_rows, limit_row};
use super::{
    angular_lock_rows_lanes, columns_lanes, limit_row_lanes, limit_violation_lanes,
    orientation_error_lanes, rotation_angle_lanes, AnchorLanes, ParamLanes, PoseLanes,
};
#[cfg(test)]
use super::{
    columns, limit_violation, orientation_error, rotation_angle, Anchors, JointParams, PosePair,
    VelocityPair,
};
use crate::lanes::{Lane, PairVelocities, V3};
#[cfg(test)]
use crate::rows::{RowGeometry, RowSet};
use crate::rows::{RowGeometryLanes, LIMIT_SLOT, MAX_ROWS_PER_JOINT};
#[cfg(test)]
use glam::Vec3;

#[cfg(test)]
/// Row of `C = n . d` for a direction `n` fixed in A.
fn slide_row(anchors: &Anchors, n: Vec3) -> RowGeometry {
    RowGeometry {
        linear: n,
        angular_a: -(anchors.r_a + anchors.separation).cross(n),
        angular_b: anchors.r_b.cross(n),
        error: n.dot(anchors.separation),
        unilateral: false,
    }
}

#[cfg(test)]
/// Rows: slide (0, 1), angular lock (2..5), limit (5) while crossed.
///
/// The limit row shares slot 5 with nothing: the angular lock uses slots 2, 3, 4.
pub(crate) fn rows(p: &PosePair, j: &JointParams) -> RowSet {
    let mut rows = RowSet::default();
    let anchors = Anchors::of(p, j);
    let (t1_local, t2_local) = j.axis_a.any_orthonormal_pair();
    rows.set(0, slide_row(&anchors, p.rotation_a * t1_local));
    rows.set(1, slide_row(&anchors, p.rotation_a * t2_local));
    angular_lock_rows(p, j, &mut rows, 2);
    if let Some(limit) = j.limit {
        let a = p.rotation_a * j.axis_a;
        let g = slide_row(&anchors, a);
        if let Some(row) = limit_row(g.error, limit, g) {
            rows.set(5, row);
        }
    }
    rows
}

/// [`slide_row`] for every lane.
fn slide_row_lanes<L: Lane>(anchors: &AnchorLanes<L>, n: V3<L>) -> RowGeometryLanes<L> {
    RowGeometryLanes::new(
        n,
        -(anchors.r_a + anchors.separation).cross(n),
        anchors.r_b.cross(n),
        n.dot(anchors.separation),
    )
}

/// [`rows`] for every lane; returns the slide's row along the axis (`error` the slide `s`)
/// where `limited`, a zero row otherwise.
pub(crate) fn rows_lanes<L: Lane>(
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    limited: bool,
    out: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
) -> RowGeometryLanes<L> {
    let anchors = AnchorLanes::of(p, j);
    out[0] = slide_row_lanes(&anchors, p.rotation_a.rotate(j.perpendicular_1));
    out[1] = slide_row_lanes(&anchors, p.rotation_a.rotate(j.perpendicular_2));
    angular_lock_rows_lanes(p, j, out, 2);
    if !limited {
        return RowGeometryLanes::zero();
    }
    let g = slide_row_lanes(&anchors, p.rotation_a.rotate(j.axis_a));
    out[LIMIT_SLOT] = limit_row_lanes(g.error, j.lo, j.hi, &g);
    g
}

/// Curvature offsets ([`super::curvature_lanes`]): the slide rows'. For `C = n . d` (`n`
/// turning with A, `d` the anchors' separation, `ddot` their relative velocity),
/// `Jdot v = (w_A x (w_A x n)) . d + 2 (w_A x n) . ddot + n . kappa`
/// (`kappa`: [`AnchorLanes::centripetal`]); the middle term is the Coriolis part of a slide
/// along a turning axis.
pub(crate) fn curvature_lanes<L: Lane>(
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    v: &PairVelocities<L>,
    half_h: L,
    out: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
) {
    let anchors = AnchorLanes::of(p, j);
    let kappa = anchors.centripetal(v);
    let d = anchors.separation;
    let d_dot = anchors.relative_velocity(v);
    for (slot, n_local) in [(0, j.perpendicular_1), (1, j.perpendicular_2)] {
        let n = p.rotation_a.rotate(n_local);
        out[slot].curvature = slide_jdot_v(n, v.angular_a, d, d_dot, kappa) * half_h;
    }
}

/// `Jdot v` of the slide coordinate `s = a . d` the limit reads (`a` the axis turning with A),
/// the slide rows' formula ([`curvature_lanes`]) along the axis: the offset of a slider held
/// on its stop while the assembly turns.
pub(crate) fn limit_curvature_lanes<L: Lane>(
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    v: &PairVelocities<L>,
) -> L {
    let anchors = AnchorLanes::of(p, j);
    let a = p.rotation_a.rotate(j.axis_a);
    let (kappa, d_dot) = (anchors.centripetal(v), anchors.relative_velocity(v));
    slide_jdot_v(a, v.angular_a, anchors.separation, d_dot, kappa)
}

/// `Jdot v = (w_A x (w_A x n)) . d + 2 (w_A x n) . ddot + n . kappa` of `C = n . d`.
fn slide_jdot_v<L: Lane>(n: V3<L>, w: V3<L>, d: V3<L>, d_dot: V3<L>, kappa: V3<L>) -> L {
    let n_dot = w.cross(n);
    w.cross(n_dot).dot(d) + L::splat(2.0) * n_dot.dot(d_dot) + n.dot(kappa)
}

/// [`diagnose`] for every lane.
pub(crate) fn diagnose_lanes<L: Lane>(
    p: &PoseLanes<L>,
    v: &PairVelocities<L>,
    j: &ParamLanes<L>,
) -> [L; 8] {
    let anchors = AnchorLanes::of(p, j);
    let a = p.rotation_a.rotate(j.axis_a);
    let s = a.dot(anchors.separation);
    let across = anchors.separation - a.scale(s);
    let rel = anchors.relative_velocity(v);
    let rel_across = rel - a.scale(a.dot(rel));
    columns_lanes(
        across,
        rotation_angle_lanes(orientation_error_lanes(p, j)),
        limit_violation_lanes(s, j.lo, j.hi),
        rel_across.length(),
        s,
    )
}

#[cfg(test)]
/// Columns: anchor error = the part of `p_B - p_A` across the axis, m; angular error =
/// relative rotation angle, rad; limit violation, m; anchor relative speed across the
/// axis, m/s; coordinate = translation along the axis, m.
pub(crate) fn diagnose(p: &PosePair, v: &VelocityPair, j: &JointParams) -> [f32; 8] {
    let anchors = Anchors::of(p, j);
    let a = p.rotation_a * j.axis_a;
    let s = a.dot(anchors.separation);
    let across = anchors.separation - a * s;
    let rel = anchors.relative_velocity(v);
    let rel_across = rel - a * a.dot(rel);
    columns(
        across,
        rotation_angle(orientation_error(p, j)),
        limit_violation(s, j.limit),
        rel_across.length(),
        s,
    )
}
