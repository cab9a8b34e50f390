//! Joints: descriptions, structure-of-arrays storage, and the one dispatch site per verb.
//!
//! Every joint type is a module with the same two functions over the current poses:
//!
//! - `rows`: the scalar rows the joint imposes (geometry, position error, which are active).
//!   The prepare stage turns them into velocity rows; the projection stage recomputes them
//!   row by row and moves the poses back onto the joint manifold.
//! - `diagnose`: the eight diagnostic columns.
//!
//! Both are written once for lanes (`rows_lanes`, `diagnose_lanes`, generic over the lane
//! type, so the scalar path runs the same code on one lane); the scalar `rows` and `diagnose`
//! remain as test references.
//!
//! Warm start and the velocity solve act on prepared rows whatever the joint type (the
//! batches of `solver.rs`), so they need no per-type code.

pub(crate) mod agreement;
pub mod fixed;
pub mod prismatic;
pub mod revolute;
pub mod spherical;

use crate::bodies::{check_unit_quat, Bodies, BodyId, MAX_POSITION_COORDINATE, UNIT_TOLERANCE};
use crate::error::{EngineError, Result};
use crate::lanes::{
    atan2, gather_poses, gather_velocity_pairs, max, Lane, PairVelocities, PoseLanesOf, SolverPose,
    SolverVelocity, Wide, Q, V3, WIDE_LANES,
};
#[cfg(test)]
use crate::rows::{RowGeometry, RowSet};
use crate::rows::{RowGeometryLanes, MAX_ROWS_PER_JOINT};
use glam::{Quat, Vec3};
use serde::{Deserialize, Serialize};

/// Index of a joint in its world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JointId(pub u32);

impl JointId {
    /// The index as `usize`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The joint types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JointKind {
    /// Anchors coincide (3 rows), axes aligned (2 rows); optional angle limit (1 row).
    Revolute,
    /// Anchors coincide (3 rows).
    Spherical,
    /// Anchors coincide and relative orientation locked (3 + 3 rows).
    Fixed,
    /// Translation only along one axis (2 linear + 3 angular rows); optional translation limit.
    Prismatic,
}

impl JointKind {
    /// Every joint type.
    pub const ALL: [JointKind; 4] = [
        JointKind::Revolute,
        JointKind::Spherical,
        JointKind::Fixed,
        JointKind::Prismatic,
    ];

    /// Lower-case name as used in scene files.
    pub fn name(self) -> &'static str {
        match self {
            JointKind::Revolute => "revolute",
            JointKind::Spherical => "spherical",
            JointKind::Fixed => "fixed",
            JointKind::Prismatic => "prismatic",
        }
    }

    /// The unit of the joint coordinate and the limit violation (diagnostic columns 7 and
    /// 5): `"rad"` for a hinge's angle, `"m"` for a slider's travel, `"-"` where the joint
    /// has none (spherical, fixed: both columns 0).
    pub fn coordinate_unit(self) -> &'static str {
        match self {
            JointKind::Revolute => "rad",
            JointKind::Prismatic => "m",
            JointKind::Spherical | JointKind::Fixed => "-",
        }
    }
}

/// Description of a joint between two bodies. Anchors and axes are in each body's local frame.
#[derive(Debug, Clone, PartialEq)]
pub struct JointDesc {
    /// Unique name.
    pub name: String,
    /// Joint type.
    pub kind: JointKind,
    /// First body (may be static).
    pub body_a: BodyId,
    /// Second body.
    pub body_b: BodyId,
    /// Anchor point in A's frame, m.
    pub anchor_a: Vec3,
    /// Anchor point in B's frame, m.
    pub anchor_b: Vec3,
    /// Hinge or slide axis in A's frame (revolute, prismatic); normalised on insertion (kept
    /// as given when its length is already 1 to f32 precision).
    pub axis_a: Vec3,
    /// Hinge axis in B's frame (revolute).
    pub axis_b: Vec3,
    /// Limit `[lo, hi]` on the joint coordinate (rad for revolute, m for prismatic).
    pub limit: Option<[f32; 2]>,
    /// Orientation of B relative to A (`q_A^-1 q_B`) at which the joint coordinate is zero and
    /// a fixed or prismatic joint is at rest. `None`: taken from the poses when the joint is added.
    pub reference_rotation: Option<Quat>,
}

/// `axis / |axis|`: a hinge or slide axis as stored; as given when its length is already 1
/// within [`UNIT_TOLERANCE`], so that a stored axis passes through unchanged (as rotations do
/// in `check_unit_quat`; `Scene::from_world` relies on it).
pub(crate) fn unit_axis(axis: Vec3) -> Vec3 {
    // Scaled by its largest component first where its length overflows f32 (an axis of
    // 1e30 m was stored as zero, a hinge acting as a ball joint: QA 2026-12-07).
    let axis = if axis.length().is_finite() {
        axis
    } else {
        axis / axis.abs().max_element()
    };
    let length = axis.length();
    if (length - 1.0).abs() <= UNIT_TOLERANCE {
        axis
    } else {
        axis / length
    }
}

impl JointDesc {
    fn new(kind: JointKind, name: impl Into<String>, a: BodyId, b: BodyId) -> Self {
        JointDesc {
            name: name.into(),
            kind,
            body_a: a,
            body_b: b,
            anchor_a: Vec3::ZERO,
            anchor_b: Vec3::ZERO,
            axis_a: Vec3::Z,
            axis_b: Vec3::Z,
            limit: None,
            reference_rotation: None,
        }
    }
    /// A revolute (hinge) joint, axis +z by default.
    pub fn revolute(name: impl Into<String>, a: BodyId, b: BodyId) -> Self {
        Self::new(JointKind::Revolute, name, a, b)
    }
    /// A spherical (ball) joint.
    pub fn spherical(name: impl Into<String>, a: BodyId, b: BodyId) -> Self {
        Self::new(JointKind::Spherical, name, a, b)
    }
    /// A fixed (weld) joint: all six relative degrees of freedom locked. A body that never
    /// moves is [`crate::BodyDesc::fixed`] instead.
    #[doc(alias = "weld")]
    pub fn fixed(name: impl Into<String>, a: BodyId, b: BodyId) -> Self {
        Self::new(JointKind::Fixed, name, a, b)
    }
    /// A prismatic (slider) joint, axis +x by default.
    pub fn prismatic(name: impl Into<String>, a: BodyId, b: BodyId) -> Self {
        let mut j = Self::new(JointKind::Prismatic, name, a, b);
        j.axis_a = Vec3::X;
        j.axis_b = Vec3::X;
        j
    }
    /// Sets both local anchors, m.
    pub fn anchors(mut self, anchor_a: Vec3, anchor_b: Vec3) -> Self {
        self.anchor_a = anchor_a;
        self.anchor_b = anchor_b;
        self
    }
    /// Sets the same local axis on both bodies.
    pub fn axis(mut self, axis: Vec3) -> Self {
        self.axis_a = axis;
        self.axis_b = axis;
        self
    }
    /// Sets each body's local axis.
    pub fn axes(mut self, axis_a: Vec3, axis_b: Vec3) -> Self {
        self.axis_a = axis_a;
        self.axis_b = axis_b;
        self
    }
    /// Sets the limit `[lo, hi]` (rad or m).
    pub fn limit(mut self, lo: f32, hi: f32) -> Self {
        self.limit = Some([lo, hi]);
        self
    }
    /// Sets the reference relative orientation `q_A^-1 q_B`.
    pub fn reference_rotation(mut self, q: Quat) -> Self {
        self.reference_rotation = Some(q);
        self
    }
}

/// The two bodies' poses as a joint sees them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PosePair {
    pub position_a: Vec3,
    pub rotation_a: Quat,
    pub position_b: Vec3,
    pub rotation_b: Quat,
}

impl PosePair {
    /// The poses of bodies `a` and `b`.
    #[inline]
    pub fn of(bodies: &crate::bodies::Bodies, a: usize, b: usize) -> Self {
        PosePair {
            position_a: bodies.position[a],
            rotation_a: bodies.rotation[a],
            position_b: bodies.position[b],
            rotation_b: bodies.rotation[b],
        }
    }
}

#[cfg(test)]
/// The two bodies' velocities.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VelocityPair {
    pub linear_a: Vec3,
    pub angular_a: Vec3,
    pub linear_b: Vec3,
    pub angular_b: Vec3,
}

/// A joint's constant parameters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JointParams {
    pub anchor_a: Vec3,
    pub anchor_b: Vec3,
    pub axis_a: Vec3,
    pub axis_b: Vec3,
    pub reference: Quat,
    pub limit: Option<[f32; 2]>,
    /// Two unit vectors perpendicular to `axis_a` and each other, in A's frame
    /// (`axis_a.any_orthonormal_pair()`, computed once when the joint is added).
    pub perpendicular: [Vec3; 2],
}

#[cfg(test)]
/// World-frame anchor geometry shared by the joint types.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Anchors {
    /// `q_A anchor_a`: from A's centre to its anchor, m.
    pub r_a: Vec3,
    /// `q_B anchor_b`.
    pub r_b: Vec3,
    /// `p_B - p_A`: anchor on B minus anchor on A, m.
    pub separation: Vec3,
}

#[cfg(test)]
impl Anchors {
    pub fn of(p: &PosePair, j: &JointParams) -> Self {
        let r_a = p.rotation_a * j.anchor_a;
        let r_b = p.rotation_b * j.anchor_b;
        Anchors {
            r_a,
            r_b,
            separation: (p.position_b + r_b) - (p.position_a + r_a),
        }
    }

    /// Velocity of B's anchor relative to A's, m/s: `v_B + w_B x r_B - v_A - w_A x r_A`.
    pub fn relative_velocity(&self, v: &VelocityPair) -> Vec3 {
        v.linear_b + v.angular_b.cross(self.r_b) - v.linear_a - v.angular_a.cross(self.r_a)
    }

    #[cfg(test)]
    /// The three point rows `C_k = e_k . (p_B - p_A)` in slots 0..3.
    /// `Cdot = e.(v_B + w_B x r_B - v_A - w_A x r_A)`, so `J_wA = -(r_A x e)`, `J_wB = r_B x e`.
    pub fn point_rows(&self, rows: &mut RowSet) {
        for (slot, e) in [Vec3::X, Vec3::Y, Vec3::Z].into_iter().enumerate() {
            rows.set(
                slot,
                RowGeometry {
                    linear: e,
                    angular_a: -self.r_a.cross(e),
                    angular_b: self.r_b.cross(e),
                    error: self.separation.dot(e),
                    unilateral: false,
                },
            );
        }
    }
}

#[cfg(test)]
/// Orientation error of B against its reference, world frame: `q_B (q_A q_ref)^-1`, with
/// `w >= 0` so that it is the shorter rotation.
pub(crate) fn orientation_error(p: &PosePair, j: &JointParams) -> Quat {
    let q = p.rotation_b * (p.rotation_a * j.reference).inverse();
    if q.w < 0.0 {
        -q
    } else {
        q
    }
}

#[cfg(test)]
/// Rotation angle of a unit quaternion with `w >= 0`, rad in `[0, pi]`.
pub(crate) fn rotation_angle(q: Quat) -> f32 {
    2.0 * q.xyz().length().atan2(q.w.abs())
}

#[cfg(test)]
/// Three angular rows locking the relative orientation, in slots `first..first + 3`.
/// `C = 2 vec(q_err)` (the rotation vector for small errors), `Cdot = (w_B - w_A) . e_k`.
pub(crate) fn angular_lock_rows(p: &PosePair, j: &JointParams, rows: &mut RowSet, first: usize) {
    let c = 2.0 * orientation_error(p, j).xyz();
    for (k, e) in [Vec3::X, Vec3::Y, Vec3::Z].into_iter().enumerate() {
        rows.set(
            first + k,
            RowGeometry {
                linear: Vec3::ZERO,
                angular_a: -e,
                angular_b: e,
                error: c.dot(e),
                unilateral: false,
            },
        );
    }
}

/// A coordinate this close to a bound (rad or m) counts as having reached it: projection
/// leaves it at the bound give or take rounding, and the row must then stay active so that
/// the velocity solve keeps it there (without it a block resting on its stop kept its
/// velocity and gained 200 J in 3 s as projection pushed it back every substep).
pub(crate) const LIMIT_SLOP: f32 = 1e-5;

#[cfg(test)]
/// Row keeping a coordinate `x` (with Jacobian `g`, `xdot = J v`) inside `[lo, hi]`, while
/// the bound is crossed or reached (within [`LIMIT_SLOP`]).
/// Below `lo`: `C = x - lo >= 0` with `J`; above `hi`: `C = hi - x >= 0` with `-J`.
pub(crate) fn limit_row(x: f32, limit: [f32; 2], g: RowGeometry) -> Option<RowGeometry> {
    let [lo, hi] = limit;
    if x < lo + LIMIT_SLOP {
        Some(RowGeometry {
            error: x - lo,
            unilateral: true,
            ..g
        })
    } else if x > hi - LIMIT_SLOP {
        Some(RowGeometry {
            linear: -g.linear,
            angular_a: -g.angular_a,
            angular_b: -g.angular_b,
            error: hi - x,
            unilateral: true,
        })
    } else {
        None
    }
}

#[cfg(test)]
/// How far `x` is past `[lo, hi]`, 0 inside.
pub(crate) fn limit_violation(x: f32, limit: Option<[f32; 2]>) -> f32 {
    match limit {
        Some([lo, hi]) => (lo - x).max(x - hi).max(0.0),
        None => 0.0,
    }
}

/// [`limit_violation`] for every lane; `lo = -inf`, `hi = +inf` for lanes without a limit.
pub(crate) fn limit_violation_lanes<L: Lane>(x: L, lo: L, hi: L) -> L {
    max(max(lo - x, x - hi), L::splat(0.0))
}

/// [`orientation_error`] for every lane: `q_B (q_A q_ref)^-1` with `w >= 0`.
pub(crate) fn orientation_error_lanes<L: Lane>(p: &PoseLanes<L>, j: &ParamLanes<L>) -> Q<L> {
    let q = p
        .rotation_b
        .product(p.rotation_a.product(j.reference).conjugate());
    q.negate_where(L::splat(0.0).gt(q.w))
}

/// [`rotation_angle`] for every lane (`w >= 0`), rad.
pub(crate) fn rotation_angle_lanes<L: Lane>(q: Q<L>) -> L {
    L::splat(2.0) * atan2(q.vector().length(), crate::lanes::abs(q.w))
}

/// [`columns`] for every lane.
pub(crate) fn columns_lanes<L: Lane>(
    anchor_error: V3<L>,
    angular_error: L,
    limit_violation: L,
    anchor_speed: L,
    coordinate: L,
) -> [L; 8] {
    [
        anchor_error.x,
        anchor_error.y,
        anchor_error.z,
        anchor_error.length(),
        angular_error,
        limit_violation,
        anchor_speed,
        coordinate,
    ]
}

/// The poses of each lane's two bodies, for the lane-parallel row builders.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoseLanes<L> {
    pub position_a: V3<L>,
    pub rotation_a: Q<L>,
    pub position_b: V3<L>,
    pub rotation_b: Q<L>,
}

/// Each lane's joint parameters, for the lane-parallel row builders.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ParamLanes<L> {
    pub anchor_a: V3<L>,
    pub anchor_b: V3<L>,
    pub axis_a: V3<L>,
    pub axis_b: V3<L>,
    /// Two unit vectors perpendicular to `axis_a` (and each other), in A's frame.
    pub perpendicular_1: V3<L>,
    pub perpendicular_2: V3<L>,
    pub reference: Q<L>,
    /// The limit `[lo, hi]` (`-inf`, `+inf` without one).
    pub lo: L,
    pub hi: L,
}

impl<L: Lane> PoseLanes<L> {
    pub fn new() -> Self {
        PoseLanes {
            position_a: V3::zero(),
            rotation_a: Q::identity(),
            position_b: V3::zero(),
            rotation_b: Q::identity(),
        }
    }

    /// The poses of the A sides `a` and B sides `b` gathered as blocks
    /// ([`crate::lanes::gather_poses`]).
    #[inline(always)]
    pub(crate) fn from_sides(a: &PoseLanesOf<L>, b: &PoseLanesOf<L>) -> Self {
        PoseLanes {
            position_a: a.position,
            rotation_a: a.rotation,
            position_b: b.position,
            rotation_b: b.rotation,
        }
    }

    /// Sets lane `i`.
    pub fn set_lane(&mut self, i: usize, p: &PosePair) {
        self.position_a.set_lane(i, p.position_a);
        self.rotation_a.set_lane(i, p.rotation_a);
        self.position_b.set_lane(i, p.position_b);
        self.rotation_b.set_lane(i, p.rotation_b);
    }
}

impl<L: Lane> ParamLanes<L> {
    pub fn new() -> Self {
        let z = L::splat(0.0);
        ParamLanes {
            anchor_a: V3::zero(),
            anchor_b: V3::zero(),
            axis_a: V3::zero(),
            axis_b: V3::zero(),
            perpendicular_1: V3::zero(),
            perpendicular_2: V3::zero(),
            reference: Q::identity(),
            lo: z,
            hi: z,
        }
    }

    /// Sets lane `i` from a joint of type `kind` (only what that type's rows read).
    pub fn set_lane(&mut self, i: usize, kind: JointKind, j: &JointParams) {
        self.set_geometry(i, kind, j);
        if matches!(kind, JointKind::Revolute | JointKind::Prismatic) {
            self.perpendicular_1.set_lane(i, j.perpendicular[0]);
            self.perpendicular_2.set_lane(i, j.perpendicular[1]);
        }
    }

    /// Sets lane `i`'s anchors, axes, reference and limit (what the diagnostics read).
    pub fn set_geometry(&mut self, i: usize, kind: JointKind, j: &JointParams) {
        self.anchor_a.set_lane(i, j.anchor_a);
        self.anchor_b.set_lane(i, j.anchor_b);
        if matches!(kind, JointKind::Revolute | JointKind::Prismatic) {
            self.axis_a.set_lane(i, j.axis_a);
            self.axis_b.set_lane(i, j.axis_b);
        }
        if matches!(
            kind,
            JointKind::Revolute | JointKind::Fixed | JointKind::Prismatic
        ) {
            self.reference.set_lane(i, j.reference);
        }
        let [lo, hi] = j.limit.unwrap_or([f32::NEG_INFINITY, f32::INFINITY]);
        self.lo.set_lane(i, lo);
        self.hi.set_lane(i, hi);
    }
}

/// [`Anchors`] for every lane.
pub(crate) struct AnchorLanes<L> {
    pub r_a: V3<L>,
    pub r_b: V3<L>,
    pub separation: V3<L>,
}

impl<L: Lane> AnchorLanes<L> {
    pub fn of(p: &PoseLanes<L>, j: &ParamLanes<L>) -> Self {
        let r_a = p.rotation_a.rotate(j.anchor_a);
        let r_b = p.rotation_b.rotate(j.anchor_b);
        AnchorLanes {
            r_a,
            r_b,
            separation: (p.position_b + r_b) - (p.position_a + r_a),
        }
    }

    /// [`Anchors::relative_velocity`] for every lane, m/s.
    pub fn relative_velocity(&self, v: &PairVelocities<L>) -> V3<L> {
        v.linear_b + v.angular_b.cross(self.r_b) - v.linear_a - v.angular_a.cross(self.r_a)
    }

    /// `Jdot v` of the point rows, the anchors' relative centripetal acceleration
    /// `kappa = w_B x (w_B x r_B) - w_A x (w_A x r_A)`, m/s^2 (world frame): with the poses
    /// moved along constant velocities, `Cddot = kappa` of `C = p_B + r_B - p_A - r_A`.
    pub fn centripetal(&self, v: &PairVelocities<L>) -> V3<L> {
        v.angular_b.cross(v.angular_b.cross(self.r_b))
            - v.angular_a.cross(v.angular_a.cross(self.r_a))
    }

    /// The point rows' curvature offsets (slots 0..3, world axes): `h/2 kappa`
    /// ([`AnchorLanes::centripetal`]); `half_h` is `h/2`, s.
    pub fn point_curvature(
        &self,
        v: &PairVelocities<L>,
        half_h: L,
        rows: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
    ) {
        let kappa = self.centripetal(v).scale(half_h);
        rows[0].curvature = kappa.x;
        rows[1].curvature = kappa.y;
        rows[2].curvature = kappa.z;
    }

    /// [`Anchors::point_rows`] for every lane, in slots 0..3.
    pub fn point_rows(&self, rows: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT]) {
        for (slot, e) in [Vec3::X, Vec3::Y, Vec3::Z].into_iter().enumerate() {
            let e = V3::splat(e);
            rows[slot] = RowGeometryLanes::new(
                e,
                -self.r_a.cross(e),
                self.r_b.cross(e),
                self.separation.dot(e),
            );
        }
    }
}

/// [`angular_lock_rows`] for every lane, in slots `first..first + 3`.
pub(crate) fn angular_lock_rows_lanes<L: Lane>(
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    rows: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
    first: usize,
) {
    // q_B (q_A q_ref)^-1 with w >= 0 (the shorter rotation).
    let q = p
        .rotation_b
        .product(p.rotation_a.product(j.reference).conjugate());
    let zero = L::splat(0.0);
    let q = q.negate_where(zero.gt(q.w));
    let c = q.vector().scale(L::splat(2.0));
    for (k, e) in [Vec3::X, Vec3::Y, Vec3::Z].into_iter().enumerate() {
        let e = V3::splat(e);
        rows[first + k] = RowGeometryLanes::new(V3::zero(), -e, e, c.dot(e));
    }
}

/// [`limit_row`] for every lane: the row of coordinate `x` (Jacobian `g`) while at or past a
/// bound, a zero row elsewhere (within the slop of both bounds, a locked joint, the lower's).
pub(crate) fn limit_row_lanes<L: Lane>(
    x: L,
    lo: L,
    hi: L,
    g: &RowGeometryLanes<L>,
) -> RowGeometryLanes<L> {
    let slop = L::splat(LIMIT_SLOP);
    bound_row_lanes((lo + slop).gt(x), x.gt(hi - slop), x, lo, hi, g)
}

/// The lanes whose joint is locked: a stop range narrower than twice [`LIMIT_SLOP`]
/// (`lo == hi` locks a joint), so that the coordinate is within the slop of both bounds at
/// once. Their limit row is an equality ([`lower_limit_row_lanes`]).
pub(crate) fn locked_lanes<L: Lane>(j: &ParamLanes<L>) -> L::Mask {
    (j.lo + L::splat(2.0 * LIMIT_SLOP)).gt(j.hi)
}

/// Which stop a limit row `row` is against, from its Jacobian and the coordinate's
/// (`coordinate`, [`rows_lanes`]' returned row): `+1` the lower (the row is the coordinate's),
/// `-1` the upper (its negative), `0` a zero row.
pub(crate) fn stop_sign_lanes<L: Lane>(
    row: &RowGeometryLanes<L>,
    coordinate: &RowGeometryLanes<L>,
) -> L {
    let along = row.linear.dot(coordinate.linear)
        + row.angular_a.dot(coordinate.angular_a)
        + row.angular_b.dot(coordinate.angular_b);
    let (zero, one) = (L::splat(0.0), L::splat(1.0));
    L::select(along.gt(zero), one, L::select(zero.gt(along), -one, zero))
}

/// The row of the coordinate `x` (Jacobian and value `coordinate`) against the lower bound,
/// `C = x - lo` with `J`, in every lane: a locked joint's (`hi - lo` within twice the slop),
/// which prepare solves as an equality.
pub(crate) fn lower_limit_row_lanes<L: Lane>(
    coordinate: &RowGeometryLanes<L>,
    j: &ParamLanes<L>,
) -> RowGeometryLanes<L> {
    let g = coordinate;
    RowGeometryLanes::new(g.linear, g.angular_a, g.angular_b, g.error - j.lo)
}

/// The row of coordinate `x` (Jacobian `g`) against the lower bound where `below`, else
/// against the upper bound where `above`, else a zero row: `C = x - lo` with `J`, or
/// `C = hi - x` with `-J` (`C >= 0` inside).
fn bound_row_lanes<L: Lane>(
    below: L::Mask,
    above: L::Mask,
    x: L,
    lo: L,
    hi: L,
    g: &RowGeometryLanes<L>,
) -> RowGeometryLanes<L> {
    let lower = RowGeometryLanes::new(g.linear, g.angular_a, g.angular_b, x - lo);
    let upper = RowGeometryLanes::new(-g.linear, -g.angular_a, -g.angular_b, hi - x);
    let zero = RowGeometryLanes::zero();
    let above_only = RowGeometryLanes::select(above, &upper, &zero);
    RowGeometryLanes::select(below, &lower, &above_only)
}

/// [`limit_row_lanes`] at the coordinate's rate `xdot` before the solve
/// ([`coordinate_rate`]): the same rows, except where the
/// coordinate is within [`LIMIT_SLOP`] of both bounds (a stop range narrower than twice the
/// slop; `lo == hi` locks the joint), where the row is the stop's it moves into (`xdot > 0`:
/// the upper), not always the lower's, which let a locked hinge turned upward pass its stop by
/// a substep's motion (QA, 2026-12-06).
#[cfg(test)]
pub(crate) fn reached_limit_row_lanes<L: Lane>(
    coordinate: &RowGeometryLanes<L>,
    rate: L,
    j: &ParamLanes<L>,
) -> RowGeometryLanes<L> {
    let none = crate::lanes::no_lanes::<L>();
    held_limit_row_lanes(coordinate, rate, j, (none, none))
}

/// [`reached_limit_row_lanes`], where lanes held on a stop (`held`: on the lower, on the
/// upper; that stop pushed in the substep before) keep its row also when the coordinate has
/// drifted more than [`LIMIT_SLOP`] off it: separated (`C > 0`), the row gets the speculative
/// offset `C / h` and pushes only if the joint would pass the stop. Without this a joint held
/// on its stop by a growing load drifted out of the slop band, lost its row for a substep,
/// then counted as running into the stop (QA 2026-12-07: a pair spinning at 10 rad/s on a hinge's stop lost 25 % of its
/// energy in 10 s through that cycle).
pub(crate) fn held_limit_row_lanes<L: Lane>(
    coordinate: &RowGeometryLanes<L>,
    rate: L,
    j: &ParamLanes<L>,
    (held_lo, held_hi): (L::Mask, L::Mask),
) -> RowGeometryLanes<L> {
    let (x, slop) = (coordinate.error, L::splat(LIMIT_SLOP));
    let (at_lo, at_hi) = (
        L::or((j.lo + slop).gt(x), held_lo),
        L::or(x.gt(j.hi - slop), held_hi),
    );
    let rising = rate.gt(L::splat(0.0));
    let below = L::and(at_lo, L::not(L::and(at_hi, rising)));
    bound_row_lanes(below, at_hi, x, j.lo, j.hi, coordinate)
}

/// The limit row with speculative limits (`Settings::speculative_limits`): where a bound is
/// reached or crossed, [`reached_limit_row_lanes`]; everywhere else the row of the stop the
/// coordinate will be nearer to at the end of the substep (`x + h xdot` against the middle
/// of `[lo, hi]`), with `C > 0` the distance left (prepare turns that into the speculative
/// offset `C / h`: the solve lets the coordinate reach the stop and not pass it, whatever
/// velocity the solve itself gives it).
pub(crate) fn speculative_limit_row_lanes<L: Lane>(
    coordinate: &RowGeometryLanes<L>,
    rate: L,
    j: &ParamLanes<L>,
    h: L,
    (held_lo, held_hi): (L::Mask, L::Mask),
) -> RowGeometryLanes<L> {
    let (x, slop) = (coordinate.error, L::splat(LIMIT_SLOP));
    let (at_lo, at_hi) = ((j.lo + slop).gt(x), x.gt(j.hi - slop));
    let reached = L::or(at_lo, at_hi);
    let rising = rate.gt(L::splat(0.0));
    let toward_lo = ((j.lo + j.hi) * L::splat(0.5)).gt(x + h * rate);
    // Held on a stop (it pushed in the substep before): that stop's row, as without
    // speculative limits (QA 2026-12-07: in a narrow range the row jumped to the far stop once
    // the joint drifted past the middle, and a pair spinning on its stop lost 22 % in 10 s).
    // Else reached: as `reached_limit_row_lanes`; inside: the nearer stop at the substep's end.
    let unheld = L::and(L::not(held_lo), L::not(held_hi));
    let below = L::or(
        held_lo,
        L::and(
            unheld,
            L::or(
                L::and(reached, L::and(at_lo, L::not(L::and(at_hi, rising)))),
                L::and(L::not(reached), toward_lo),
            ),
        ),
    );
    bound_row_lanes(below, L::not(below), x, j.lo, j.hi, coordinate)
}

/// `xdot = J v` of the limit coordinate's row at the velocities `v`: computed once per batch
/// in prepare, read by the limit row's choice and the impact test.
pub(crate) fn coordinate_rate<L: Lane>(
    coordinate: &RowGeometryLanes<L>,
    v: &PairVelocities<L>,
) -> L {
    coordinate.linear.dot(v.linear_b - v.linear_a)
        + coordinate.angular_a.dot(v.angular_a)
        + coordinate.angular_b.dot(v.angular_b)
}

/// The lanes whose limited coordinate moves into a stop that it reaches within the substep
/// `h` at its rate `xdot` before the solve ([`coordinate_rate`]): an impact. `coordinate` is
/// the row [`rows_lanes`] returns (Jacobian and value `x` of the coordinate the limit reads);
/// an impact is `xdot < 0` with `x + h xdot` below `lo`, or `xdot > 0`
/// with it above `hi` (each within [`LIMIT_SLOP`]). Such joints get no curvature offsets (see
/// `JointBatch::prepare`).
pub(crate) fn limit_impact_lanes<L: Lane>(
    coordinate: &RowGeometryLanes<L>,
    rate: L,
    j: &ParamLanes<L>,
    h: L,
) -> L::Mask {
    let zero = L::splat(0.0);
    let slop = L::splat(LIMIT_SLOP);
    let next = coordinate.error + h * rate;
    L::or(
        L::and(zero.gt(rate), (j.lo + slop).gt(next)),
        L::and(rate.gt(zero), next.gt(j.hi - slop)),
    )
}

/// The rows of each lane's joint of type `kind` (the same in every lane), zero where a row
/// is inactive: the lane-parallel form of [`rows`]. Returns the row of the coordinate a limit
/// reads (its Jacobian, `error` the coordinate; see [`limit_impact_lanes`]) where `limited`,
/// a zero row otherwise.
pub(crate) fn rows_lanes<L: Lane>(
    kind: JointKind,
    limited: bool,
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    out: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
) -> RowGeometryLanes<L> {
    match kind {
        JointKind::Revolute => revolute::rows_lanes(p, j, limited, out),
        JointKind::Prismatic => prismatic::rows_lanes(p, j, limited, out),
        JointKind::Spherical => {
            spherical::rows_lanes(p, j, out);
            RowGeometryLanes::zero()
        }
        JointKind::Fixed => {
            fixed::rows_lanes(p, j, out);
            RowGeometryLanes::zero()
        }
    }
}

/// The curvature offsets `h/2 Jdot v` of the rows [`rows_lanes`] built (`half_h` = `h/2`, s;
/// `v`: the bodies' velocities before the substep's solve), into `out[slot].curvature`.
///
/// Why: a velocity row aiming for `J v = 0` makes the velocity tangent to the constraint's
/// path at the substep's start; moved along that tangent for `h`, the bodies leave the path
/// by `h^2/2 Jdot v` (a pendulum's bob drifts outwards), which projection takes back out of
/// the poses but not out of the velocity, so the next substep's solve removes the velocity's
/// outward part: kinetic energy lost at first order in `h` (12 % of a 1 rad pendulum's swing
/// energy in 10 s at 1/240 s substeps). Aiming for `J v = -h/2 Jdot v` moves the bodies along
/// the chord instead (`C(t + h) = C + h J v + h^2/2 Jdot v + O(h^3)`), and the solve at the
/// next substep only turns the velocity, without shortening it. `Jdot v` is evaluated at the
/// velocities before the solve (the chord's own velocities differ by `O(h)`: an `O(h^3)`
/// error in `C`).
///
/// Rows whose `Jdot v` vanishes where the constraint holds get none: the angular locks (`Jdot
/// v` is `(w_A + w_B) x (w_B - w_A) / 2`, zero once the relative rotation is stopped) and the
/// limits (unilateral; a decoupled limit row still carries the bilateral rows' offsets mixed
/// into it). Exactness of each formula is tested against a second difference of `C` along
/// the bodies' free motion.
pub(crate) fn curvature_lanes<L: Lane>(
    kind: JointKind,
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    v: &PairVelocities<L>,
    half_h: L,
    out: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
) {
    match kind {
        JointKind::Revolute => revolute::curvature_lanes(p, j, v, half_h, out),
        JointKind::Spherical => spherical::curvature_lanes(p, j, v, half_h, out),
        JointKind::Fixed => fixed::curvature_lanes(p, j, v, half_h, out),
        JointKind::Prismatic => prismatic::curvature_lanes(p, j, v, half_h, out),
    }
}

/// `Jdot v` of the coordinate a limit reads ([`rows_lanes`]' returned row) at the velocities
/// `v`: the curvature offset of a stop a joint is held on (scaled and signed by prepare).
/// Zero for joint types without limits.
pub(crate) fn limit_curvature_lanes<L: Lane>(
    kind: JointKind,
    p: &PoseLanes<L>,
    j: &ParamLanes<L>,
    v: &PairVelocities<L>,
) -> L {
    match kind {
        JointKind::Revolute => revolute::limit_curvature_lanes(p, j, v),
        JointKind::Prismatic => prismatic::limit_curvature_lanes(p, j, v),
        JointKind::Spherical | JointKind::Fixed => L::splat(0.0),
    }
}

/// Structure-of-arrays joint storage.
#[derive(Debug, Clone, Default)]
pub struct Joints {
    pub(crate) name: Vec<String>,
    /// Index of each name (names are unique), so that adding n joints costs O(n).
    pub(crate) by_name: std::collections::HashMap<String, u32>,
    pub(crate) kind: Vec<JointKind>,
    pub(crate) body_a: Vec<u32>,
    pub(crate) body_b: Vec<u32>,
    pub(crate) anchor_a: Vec<Vec3>,
    pub(crate) anchor_b: Vec<Vec3>,
    pub(crate) axis_a: Vec<Vec3>,
    pub(crate) axis_b: Vec<Vec3>,
    pub(crate) reference: Vec<Quat>,
    pub(crate) limit: Vec<Option<[f32; 2]>>,
    /// See [`JointParams::perpendicular`].
    pub(crate) perpendicular: Vec<[Vec3; 2]>,
    /// Accumulated impulse per row slot from the last substep (warm start), N s or N m s.
    pub(crate) impulse: Vec<[f32; MAX_ROWS_PER_JOINT]>,
    /// Constraint force on B over the last substep, N.
    pub(crate) force_on_b: Vec<Vec3>,
    /// Constraint torque on A about its centre of mass, N m.
    pub(crate) torque_on_a: Vec<Vec3>,
    /// Constraint torque on B about its centre of mass, N m.
    pub(crate) torque_on_b: Vec<Vec3>,
    /// The diagnostics' constant inputs, eight joints to a group (kept up to date by `push`).
    pub(crate) diagnose_groups: Vec<DiagnoseGroup>,
}

impl Joints {
    /// Number of joints.
    pub fn len(&self) -> usize {
        self.name.len()
    }
    /// True when there are no joints.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }
    /// Index of the joint named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).map(|&i| i as usize)
    }
    /// Local anchors `(anchor_a, anchor_b)` of joint `j`, m, in each body's frame.
    pub fn anchors_of(&self, j: usize) -> (Vec3, Vec3) {
        (self.anchor_a[j], self.anchor_b[j])
    }
    /// Local axes `(axis_a, axis_b)` of joint `j` (unit length for revolute and prismatic).
    pub fn axes_of(&self, j: usize) -> (Vec3, Vec3) {
        (self.axis_a[j], self.axis_b[j])
    }
    /// Reference relative orientation `q_A^-1 q_B` of joint `j`.
    pub fn reference_of(&self, j: usize) -> Quat {
        self.reference[j]
    }
    /// Joint names in index order.
    pub fn names(&self) -> &[String] {
        &self.name
    }
    /// Joint kinds in index order.
    pub fn kinds(&self) -> &[JointKind] {
        &self.kind
    }
    /// The two bodies of joint `j`.
    pub fn bodies_of(&self, j: usize) -> (BodyId, BodyId) {
        (BodyId(self.body_a[j]), BodyId(self.body_b[j]))
    }
    /// Limit of joint `j`, if any.
    pub fn limit_of(&self, j: usize) -> Option<[f32; 2]> {
        self.limit[j]
    }

    pub(crate) fn params(&self, j: usize) -> JointParams {
        JointParams {
            anchor_a: self.anchor_a[j],
            anchor_b: self.anchor_b[j],
            axis_a: self.axis_a[j],
            axis_b: self.axis_b[j],
            reference: self.reference[j],
            limit: self.limit[j],
            perpendicular: self.perpendicular[j],
        }
    }

    /// Validates `desc` and appends it. `rot_a`, `rot_b` are the bodies' current orientations
    /// (for the default reference rotation).
    /// Copies the forces (`force_on_b`, `torque_on_a`, `torque_on_b`) into `to`.
    pub(crate) fn save_forces(&self, to: &mut [Vec<Vec3>; 3]) {
        to[0].clone_from(&self.force_on_b);
        to[1].clone_from(&self.torque_on_a);
        to[2].clone_from(&self.torque_on_b);
    }

    /// Puts back forces saved by [`Joints::save_forces`].
    pub(crate) fn restore_forces(&mut self, from: &[Vec<Vec3>; 3]) {
        self.force_on_b.clone_from(&from[0]);
        self.torque_on_a.clone_from(&from[1]);
        self.torque_on_b.clone_from(&from[2]);
    }

    pub(crate) fn push(&mut self, desc: &JointDesc, rot_a: Quat, rot_b: Quat) -> Result<JointId> {
        let bad = |reason: String| EngineError::InvalidJoint {
            joint: desc.name.clone(),
            reason,
        };
        if desc.name.is_empty() {
            return Err(EngineError::InvalidJoint {
                joint: "<unnamed>".into(),
                reason: "every joint needs a non-empty name".into(),
            });
        }
        if let Some(reason) = crate::bodies::name_problem(&desc.name) {
            return Err(EngineError::InvalidJoint {
                joint: desc.name.escape_debug().to_string(),
                reason,
            });
        }
        if self.by_name.contains_key(&desc.name) {
            return Err(bad(
                "another joint already has this name; names must be unique".into(),
            ));
        }
        for (what, v) in [("anchor_a", desc.anchor_a), ("anchor_b", desc.anchor_b)] {
            if !v.is_finite() {
                return Err(bad(format!("{what} {:?} is not finite", v.to_array())));
            }
            // As far as a body's position may be (an anchor of 1e30 m teleported its body
            // there in a step and read an infinite anchor error: QA 2026-12-07).
            if v.abs().max_element() > MAX_POSITION_COORDINATE {
                return Err(bad(format!(
                    "{what} {:?} m is more than {MAX_POSITION_COORDINATE:e} m from its body's \
                     centre, where single precision resolves nothing of a joint: give the \
                     anchor in the body's frame, in metres",
                    v.to_array()
                )));
            }
        }
        let needs_axis = matches!(desc.kind, JointKind::Revolute | JointKind::Prismatic);
        let mut axes = [desc.axis_a, desc.axis_b];
        if needs_axis {
            for (what, v) in ["axis_a", "axis_b"].into_iter().zip(axes.iter_mut()) {
                if !v.is_finite() || v.length() < 1e-6 {
                    return Err(bad(format!(
                        "{what} {:?} is not a usable direction: give a finite, non-zero axis",
                        v.to_array()
                    )));
                }
                *v = unit_axis(*v);
            }
        }
        if let Some([lo, hi]) = desc.limit {
            if !matches!(desc.kind, JointKind::Revolute | JointKind::Prismatic) {
                return Err(bad(format!(
                    "a {} joint has no coordinate to limit; limits apply to revolute and \
                     prismatic joints",
                    desc.kind.name()
                )));
            }
            if !(lo.is_finite() && hi.is_finite()) {
                return Err(bad(format!("limit [{lo}, {hi}] is not finite")));
            }
            if lo > hi {
                return Err(bad(format!(
                    "limit [{lo}, {hi}] has lo > hi: give the lower bound first"
                )));
            }
            if desc.kind == JointKind::Revolute
                && (lo < -std::f32::consts::PI || hi > std::f32::consts::PI)
            {
                // Degrees are the likely slip (QA 2026-12-08: `[-90, 90]`).
                let degrees = if lo.abs() <= 360.0 && hi.abs() <= 360.0 {
                    format!(
                        "; if these are degrees, in radians they are [{:.4}, {:.4}]",
                        lo.to_radians(),
                        hi.to_radians()
                    )
                } else {
                    String::new()
                };
                return Err(bad(format!(
                    "revolute limit [{lo}, {hi}] rad leaves [-pi, pi]: the angle is measured in \
                     (-pi, pi]{degrees}"
                )));
            }
        }
        let reference = match desc.reference_rotation {
            Some(q) => check_unit_quat(q).map_err(|e| bad(format!("reference_rotation: {e}")))?,
            None if desc.kind == JointKind::Revolute => {
                hinge_reference((rot_a.inverse() * rot_b).normalize(), axes, desc.anchor_b)
            }
            None => (rot_a.inverse() * rot_b).normalize(),
        };
        let id = JointId(self.len() as u32);
        self.by_name.insert(desc.name.clone(), id.0);
        self.name.push(desc.name.clone());
        self.kind.push(desc.kind);
        self.body_a.push(desc.body_a.0);
        self.body_b.push(desc.body_b.0);
        self.anchor_a.push(desc.anchor_a);
        self.anchor_b.push(desc.anchor_b);
        self.axis_a.push(axes[0]);
        self.axis_b.push(axes[1]);
        let (t1, t2) = axes[0].any_orthonormal_pair();
        self.perpendicular.push([t1, t2]);
        self.reference.push(reference);
        self.limit.push(desc.limit);
        self.impulse.push([0.0; MAX_ROWS_PER_JOINT]);
        self.force_on_b.push(Vec3::ZERO);
        self.torque_on_a.push(Vec3::ZERO);
        self.torque_on_b.push(Vec3::ZERO);
        let j = id.index();
        if j.is_multiple_of(WIDE_LANES) {
            self.diagnose_groups.push(DiagnoseGroup::new());
        }
        let params = self.params(j);
        let group = self.diagnose_groups.last_mut().expect("pushed above");
        group.push(
            j % WIDE_LANES,
            desc.kind,
            desc.body_a.0,
            desc.body_b.0,
            &params,
        );
        Ok(id)
    }
}

/// Eight consecutive joints' constant diagnostic inputs as lanes: the body indices and the
/// geometry that [`diagnose_lanes`] reads (the group of joints `8g..8g + 8` is
/// `Joints::diagnose_groups[g]`). Built once as joints are added, so refreshing the
/// diagnostics gathers only the bodies' state (measured: the per-joint gather of the
/// parameters was a third of [`World::sync`](crate::World::sync) on the 100 x 100 chain).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DiagnoseGroup {
    /// The type of every joint of the group, or `None` when the group mixes types (then
    /// each joint is diagnosed on its own).
    kind: Option<JointKind>,
    /// Joints in the group (8 but for the last group).
    len: usize,
    body_a: [u32; WIDE_LANES],
    body_b: [u32; WIDE_LANES],
    geometry: ParamLanes<Wide>,
}

/// Bytes of one [`DiagnoseGroup`] (eight joints).
pub(crate) fn diagnose_group_bytes() -> usize {
    std::mem::size_of::<DiagnoseGroup>()
}

impl DiagnoseGroup {
    fn new() -> Self {
        DiagnoseGroup {
            kind: None,
            len: 0,
            body_a: [0; WIDE_LANES],
            body_b: [0; WIDE_LANES],
            geometry: ParamLanes::new(),
        }
    }

    /// Adds the joint of lane `lane` (the next one).
    fn push(&mut self, lane: usize, kind: JointKind, a: u32, b: u32, params: &JointParams) {
        debug_assert_eq!(lane, self.len);
        self.kind = match (lane, self.kind) {
            (0, _) => Some(kind),
            (_, Some(k)) if k == kind => Some(k),
            _ => None,
        };
        self.len += 1;
        self.body_a[lane] = a;
        self.body_b[lane] = b;
        self.geometry.set_geometry(lane, kind, params);
    }
}

#[cfg(test)]
/// Dispatch: the rows of a joint of `kind` at poses `p`.
pub(crate) fn rows(kind: JointKind, p: &PosePair, j: &JointParams) -> RowSet {
    match kind {
        JointKind::Revolute => revolute::rows(p, j),
        JointKind::Spherical => spherical::rows(p, j),
        JointKind::Fixed => fixed::rows(p, j),
        JointKind::Prismatic => prismatic::rows(p, j),
    }
}

/// Below this `axis_a . (q_rel axis_b)` a hinge's axes count as misaligned at its creation
/// (1.4e-3 rad): its default reference is then turned onto them ([`hinge_reference`]); a
/// slider's `axis_b` is then not its slide axis (`World::slider_axis_warning`).
pub(crate) const AXES_ALIGNED: f32 = 1.0 - 1e-6;

/// A hinge's default reference (the relative orientation `q_A^-1 q_B` where its angle is 0)
/// from the relative orientation `q_rel` at its creation: `q_rel` itself where the axes are
/// aligned there, else `q_rel` turned by the shortest rotation that takes B's axis onto A's
/// (by pi about the line from the anchor to B's centre where they are opposed, as the axis
/// rows turn B there). The angle is a twist about the axis measured from the reference, so the reference
/// must have the axes aligned: QA 2026-12-07, an arm modelled upside down with a limit was
/// turned over by the axis rows and then read as a pi turn across the hinge, its angle
/// undefined, its limit pushing it apart (1.2 m of anchor error). The aligned pose nearest
/// the one built reads 0.
fn hinge_reference(q_rel: Quat, [axis_a, axis_b]: [Vec3; 2], anchor_b: Vec3) -> Quat {
    let b_in_a = q_rel * axis_b;
    if axis_a.dot(b_in_a) >= AXES_ALIGNED {
        return q_rel;
    }
    let swing = if axis_a.dot(b_in_a) <= -AXES_ALIGNED {
        // The half turn the axis rows give it (`revolute::opposed_turn_axis`), in A's frame.
        let fallback = axis_a.cross(axis_a.any_orthonormal_pair().0).normalize();
        let across = revolute::opposed_turn_axis(axis_a, -(q_rel * anchor_b), fallback);
        Quat::from_axis_angle(across, std::f32::consts::PI)
    } else {
        Quat::from_rotation_arc(b_in_a, axis_a)
    };
    (swing * q_rel).normalize()
}

#[cfg(test)]
/// Dispatch: the eight diagnostic columns of a joint of `kind` (the scalar reference of
/// [`diagnose_lanes`]).
pub(crate) fn diagnose(
    kind: JointKind,
    p: &PosePair,
    v: &VelocityPair,
    j: &JointParams,
) -> [f32; 8] {
    match kind {
        JointKind::Revolute => revolute::diagnose(p, v, j),
        JointKind::Spherical => spherical::diagnose(p, v, j),
        JointKind::Fixed => fixed::diagnose(p, v, j),
        JointKind::Prismatic => prismatic::diagnose(p, v, j),
    }
}

/// Dispatch: the eight diagnostic columns of every lane's joint, all of type `kind`.
pub(crate) fn diagnose_lanes<L: Lane>(
    kind: JointKind,
    p: &PoseLanes<L>,
    v: &PairVelocities<L>,
    j: &ParamLanes<L>,
) -> [L; 8] {
    match kind {
        JointKind::Revolute => revolute::diagnose_lanes(p, v, j),
        JointKind::Spherical => spherical::diagnose_lanes(p, v, j),
        JointKind::Fixed => fixed::diagnose_lanes(p, v, j),
        JointKind::Prismatic => prismatic::diagnose_lanes(p, v, j),
    }
}

/// The diagnostics of the joints of group `g` (`joints.diagnose_groups[g]`, joints `8g..`)
/// into `out` (one row per joint of the group): in lanes from the group's packed geometry,
/// the bits of [`diagnose_joint`] (the same lane arithmetic on the same inputs). The bodies'
/// state is read from `bodies` lane by lane, or, given `blocks` (the solver's pose and
/// velocity blocks, which hold the bodies' values right after a substep), by transposes.
pub(crate) fn diagnose_packed_group(
    bodies: &Bodies,
    blocks: Option<(&[SolverPose], &[SolverVelocity])>,
    joints: &Joints,
    g: usize,
    out: &mut [[f32; 8]],
) {
    let group = &joints.diagnose_groups[g];
    debug_assert_eq!(out.len(), group.len);
    let Some(kind) = group.kind else {
        for (k, row) in out.iter_mut().enumerate() {
            *row = diagnose_joint(bodies, joints, g * WIDE_LANES + k);
        }
        return;
    };
    let Some((poses, velocities)) = blocks else {
        let pairs = (0..group.len).map(|lane| (group.body_a[lane], group.body_b[lane]));
        return diagnose_pairs::<Wide>(bodies, kind, pairs, &group.geometry, out);
    };
    // Lanes past the group's joints read body 0 (a joint exists, so a body does); their
    // columns are not written out.
    let (a, b) = (&group.body_a, &group.body_b);
    let p = PoseLanes::from_sides(
        &gather_poses::<Wide>(|k| poses[k], a),
        &gather_poses::<Wide>(|k| poses[k], b),
    );
    let v = gather_velocity_pairs::<Wide>(|k| velocities[k], a, b);
    write_rows::<Wide>(diagnose_lanes(kind, &p, &v, &group.geometry), out);
}

/// One row of eight columns per lane into `out` (a transpose: data movement only).
fn write_rows<L: Lane>(columns: [L; 8], out: &mut [[f32; 8]]) {
    let rows = L::transpose_out(columns);
    for (row, lane) in out.iter_mut().zip(rows.as_ref()) {
        *row = lane.0;
    }
}

/// The diagnostics of `out.len()` joints of type `kind` between the body pairs `pairs`
/// (one per lane), with parameters `params`: the bodies' state gathered into lanes,
/// [`diagnose_lanes`], then one row of eight columns per lane (a transpose: data movement
/// only).
fn diagnose_pairs<L: Lane>(
    bodies: &Bodies,
    kind: JointKind,
    pairs: impl Iterator<Item = (u32, u32)>,
    params: &ParamLanes<L>,
    out: &mut [[f32; 8]],
) {
    let mut p = PoseLanes::<L>::new();
    let mut v = PairVelocities::<L>::zero();
    for (lane, (a, b)) in pairs.enumerate() {
        let (a, b) = (a as usize, b as usize);
        p.set_lane(lane, &PosePair::of(bodies, a, b));
        v.set_lane(
            lane,
            (bodies.linear_velocity[a], bodies.angular_velocity[a]),
            (bodies.linear_velocity[b], bodies.angular_velocity[b]),
        );
    }
    write_rows::<L>(diagnose_lanes(kind, &p, &v, params), out);
}

/// The diagnostics of joint `j` alone, on one `f32` lane: the reference for any grouping
/// (every lane type runs the same arithmetic, so a joint's columns have these bits however
/// the joints are grouped), and the path of groups that mix joint types.
pub(crate) fn diagnose_joint(bodies: &Bodies, joints: &Joints, j: usize) -> [f32; 8] {
    let kind = joints.kind[j];
    let mut params = ParamLanes::<f32>::new();
    params.set_geometry(0, kind, &joints.params(j));
    let mut out = [[0.0; 8]];
    let pair = std::iter::once((joints.body_a[j], joints.body_b[j]));
    diagnose_pairs(bodies, kind, pair, &params, &mut out);
    out[0]
}

#[cfg(test)]
/// Packs the eight columns in their documented order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn columns(
    anchor_error: Vec3,
    angular_error: f32,
    limit_violation: f32,
    anchor_speed: f32,
    coordinate: f32,
) -> [f32; 8] {
    [
        anchor_error.x,
        anchor_error.y,
        anchor_error.z,
        anchor_error.length(),
        angular_error,
        limit_violation,
        anchor_speed,
        coordinate,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::Wide;
    use crate::rows::LIMIT_SLOT;

    /// A deterministic pseudo-random stream in [-1, 1).
    fn stream(mut state: u64) -> impl FnMut() -> f32 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        }
    }

    fn perpendicular(axis: Vec3) -> [Vec3; 2] {
        let (t1, t2) = axis.any_orthonormal_pair();
        [t1, t2]
    }

    fn random_vec(r: &mut impl FnMut() -> f32) -> Vec3 {
        Vec3::new(r(), r(), r())
    }

    fn random_quat(r: &mut impl FnMut() -> f32) -> Quat {
        Quat::from_xyzw(r(), r(), r(), r() + 1.5).normalize()
    }

    /// Two bodies at random poses.
    fn random_pair(r: &mut impl FnMut() -> f32) -> PosePair {
        PosePair {
            position_a: random_vec(r),
            rotation_a: random_quat(r),
            position_b: random_vec(r),
            rotation_b: random_quat(r),
        }
    }

    /// A joint with random anchors, axis (the same in both bodies) and reference; no limit.
    fn random_params(r: &mut impl FnMut() -> f32) -> JointParams {
        let axis = Vec3::new(r(), r(), r() + 2.0).normalize();
        JointParams {
            anchor_a: random_vec(r),
            anchor_b: random_vec(r),
            axis_a: axis,
            axis_b: axis,
            reference: random_quat(r),
            limit: None,
            perpendicular: perpendicular(axis),
        }
    }

    #[test]
    fn lane_diagnostics_equal_the_scalar_joint_code_and_are_the_same_bits_on_both_paths() {
        // Every joint type at random poses and velocities, lanes with and without limits
        // mixed: each wide lane has exactly the bits of the one-lane (scalar path) code, and
        // is within 4e-6 (1 + |value|) of the scalar reference `diagnose` (libm's atan2 and
        // glam's rotation order against the lane code's).
        let mut r = stream(0x243f_6a88_85a3_08d3);
        let mut worst = 0.0f32;
        for kind in JointKind::ALL {
            let mut poses = PoseLanes::<Wide>::new();
            let mut velocities = PairVelocities::<Wide>::zero();
            let mut params = ParamLanes::<Wide>::new();
            let mut cases = Vec::new();
            for lane in 0..8 {
                let pair = random_pair(&mut r);
                let v = VelocityPair {
                    linear_a: random_vec(&mut r),
                    angular_a: random_vec(&mut r),
                    linear_b: random_vec(&mut r),
                    angular_b: random_vec(&mut r),
                };
                let mut j = random_params(&mut r);
                // Narrow limits, so that most limited lanes are violated.
                j.limit = (lane % 2 == 1).then(|| [0.1 * r(), 0.1 * r() + 0.05]);
                poses.set_lane(lane, &pair);
                velocities.set_lane(lane, (v.linear_a, v.angular_a), (v.linear_b, v.angular_b));
                params.set_geometry(lane, kind, &j);
                cases.push((pair, v, j));
            }
            let wide = diagnose_lanes(kind, &poses, &velocities, &params);
            let mut violated = 0;
            for (lane, (pair, v, j)) in cases.iter().enumerate() {
                let (mut p1, mut v1, mut j1) =
                    (PoseLanes::new(), PairVelocities::zero(), ParamLanes::new());
                p1.set_lane(0, pair);
                v1.set_lane(0, (v.linear_a, v.angular_a), (v.linear_b, v.angular_b));
                j1.set_geometry(0, kind, j);
                let one: [f32; 8] = diagnose_lanes(kind, &p1, &v1, &j1);
                let reference = diagnose(kind, pair, v, j);
                for c in 0..8 {
                    let got = wide[c].lane(lane);
                    assert_eq!(
                        got.to_bits(),
                        one[c].to_bits(),
                        "{kind:?} lane {lane} col {c}"
                    );
                    let err = (got - reference[c]).abs() / (1.0 + reference[c].abs());
                    worst = worst.max(err);
                    assert!(
                        err <= 4e-6,
                        "{kind:?} lane {lane} column {c}: {got} vs reference {}",
                        reference[c]
                    );
                }
                violated += usize::from(reference[5] > 0.0);
            }
            if matches!(kind, JointKind::Revolute | JointKind::Prismatic) {
                assert!(
                    violated >= 2,
                    "{kind:?}: only {violated} lanes past a limit"
                );
            }
        }
        assert!(
            worst > 0.0,
            "the lane code should not be the reference code itself"
        );
    }

    /// A hinge about z or a slider along x limited to `[-0.2, 0.2]`, lane by lane: each lane at
    /// coordinate `x0` moving at `rate` (rad/s or m/s).
    struct LimitedLanes<L: Lane> {
        poses: PoseLanes<L>,
        velocities: PairVelocities<L>,
        params: ParamLanes<L>,
    }

    impl<L: Lane> LimitedLanes<L> {
        fn new() -> Self {
            LimitedLanes {
                poses: PoseLanes::new(),
                velocities: PairVelocities::zero(),
                params: ParamLanes::new(),
            }
        }

        fn set(&mut self, lane: usize, kind: JointKind, x0: f32, rate: f32) {
            let hinge = kind == JointKind::Revolute;
            let axis = if hinge { Vec3::Z } else { Vec3::X };
            let j = JointParams {
                anchor_a: Vec3::ZERO,
                anchor_b: Vec3::ZERO,
                axis_a: axis,
                axis_b: axis,
                reference: Quat::IDENTITY,
                limit: Some([-0.2, 0.2]),
                perpendicular: perpendicular(axis),
            };
            let (rotation_b, position_b, moving) = if hinge {
                let turning = (Vec3::ZERO, Vec3::new(0.0, 0.0, rate));
                (Quat::from_rotation_z(x0), Vec3::ZERO, turning)
            } else {
                let sliding = (Vec3::new(rate, 0.0, 0.0), Vec3::ZERO);
                (Quat::IDENTITY, Vec3::new(x0, 0.0, 0.0), sliding)
            };
            let pair = PosePair {
                position_a: Vec3::ZERO,
                rotation_a: Quat::IDENTITY,
                position_b,
                rotation_b,
            };
            self.poses.set_lane(lane, &pair);
            self.velocities
                .set_lane(lane, (Vec3::ZERO, Vec3::ZERO), moving);
            self.params.set_geometry(lane, kind, &j);
        }

        /// The limit coordinate's row ([`rows_lanes`]) and the rows.
        fn rows(
            &self,
            kind: JointKind,
        ) -> (
            RowGeometryLanes<L>,
            [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
        ) {
            let mut rows = [RowGeometryLanes::zero(); MAX_ROWS_PER_JOINT];
            let coordinate = rows_lanes(kind, true, &self.poses, &self.params, &mut rows);
            (coordinate, rows)
        }
    }

    /// A limited coordinate's impact within the substep: a hinge about z and a slider along x,
    /// each at `x0` in `[-0.2, 0.2]` moving at `rate` (rad/s or m/s, B's velocity, A at rest),
    /// over `h` = 1/240 s, from the coordinate row `rows_lanes` returns; the same answers in
    /// every lane and on one lane.
    #[test]
    fn an_impact_is_a_stop_reached_within_the_substep_moving_into_it() {
        let h = 1.0 / 240.0;
        // (x0, rate, impact): clear; into the upper stop within h (0.15 + 14/240 = 0.208);
        // short of it (0.15 + 11/240 = 0.196); moving away from it; resting on it (rate 0);
        // pressed into the lower one from on it; past it moving back out.
        let cases = [
            (0.0, 0.0, false),
            (0.15, 14.0, true),
            (0.15, 11.0, false),
            (0.15, -14.0, false),
            (0.2, 0.0, false),
            (-0.2, -0.5, true),
            (-0.25, 3.0, false),
        ];
        for kind in [JointKind::Revolute, JointKind::Prismatic] {
            let mut wide = LimitedLanes::<Wide>::new();
            for (lane, &(x0, rate, impact)) in cases.iter().enumerate() {
                wide.set(lane, kind, x0, rate);
                let mut one = LimitedLanes::<f32>::new();
                one.set(0, kind, x0, rate);
                let (coordinate, _) = one.rows(kind);
                let rate = coordinate_rate(&coordinate, &one.velocities);
                let hit = limit_impact_lanes(&coordinate, rate, &one.params, h);
                assert_eq!(hit, impact, "{kind:?} at {x0}, {rate}/s");
            }
            let (coordinate, _) = wide.rows(kind);
            let rate = coordinate_rate(&coordinate, &wide.velocities);
            let hits = limit_impact_lanes(&coordinate, rate, &wide.params, Wide::splat(h));
            let expected = (cases.iter().enumerate())
                .filter(|(_, c)| c.2)
                .fold(0u32, |bits, (lane, _)| bits | 1 << lane);
            assert_eq!(Wide::mask_bits(hits) & 0x7f, expected, "{kind:?}");
        }
        // A joint type without a limit returns a zero row: no impact.
        let mut rows = [RowGeometryLanes::zero(); MAX_ROWS_PER_JOINT];
        let (p, j) = (PoseLanes::<f32>::new(), ParamLanes::new());
        let coordinate = rows_lanes(JointKind::Spherical, false, &p, &j, &mut rows);
        let rate = coordinate_rate(&coordinate, &PairVelocities::zero());
        assert!(!limit_impact_lanes(&coordinate, rate, &j, h));
    }

    /// The reached stop's row at the velocities before the solve: [`limit_row_lanes`]'s bits
    /// except within the slop of both bounds, where it is the row of the stop the coordinate
    /// moves into.
    #[test]
    fn a_coordinate_at_both_bounds_gets_the_row_of_the_stop_it_moves_into() {
        let coordinate =
            |x: f32| RowGeometryLanes::<f32>::new(V3::zero(), V3::zero(), V3::splat(Vec3::Z), x);
        // The coordinate at `x` turning at `rate` about z: its `xdot = J v`.
        let turning = |x: f32, rate: f32| {
            let mut v = PairVelocities::<f32>::zero();
            v.set_lane(
                0,
                (Vec3::ZERO, Vec3::ZERO),
                (Vec3::ZERO, Vec3::new(0.0, 0.0, rate)),
            );
            coordinate_rate(&coordinate(x), &v)
        };
        let limits = |lo: f32, hi: f32| {
            let mut j = ParamLanes::<f32>::new();
            (j.lo, j.hi) = (lo, hi);
            j
        };
        // A locked joint (lo == hi == 0.3): upward, the upper stop's row (-J); downward or at
        // rest, the lower's (+J).
        for (rate, upper) in [(2.0, true), (-2.0, false), (0.0, false)] {
            let row =
                reached_limit_row_lanes(&coordinate(0.3), turning(0.3, rate), &limits(0.3, 0.3));
            assert_eq!(row.angular_b.z, if upper { -1.0 } else { 1.0 }, "{rate}");
            assert_eq!(row.error, 0.0);
        }
        // Elsewhere the rows of `limit_row_lanes`, bit for bit, whatever the rate.
        for x in [-0.6, -0.5, -0.2, 0.0, 0.5, 0.7] {
            for rate in [-3.0, 0.0, 3.0] {
                let j = limits(-0.5, 0.5);
                let row = reached_limit_row_lanes(&coordinate(x), turning(x, rate), &j);
                let plain = limit_row_lanes(x, j.lo, j.hi, &coordinate(x));
                assert_eq!(
                    [row.angular_b.z, row.error].map(f32::to_bits),
                    [plain.angular_b.z, plain.error].map(f32::to_bits),
                    "{x} {rate}"
                );
            }
        }
    }

    /// Speculative limits: a limited joint always has a limit row, against the stop it is past
    /// or, inside, against the stop nearer to `x + h xdot`, with `C` the distance left
    /// (negative past it); one lane and eight give the same bits.
    #[test]
    fn speculative_limit_rows_face_the_nearer_stop_with_the_distance_left() {
        let h = 1.0 / 240.0;
        // (x0, rate, lower stop?, C): resting at the middle (the upper stop, by the tie);
        // heading up (0.15 + 14/240 = 0.208); turned round towards the lower stop
        // (0.15 - 100/240 = -0.267); resting nearer the lower; past the upper stop moving
        // back fast (still the upper stop's row); past the lower one.
        let cases = [
            (0.0, 0.0, false, 0.2),
            (0.15, 14.0, false, 0.05),
            (0.15, -100.0, true, 0.35),
            (-0.1, 0.0, true, 0.1),
            (0.25, -100.0, false, -0.05),
            (-0.25, 100.0, true, -0.05),
        ];
        for kind in [JointKind::Revolute, JointKind::Prismatic] {
            let hinge = kind == JointKind::Revolute;
            let mut wide = LimitedLanes::<Wide>::new();
            let mut singles = Vec::new();
            for (lane, &(x0, rate, lower, c)) in cases.iter().enumerate() {
                wide.set(lane, kind, x0, rate);
                let mut one = LimitedLanes::<f32>::new();
                one.set(0, kind, x0, rate);
                let (coordinate, rows) = one.rows(kind);
                let rate = coordinate_rate(&coordinate, &one.velocities);
                let row =
                    speculative_limit_row_lanes(&coordinate, rate, &one.params, h, (false, false));
                let what = format!("{kind:?} at {x0}, {rate}/s");
                assert!((row.error - c).abs() < 1e-6, "{what}: C = {}", row.error);
                // The lower stop's row is the coordinate's Jacobian, the upper's its negative.
                let along = if hinge { row.angular_b.z } else { row.linear.x };
                assert_eq!(along, if lower { 1.0 } else { -1.0 }, "{what}");
                if x0.abs() > 0.2 {
                    // Past a stop: the row [`limit_row_lanes`] gives without speculation.
                    let plain = rows[LIMIT_SLOT];
                    assert_eq!(row.error.to_bits(), plain.error.to_bits(), "{what}");
                }
                singles.push(row);
            }
            let (coordinate, _) = wide.rows(kind);
            let (v, j) = (&wide.velocities, &wide.params);
            let none = crate::lanes::no_lanes::<Wide>();
            let rows = speculative_limit_row_lanes(
                &coordinate,
                coordinate_rate(&coordinate, v),
                j,
                Wide::splat(h),
                (none, none),
            );
            for (lane, one) in singles.iter().enumerate() {
                let values = |r: &RowGeometryLanes<Wide>| {
                    [r.linear.x, r.angular_b.z, r.angular_a.z, r.error].map(|x| x.lane(lane))
                };
                let single = [one.linear.x, one.angular_b.z, one.angular_a.z, one.error];
                assert_eq!(
                    values(&rows).map(f32::to_bits),
                    single.map(f32::to_bits),
                    "{kind:?} lane {lane}"
                );
            }
        }
    }

    /// A random pose pair, joint and velocities `[v_A, w_A, v_B, w_B]` of one lane.
    type MovingCase = (PosePair, JointParams, [Vec3; 4]);

    /// Eight random lanes of `kind` in motion, and each lane's case.
    fn moving_lanes(
        r: &mut impl FnMut() -> f32,
        kind: JointKind,
    ) -> (
        PoseLanes<Wide>,
        ParamLanes<Wide>,
        PairVelocities<Wide>,
        Vec<MovingCase>,
    ) {
        let mut poses = PoseLanes::<Wide>::new();
        let mut params = ParamLanes::<Wide>::new();
        let mut velocities = PairVelocities::<Wide>::zero();
        let mut cases = Vec::new();
        for lane in 0..8 {
            let pair = random_pair(r);
            let j = random_params(r);
            let v = [0; 4].map(|_| random_vec(r) * 2.0);
            poses.set_lane(lane, &pair);
            params.set_lane(lane, kind, &j);
            velocities.set_lane(lane, (v[0], v[1]), (v[2], v[3]));
            cases.push((pair, j, v));
        }
        (poses, params, velocities, cases)
    }

    /// `pair` moved for time `t` along the velocities `v` (free motion).
    fn moved(pair: &PosePair, v: &[Vec3; 4], t: f32) -> PosePair {
        PosePair {
            position_a: pair.position_a + v[0] * t,
            rotation_a: Quat::from_scaled_axis(v[1] * t) * pair.rotation_a,
            position_b: pair.position_b + v[2] * t,
            rotation_b: Quat::from_scaled_axis(v[3] * t) * pair.rotation_b,
        }
    }

    /// One case as the scalar (`f32`) lanes.
    fn one_lane(
        pair: &PosePair,
        j: &JointParams,
        v: &[Vec3; 4],
        kind: JointKind,
    ) -> (PoseLanes<f32>, ParamLanes<f32>, PairVelocities<f32>) {
        let mut p1 = PoseLanes::<f32>::new();
        let mut j1 = ParamLanes::<f32>::new();
        let mut v1 = PairVelocities::<f32>::zero();
        p1.set_lane(0, pair);
        j1.set_lane(0, kind, j);
        v1.set_lane(0, (v[0], v[1]), (v[2], v[3]));
        (p1, j1, v1)
    }

    /// The curvature offsets are `h/2 Jdot v` of each row along the bodies' free motion
    /// (constant linear and angular velocities, rotations exact), for every joint type at
    /// random poses, anchors, axes and velocities; the f32 instantiation gives the wide
    /// lanes' bits. Where the Jacobian is the gradient of the row's `C` everywhere (point
    /// and slide rows), that is `h/2 Cddot`, checked against a central second difference of
    /// the rows' errors; a hinge's axis rows (Jacobian `a x t_k`, the gradient of their `C`
    /// only where the axes are aligned) against the central difference of `J(t) v`.
    #[test]
    fn curvature_offsets_are_the_second_derivative_of_the_row_errors() {
        let mut r = stream(0x2545_f491_4f6c_dd1d);
        let half_h = 0.5 / 240.0;
        let mut checked = 0;
        for kind in JointKind::ALL {
            // The rows each type gives a curvature (the others' stay zero).
            let slots: &[usize] = match kind {
                JointKind::Revolute => &[0, 1, 2, 3, 4],
                JointKind::Spherical | JointKind::Fixed => &[0, 1, 2],
                JointKind::Prismatic => &[0, 1],
            };
            for _ in 0..25 {
                let (poses, params, velocities, cases) = moving_lanes(&mut r, kind);
                let mut wide = [RowGeometryLanes::<Wide>::zero(); MAX_ROWS_PER_JOINT];
                curvature_lanes(
                    kind,
                    &poses,
                    &params,
                    &velocities,
                    Wide::splat(half_h),
                    &mut wide,
                );
                for (lane, (pair, j, v)) in cases.iter().enumerate() {
                    // C and J v of every slot with the poses moved for time t along the
                    // velocities.
                    let rows_at = |t: f32| {
                        let (p1, j1, v1) = one_lane(&moved(pair, v, t), j, v, kind);
                        let mut rows = [RowGeometryLanes::<f32>::zero(); MAX_ROWS_PER_JOINT];
                        rows_lanes(kind, false, &p1, &j1, &mut rows);
                        rows.map(|g| (g.error, coordinate_rate(&g, &v1)))
                    };
                    let delta = 0.02;
                    let (before, now, after) = (rows_at(-delta), rows_at(0.0), rows_at(delta));
                    let axis_row = |slot: usize| kind == JointKind::Revolute && slot >= 3;
                    let mut one = [RowGeometryLanes::<f32>::zero(); MAX_ROWS_PER_JOINT];
                    let (p1, j1, v1) = one_lane(pair, j, v, kind);
                    curvature_lanes(kind, &p1, &j1, &v1, half_h, &mut one);
                    for slot in 0..MAX_ROWS_PER_JOINT {
                        let got = wide[slot].curvature.lane(lane);
                        assert_eq!(got.to_bits(), one[slot].curvature.to_bits());
                        if !slots.contains(&slot) {
                            assert_eq!(got, 0.0, "{kind:?} slot {slot}");
                            continue;
                        }
                        let second = if axis_row(slot) {
                            (after[slot].1 - before[slot].1) / (2.0 * delta)
                        } else {
                            (after[slot].0 - 2.0 * now[slot].0 + before[slot].0) / (delta * delta)
                        };
                        let jdot_v = got / half_h;
                        assert!(
                            (jdot_v - second).abs() <= 0.01 * (1.0 + second.abs()),
                            "{kind:?} lane {lane} slot {slot}: Jdot v {jdot_v}, second \
                             difference {second}"
                        );
                        checked += usize::from(second.abs() > 0.1);
                    }
                }
            }
        }
        // Most rows curve noticeably at these speeds (the check is not of zeros).
        assert!(checked > 600, "{checked} rows with |Cddot| > 0.1");
    }

    #[test]
    fn limit_curvature_is_the_change_of_the_limit_rows_rate_along_the_motion() {
        // `Jdot v` of the coordinate a limit reads (a hinge's angle, a slider's slide), the
        // offset of a stop a joint is held on: the central difference of `J(t) v` along free
        // motion at fixed `v` (a hinge's `J = (0, -a, a)` is the angle's gradient only where
        // the axes are aligned, so not the second difference of the angle at random poses),
        // the same in every lane as alone, zero for types without limits.
        let mut r = stream(0x9e37_79b9_7f4a_7c15);
        let mut checked = 0;
        for kind in JointKind::ALL {
            for _ in 0..25 {
                let (poses, params, velocities, cases) = moving_lanes(&mut r, kind);
                let wide = limit_curvature_lanes(kind, &poses, &params, &velocities);
                for (lane, (pair, j, v)) in cases.iter().enumerate() {
                    let rate = |t: f32| {
                        let (p1, j1, v1) = one_lane(&moved(pair, v, t), j, v, kind);
                        let mut rows = [RowGeometryLanes::<f32>::zero(); MAX_ROWS_PER_JOINT];
                        coordinate_rate(&rows_lanes(kind, true, &p1, &j1, &mut rows), &v1)
                    };
                    let (p1, j1, v1) = one_lane(pair, j, v, kind);
                    let got = wide.lane(lane);
                    let one = limit_curvature_lanes(kind, &p1, &j1, &v1);
                    assert_eq!(got.to_bits(), one.to_bits(), "{kind:?} lane {lane}");
                    if matches!(kind, JointKind::Spherical | JointKind::Fixed) {
                        assert_eq!(got, 0.0, "{kind:?}");
                        continue;
                    }
                    let delta = 0.02;
                    let change = (rate(delta) - rate(-delta)) / (2.0 * delta);
                    assert!(
                        (got - change).abs() <= 0.01 * (1.0 + change.abs()),
                        "{kind:?} lane {lane}: Jdot v {got}, d/dt (J v) {change}"
                    );
                    checked += usize::from(change.abs() > 0.1);
                }
            }
        }
        // Most rows turn noticeably at these speeds (the check is not of zeros).
        assert!(checked > 250, "{checked} limit rows with |Jdot v| > 0.1");
    }

    #[test]
    fn lane_rows_equal_the_scalar_joint_code() {
        // Every joint type, with and without a limit, at random poses (limits placed so that
        // some lanes are below, some above and some inside): each lane of the wide builder
        // and the f32 builder give the scalar reference rows within 2e-6 (different rounding
        // of the same formulas), and zero rows where the reference has none.
        let mut r = stream(0x9e37_79b9_7f4a_7c15);
        for kind in JointKind::ALL {
            for limited in [false, true] {
                if limited && matches!(kind, JointKind::Spherical | JointKind::Fixed) {
                    continue;
                }
                let mut poses = PoseLanes::<Wide>::new();
                let mut params = ParamLanes::<Wide>::new();
                let mut cases = Vec::new();
                for lane in 0..8 {
                    let pair = random_pair(&mut r);
                    let mut j = random_params(&mut r);
                    if limited {
                        // The coordinate, then a limit that holds it inside, or above or
                        // below, by lane.
                        let x = match kind {
                            JointKind::Revolute => revolute::angle(&pair, &j),
                            _ => {
                                (pair.rotation_a * j.axis_a).dot(Anchors::of(&pair, &j).separation)
                            }
                        };
                        let lo = match lane % 3 {
                            0 => x - 0.1,
                            1 => x + 0.1,
                            _ => x - 0.5,
                        };
                        j.limit = Some([lo, lo + 0.3]);
                    }
                    poses.set_lane(lane, &pair);
                    params.set_lane(lane, kind, &j);
                    cases.push((pair, j));
                }
                let mut wide = [RowGeometryLanes::<Wide>::zero(); MAX_ROWS_PER_JOINT];
                rows_lanes(kind, limited, &poses, &params, &mut wide);
                let mut active_limits = 0;
                for (lane, (pair, j)) in cases.iter().enumerate() {
                    let reference = rows(kind, pair, j);
                    let mut p1 = PoseLanes::<f32>::new();
                    let mut j1 = ParamLanes::<f32>::new();
                    p1.set_lane(0, pair);
                    j1.set_lane(0, kind, j);
                    let mut one = [RowGeometryLanes::<f32>::zero(); MAX_ROWS_PER_JOINT];
                    rows_lanes(kind, limited, &p1, &j1, &mut one);
                    for slot in 0..MAX_ROWS_PER_JOINT {
                        let g = &wide[slot];
                        let got = [
                            g.linear.lane(lane),
                            g.angular_a.lane(lane),
                            g.angular_b.lane(lane),
                            Vec3::splat(g.error.lane(lane)),
                        ];
                        let s = &one[slot];
                        let scalar = [
                            s.linear.lane(0),
                            s.angular_a.lane(0),
                            s.angular_b.lane(0),
                            Vec3::splat(s.error),
                        ];
                        let want = if reference.active[slot] {
                            let w = &reference.rows[slot];
                            [w.linear, w.angular_a, w.angular_b, Vec3::splat(w.error)]
                        } else {
                            [Vec3::ZERO; 4]
                        };
                        if slot == 5 && reference.active[slot] && limited {
                            active_limits += 1;
                        }
                        for k in 0..4 {
                            assert!(
                                got[k].abs_diff_eq(want[k], 2e-6),
                                "{kind:?} limited={limited} lane {lane} slot {slot} part {k}: \
                                 {:?} vs {:?}",
                                got[k],
                                want[k]
                            );
                            // The f32 builder is the same code: the same bits as the lane.
                            assert_eq!(
                                scalar[k].to_array().map(f32::to_bits),
                                got[k].to_array().map(f32::to_bits)
                            );
                        }
                    }
                }
                if limited {
                    // Lanes 1, 2, 4, 5, 7: below or above the limit.
                    assert!(
                        active_limits == 5,
                        "{kind:?}: {active_limits} of 8 limits active, 5 expected"
                    );
                }
            }
        }
    }
}
