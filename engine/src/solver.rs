//! The batched solver: joint rows stored by batch and the joint kernels, each written once over
//! a [`Lane`] type and instantiated for the scalar reference path (`f32`, batches of one joint)
//! and the wide path ([`Wide`], batches of eight).
//!
//! The verbs, one kernel each:
//!
//! | verb | kernel | what it does per joint |
//! |---|---|---|
//! | prepare | [`JointBatch::prepare`] | rows at the current poses, decoupled ([`decouple_lanes`]), bias and warm-start impulse |
//! | warm start | [`JointBatch::warm_start`] | apply last substep's impulses |
//! | solve | [`JointBatch::solve`] | one Gauss-Seidel pass over the joint's rows on the velocities |
//! | solve + bias | [`JointBatch::solve_with_bias`] | one pass on the velocities and one on the split (bias) velocities, fused: each row is read once |
//! | store | [`JointBatch::store`] | impulses for the next warm start, joint forces |
//! | project | [`project_step`] | one non-linear Gauss-Seidel projection of the poses: by island in joint order, large islands by colour |
//!
//! Everything on the rows is lane-parallel: the joint rows at the current poses
//! ([`joints::rows_lanes`], one function per joint type, quaternions and cross products over
//! lanes), the decoupling (an `L D L^T` factorisation with lane-mask pivots), effective
//! masses, biases, warm start, the velocity passes, the projection's corrections and its
//! pose update ([`crate::rows::integrate_rotation_lanes`], glam's bits). Velocities and
//! poses are gathered and written back as 32-byte blocks through 8 x 8 transposes
//! ([`lanes::gather_poses`]); what runs lane by lane is gathering the world inverse inertias,
//! and the warm-start impulses' loads. Projection lanes are
//! islands with the same joint signatures (each lane walks its island in joint order), or
//! joints of one colour for large islands ([`Solver::project`]). Every lane computes what the
//! scalar path computes for its joint, so both paths agree bit for bit.
//!
//! Storage ([`batches::Batches`]): a batch's header ([`JointBatch`]: indices, masses,
//! signature), its joint parameters, and its rows, one per slot of its signature, each kind in
//! one array in batch order. Memory per joint (wide path): one batch is shared by eight joints;
//! see [`solver_bytes_per_joint`]. On the wide path, work that would fill one lane of eight
//! (a lone chain, an island alone in its projection group) runs on the scalar kernels: the
//! same arithmetic, so the same bits.

mod batches;
mod chain;
mod hub;

use batches::Batches;

use crate::bodies::Bodies;
use crate::joints::{self, JointKind, Joints, ParamLanes, PoseLanes};
use crate::lanes::{
    self, BodyAccess, Lane, PairVelocities, PoseAccess, Shared, SolverPose, Wide, WriteMask, M3, V3,
};
use crate::parallel::{Exec, Stages, BATCH_CHUNK, SHARED_CHUNK};
use crate::rows::{
    integrate_rotation_lanes, RowGeometryLanes, LIMIT_SLOT, MAX_ROWS_PER_JOINT, MIN_K, ROW_VALUES,
};
use crate::schedule::{Batch, Schedule};
use glam::{Mat3, Vec3};
use std::ops::Range;

/// One row slot of a batch: the prepared row of every lane.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowLanes<L> {
    linear: V3<L>,
    angular_a: V3<L>,
    angular_b: V3<L>,
    /// `I_A^-1 angular_a`.
    inv_i_angular_a: V3<L>,
    /// `I_B^-1 angular_b`.
    inv_i_angular_b: V3<L>,
    /// `1 / K`; zero for an inactive row (which makes the row neutral).
    effective_mass: L,
    /// `error_reduction C / h` (a unilateral row: only while violated).
    bias: L,
    /// The velocity row's curvature offset `h/2 Jdot v` ([`joints::curvature_lanes`]),
    /// decoupled with the row.
    curvature: L,
    impulse: L,
    bias_impulse: L,
}

impl<L: Lane> RowLanes<L> {
    fn zero() -> Self {
        let z = L::splat(0.0);
        RowLanes {
            linear: V3::zero(),
            angular_a: V3::zero(),
            angular_b: V3::zero(),
            inv_i_angular_a: V3::zero(),
            inv_i_angular_b: V3::zero(),
            effective_mass: z,
            bias: z,
            curvature: z,
            impulse: z,
            bias_impulse: z,
        }
    }
}

/// One step's joints gathered into lanes: poses and masses (what prepare and projection
/// gather the same way, [`JointLanes::gather`]).
struct JointLanes<L> {
    poses: PoseLanes<L>,
    inv_mass_a: L,
    inv_mass_b: L,
    inv_inertia_a: M3<L>,
    inv_inertia_b: M3<L>,
}

impl<L: Lane> JointLanes<L> {
    fn new() -> Self {
        JointLanes {
            poses: PoseLanes::new(),
            inv_mass_a: L::splat(0.0),
            inv_mass_b: L::splat(0.0),
            inv_inertia_a: M3::zero(),
            inv_inertia_b: M3::zero(),
        }
    }

    /// The joints between bodies `a[i]` and `b[i]` in lanes `i < real`: poses and inverse
    /// masses gathered by transposes ([`lanes::gather_poses`]), the world inverse inertias
    /// (`inertia(k)`, body `k`'s) lane by lane. Lanes `real..` keep zero masses and inertias
    /// (their rows then decouple to zero rows: neutral); their poses are lane 0's bodies'.
    /// Returns the gathered poses with their true inverse masses, for the write-back.
    #[inline(always)]
    fn gather(
        &mut self,
        pose: impl Fn(usize) -> SolverPose,
        inertia: impl Fn(usize) -> Mat3,
        (a, b): (&L::Indices, &L::Indices),
        real: usize,
    ) -> [lanes::PoseLanesOf<L>; 2] {
        let (pa, pb) = (
            lanes::gather_poses::<L>(&pose, a),
            lanes::gather_poses::<L>(&pose, b),
        );
        self.poses = PoseLanes::from_sides(&pa, &pb);
        let zero = L::splat(0.0);
        let is_real = L::from_fn(|i| if i < real { 1.0 } else { 0.0 }).gt(zero);
        self.inv_mass_a = L::select(is_real, pa.inv_mass, zero);
        self.inv_mass_b = L::select(is_real, pb.inv_mass, zero);
        for lane in 0..real {
            self.inv_inertia_a
                .set_lane(lane, &inertia(a.as_ref()[lane] as usize));
            self.inv_inertia_b
                .set_lane(lane, &inertia(b.as_ref()[lane] as usize));
        }
        [pa, pb]
    }

    /// The rows ([`joints::rows_lanes`]) of the lanes' joints, with parameters `params`, into
    /// `rows` (not yet decoupled), and their masses. An out-parameter: returning the 3 KB of
    /// rows by value cost a copy.
    fn rows(
        &self,
        kind: JointKind,
        limited: bool,
        params: &ParamLanes<L>,
        rows: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
    ) -> (PairMassLanes<L>, RowGeometryLanes<L>) {
        let limit_coordinate = joints::rows_lanes(kind, limited, &self.poses, params, rows);
        let mass = PairMassLanes {
            inv_mass: self.inv_mass_a + self.inv_mass_b,
            inv_inertia_a: self.inv_inertia_a,
            inv_inertia_b: self.inv_inertia_b,
        };
        (mass, limit_coordinate)
    }
}

/// Mass properties of each lane's body pair.
struct PairMassLanes<L> {
    /// `1/m_A + 1/m_B`.
    inv_mass: L,
    inv_inertia_a: M3<L>,
    inv_inertia_b: M3<L>,
}

/// Decouples each lane's joint rows, over the slots of a signature (`slots`, bit `s` for
/// slot `s`; inactive rows are zero rows): with `K = J M^-1 J^T = L D L^T` (`L` unit lower
/// triangular), the rows become `D^-1/2 L^-1 J` (errors likewise), whose `K` is the identity.
///
/// Why: the three point rows along world axes are strongly coupled through the bodies'
/// rotation when the anchor's lever arm is long against the radius of gyration (a 1 m
/// pendulum arm on a 0.1 m cube has K eigenvalues 1 and 600 kg^-1). Gauss-Seidel over such
/// rows converges at `1 - 1/600` per pass, so eight passes left centimetres of error and the
/// run gained energy. After decoupling, one pass solves an isolated joint exactly (a block
/// solve written as scalar rows), and coupling remains only between joints.
///
/// A row whose pivot falls below `1e-6` of its diagonal (dependent on earlier rows, or zero)
/// becomes a zero row. A unilateral (limit) row must come after every bilateral row in slot
/// order: its decoupled form is then the limit direction with the bilateral rows' components
/// removed, scaled by `d^-1/2 > 0`, so `lambda' >= 0` still means `lambda >= 0` and `C' >= 0`
/// still means the bound holds (with the bilateral rows satisfied). Without this, the limit
/// row fought the point rows through the lever arm and a pendulum hitting its stop bounced
/// higher than it was released.
///
/// `L D L^T` rather than Cholesky (`L L^T`): without square roots the chain of dependent
/// pivots has one division each, and the square roots come after, independent (2 to 3 %
/// faster steps, same errors). Branch-free: the pivot tests are lane masks, so the scalar and
/// wide paths compute the same bits.
///
/// Returns the last row's scale `d^-1/2` (the limit row's, where there is one): its decoupled
/// form of a value that is zero on every earlier row.
fn decouple_lanes<L: Lane>(
    rows: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
    slots: u8,
    mass: &PairMassLanes<L>,
) -> L {
    // One copy per signature with `slots` a constant: the factorisation's loops unroll.
    match slots {
        0b000111 => decouple_slots(rows, 0b000111, mass),
        0b011111 => decouple_slots(rows, 0b011111, mass),
        0b111111 => decouple_slots(rows, 0b111111, mass),
        slots => decouple_slots(rows, slots, mass),
    }
}

/// [`decouple_lanes`] over the slots `slots`.
// Index loops keep the factorisation recurrences in their textbook form.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn decouple_slots<L: Lane>(
    rows: &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
    slots: u8,
    mass: &PairMassLanes<L>,
) -> L {
    let mut idx = [0usize; MAX_ROWS_PER_JOINT];
    let mut n = 0;
    for slot in 0..MAX_ROWS_PER_JOINT {
        if slots & (1 << slot) != 0 {
            idx[n] = slot;
            n += 1;
        }
    }
    for &slot in &idx[..n] {
        let g = &mut rows[slot];
        g.inv_i_angular_a = mass.inv_inertia_a.mul_v3(g.angular_a);
        g.inv_i_angular_b = mass.inv_inertia_b.mul_v3(g.angular_b);
    }
    let zero = L::splat(0.0);
    let mut k = [[zero; MAX_ROWS_PER_JOINT]; MAX_ROWS_PER_JOINT];
    for i in 0..n {
        let gi = &rows[idx[i]];
        for j in 0..=i {
            let gj = &rows[idx[j]];
            k[i][j] = mass.inv_mass * gi.linear.dot(gj.linear)
                + gj.angular_a.dot(gi.inv_i_angular_a)
                + gj.angular_b.dot(gi.inv_i_angular_b);
        }
    }
    // L D L^T, `a[i][j] = l_ij d_j`; dropped rows have zero `l` rows and `1/d = 0`.
    let mut l = [[zero; MAX_ROWS_PER_JOINT]; MAX_ROWS_PER_JOINT];
    let mut a = [[zero; MAX_ROWS_PER_JOINT]; MAX_ROWS_PER_JOINT];
    let mut inv_d = [zero; MAX_ROWS_PER_JOINT];
    let (rel, min_k, one) = (L::splat(1e-6), L::splat(MIN_K), L::splat(1.0));
    for i in 0..n {
        for j in 0..i {
            let mut sum = k[i][j];
            for m in 0..j {
                sum = sum - a[i][m] * l[j][m];
            }
            a[i][j] = sum;
            l[i][j] = sum * inv_d[j];
        }
        let mut d = k[i][i];
        for m in 0..i {
            d = d - a[i][m] * l[i][m];
        }
        let kept = L::and(d.gt(rel * k[i][i]), d.gt(min_k));
        inv_d[i] = L::select(kept, one / d, zero);
        for m in 0..i {
            l[i][m] = L::select(kept, l[i][m], zero);
            a[i][m] = L::select(kept, a[i][m], zero);
        }
    }
    // r_i = row_i - sum_{m<i} l_im r_m in place, then row'_i = r_i sqrt(1/d_i). Each of a
    // row's seventeen values sees the same operations in the same order either way below.
    let scale: [L; MAX_ROWS_PER_JOINT] = std::array::from_fn(|i| inv_d[i].sqrt());
    if L::WIDTH == 1 {
        // Row by row: the compiler vectorises each row update across its seventeen values.
        for i in 0..n {
            let mut g = rows[idx[i]];
            for m in 0..i {
                g.sub_scaled(&rows[idx[m]], l[i][m]);
            }
            rows[idx[i]] = g;
        }
        for i in 0..n {
            rows[idx[i]].scale(scale[i]);
        }
    } else {
        // Value by value: one value of each row live at a time (a whole row of eight lanes is
        // 32 registers on SSE2, which spilled); the portable build's prepare and projection
        // 8 to 14 % faster, the native build's unchanged (benches/RESULTS.md, "What changed").
        for v in 0..ROW_VALUES {
            let mut r = [zero; MAX_ROWS_PER_JOINT];
            for i in 0..n {
                r[i] = rows[idx[i]].values_mut()[v];
                for m in 0..i {
                    r[i] = r[i] - r[m] * l[i][m];
                }
            }
            for i in 0..n {
                rows[idx[i]].values_mut()[v] = r[i] * scale[i];
            }
        }
    }
    if n == 0 {
        zero
    } else {
        scale[n - 1]
    }
}

/// `v += M^-1 J^T lambda` on the gathered velocities.
#[inline(always)]
fn apply<L: Lane>(
    v: &mut PairVelocities<L>,
    r: &RowLanes<L>,
    lambda: L,
    inv_mass_a: L,
    inv_mass_b: L,
) {
    let p = r.linear.scale(lambda);
    v.linear_a = v.linear_a - p.scale(inv_mass_a);
    v.angular_a = v.angular_a + r.inv_i_angular_a.scale(lambda);
    v.linear_b = v.linear_b + p.scale(inv_mass_b);
    v.angular_b = v.angular_b + r.inv_i_angular_b.scale(lambda);
}

/// One sequential-impulse update of row `r` on the velocities `v`:
/// `d = -m_eff (J v + offset(r))`, accumulated in `accumulated(r)` (clamped below at `floor`
/// for a unilateral row: 0, or [`LOCKED_FLOOR`] in a locked joint's lanes), and
/// `v += M^-1 J^T (new - old)`.
#[inline(always)]
fn relax_row<L: Lane>(
    v: &mut PairVelocities<L>,
    r: &mut RowLanes<L>,
    offset: impl Fn(&RowLanes<L>) -> L,
    accumulated: impl Fn(&mut RowLanes<L>) -> &mut L,
    floor: Option<L>,
    (inv_mass_a, inv_mass_b): (L, L),
) {
    let cdot = JointBatch::<L>::velocity_error(v, r);
    let delta = -r.effective_mass * (cdot + offset(r));
    let old = *accumulated(r);
    let mut new = old + delta;
    if let Some(floor) = floor {
        new = L::select(new.gt(floor), new, floor);
    }
    *accumulated(r) = new;
    apply(v, r, new - old, inv_mass_a, inv_mass_b);
}

/// One pass over the `N` rows of a signature (slots `0..N`; `unilateral`: bit `s` for slot
/// `s`), in slot order, on the velocities `v` and, given bias velocities `u`, on `u`.
///
/// The two systems share nothing, so the order between them changes no bit. Where a value
/// fits one register (the scalar path, AVX builds), each slot's velocity row and bias row run
/// together: two independent dependency chains, the latency of one hidden behind the other.
/// Where a value is two SSE registers (8 lanes on the portable build), the 24 velocities of
/// the two systems would need 48 of the 16 registers: every row stored and reloaded them. There
/// the velocity rows run first, then the bias rows: 24 registers for one system's velocities,
/// and the two halves of each value are still two independent chains. `cachegrind` on 5 steps
/// of the 100 x 100 chain: the pass's stores 152 to 99 million, its instructions 689 to 588
/// million; on the AMD EPYC VM (one store per cycle) its time per substep 4.2 to 3.0 ms (four
/// alternating `bench --stages` runs), the grid's, streamed from beyond L2, within noise.
#[inline(always)]
fn relax_rows<L: Lane, const N: usize>(
    rows: &mut [RowLanes<L>; N],
    (unilateral, limit_speculative, limit_floor): (u8, L, L),
    v: &mut PairVelocities<L>,
    mut u: Option<&mut PairVelocities<L>>,
    masses: (L, L),
) {
    let zero = L::splat(0.0);
    let velocity_row = |v: &mut PairVelocities<L>, slot: usize, r: &mut RowLanes<L>| {
        let unilateral = unilateral & (1 << slot) != 0;
        // The velocity row's offset: its curvature plus, for the limit, its speculative `C / h`.
        let speculative = if unilateral { limit_speculative } else { zero };
        relax_row(
            v,
            r,
            |r| r.curvature + speculative,
            |r| &mut r.impulse,
            unilateral.then_some(limit_floor),
            masses,
        );
    };
    let bias_row = |u: &mut PairVelocities<L>, slot: usize, r: &mut RowLanes<L>| {
        relax_row(
            u,
            r,
            |r| r.bias,
            |r| &mut r.bias_impulse,
            (unilateral & (1 << slot) != 0).then_some(limit_floor),
            masses,
        );
    };
    if L::REGISTERS > 1 {
        for (slot, r) in rows.iter_mut().enumerate() {
            velocity_row(v, slot, r);
        }
        if let Some(u) = u {
            for (slot, r) in rows.iter_mut().enumerate() {
                bias_row(u, slot, r);
            }
        }
    } else {
        for (slot, r) in rows.iter_mut().enumerate() {
            velocity_row(v, slot, r);
            if let Some(u) = u.as_deref_mut() {
                bias_row(u, slot, r);
            }
        }
    }
}

/// `rows` as an array of its length `N` (the caller matched the length).
#[inline(always)]
fn fixed<T, const N: usize>(rows: &mut [T]) -> &mut [T; N] {
    rows.try_into().expect("the row count was matched")
}

/// Slots a joint type can fill (bit `s` for slot `s`), and which of them is unilateral.
/// Always a prefix `0..n` (a batch's rows are `rows[0..n]`, see [`JointBatch`]).
fn slot_masks(kind: JointKind, limited: bool) -> (u8, u8) {
    let limit = if limited { 1 << 5 } else { 0 };
    match kind {
        JointKind::Spherical => (0b000111, 0),
        JointKind::Fixed => (0b111111, 0),
        JointKind::Revolute | JointKind::Prismatic => (0b011111 | limit, limit),
    }
}

/// Up to `L::WIDTH` joints of one colour and signature: their indices, masses and
/// signature. Their rows are stored apart ([`batches::Batches`]), one [`RowLanes`] per slot
/// of the signature (the slot masks are prefixes, so slot `s` is `rows[s]`), and every
/// method that reads or writes rows is given them.
///
/// Byte budget (wide, 8 lanes): 19 lanes-floats x 32 B = 608 B per row slot (spherical 3,
/// revolute and prismatic 5, or 6 with a limit, fixed 6), and this header (3 x 32 B of
/// indices, 3 x 32 B of inverse masses and the limit's offset, a few flags): about 256 B per
/// joint in a spherical batch, 410 B in a revolute one.
#[derive(Debug, Clone)]
pub(crate) struct JointBatch<L: Lane> {
    joints: L::Indices,
    body_a: L::Indices,
    body_b: L::Indices,
    /// Real lanes; lanes `len..` are padding (bodies of lane 0, all rows neutral, never
    /// written back).
    len: usize,
    write: WriteMask,
    kind: JointKind,
    /// Slots the signature can fill; bit `s` for slot `s`.
    slots: u8,
    /// Unilateral slots (the limit row).
    unilateral: u8,
    inv_mass_a: L,
    inv_mass_b: L,
    /// `C / h` of a separated limit (the unilateral slot's velocity offset), else 0: kept
    /// here rather than in every row, so that the velocity passes stream 19 floats per row and
    /// lane instead of 20.
    limit_speculative: L,
    /// The limit row's stop (`+1` the lower, `-1` the upper, `0` none), set by prepare:
    /// the sign the limit impulse is stored with.
    limit_sign: L,
    /// The lowest accumulated impulse of the limit row: 0 (a stop only pushes), or
    /// [`LOCKED_FLOOR`] where the joint is locked (`hi - lo` within twice the slop), whose
    /// row is the lower stop's, bilateral. Set by prepare.
    limit_floor: L,
    /// Active rows at the last prepare.
    active_rows: u32,
}

/// The parameters of joints `ids` (all of type `kind`) in lanes `0..ids.len()`; the other
/// lanes as [`ParamLanes::new`]. Built once per batch and projection step, so that prepare
/// and projection load lanes instead of gathering seven arrays joint by joint every substep.
fn param_lanes<L: Lane>(kind: JointKind, ids: &[u32], joints: &Joints) -> ParamLanes<L> {
    let mut params = ParamLanes::new();
    for (lane, &j) in ids.iter().enumerate() {
        params.set_lane(lane, kind, &joints.params(j as usize));
    }
    params
}

/// Bytes of solver storage per joint on the wide path for joints of `rows` row slots (3
/// spherical, 5 revolute or prismatic, 6 with a limit or fixed): one full batch shared by its
/// lanes.
pub fn solver_bytes_per_joint(rows: usize) -> usize {
    (std::mem::size_of::<JointBatch<Wide>>() + rows * std::mem::size_of::<RowLanes<Wide>>())
        / Wide::WIDTH
}

/// Rotation per substep `theta_0` (rad) about which the curvature offsets fade out, as
/// `1 / (1 + (theta / theta_0)^8)` of `theta = h max(|w_A|, |w_B|)`: the offset is the
/// second-order term of an expansion in `theta`, and where a body turns faster the expansion
/// no longer holds. There the first-order step's loss (a fraction of about `theta^2` of the
/// kinetic energy per substep) is what keeps a whip resolvable: without the fade the 100-link
/// chain's tail reached 300 rad/s (1.25 rad per substep) and the run went non-finite at 4.5
/// s, also solved exactly (`chain_solve`) at 1.5 s. A gentler fade (fourth power) cost
/// moderate spins most of the gain: a lever spun at 20 rad/s without gravity (`theta` 0.083)
/// lost 10 % of its energy in 10 s at `theta_0` = 0.3 against 2.6 % unfaded and 2.6 % with
/// the eighth power; without offsets it loses 97 %.
const CURVATURE_FADE_ANGLE: f32 = 0.3;

/// The floor of a locked joint's limit impulse (`JointBatch::limit_floor`): none (the
/// lowest finite `f32`), so its row pulls as well as pushes. A locked joint (`hi - lo`
/// within twice the slop) is at both stops at once; one stop's row at a time, pushing only,
/// let a pair locked at 5 rad/s lose 20 % of its energy in 10 s held on its upper side,
/// 0.17 % on its lower (QA 2026-12-07).
pub(crate) const LOCKED_FLOOR: f32 = f32::MIN;

/// The carried limit impulse (signed by its stop) of a joint that the projection pushed back
/// from that stop in a substep whose velocity solve gave the stop no impulse: the smallest
/// normal `f32`, so that the next substep has that stop's row (prepare reads it as held for
/// the row's choice) without counting as held for the curvature offsets, and warm-starts it
/// from 0.
///
/// Why: the chapter's rule gives a limit its row only once the bound is crossed, so a joint
/// reaching its stop within a substep crosses it, the projection puts it back, and the next
/// substep's row (the joint then within the slop of its stop) takes the approach out of the
/// velocity. Where the projection left the joint more than the slop off the stop (the
/// non-linear correction overshoots), that row did not exist, and a slider in a tumbling pair
/// kept running into its stop at 1.8 m/s, pushed back by the projection every substep: the
/// pair went from 2 J to 59 J in 10 s (QA 2026-12-07,
/// `data/regressions/tumbling-slider-on-stop.toml`). Carried in the impulses, the mark is part
/// of the solver state that logs keep and `World::state_hash` covers, so a resumed run marks
/// and reads the same stops. (Taking the approach out of the velocities in the projection
/// itself also fixed the tumbling pair, but removed a joint's tangential motion where the
/// path's curvature alone carried it past a stop: a pair spinning at 10 rad/s in a range of
/// 2.1e-5 rad lost 77 % of its energy in 10 s.)
pub(crate) const PROJECTED_STOP: f32 = f32::MIN_POSITIVE;

/// What prepare needs besides the batch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PrepareInput<'a> {
    pub bodies: &'a Bodies,
    /// The bodies' poses and inverse masses as blocks (the same values as `bodies`').
    pub poses: &'a [SolverPose],
    pub joints: &'a Joints,
    /// `error_reduction / h`.
    pub bias_rate: f32,
    /// `1 / h`.
    pub inv_h: f32,
    /// `h / 2` where the velocity rows get their curvature offsets (`Settings::curvature`),
    /// else `None`.
    pub half_h: Option<f32>,
    /// The substep `h`, s.
    pub h: f32,
    /// `Settings::speculative_limits`.
    pub speculative_limits: bool,
    pub warm_starting: bool,
}

impl<L: Lane> JointBatch<L> {
    /// An empty batch for `batch`'s joints.
    fn new(batch: &Batch, joint_ids: &[u32], joints: &Joints, bodies: &Bodies) -> Self {
        debug_assert!(!joint_ids.is_empty() && joint_ids.len() <= L::WIDTH);
        let mut ids = L::Indices::default();
        let mut body_a = L::Indices::default();
        let mut body_b = L::Indices::default();
        let mut write = WriteMask::default();
        let dynamic = |b: u32| bodies.inv_mass[b as usize] > 0.0;
        for lane in 0..L::WIDTH {
            // Padding repeats lane 0's joint and bodies: valid indices, never written.
            let j = joint_ids.get(lane).copied().unwrap_or(joint_ids[0]);
            ids.as_mut()[lane] = j;
            let (a, b) = (joints.body_a[j as usize], joints.body_b[j as usize]);
            body_a.as_mut()[lane] = a;
            body_b.as_mut()[lane] = b;
            if lane < joint_ids.len() {
                write.a |= u16::from(dynamic(a)) << lane;
                write.b |= u16::from(dynamic(b)) << lane;
            }
        }
        let (slots, unilateral) = slot_masks(batch.kind, batch.limited);
        JointBatch {
            joints: ids,
            body_a,
            body_b,
            len: joint_ids.len(),
            write,
            kind: batch.kind,
            slots,
            unilateral,
            inv_mass_a: L::splat(0.0),
            inv_mass_b: L::splat(0.0),
            limit_speculative: L::splat(0.0),
            limit_sign: L::splat(0.0),
            limit_floor: L::splat(0.0),
            active_rows: 0,
        }
    }

    /// Row slots of the signature (its rows are slots `0..row_count`).
    pub(crate) fn row_count(&self) -> usize {
        self.slots.count_ones() as usize
    }

    /// Prepare, for all lanes at once: the rows at the current poses
    /// ([`joints::rows_lanes`]), their decoupling ([`decouple_lanes`]), effective masses,
    /// bias, speculative offset and warm-start impulse. `params` are the lanes' joint
    /// parameters ([`param_lanes`]).
    pub(crate) fn prepare(
        &mut self,
        rows: &mut [RowLanes<L>],
        input: &PrepareInput,
        params: &ParamLanes<L>,
        scratch: &mut RowScratch<L>,
    ) {
        let bodies = input.bodies;
        let (gathered, geometry) = scratch.for_lanes(self.len);
        gathered.gather(
            |k| input.poses[k],
            |k| bodies.inv_inertia_world[k],
            (&self.body_a, &self.body_b),
            self.len,
        );
        // Padded lanes have zero masses, so their rows decouple to zero rows.
        let limited = self.unilateral != 0;
        let (mass, limit_coordinate) = gathered.rows(self.kind, limited, params, geometry);
        let speculative = limited && input.speculative_limits;
        if input.half_h.is_some() || limited {
            // The velocities before the solve (the bodies' own, not yet warm-started: the
            // same values whatever the colour order); padded lanes keep zeros.
            let mut v = PairVelocities::<L>::zero();
            let (a, b) = (self.body_a.as_ref(), self.body_b.as_ref());
            let velocity = |k: u32| {
                let k = k as usize;
                (bodies.linear_velocity[k], bodies.angular_velocity[k])
            };
            for lane in 0..self.len {
                v.set_lane(lane, velocity(a[lane]), velocity(b[lane]));
            }
            let h = L::splat(input.h);
            // The limit coordinate's rate, read by the row's choice and the impact test (a
            // batch without limits reads neither).
            let rate = if limited {
                joints::coordinate_rate(&limit_coordinate, &v)
            } else {
                L::splat(0.0)
            };
            // The limit impulse of the substep before, signed by the stop that gave it
            // (`+` the lower, `-` the upper; see `store`), and which lanes are locked
            // (`hi - lo` within twice the slop: both stops at once). Read by limited batches
            // only.
            let zero = L::splat(0.0);
            let (carried, locked) = if limited {
                let locked = joints::locked_lanes(params);
                (self.carried_limit_impulse(input.joints), locked)
            } else {
                (zero, lanes::no_lanes::<L>())
            };
            if speculative {
                // The stop's row already, with its speculative offset `C / h` (below).
                geometry[LIMIT_SLOT] = joints::speculative_limit_row_lanes(
                    &limit_coordinate,
                    rate,
                    params,
                    h,
                    (carried.gt(zero), zero.gt(carried)),
                );
            } else if limited {
                // At both bounds (a locked joint), the stop it moves into; a joint held on
                // its stop keeps that stop's row.
                geometry[LIMIT_SLOT] = joints::held_limit_row_lanes(
                    &limit_coordinate,
                    rate,
                    params,
                    (carried.gt(zero), zero.gt(carried)),
                );
            }
            if limited {
                // A locked joint's row is the lower stop's, bilateral (its floor).
                let lower = joints::lower_limit_row_lanes(&limit_coordinate, params);
                geometry[LIMIT_SLOT] =
                    RowGeometryLanes::select(locked, &lower, &geometry[LIMIT_SLOT]);
                self.limit_floor = L::select(locked, L::splat(LOCKED_FLOOR), zero);
                self.limit_sign = joints::stop_sign_lanes(&geometry[LIMIT_SLOT], &limit_coordinate);
            }
            if let Some(half_h) = input.half_h {
                // Faded out where a body turns by more than about CURVATURE_FADE_ANGLE per
                // substep: weight = 1 / (1 + (theta / theta_0)^8), theta = h max(|w_A|, |w_B|).
                let spin = lanes::max(v.angular_a.dot(v.angular_a), v.angular_b.dot(v.angular_b));
                let x =
                    spin * h * h * L::splat(1.0 / (CURVATURE_FADE_ANGLE * CURVATURE_FADE_ANGLE));
                let x2 = x * x;
                let weight = L::splat(1.0) / (L::splat(1.0) + x2 * x2);
                let mut scale = L::splat(half_h) * weight;
                if limited {
                    // None where the joint runs into a stop within the substep: the impact
                    // ends the free motion they are the second-order term of. A joint held on
                    // the stop whose row it has (that stop pushed in the last substep) is not
                    // running into it: it keeps its offsets, and the stop's row gets its own,
                    // `Jdot v` of the limit coordinate, else a joint resting on its stop in a
                    // turning assembly loses energy at first order. A locked joint never moves
                    // freely along its coordinate, so it never runs into a stop: it is held
                    // (engine/DESIGN.md, *Curvature offsets*).
                    let impact = joints::limit_impact_lanes(&limit_coordinate, rate, params, h);
                    // (A stop the projection marked, `PROJECTED_STOP`, is no hold.)
                    let pushed = (carried * self.limit_sign).gt(L::splat(PROJECTED_STOP));
                    let held = L::or(pushed, locked);
                    scale = L::select(L::and(impact, L::not(held)), zero, scale);
                    let jdot_v =
                        joints::limit_curvature_lanes(self.kind, &gathered.poses, params, &v);
                    geometry[LIMIT_SLOT].curvature =
                        L::select(held, self.limit_sign * jdot_v * scale, zero);
                }
                joints::curvature_lanes(self.kind, &gathered.poses, params, &v, scale, geometry);
            }
        }
        (self.inv_mass_a, self.inv_mass_b) = (gathered.inv_mass_a, gathered.inv_mass_b);
        // With speculative limits: the distance left to the stop, `C` before the decoupling.
        let limit_distance = geometry[LIMIT_SLOT].error;
        let limit_scale = decouple_lanes(geometry, self.slots, &mass);
        // Its decoupled form without the bilateral rows' errors: the decoupled limit row's
        // error is `d^-1/2 (C - sum_i l_i C_i)`, which counts the bilateral rows' position
        // errors as corrected within the substep. The velocity solve corrects none of them
        // and the bias solve a fraction `error_reduction`, so the stop's speculative offsets
        // are taken from `d^-1/2 C` (below): a hinge with a centimetre of anchor error
        // otherwise passed its stop by up to 0.3 rad in one substep (QA, 2026-12-06).
        let limit_distance = limit_distance * limit_scale;

        let zero = L::splat(0.0);
        let min_k = L::splat(MIN_K);
        let (bias_rate, inv_h) = (L::splat(input.bias_rate), L::splat(input.inv_h));
        // A locked joint's limit row is an equality: never separated, always its bias.
        let unlocked = L::not(zero.gt(self.limit_floor));
        let mut active_rows = 0;
        for (slot, g) in geometry.iter().enumerate() {
            if self.slots & (1 << slot) == 0 {
                continue;
            }
            let k = g.k(mass.inv_mass);
            // Active where K is a number above MIN_K (a dropped or inactive row has K = 0).
            let active = k.gt(min_k);
            let keep = |x: L| L::select(active, x, zero);
            let keep3 = |v: V3<L>| V3 {
                x: keep(v.x),
                y: keep(v.y),
                z: keep(v.z),
            };
            let row = &mut rows[slot];
            row.linear = keep3(g.linear);
            row.angular_a = keep3(g.angular_a);
            row.angular_b = keep3(g.angular_b);
            row.inv_i_angular_a = keep3(g.inv_i_angular_a);
            row.inv_i_angular_b = keep3(g.inv_i_angular_b);
            row.effective_mass = keep(L::splat(1.0) / k);
            let unilateral = self.unilateral & (1 << slot) != 0;
            let (bias, speculative) = if unilateral {
                // A separated limit (C > 0) gets a speculative offset instead of a bias.
                if input.speculative_limits {
                    // `J v >= -C / h` in the velocity solve; in the bias solve, which also
                    // corrects `error_reduction` of the bilateral rows' errors (`sum l_i C_i`
                    // decoupled: `limit_distance - g.error`), `J u >= -C / h` less that.
                    let separated = L::and(limit_distance.gt(zero), unlocked);
                    let corrected = bias_rate * (limit_distance - g.error);
                    let speculative = limit_distance * inv_h;
                    (
                        L::select(separated, speculative - corrected, bias_rate * g.error),
                        L::select(separated, speculative, zero),
                    )
                } else {
                    let separated = L::and(g.error.gt(zero), unlocked);
                    (
                        L::select(separated, zero, bias_rate * g.error),
                        L::select(separated, g.error * inv_h, zero),
                    )
                }
            } else {
                (bias_rate * g.error, zero)
            };
            row.bias = keep(bias);
            row.curvature = keep(g.curvature);
            if unilateral {
                // One unilateral slot per signature (the limit's, see `slot_masks`); the
                // bilateral rows' speculative offset is 0.
                self.limit_speculative = keep(speculative);
            }
            // Rows with an effective mass (padded lanes have none) count as active and start
            // from last substep's impulse (clamped at 0 for a limit), the others from 0.
            let effective = row.effective_mass.gt(zero);
            active_rows += L::mask_bits(effective).count_ones();
            row.impulse = if input.warm_starting {
                let ids = self.joints.as_ref();
                let w = L::from_fn(|lane| input.joints.impulse[ids[lane] as usize][slot]);
                // A limit's impulse is stored signed by its stop: along this substep's row it
                // is `sign w`, and none where the row is the other stop's (a locked joint
                // whose row changed stops kept pushing the old way: QA 2026-12-07).
                L::select(
                    effective,
                    if unilateral {
                        // A projection's mark (`PROJECTED_STOP`) starts from 0.
                        let w = L::select(lanes::abs(w).gt(L::splat(PROJECTED_STOP)), w, zero);
                        lanes::max(w * self.limit_sign, self.limit_floor)
                    } else {
                        w
                    },
                    zero,
                )
            } else {
                zero
            };
            row.bias_impulse = zero;
        }
        self.active_rows = active_rows;
    }

    /// The limit impulse each lane's joint carries from the last substep, signed by the stop
    /// that gave it (`+` the lower, `-` the upper: [`JointBatch::store`]): nonzero where a
    /// joint is held on a stop, which prepare tells from joints running into one. Padded
    /// lanes: 0.
    fn carried_limit_impulse(&self, joints: &Joints) -> L {
        let ids = self.joints.as_ref();
        L::from_fn(|lane| {
            if lane < self.len {
                joints.impulse[ids[lane] as usize][LIMIT_SLOT]
            } else {
                0.0
            }
        })
    }

    /// `Cdot = J v` of a row.
    #[inline(always)]
    fn velocity_error(v: &PairVelocities<L>, r: &RowLanes<L>) -> L {
        r.linear.dot(v.linear_b - v.linear_a)
            + r.angular_a.dot(v.angular_a)
            + r.angular_b.dot(v.angular_b)
    }

    /// Warm start: applies every row's carried-over impulse once.
    ///
    /// # Safety
    /// The batch's dynamic bodies are touched by no other task during this call (the
    /// coloring invariant).
    pub(crate) unsafe fn warm_start(&self, rows: &[RowLanes<L>], access: &BodyAccess) {
        // SAFETY: the caller's contract.
        let mut v = unsafe { access.gather_velocities::<L>(&self.body_a, &self.body_b) };
        for r in &rows[..self.row_count()] {
            apply(&mut v, r, r.impulse, self.inv_mass_a, self.inv_mass_b);
        }
        // SAFETY: as above; `write` holds dynamic bodies of real lanes only.
        unsafe { access.scatter_velocities(&v, &self.body_a, &self.body_b, self.write) };
    }

    /// One sequential-impulse pass over the joint's rows (slot order):
    /// `d = -m_eff (Cdot + speculative)`, accumulated impulse clamped at 0 for the limit row.
    ///
    /// # Safety
    /// As [`JointBatch::warm_start`].
    pub(crate) unsafe fn solve(&self, rows: &mut [RowLanes<L>], access: &BodyAccess) {
        // SAFETY: the caller's contract.
        unsafe { self.relax(rows, access, None) }
    }

    /// One pass of [`solve`](JointBatch::solve) on the velocities `v` and one pass of the
    /// error-reduction solve on the bias velocities `u` (`d = -m_eff (J u + error_reduction
    /// C / h)`, accumulated in `bias_impulse`, clamped like the real impulse), reading each
    /// row once. The two systems share no state (each has its own velocities and impulses), and
    /// each sees the operations of its own pass in the same order, so the results are those
    /// of the two passes run apart, bit for bit; the rows stream from memory once instead of
    /// twice.
    ///
    /// # Safety
    /// As [`JointBatch::warm_start`], for both velocity arrays.
    pub(crate) unsafe fn solve_with_bias(
        &self,
        rows: &mut [RowLanes<L>],
        v_access: &BodyAccess,
        u_access: &BodyAccess,
    ) {
        // SAFETY: the caller's contract.
        unsafe { self.relax(rows, v_access, Some(u_access)) }
    }

    /// One velocity pass (with the bias pass on `u_access` when given), then, given the
    /// outputs, the store ([`JointBatch::store`]).
    ///
    /// # Safety
    /// As [`JointBatch::solve_with_bias`] and [`JointBatch::store`].
    #[inline(always)]
    unsafe fn velocity_pass(
        &self,
        rows: &mut [RowLanes<L>],
        v_access: &BodyAccess,
        u_access: Option<&BodyAccess>,
        store: Option<(&JointOutputs, f32)>,
    ) {
        // SAFETY: the caller's contract. One call per system count, so that each keeps its
        // own copy of the row loop.
        unsafe {
            match u_access {
                Some(u) => self.solve_with_bias(rows, v_access, u),
                None => self.solve(rows, v_access),
            }
            if let Some((out, inv_h)) = store {
                self.store(rows, out, inv_h);
            }
        }
    }

    /// The pass both solves share: per slot, the velocity row on `v`, then, given bias
    /// velocities, the bias row on `u`.
    ///
    /// # Safety
    /// As [`JointBatch::warm_start`], for both velocity arrays.
    #[inline(always)]
    unsafe fn relax(
        &self,
        rows: &mut [RowLanes<L>],
        v_access: &BodyAccess,
        u_access: Option<&BodyAccess>,
    ) {
        // SAFETY: the caller's contract.
        let mut v = unsafe { v_access.gather_velocities::<L>(&self.body_a, &self.body_b) };
        // SAFETY: the caller's contract.
        let mut u =
            u_access.map(|a| unsafe { a.gather_velocities::<L>(&self.body_a, &self.body_b) });
        let masses = (self.inv_mass_a, self.inv_mass_b);
        let rows = &mut rows[..self.row_count()];
        // One copy of the row loop per signature, its row count and unilateral mask constants:
        // the loop unrolls without a branch per slot (a runtime mask cost 15 % of the pass).
        // The slot masks are prefixes (`slot_masks`), so the row count names the signature.
        let (uv, unilateral) = (u.as_mut(), self.unilateral);
        let (spec, floor) = (self.limit_speculative, self.limit_floor);
        match (rows.len(), unilateral) {
            (3, 0) => relax_rows::<L, 3>(fixed(rows), (0, spec, floor), &mut v, uv, masses),
            (5, 0) => relax_rows::<L, 5>(fixed(rows), (0, spec, floor), &mut v, uv, masses),
            (6, 0) => relax_rows::<L, 6>(fixed(rows), (0, spec, floor), &mut v, uv, masses),
            (6, 0b100000) => {
                relax_rows::<L, 6>(fixed(rows), (0b100000, spec, floor), &mut v, uv, masses)
            }
            (6, _) => {
                relax_rows::<L, 6>(fixed(rows), (unilateral, spec, floor), &mut v, uv, masses)
            }
            (n, _) => unreachable!("no joint type has {n} row slots"),
        }
        // SAFETY: as above; `write` holds dynamic bodies of real lanes only.
        unsafe {
            v_access.scatter_velocities(&v, &self.body_a, &self.body_b, self.write);
            if let (Some(access), Some(u)) = (u_access, &u) {
                access.scatter_velocities(u, &self.body_a, &self.body_b, self.write);
            }
        }
    }

    /// Store: the impulses for the next warm start, and the joint forces (`J^T lambda / h`).
    ///
    /// # Safety
    /// No other task writes this batch's joints' entries of `out` (every joint is in exactly
    /// one batch or the overflow).
    pub(crate) unsafe fn store(&self, rows: &[RowLanes<L>], out: &JointOutputs, inv_h: f32) {
        // Forces in lanes: `F = sum_rows J_row lambda_row / h`, row by row in slot order.
        let inv_h = L::splat(inv_h);
        let (mut force, mut torque_a, mut torque_b) = (V3::<L>::zero(), V3::zero(), V3::zero());
        let rows = &rows[..self.row_count()];
        for r in rows {
            let f = r.impulse * inv_h;
            force = force + r.linear.scale(f);
            torque_a = torque_a + r.angular_a.scale(f);
            torque_b = torque_b + r.angular_b.scale(f);
        }
        for lane in 0..self.len {
            let j = self.joints.as_ref()[lane] as usize;
            let mut impulse = [0.0; MAX_ROWS_PER_JOINT];
            for (slot, r) in rows.iter().enumerate() {
                impulse[slot] = r.impulse.lane(lane);
            }
            if self.unilateral != 0 {
                // The limit's, signed by its stop: `+` the lower's, `-` the upper's (`+ 0.0`:
                // no impulse is +0 whatever the stop, as the state hash reads bits).
                impulse[LIMIT_SLOT] = impulse[LIMIT_SLOT] * self.limit_sign.lane(lane) + 0.0;
            }
            // SAFETY: `j` is a joint index (< the outputs' length) owned by this batch.
            unsafe {
                out.impulse.set(j, impulse);
                out.force_on_b.set(j, force.lane(lane));
                out.torque_on_a.set(j, torque_a.lane(lane));
                out.torque_on_b.set(j, torque_b.lane(lane));
            }
        }
    }
}

/// The per-joint outputs of the store stage, written by the batches concurrently.
pub(crate) struct JointOutputs<'a> {
    impulse: Shared<'a, [f32; MAX_ROWS_PER_JOINT]>,
    force_on_b: Shared<'a, Vec3>,
    torque_on_a: Shared<'a, Vec3>,
    torque_on_b: Shared<'a, Vec3>,
}

impl<'a> JointOutputs<'a> {
    pub(crate) fn new(joints: &'a mut Joints) -> Self {
        JointOutputs {
            impulse: Shared::new(&mut joints.impulse),
            force_on_b: Shared::new(&mut joints.force_on_b),
            torque_on_a: Shared::new(&mut joints.torque_on_a),
            torque_on_b: Shared::new(&mut joints.torque_on_b),
        }
    }
}

/// Joints projected together: lane `i` projects the joints `steps[k].as_ref()[i]` for
/// `k = 0, 1, ...` in order (one island's joints in joint order, or one joint of a colour).
/// Every lane's joint at one step has the same type and limit presence, so the lanes
/// decouple the same row slots. Lanes `lanes..` are padding (lane 0's joints, never written).
#[derive(Debug, Clone)]
struct ProjectionGroup<L: Lane> {
    /// Range into [`Solver::projection_steps`].
    steps: Range<usize>,
    /// Real lanes.
    lanes: usize,
    _lane: std::marker::PhantomData<L>,
}

/// What [`JointBatch::prepare`] and [`project_step`] gather into and compute rows in, kept
/// across the batches (steps) of one task and created on first use: initialising these 5 KB
/// of lanes per batch cost as much as a tenth of the projection, and 4.6 % of a step's
/// instructions in prepare (the chain scene, one thread). Lanes `lanes..` stay as initialised
/// (zero masses: neutral), so the gathered lanes are reset when the lane count changes; a row
/// slot is written whole by every joint type that uses it, and read only by those.
pub(crate) struct RowScratch<L: Lane>(Option<RowScratchLanes<L>>);

struct RowScratchLanes<L: Lane> {
    gathered: JointLanes<L>,
    geometry: [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
    /// Lane count the padding is neutral for.
    lanes: usize,
}

impl<L: Lane> Default for RowScratch<L> {
    fn default() -> Self {
        RowScratch(None)
    }
}

impl<L: Lane> RowScratch<L> {
    /// The scratch for a batch of `lanes` real lanes.
    fn for_lanes(
        &mut self,
        lanes: usize,
    ) -> (
        &mut JointLanes<L>,
        &mut [RowGeometryLanes<L>; MAX_ROWS_PER_JOINT],
    ) {
        let s = self.0.get_or_insert_with(|| RowScratchLanes {
            gathered: JointLanes::new(),
            geometry: [RowGeometryLanes::zero(); MAX_ROWS_PER_JOINT],
            lanes,
        });
        if lanes != s.lanes {
            s.gathered = JointLanes::new();
            s.lanes = lanes;
        }
        (&mut s.gathered, &mut s.geometry)
    }
}

/// One step of a [`ProjectionGroup`]: one non-linear projection of each real lane's joint.
/// Its rows are recomputed at the current poses ([`joints::rows_lanes`]) and decoupled
/// ([`decouple_lanes`]), for all lanes at once, and each decoupled row moves the
/// poses by `-factor C / K` along `M^-1 J^T` (a unilateral row only while violated).
///
/// Non-linear Gauss-Seidel over joints: each joint sees the poses the previous joints left.
/// A joint's decoupled rows are independent at these poses, so their corrections are summed
/// and applied once per body: one rotation update and renormalisation per body instead of one
/// per row (the sequential form differs only at second order in the correction, and cost
/// twice as much).
///
/// A limit row moves the poses only while violated (`C < 0`), except a locked joint's (an
/// equality) and a hinge's held on its stop: one whose stop pushed in this substep's velocity
/// solve (its stored impulse, signed by the stop, beyond a projection's mark), which gets that
/// stop's row and is moved onto the stop from either side. Why: the curvature offsets are
/// exact to second order, and their third-order drift carried a held joint off its stop every
/// substep, which the velocity solve took back through the speculative approach `C / h` at
/// the price of the stop's impulse times it (a pair spinning at 10 rad/s on a hinge's stop
/// lost 1.1 % of its energy in 10 s, welded 0.08 %; a tumbling pair on a hinge with 2.1e-5
/// rad of play 81 %): corrected here, in the poses, it costs no energy (0.085 % and 6.8 %;
/// QA 2026-12-07). Not for sliders: their rows' third-order drift goes the other way, and
/// corrected in the poses a slider held on its stop at 10 rad/s gained 0.3 % in 60 s (as a
/// locked one does), where through the velocity it loses 7.2 %.
///
/// # Safety
/// The lanes' bodies are touched by no other task during this call, unless static or
/// kinematic (those are only read).
unsafe fn project_step<L: Lane>(
    scratch: &mut RowScratch<L>,
    poses: &PoseAccess,
    joints: &Joints,
    (ids, params): (&L::Indices, &ParamLanes<L>),
    (lanes, limited): (usize, &[bool]),
    factor: f32,
) {
    let ids = ids.as_ref();
    let j0 = ids[0] as usize;
    // `limited`: per joint, whether its limit is projected (the same in every lane).
    let (kind, limited) = (joints.kind[j0], limited[j0]);
    let (slots, unilateral) = slot_masks(kind, limited);
    let (gathered, geometry) = scratch.for_lanes(lanes);
    // Lane `i`'s bodies (padded lanes repeat lane 0's joint).
    let (mut body_a, mut body_b) = (L::Indices::default(), L::Indices::default());
    for (lane, &j) in ids.iter().enumerate() {
        body_a.as_mut()[lane] = joints.body_a[j as usize];
        body_b.as_mut()[lane] = joints.body_b[j as usize];
    }
    // SAFETY (both): the caller's contract.
    let [pose_a, pose_b] = gathered.gather(
        |k| unsafe { poses.poses.get(k) },
        |k| poses.inv_inertia[k],
        (&body_a, &body_b),
        lanes,
    );
    let (mass, coordinate) = gathered.rows(kind, limited, params, geometry);
    // The limit impulse each joint carries out of this substep's velocity solve (signed by its
    // stop; or a mark of an earlier pass, `PROJECTED_STOP`), read where it has a limit.
    let carried = if limited {
        L::from_fn(|lane| {
            // SAFETY: the caller's contract: this task alone projects these joints.
            let carried = unsafe { poses.impulses.get(ids[lane] as usize) };
            carried[LIMIT_SLOT]
        })
    } else {
        L::splat(0.0)
    };
    // A hinge held on its stop: projected onto it from either side (above).
    let (held_lo, held_hi) = if kind == JointKind::Revolute {
        let mark = L::splat(PROJECTED_STOP);
        (carried.gt(mark), (-mark).gt(carried))
    } else {
        (lanes::no_lanes::<L>(), lanes::no_lanes::<L>())
    };
    let held = L::or(held_lo, held_hi);
    if L::mask_bits(held) != 0 {
        // The held stop's row, also where a narrow range puts the joint within the slop of
        // both stops (the rate's sign picks the stop there: `+` the upper).
        let rate = L::select(held_hi, L::splat(1.0), L::splat(-1.0));
        geometry[LIMIT_SLOT] =
            joints::held_limit_row_lanes(&coordinate, rate, params, (held_lo, held_hi));
    }
    // The limit row's stop (before the decoupling): `+1` the lower, `-1` the upper.
    let stop = joints::stop_sign_lanes(&geometry[LIMIT_SLOT], &coordinate);
    decouple_lanes(geometry, slots, &mass);
    let zero = L::splat(0.0);
    let (min_k, neg_factor) = (L::splat(MIN_K), L::splat(-factor));
    let (mut dp, mut dtheta_a, mut dtheta_b) = (V3::<L>::zero(), V3::zero(), V3::zero());
    // Bits 0..lanes (`1 << lanes` would overflow for a full group of 16 lanes).
    let real = u16::MAX >> (16 - lanes);
    let write = WriteMask {
        a: real & L::mask_bits(pose_a.inv_mass.gt(zero)) as u16,
        b: real & L::mask_bits(pose_b.inv_mass.gt(zero)) as u16,
    };
    for (slot, g) in geometry.iter().enumerate() {
        if slots & (1 << slot) == 0 {
            continue;
        }
        let k = g.k(mass.inv_mass);
        let mut apply = k.gt(min_k);
        if unilateral & (1 << slot) != 0 {
            // Unilateral rows move only when violated (`C < 0`); a locked joint's and a held
            // hinge's, either way.
            let locked = joints::locked_lanes(params);
            apply = L::and(apply, L::or(L::or(zero.gt(g.error), locked), held));
            // A stop pushed back from where the velocity solve gave it no impulse (nor an
            // earlier pass a mark): marked in the carried impulse for the next substep's row
            // (`PROJECTED_STOP`, signed by the stop).
            let unmarked = L::not(lanes::abs(carried).gt(zero));
            let marks =
                L::mask_bits(L::and(L::and(apply, L::not(locked)), unmarked)) & u32::from(real);
            for lane in (0..lanes).filter(|&lane| marks >> lane & 1 != 0) {
                let j = ids[lane] as usize;
                // SAFETY: the caller's contract: this task alone projects joint `j`.
                let mut impulses = unsafe { poses.impulses.get(j) };
                impulses[LIMIT_SLOT] = stop.lane(lane) * PROJECTED_STOP;
                // SAFETY: as above.
                unsafe { poses.impulses.set(j, impulses) };
            }
        }
        // delta = -factor C / K along M^-1 J^T.
        let delta = L::select(apply, neg_factor * g.error / k, zero);
        dp = dp + g.linear.scale(delta);
        dtheta_a = dtheta_a + g.angular_a.scale(delta);
        dtheta_b = dtheta_b + g.angular_b.scale(delta);
    }
    // The new poses in lanes (bitwise what glam computes lane by lane, see
    // `integrate_rotation_lanes`): x_A - dp / m_A, q_A turned by I_A^-1 dtheta_A, and for B.
    let (p, m) = (&gathered.poses, &*gathered);
    let position_a = p.position_a - dp.scale(m.inv_mass_a);
    let position_b = p.position_b + dp.scale(m.inv_mass_b);
    let rotation_a = integrate_rotation_lanes(p.rotation_a, m.inv_inertia_a.mul_v3(dtheta_a));
    let rotation_b = integrate_rotation_lanes(p.rotation_b, m.inv_inertia_b.mul_v3(dtheta_b));
    // Written back: the real lanes' dynamic bodies (with their own inverse masses).
    for (pose, (position, rotation), bodies, write) in [
        (pose_a, (position_a, rotation_a), &body_a, write.a),
        (pose_b, (position_b, rotation_b), &body_b, write.b),
    ] {
        let new = lanes::PoseLanesOf {
            position,
            rotation,
            inv_mass: pose.inv_mass,
        };
        // SAFETY: the caller's contract; only dynamic bodies of real lanes are written.
        lanes::scatter_poses(&new, write, |lane, p| unsafe {
            poses.poses.set(bodies.as_ref()[lane] as usize, p)
        });
    }
}

/// The rows of a whole world on one path: colour batches of `L::WIDTH` lanes and the
/// overflow joints, one scalar batch each.
#[derive(Debug, Clone, Default)]
pub(crate) struct Solver<L: Lane> {
    /// The colours' batches, with their joint parameters ([`param_lanes`], apart from the
    /// rows so that the velocity passes, which do not read them, stream only the rows).
    batches: Batches<L>,
    /// On the wide path, the colours' batches of at most [`SINGLE_BATCH_MAX_LANES`] joints,
    /// one scalar batch per joint (see [`ColorBatches`]).
    singles: Batches<f32>,
    /// The shared colours' batches.
    colors: Vec<ColorBatches>,
    /// The overflow joints: the shared ones (`..shared_overflow`), then the clusters'.
    overflow: Batches<f32>,
    shared_overflow: usize,
    /// The small islands' clusters: each one task through all of a stage's passes.
    clusters: Vec<ClusterBatches>,
    /// The hubs, each solved exactly in every velocity pass ([`hub`]).
    hubs: Vec<hub::HubSolve>,
    /// The joints of every projection group, step by step (see [`ProjectionGroup`]).
    projection_steps: Vec<L::Indices>,
    /// Their parameters, one per step (real lanes only, see [`param_lanes`]).
    projection_params: Vec<ParamLanes<L>>,
    /// Per joint: whether the projection passes project its limit (not a hub's: see `new`).
    projection_limited: Vec<bool>,
    /// Groups of the small islands (lanes = islands with the same joint signatures).
    serial_groups: Vec<ProjectionGroup<L>>,
    /// On the wide path, the small islands whose signatures no other island shares, each
    /// projected on the scalar kernels (same bits): alone in eight lanes an island paid for
    /// eight, so a lone 30 x 30 net projected 1.5x slower than on the scalar path.
    lone_groups: Vec<ProjectionGroup<f32>>,
    /// Their steps and parameters, as `projection_steps` and `projection_params`.
    lone_steps: Vec<[u32; 1]>,
    lone_params: Vec<ParamLanes<f32>>,
    /// Groups of the larger islands' colours: `color_groups[color_group_ranges[c]]`.
    color_groups: Vec<ProjectionGroup<L>>,
    color_group_ranges: Vec<Range<usize>>,
    /// One group per overflow joint of the larger islands, projected serially.
    overflow_groups: Vec<ProjectionGroup<L>>,
    /// The chain groups of the direct chain solve (empty without it), solved before the
    /// colours in every pass.
    chains: Vec<chain::ChainLanes<L>>,
    /// Chain groups of a single chain on the wide path, solved by the scalar kernels: one
    /// chain in eight lanes would pay for eight (the shipped 100-link chain's direct solve ran
    /// 0.36 s for 5 s in one lane of eight; see `Solver::new`). Same arithmetic per lane, so
    /// the same bits as the scalar path.
    lone_chains: Vec<chain::ChainLanes<f32>>,
    /// The parallel region of the multi-pass verbs (velocity passes, projection passes).
    stages: Stages,
}

/// Batches the schedule makes with at most this many joints run on the wide path as one
/// scalar batch per joint: a batch costs the same whatever its lanes hold, about as much as
/// three scalar joints (the wide path runs 2.7 to 3.3x the scalar one), so one or two joints
/// in eight lanes cost more than alone. Same arithmetic per joint, so the same bits.
pub(crate) const SINGLE_BATCH_MAX_LANES: usize = 2;

/// One colour's batches on the solver's side: `batches[lanes]` and `singles[singles]` (the
/// joints of its nearly empty batches, on the scalar kernels). Within a colour no two joints
/// share a dynamic body, so the order between the two changes no result.
#[derive(Debug, Clone, Default)]
struct ColorBatches {
    lanes: Range<usize>,
    singles: Range<usize>,
}

/// A [`crate::schedule::Cluster`] on the solver's side: its colours' batches and its overflow joints.
#[derive(Debug, Clone, Default)]
struct ClusterBatches {
    colors: Vec<ColorBatches>,
    overflow: Range<usize>,
}

/// Builds [`ProjectionGroup`]s: lanes are filled in order of first appearance with items of
/// equal key (an island's joint signatures, or one joint's), so the grouping depends on the
/// scene alone.
struct GroupBuilder<'a, L: Lane> {
    steps: &'a mut Vec<L::Indices>,
    groups: Vec<ProjectionGroup<L>>,
    /// Groups being filled, in order of creation, with their key's lookup.
    pending: Vec<Option<Vec<&'a [u32]>>>,
    by_key: std::collections::HashMap<Vec<u8>, usize>,
}

impl<'a, L: Lane> GroupBuilder<'a, L> {
    fn new(steps: &'a mut Vec<L::Indices>) -> Self {
        GroupBuilder {
            steps,
            groups: Vec::new(),
            pending: Vec::new(),
            by_key: std::collections::HashMap::new(),
        }
    }

    /// Adds a lane that projects `joints` in order; `key` must determine their signatures.
    fn push(&mut self, key: Vec<u8>, joints: &'a [u32]) {
        let slot = match self.by_key.get(&key) {
            Some(&i) => i,
            None => {
                self.pending.push(Some(Vec::new()));
                self.by_key.insert(key, self.pending.len() - 1);
                self.pending.len() - 1
            }
        };
        let lanes = self.pending[slot].get_or_insert_with(Vec::new);
        lanes.push(joints);
        if lanes.len() == L::WIDTH {
            let full = std::mem::take(lanes);
            self.emit(&full);
        }
    }

    fn emit(&mut self, lanes: &[&[u32]]) {
        let start = self.steps.len();
        for k in 0..lanes[0].len() {
            let mut ids = L::Indices::default();
            for (i, id) in ids.as_mut().iter_mut().enumerate() {
                *id = lanes.get(i).unwrap_or(&lanes[0])[k];
            }
            self.steps.push(ids);
        }
        self.groups.push(ProjectionGroup {
            steps: start..self.steps.len(),
            lanes: lanes.len(),
            _lane: std::marker::PhantomData,
        });
    }

    /// Emits the partly filled groups (in order of creation) and returns all groups.
    fn finish(mut self) -> Vec<ProjectionGroup<L>> {
        let pending = std::mem::take(&mut self.pending);
        for lanes in pending.into_iter().flatten() {
            if !lanes.is_empty() {
                self.emit(&lanes);
            }
        }
        self.groups
    }
}

/// What one pass does to each kind of schedule item ([`Solver::each_color`]): a hub, a chain
/// group in lanes, a chain group alone (scalar kernels), a batch with its parameters, an
/// overflow joint with its parameters; each also given the pass.
struct ItemWork<H, C, LC, B, O> {
    hub: H,
    chain: C,
    lone_chain: LC,
    batch: B,
    overflow: O,
}

impl<L: Lane> Solver<L> {
    /// Allocates the batches of `schedule` (built for `L::WIDTH` lanes).
    pub(crate) fn new(schedule: &Schedule, joints: &Joints, bodies: &Bodies) -> Self {
        assert_eq!(schedule.width, L::WIDTH);
        // Colour and overflow batches store the rows of their signature only. On the wide path
        // the nearly empty colour batches become one scalar batch per joint ("singles");
        // `before[k]` counts the lane batches and singles of the schedule's first `k` batches.
        let single = |b: &Batch| L::WIDTH > 1 && b.len as usize <= SINGLE_BATCH_MAX_LANES;
        let mut before = vec![(0, 0)];
        for b in &schedule.batches {
            let (lanes, singles) = before[before.len() - 1];
            before.push(match single(b) {
                true => (lanes, singles + b.len as usize),
                false => (lanes + 1, singles),
            });
        }
        let color_batches = |r: &Range<usize>| ColorBatches {
            lanes: before[r.start].0..before[r.end].0,
            singles: before[r.start].1..before[r.end].1,
        };
        let batches = Batches::new(
            (schedule.batches.iter()).filter(|b| !single(b)).map(|b| {
                let ids = schedule.joints_of(b);
                (
                    JointBatch::new(b, ids, joints, bodies),
                    param_lanes(b.kind, ids, joints),
                )
            }),
            JointBatch::row_count,
        );
        let singles = Batches::new(
            (schedule.batches.iter())
                .filter(|b| single(b))
                .flat_map(|b| {
                    schedule.joints_of(b).iter().map(|&j| {
                        let one = Batch { len: 1, ..*b };
                        (
                            JointBatch::new(&one, &[j], joints, bodies),
                            param_lanes(b.kind, &[j], joints),
                        )
                    })
                }),
            JointBatch::row_count,
        );
        let overflow = Batches::new(
            schedule.overflow.iter().map(|&j| {
                let (kind, limited) = (joints.kind[j as usize], joints.limit[j as usize].is_some());
                let batch = Batch {
                    kind,
                    limited,
                    start: 0,
                    len: 1,
                };
                (
                    JointBatch::new(&batch, &[j], joints, bodies),
                    param_lanes(kind, &[j], joints),
                )
            }),
            JointBatch::row_count,
        );
        // A projection group's lanes compute their rows with lane 0's joint type, so every
        // lane's joint at one step must have the same type and limit presence.
        // A hub's limits are not projected: the hub solve's exact bias system takes their
        // violation back. Projected (Gauss-Seidel through the hub), a light hub's limited
        // spokes were left millimetres short of their stops, where the velocity solve has no
        // limit row, and the velocity that carried them there grew unchecked
        // (engine/DESIGN.md, *Hubs*).
        let mut projection_limited: Vec<bool> = joints.limit.iter().map(Option::is_some).collect();
        for &j in schedule.hubs.iter().flat_map(|h| &h.joints) {
            projection_limited[j as usize] = false;
        }
        let signature = |j: u32| {
            let j = j as usize;
            crate::schedule::signature(joints.kind[j], projection_limited[j])
        };
        let mut serial_steps = Vec::new();
        let mut serial = GroupBuilder::<L>::new(&mut serial_steps);
        for range in &schedule.serial_islands {
            let island = &schedule.island_joints[range.clone()];
            if !island.is_empty() {
                serial.push(island.iter().map(|&j| signature(j)).collect(), island);
            }
        }
        // Groups of one island on the wide path go to the scalar kernels, the others keep
        // their lanes.
        let (mut projection_steps, mut serial_groups) = (Vec::new(), Vec::new());
        let (mut lone_steps, mut lone_groups) = (Vec::new(), Vec::new());
        for g in serial.finish() {
            let steps = &serial_steps[g.steps.clone()];
            if L::WIDTH > 1 && g.lanes == 1 {
                let start = lone_steps.len();
                lone_steps.extend(steps.iter().map(|ids| [ids.as_ref()[0]]));
                lone_groups.push(ProjectionGroup {
                    steps: start..lone_steps.len(),
                    lanes: 1,
                    _lane: std::marker::PhantomData,
                });
            } else {
                let start = projection_steps.len();
                projection_steps.extend_from_slice(steps);
                serial_groups.push(ProjectionGroup {
                    steps: start..projection_steps.len(),
                    ..g
                });
            }
        }
        let lone_params = (lone_steps.iter())
            .map(|ids| param_lanes(joints.kind[ids[0] as usize], ids, joints))
            .collect();
        let (mut color_groups, mut color_group_ranges) = (Vec::new(), Vec::new());
        for range in &schedule.projection_colors {
            let mut color = GroupBuilder::<L>::new(&mut projection_steps);
            for j in &schedule.projection_joints[range.clone()] {
                color.push(vec![signature(*j)], std::slice::from_ref(j));
            }
            let start = color_groups.len();
            color_groups.extend(color.finish());
            color_group_ranges.push(start..color_groups.len());
        }
        // One group each: overflow joints share bodies, so they run one after another.
        let mut overflow_groups = Vec::new();
        for &j in &schedule.projection_overflow {
            let mut ids = L::Indices::default();
            ids.as_mut().fill(j);
            projection_steps.push(ids);
            let end = projection_steps.len();
            overflow_groups.push(ProjectionGroup {
                steps: end - 1..end,
                lanes: 1,
                _lane: std::marker::PhantomData,
            });
        }
        let mut projection_params = Vec::with_capacity(projection_steps.len());
        for g in serial_groups
            .iter()
            .chain(&color_groups)
            .chain(&overflow_groups)
        {
            // Groups were emitted in step order, so the parameters line up with the steps.
            assert_eq!(g.steps.start, projection_params.len());
            for ids in &projection_steps[g.steps.clone()] {
                let ids = &ids.as_ref()[..g.lanes];
                let first = signature(ids[0]);
                assert!(
                    ids.iter().all(|&j| signature(j) == first),
                    "a projection step mixes joint signatures: {ids:?}"
                );
                projection_params.push(param_lanes(joints.kind[ids[0] as usize], ids, joints));
            }
        }
        fn chain_lanes<M: Lane>(
            schedule: &Schedule,
            g: &crate::schedule::ChainGroup,
            joints: &Joints,
            bodies: &Bodies,
        ) -> chain::ChainLanes<M> {
            let (batches, params) = (0..g.len())
                .map(|k| {
                    let ids = schedule.chain_joints_at(g, k);
                    let batch = Batch {
                        kind: g.kinds[k],
                        limited: g.limited[k],
                        start: 0,
                        len: ids.len() as u32,
                    };
                    (
                        JointBatch::new(&batch, ids, joints, bodies),
                        param_lanes(g.kinds[k], ids, joints),
                    )
                })
                .unzip();
            chain::ChainLanes::new(batches, params, g.links.clone())
        }
        let hubs = (schedule.hubs.iter())
            .map(|h| {
                let (batches, params) = h
                    .joints
                    .iter()
                    .map(|&j| {
                        let batch = Batch {
                            kind: joints.kind[j as usize],
                            limited: joints.limit[j as usize].is_some(),
                            start: 0,
                            len: 1,
                        };
                        (
                            JointBatch::new(&batch, &[j], joints, bodies),
                            param_lanes(joints.kind[j as usize], &[j], joints),
                        )
                    })
                    .unzip();
                let hub_is_a = h
                    .joints
                    .iter()
                    .map(|&j| joints.body_a[j as usize] == h.body)
                    .collect();
                hub::HubSolve::new(h.body as usize, batches, params, hub_is_a)
            })
            .collect();
        let lone = |g: &&crate::schedule::ChainGroup| L::WIDTH > 1 && g.lanes == 1;
        let chains = (schedule.chain_groups.iter())
            .filter(|g| !lone(g))
            .map(|g| chain_lanes::<L>(schedule, g, joints, bodies))
            .collect();
        let lone_chains = (schedule.chain_groups.iter())
            .filter(lone)
            .map(|g| chain_lanes::<f32>(schedule, g, joints, bodies))
            .collect();
        Solver {
            chains,
            lone_chains,
            batches,
            singles,
            colors: schedule.colors.iter().map(color_batches).collect(),
            overflow,
            shared_overflow: schedule.shared_overflow,
            clusters: (schedule.clusters.iter())
                .map(|c| ClusterBatches {
                    colors: c.colors.iter().map(color_batches).collect(),
                    overflow: c.overflow.clone(),
                })
                .collect(),
            hubs,
            projection_steps,
            projection_params,
            serial_groups,
            lone_groups,
            lone_steps,
            lone_params,
            color_groups,
            color_group_ranges,
            overflow_groups,
            projection_limited,
            stages: Stages::default(),
        }
    }

    /// Bytes of batch storage.
    pub(crate) fn bytes(&self) -> usize {
        let groups =
            self.serial_groups.len() + self.color_groups.len() + self.overflow_groups.len();
        let lone = self.lone_groups.len() * size_of::<ProjectionGroup<f32>>()
            + self.lone_steps.len() * (size_of::<[u32; 1]>() + size_of::<ParamLanes<f32>>());
        self.batches.bytes()
            + self.singles.bytes()
            + self.overflow.bytes()
            + self.projection_steps.len()
                * (std::mem::size_of::<L::Indices>() + std::mem::size_of::<ParamLanes<L>>())
            + groups * std::mem::size_of::<ProjectionGroup<L>>()
            + lone
            + self.chains.iter().map(|c| c.bytes()).sum::<usize>()
            + self.hubs.iter().map(|h| h.bytes()).sum::<usize>()
            + self.lone_chains.iter().map(|c| c.bytes()).sum::<usize>()
    }

    /// Active rows at the last prepare.
    pub(crate) fn active_rows(&self) -> usize {
        [
            self.batches.active_rows(),
            self.singles.active_rows(),
            self.overflow.active_rows(),
        ]
        .into_iter()
        .chain(self.chains.iter().map(|c| c.active_rows()))
        .chain(self.hubs.iter().map(|h| h.active_rows()))
        .chain(self.lone_chains.iter().map(|c| c.active_rows()))
        .sum()
    }

    /// Runs `passes` passes of `f(batch, pass)` over the batches and of `overflow(batch,
    /// pass)` over the overflow joints, and with the chain solve of `chain(group, pass)`
    /// over the chain groups: one parallel region ([`Stages`]) for all passes.
    ///
    /// First the clusters ([`crate::schedule::Cluster`]), in parallel, each one task through all the passes
    /// (per pass: its colours in order, then its overflow joints), so that its rows stay in
    /// the core's cache from pass to pass. Then, per pass, the shared joints: the chain
    /// groups (in parallel, before the colours: they share no dynamic body), each colour (its
    /// batches in parallel per `exec`, in tasks of [`BATCH_CHUNK`], its single scalar batches
    /// as one more task), then the overflow
    /// joints, serially. Every island sees the same order either way: clusters and shared
    /// joints share no body.
    fn each_color(
        &mut self,
        exec: Exec,
        passes: usize,
        work: ItemWork<
            impl Fn(&mut hub::HubSolve, usize) + Sync,
            impl Fn(&mut chain::ChainLanes<L>, usize) + Sync,
            impl Fn(&mut chain::ChainLanes<f32>, usize) + Sync,
            impl Fn(
                    &mut JointBatch<L>,
                    &mut [RowLanes<L>],
                    &ParamLanes<L>,
                    usize,
                    &mut RowScratch<L>,
                ) + Sync,
            impl Fn(
                    &mut JointBatch<f32>,
                    &mut [RowLanes<f32>],
                    &ParamLanes<f32>,
                    usize,
                    &mut RowScratch<f32>,
                ) + Sync,
        >,
    ) {
        let ItemWork {
            hub,
            chain,
            lone_chain,
            batch: f,
            overflow,
        } = work;
        let Solver {
            batches,
            singles,
            colors,
            overflow: overflow_batches,
            shared_overflow,
            clusters,
            hubs,
            chains,
            lone_chains,
            stages,
            ..
        } = self;
        let shared_overflow = *shared_overflow;
        // Per pass: the hubs (a stage only where there are hubs), the chains, each colour, the
        // overflow.
        let hub_stage = usize::from(!hubs.is_empty());
        let per_pass = hub_stage + colors.len() + 2;
        let overflow_items = usize::from(shared_overflow > 0);
        let chain_items = chains.len() + lone_chains.len();
        let grouped = chains.len();
        let shared = !hubs.is_empty()
            || chain_items > 0
            || overflow_items > 0
            || colors
                .iter()
                .any(|c| !c.lanes.is_empty() || !c.singles.is_empty());
        let cluster_stages = usize::from(!clusters.is_empty());
        let shared_stages = if shared { passes * per_pass } else { 0 };
        let (batches, overflow_batches) = (batches.shared(), overflow_batches.shared());
        let singles = singles.shared();
        // A shared colour's items: its lane batches in chunks, then its singles as one.
        let color_items = |c: &ColorBatches| {
            c.lanes.len().div_ceil(BATCH_CHUNK) + usize::from(!c.singles.is_empty())
        };
        let hub_items = hubs.len();
        let (chains, lone_chains) = (Shared::new(chains), Shared::new(lone_chains));
        let hubs = Shared::new(hubs);
        let items = |stage: usize| {
            if stage < cluster_stages {
                return clusters.len();
            }
            let stage = stage - cluster_stages;
            match stage % per_pass {
                s if s < hub_stage => hub_items,
                s if s == hub_stage => chain_items,
                s => match colors.get(s - hub_stage - 1) {
                    Some(c) => color_items(c),
                    None => overflow_items,
                },
            }
        };
        // The batches of `range` run with no other task touching them or their dynamic bodies:
        // the callers below hand over ranges of one colour (in parallel only with other ranges
        // of that colour: disjoint bodies), of one cluster (its islands are no other task's),
        // or an overflow range (run alone, or in its cluster's task).
        // One row scratch per range, shared by its batches.
        let run_batches = |range: Range<usize>, pass: usize| {
            let mut scratch = RowScratch::default();
            // SAFETY: the range is this task's alone (above).
            for (b, rows, params) in unsafe { batches.range_mut(range) } {
                f(b, rows, params, pass, &mut scratch);
            }
        };
        let run_overflow = |range: Range<usize>, pass: usize| {
            let mut scratch = RowScratch::default();
            // SAFETY: as in `run_batches`.
            for (b, rows, params) in unsafe { overflow_batches.range_mut(range) } {
                overflow(b, rows, params, pass, &mut scratch);
            }
        };
        // A colour's singles, on the scalar kernels (the overflow's).
        let run_singles = |range: Range<usize>, pass: usize| {
            let mut scratch = RowScratch::default();
            // SAFETY: as in `run_batches`: a colour's singles are one task's, and share no
            // dynamic body with the colour's other batches.
            for (b, rows, params) in unsafe { singles.range_mut(range) } {
                overflow(b, rows, params, pass, &mut scratch);
            }
        };
        stages.run(
            exec,
            cluster_stages + shared_stages,
            &items,
            &|stage, chunks| {
                if stage < cluster_stages {
                    // Each cluster is handed out once; clusters share no body with each other or
                    // with the shared joints.
                    for cluster in &clusters[chunks] {
                        for pass in 0..passes {
                            for c in &cluster.colors {
                                run_batches(c.lanes.clone(), pass);
                                run_singles(c.singles.clone(), pass);
                            }
                            run_overflow(cluster.overflow.clone(), pass);
                        }
                    }
                    return;
                }
                let stage = stage - cluster_stages;
                let pass = stage / per_pass;
                if stage % per_pass < hub_stage {
                    // SAFETY: each item (one hub) is handed out once per stage; hubs share no
                    // dynamic body, and the stage runs alone.
                    for item in chunks {
                        hub(unsafe { &mut hubs.slice_mut(item..item + 1)[0] }, pass);
                    }
                    return;
                }
                if stage % per_pass == hub_stage {
                    // SAFETY: each item (one chain group, grouped ones first, then the lone
                    // ones) is handed out once per stage; groups share no dynamic body, and the
                    // stage runs alone.
                    for item in chunks {
                        if item < grouped {
                            chain(unsafe { &mut chains.slice_mut(item..item + 1)[0] }, pass);
                        } else {
                            let i = item - grouped;
                            lone_chain(unsafe { &mut lone_chains.slice_mut(i..i + 1)[0] }, pass);
                        }
                    }
                    return;
                }
                match colors.get(stage % per_pass - hub_stage - 1) {
                    Some(c) => {
                        // The stage runner hands out each item of a stage once, and the items of
                        // one colour are disjoint ranges of batches, then its singles.
                        let lane_items = c.lanes.len().div_ceil(BATCH_CHUNK);
                        let (first, last) =
                            (chunks.start.min(lane_items), chunks.end.min(lane_items));
                        if first < last {
                            let start = c.lanes.start + first * BATCH_CHUNK;
                            let end = (c.lanes.start + last * BATCH_CHUNK).min(c.lanes.end);
                            run_batches(start..end, pass);
                        }
                        if chunks.end > lane_items {
                            run_singles(c.singles.clone(), pass);
                        }
                    }
                    // The shared overflow is one item, run alone in its stage.
                    None => run_overflow(0..shared_overflow, pass),
                }
            },
        );
    }

    /// Prepare every batch, then warm start it on the velocities `access` views, batch by
    /// batch while its rows are in cache. Colour by colour like the velocity passes
    /// ([`Solver::each_color`]), so that a thread prepares the block of each colour it then
    /// solves first. Bitwise the same as a prepare stage followed by a warm-start stage:
    /// prepare reads only poses and masses, which warm start does not change, and the warm
    /// starts run in the same colour order.
    pub(crate) fn prepare_and_warm_start(
        &mut self,
        exec: Exec,
        input: &PrepareInput,
        access: BodyAccess,
    ) {
        // SAFETY (both): `each_color` runs the batches of one colour concurrently; the
        // coloring gives them disjoint dynamic bodies, and the overflow runs alone.
        let work = ItemWork {
            hub: |h: &mut hub::HubSolve, _| {
                h.prepare(input);
                unsafe { h.warm_start(&access) }
            },
            chain: |c: &mut chain::ChainLanes<L>, _| {
                c.prepare(input);
                unsafe { c.warm_start(&access) }
            },
            lone_chain: |c: &mut chain::ChainLanes<f32>, _| {
                c.prepare(input);
                unsafe { c.warm_start(&access) }
            },
            batch: |b: &mut JointBatch<L>,
                    rows: &mut [RowLanes<L>],
                    params: &ParamLanes<L>,
                    _,
                    scratch: &mut RowScratch<L>| {
                b.prepare(rows, input, params, scratch);
                unsafe { b.warm_start(rows, &access) }
            },
            overflow: |b: &mut JointBatch<f32>,
                       rows: &mut [RowLanes<f32>],
                       params: &ParamLanes<f32>,
                       _,
                       scratch: &mut RowScratch<f32>| {
                b.prepare(rows, input, params, scratch);
                unsafe { b.warm_start(rows, &access) }
            },
        };
        self.each_color(exec, 1, work);
    }

    /// `passes.0` velocity passes; with bias velocities `u`, the first `passes.1` of them also
    /// run one bias pass each, fused (see [`JointBatch::solve_with_bias`]). Then the impulses
    /// and forces are stored
    /// into `joints` ([`JointBatch::store`]), each batch right after its last pass, while
    /// its rows are in cache (bitwise the same as a separate stage: a batch's last pass is
    /// the last to change its impulses).
    pub(crate) fn solve(
        &mut self,
        exec: Exec,
        (passes, bias_passes): (usize, usize),
        (v, u): (BodyAccess, Option<BodyAccess>),
        joints: &mut Joints,
        inv_h: f32,
    ) {
        if passes == 0 {
            return self.store(joints, inv_h);
        }
        let out = JointOutputs::new(joints);
        let last = passes - 1;
        let u = u.as_ref();
        let bias = |pass: usize| u.filter(|_| pass < bias_passes);
        let store = |pass: usize| (pass == last).then_some((&out, inv_h));
        // SAFETY (both): as in `warm_start`, for both arrays; `store` writes only the batch's
        // own joints' outputs, and every joint is in one batch or the overflow.
        let work = ItemWork {
            hub: |h: &mut hub::HubSolve, pass| unsafe {
                h.velocity_pass(&v, bias(pass), store(pass))
            },
            chain: |c: &mut chain::ChainLanes<L>, pass| unsafe {
                c.velocity_pass(&v, bias(pass), store(pass))
            },
            lone_chain: |c: &mut chain::ChainLanes<f32>, pass| unsafe {
                c.velocity_pass(&v, bias(pass), store(pass))
            },
            batch: |b: &mut JointBatch<L>,
                    rows: &mut [RowLanes<L>],
                    _: &ParamLanes<L>,
                    pass,
                    _: &mut RowScratch<L>| unsafe {
                b.velocity_pass(rows, &v, bias(pass), store(pass))
            },
            overflow: |b: &mut JointBatch<f32>,
                       rows: &mut [RowLanes<f32>],
                       _: &ParamLanes<f32>,
                       pass,
                       _: &mut RowScratch<f32>| unsafe {
                b.velocity_pass(rows, &v, bias(pass), store(pass))
            },
        };
        self.each_color(exec, passes, work);
    }

    /// Store impulses and forces (without a velocity pass).
    /// Serial: only a run with no velocity pass gets here.
    fn store(&self, joints: &mut Joints, inv_h: f32) {
        let out = JointOutputs::new(joints);
        // SAFETY (all): every joint is in exactly one batch, single, overflow batch, chain or
        // hub, and each is stored once.
        unsafe {
            self.batches.store(&out, inv_h);
            self.singles.store(&out, inv_h);
            self.overflow.store(&out, inv_h);
        }
        for c in &self.chains {
            // SAFETY: as above.
            unsafe { c.store(&out, inv_h) };
        }
        for c in &self.lone_chains {
            // SAFETY: as above.
            unsafe { c.store(&out, inv_h) };
        }
        for h in &self.hubs {
            // SAFETY: as above.
            unsafe { h.store(&out, inv_h) };
        }
    }

    /// One projection pass. Islands of up to
    /// [`crate::schedule::SERIAL_PROJECTION_MAX_JOINTS`] joints: island by island, each
    /// island's joints in joint order (serial non-linear Gauss-Seidel), islands with the same
    /// joint signatures in the lanes of one [`ProjectionGroup`], groups in parallel. Larger
    /// islands: by colours, the joints of a colour in lanes (grouped by signature) and in
    /// parallel, then their overflow joints one by one.
    ///
    /// Why not all by colours like the velocity passes: a projection pass is a Gauss-Seidel
    /// sweep on the positions, and a sweep along a chain in joint order carries a correction
    /// from the anchor to the free end in one pass, while colours carry it two joints per
    /// pass. Measured over the shipped scenes (5 s, default settings), projection by colours
    /// left max anchor errors of 2.17 cm on the 100-link chain (joint order: 1.51 cm; the
    /// bound is 2 cm), 9.2e-4 m on the 20 x 20 grid (4.4e-4 m) and a 0.077 rad twist on the
    /// welded cantilever (0.049 rad); more projection passes did not close the gap (4 passes:
    /// 2.10 cm), nor 24 cyclic colours (1.95 cm), nor reversing the colour order (1.78 cm).
    pub(crate) fn project(
        &mut self,
        exec: Exec,
        passes: usize,
        poses: PoseAccess,
        joints: &Joints,
        factor: f32,
    ) {
        let Solver {
            projection_steps,
            projection_params,
            serial_groups,
            lone_groups,
            lone_steps,
            lone_params,
            color_groups,
            color_group_ranges,
            overflow_groups,
            projection_limited,
            stages,
            ..
        } = self;
        let group = |scratch: &mut RowScratch<L>, g: &ProjectionGroup<L>| {
            let steps = g.steps.clone();
            for step in projection_steps[steps.clone()]
                .iter()
                .zip(&projection_params[steps])
            {
                // SAFETY: a group's lanes are different islands, or joints of one colour, so
                // they share no dynamic body; groups run concurrently only with groups of
                // other islands or of the same colour (below).
                unsafe {
                    project_step::<L>(
                        scratch,
                        &poses,
                        joints,
                        step,
                        (g.lanes, projection_limited),
                        factor,
                    )
                };
            }
        };
        let lone_group = |scratch: &mut RowScratch<f32>, g: &ProjectionGroup<f32>| {
            let steps = g.steps.clone();
            for step in lone_steps[steps.clone()].iter().zip(&lone_params[steps]) {
                // SAFETY: as in `group`: the island is no other task's.
                unsafe {
                    project_step::<f32>(
                        scratch,
                        &poses,
                        joints,
                        step,
                        (1, projection_limited),
                        factor,
                    )
                };
            }
        };
        // First the island groups (up to 4,096 steps of eight joints: one item each; then the
        // lone islands, one item each), each through all the passes while its poses are in
        // cache (groups hold different islands, so their order across passes changes no
        // result). Then per pass: each colour's
        // groups (one step each: items of SHARED_CHUNK), the overflow (one item, its groups
        // one after another).
        let island_items = serial_groups.len() + lone_groups.len();
        let island_stages = usize::from(island_items > 0);
        let per_pass = color_group_ranges.len() + 1;
        let shared_stages = if color_groups.is_empty() && overflow_groups.is_empty() {
            0
        } else {
            passes * per_pass
        };
        let colors = |stage: usize| (stage - island_stages) % per_pass;
        let items = |stage: usize| match stage.checked_sub(island_stages) {
            None => island_items,
            Some(_) => match colors(stage) {
                c if c < color_group_ranges.len() => {
                    color_group_ranges[c].len().div_ceil(SHARED_CHUNK)
                }
                _ => usize::from(!overflow_groups.is_empty()),
            },
        };
        stages.run(
            exec,
            island_stages + shared_stages,
            &items,
            &|stage, chunks| {
                let mut scratch = RowScratch::default();
                if stage < island_stages {
                    let mut lone_scratch = RowScratch::default();
                    for item in chunks {
                        match serial_groups.get(item) {
                            Some(g) => (0..passes).for_each(|_| group(&mut scratch, g)),
                            None => {
                                let g = &lone_groups[item - serial_groups.len()];
                                (0..passes).for_each(|_| lone_group(&mut lone_scratch, g));
                            }
                        }
                    }
                    return;
                }
                let groups = match colors(stage) {
                    c if c < color_group_ranges.len() => {
                        let range = &color_group_ranges[c];
                        let start = range.start + chunks.start * SHARED_CHUNK;
                        let end = (range.start + chunks.end * SHARED_CHUNK).min(range.end);
                        &color_groups[start..end]
                    }
                    _ => &overflow_groups[..],
                };
                groups.iter().for_each(|g| group(&mut scratch, g));
            },
        );
    }
}

#[cfg(test)]
impl<L: Lane> Solver<L> {
    /// Joints run as single scalar batches.
    pub(crate) fn single_batches(&self) -> usize {
        self.singles.len()
    }

    /// Fills every padded lane's rows and masses with NaN (for the neutrality test).
    pub(crate) fn poison_padding(&mut self) -> usize {
        let mut poisoned = 0;
        for (b, rows, _) in self.batches.iter_mut() {
            for lane in b.len..L::WIDTH {
                poisoned += 1;
                b.inv_mass_a.set_lane(lane, f32::NAN);
                b.inv_mass_b.set_lane(lane, f32::NAN);
                b.limit_speculative.set_lane(lane, f32::NAN);
                for r in rows.iter_mut() {
                    for v in [
                        &mut r.linear,
                        &mut r.angular_a,
                        &mut r.angular_b,
                        &mut r.inv_i_angular_a,
                        &mut r.inv_i_angular_b,
                    ] {
                        v.set_lane(lane, Vec3::NAN);
                    }
                    for x in [
                        &mut r.effective_mass,
                        &mut r.bias,
                        &mut r.curvature,
                        &mut r.impulse,
                        &mut r.bias_impulse,
                    ] {
                        x.set_lane(lane, f32::NAN);
                    }
                }
            }
        }
        poisoned
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scene, Settings, SolverPath};

    #[test]
    fn padded_lanes_are_neutral_even_when_full_of_nan() {
        // Every shipped scene whose colours end in partly filled batches (of more than
        // `SINGLE_BATCH_MAX_LANES` joints: fewer run as single scalar batches). NaN in every
        // padded lane must change no bit of the result, and the result must equal the scalar
        // path's.
        let mut poisoned = 0;
        for (name, _) in crate::scene::builtin_scenes() {
            let scene = Scene::builtin(name).unwrap();
            let run = |path: SolverPath, poison: bool| {
                let settings = Settings {
                    solver_path: path,
                    ..scene.settings()
                };
                let mut world = scene.build_with(settings).unwrap();
                world.step(scene.frame_dt()).unwrap();
                let lanes = if poison { world.poison_padding() } else { 0 };
                for _ in 0..30 {
                    world.step(scene.frame_dt()).unwrap();
                }
                (world.state_hash(), lanes)
            };
            let (clean, _) = run(SolverPath::Wide, false);
            let (dirty, lanes) = run(SolverPath::Wide, true);
            assert_eq!(dirty, clean, "{name}: {lanes} padded lanes of NaN");
            assert_eq!(run(SolverPath::Scalar, false).0, clean, "{name}");
            poisoned += lanes;
        }
        // With 8 lanes the 20 x 20 grid has 5 padded lanes, the welded cantilever 6; with
        // 16 (`lanes16` on an AVX-512 build), 35 in all.
        let expected = if crate::lanes::WIDE_LANES == 8 {
            11
        } else {
            35
        };
        assert_eq!(poisoned, expected, "padded lanes poisoned");
    }

    #[test]
    fn nearly_empty_batches_run_as_singles_with_the_same_bits() {
        // The 100-link chain: two colours of 50 revolute joints, each ending in a batch of 2
        // joints, which the wide path runs as single scalar batches (the scalar path's
        // batches are all single); both give the same bits.
        let scene = Scene::builtin("chain").unwrap();
        let run = |path: SolverPath| {
            let settings = Settings {
                solver_path: path,
                ..scene.settings()
            };
            let mut world = scene.build_with(settings).unwrap();
            for _ in 0..30 {
                world.step(scene.frame_dt()).unwrap();
            }
            (world.state_hash(), world.single_batches())
        };
        let (wide, singles) = run(SolverPath::Wide);
        assert_eq!(singles, 4);
        assert_eq!(run(SolverPath::Scalar), (wide, 0));
    }

    #[test]
    fn slot_masks_put_the_limit_row_last() {
        assert_eq!(slot_masks(JointKind::Revolute, true), (0b111111, 0b100000));
        assert_eq!(slot_masks(JointKind::Prismatic, false), (0b011111, 0));
        assert_eq!(slot_masks(JointKind::Spherical, false).0.count_ones(), 3);
        // Batches store `n` rows for slots `0..n`: every signature is a prefix.
        for kind in JointKind::ALL {
            for limited in [false, true] {
                let (slots, unilateral) = slot_masks(kind, limited);
                assert_eq!(slots, (1u8 << slots.count_ones()) - 1, "{kind:?} {limited}");
                // At most one unilateral slot: the batch keeps one speculative offset.
                assert_eq!(unilateral & !slots, 0);
                assert!(unilateral.count_ones() <= 1);
            }
        }
    }
}
