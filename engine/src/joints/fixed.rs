//! Fixed (weld) joint: the anchors coincide and the relative orientation is locked.
//!
//! ```text
//! C_lin = p_B - p_A                                  (3 rows, as the spherical joint)
//! C_ang = 2 vec(q_B (q_A q_ref)^-1)                  (3 rows, world axes; ~ rotation vector)
//! Cdot_ang = w_B - w_A
//! ```

#[cfg(test)]
use super::angular_lock_rows;
use super::{
    angular_lock_rows_lanes, columns_lanes, orientation_error_lanes, rotation_angle_lanes,
    AnchorLanes, ParamLanes, PoseLanes,
};
#[cfg(test)]
use super::{
    columns, orientation_error, rotation_angle, Anchors, JointParams, PosePair, VelocityPair,
};
use crate::lanes::{Lane, PairVelocities};
#[cfg(test)]
use crate::rows::RowSet;
use crate::rows::{RowGeometryLanes, MAX_ROWS_PER_JOINT};

#[cfg(test)]
/// Rows: point rows in slots 0..3, angular lock in 3..6.
pub(crate) fn rows(p: &PosePair, j: &JointParams) -> RowSet {
    let mut rows = RowSet::default();
    Anchors::of(p, j).point_rows(&mut rows);
    angular_lock_rows(p, j, &mut rows, 3);
    rows
}

/// [`rows`] for every lane.
pub(crate) fn rows_lanes<L: Lane>(
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    out: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
) {
    AnchorLanes::of(p, j).point_rows(out);
    angular_lock_rows_lanes(p, j, out, 3);
}

/// Curvature offsets ([`super::curvature_lanes`]): the point rows' (the angular lock's
/// vanish where it holds).
pub(crate) fn curvature_lanes<L: Lane>(
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    v: &PairVelocities<L>,
    half_h: L,
    out: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
) {
    AnchorLanes::of(p, j).point_curvature(v, half_h, out);
}

/// [`diagnose`] for every lane.
pub(crate) fn diagnose_lanes<L: Lane>(
    p: &PoseLanes<L>,
    v: &PairVelocities<L>,
    j: &ParamLanes<L>,
) -> [L; 8] {
    let anchors = AnchorLanes::of(p, j);
    let zero = L::splat(0.0);
    columns_lanes(
        anchors.separation,
        rotation_angle_lanes(orientation_error_lanes(p, j)),
        zero,
        anchors.relative_velocity(v).length(),
        zero,
    )
}

#[cfg(test)]
/// Columns: anchor error; angular error = angle of the relative rotation against the
/// reference, rad; no limit, no coordinate.
pub(crate) fn diagnose(p: &PosePair, v: &VelocityPair, j: &JointParams) -> [f32; 8] {
    let anchors = Anchors::of(p, j);
    columns(
        anchors.separation,
        rotation_angle(orientation_error(p, j)),
        0.0,
        anchors.relative_velocity(v).length(),
        0.0,
    )
}
