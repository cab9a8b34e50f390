//! Spherical (ball) joint: the anchors coincide, rotation is free.
//!
//! ```text
//! C    = p_B - p_A                                   (3 rows, world axes)
//! Cdot = v_B + w_B x r_B - v_A - w_A x r_A
//! J    = [-E, [r_A]x, E, -[r_B]x]
//! ```

#[cfg(test)]
use super::{columns, Anchors, JointParams, PosePair, VelocityPair};
use super::{columns_lanes, AnchorLanes, ParamLanes, PoseLanes};
use crate::lanes::{Lane, PairVelocities};
#[cfg(test)]
use crate::rows::RowSet;
use crate::rows::{RowGeometryLanes, MAX_ROWS_PER_JOINT};

#[cfg(test)]
/// Rows: the three point rows in slots 0..3.
pub(crate) fn rows(p: &PosePair, j: &JointParams) -> RowSet {
    let mut rows = RowSet::default();
    Anchors::of(p, j).point_rows(&mut rows);
    rows
}

/// [`rows`] for every lane.
pub(crate) fn rows_lanes<L: Lane>(
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    out: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
) {
    AnchorLanes::of(p, j).point_rows(out);
}

/// Curvature offsets ([`super::curvature_lanes`]): the point rows'.
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
        zero,
        zero,
        anchors.relative_velocity(v).length(),
        zero,
    )
}

#[cfg(test)]
/// Columns: anchor error, angular error 0 (rotation is free), no limit, no coordinate.
pub(crate) fn diagnose(p: &PosePair, v: &VelocityPair, j: &JointParams) -> [f32; 8] {
    let anchors = Anchors::of(p, j);
    columns(
        anchors.separation,
        0.0,
        0.0,
        anchors.relative_velocity(v).length(),
        0.0,
    )
}
