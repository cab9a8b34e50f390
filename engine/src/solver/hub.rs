//! The hub solve: a hub's joints ([`crate::schedule::hubs`]) solved exactly in every velocity
//! pass, instead of row by row.
//!
//! Each joint is one scalar [`JointBatch`] (the hub's joints have no common shape to share
//! lanes), prepared like any batch: rows decoupled, so that each joint's own block of
//! `K = J M^-1 J^T` is the identity. Two joints of a hub share only the hub `H` (their other
//! bodies are distinct, or static or kinematic), so the rest of `K` is the coupling through
//! the hub: `K[(k,i),(l,j)] = J_ki^H M_H^-1 (J_lj^H)^T`, where a row acts on body A as
//! `(-linear, angular_a)` and on body B as `(+linear, angular_b)`. Prepare factorises it
//! through the hub's six degrees of freedom ([`Reduced`]: a block per joint, a 6 x 6 system
//! for the hub, a small one for the joints to static or kinematic bodies), in time linear in
//! the joints. A row to a fixed body that depends on the others is dropped in the small
//! system, as the dense factors would drop it; where a pivot of a joint's block would drop a
//! row, prepare builds the dense system instead (hubs of at most [`DENSE_MAX_ROWS`] rows) and
//! factorises that (`L D L^T`, the dependent row dropped as in the decoupling). A larger hub
//! keeps the reduced factors with that row dropped in the block. Pivots count as dropped at
//! or below [`RELATIVE_PIVOT`] of their diagonal. A velocity pass solves `K dlambda = -(J v + offset)` on the current
//! velocities and applies `dlambda` joint by joint. The bias system (split impulses) is solved exactly too, with the same
//! factors, unlike the chain solve's (which sweeps it joint by joint: solved exactly along a
//! long chain it made large pose changes along the chain's soft modes). A hub is a star, with
//! no long soft modes, and the exact bias solve measured better than a sweep everywhere (before
//! curvature offsets): the
//! swinging shipped `hub` scene's anchor error over 10 s 3.3e-5 m against 3.6e-4 m, a hub
//! spun at 10 rad/s 1.4e-2 m against 0.24 m, a hub of every joint type 1.7e-7 m against
//! 9.7e-7 m. The joints that touch the hub's bodies from outside are solved by the colours
//! after the hubs, in the same pass (block Gauss-Seidel).
//!
//! The system (its factors, right-hand sides and solutions) in `f64` ([`Real`]), the rows and
//! velocities it reads and writes in `f32`; the same on both paths, so the scalar and wide
//! paths agree bit for bit.

use super::{apply, Batches, JointBatch, JointOutputs, PrepareInput, RowLanes};
use crate::joints::ParamLanes;
use crate::lanes::BodyAccess;
use crate::rows::MIN_K;

/// Most solves of one system in one velocity pass while the active limits change
/// ([`HubSolve::solve_system`]); a limit still out of place after them is moved in the next
/// pass.
const ACTIVE_SET_ROUNDS: usize = 32;

/// Rounds of [`HubSolve::solve_system`] that may move every limit out of place without
/// lowering their count before it moves one at a time.
const PATIENCE: usize = 3;

/// How far a limit out of the system may be violated before it enters it (m/s or rad/s, of
/// `J v + offset`): above the round-off of an exact solve (1e-9 to 1e-7 here).
const LIMIT_TOLERANCE: f32 = 1e-6;

/// The hub system's arithmetic: its entries are sums of products of `f32` rows, masses and
/// lever arms of very different sizes (a light hub, heavy leaves far out on sliders), whose
/// factors in `f32` lost what the solve needs.
type Real = f64;

/// A row's 3-vector in [`Real`].
fn real3(v: &crate::lanes::V3<f32>) -> glam::DVec3 {
    glam::DVec3::new(Real::from(v.x), Real::from(v.y), Real::from(v.z))
}

/// A pivot of the hub's factors at or below this fraction of its diagonal is taken for a row
/// that depends on the others: a dependent row's pivot is round-off, about `n` times 1.2e-7 of
/// its diagonal (the system is `f64`, its entries come from `f32` rows), and kept it
/// multiplied the solve's errors by up to 1e7. Five
/// ball joints from a hub to the ground, consistent but redundant, then threw the hub 6 m
/// in one substep (QA, 2026-12-05).
const RELATIVE_PIVOT: Real = 1e-4;

/// Most rows of a hub with a dense fallback ([`HubSolve::prepare`]): 64 joints of 6 rows,
/// a factor of 590 KB and 1.9e7 multiply-adds a prepare.
pub(crate) const DENSE_MAX_ROWS: usize = 384;

/// One hub's joints and their factorised system.
#[derive(Debug, Clone)]
pub(crate) struct HubSolve {
    /// The joints, in joint order, one scalar batch each.
    batches: Batches<f32>,
    /// Whether the hub is each joint's body A.
    hub_is_a: Vec<bool>,
    /// First row of each joint in the system, and the row count at the end.
    offsets: Vec<usize>,
    /// The hub body.
    hub: usize,
    /// Whether the factors are the dense ones (`factor`) or the hub-reduced ones (`reduced`);
    /// see [`HubSolve::prepare`].
    dense: bool,
    /// The `L D L^T` factors, `n x n` row-major: `L` strictly below the diagonal, `1 / D` on
    /// it (0 for a dropped row); empty for a hub of more than [`DENSE_MAX_ROWS`] rows.
    factor: Vec<Real>,
    /// Whether the last factorisation found factors (see [`HubSolve::prepare`]).
    solvable: bool,
    /// The hub's inverse mass and world inertia (kg^-1, kg m^2) at the last prepare, for
    /// refactorising when the active limits change.
    hub_inv_mass: f32,
    hub_inertia: glam::DMat3,
    /// The system row of each limit (unilateral) row, in order.
    limit_rows: Vec<usize>,
    /// Which limit rows are in the system, for the velocity and the bias system.
    limits_on: [Vec<bool>; 2],
    /// Per system row: in the system the factors are of (bilateral rows always).
    row_on: Vec<bool>,
    /// The limits in the system the factors are of (`limits_on` at the last factorisation).
    factored_limits: Vec<bool>,
    /// Scratch of a pass: the limits out of place, by index into `limit_rows`.
    infeasible: Vec<usize>,
    /// The hub-reduced factors ([`Reduced`]).
    reduced: Reduced,
    /// Scratch of a pass: the right-hand side, then `dlambda`.
    work: Vec<Real>,
}

/// `K = B + G W G^T` solved through the hub's six degrees of freedom, where `G` (a row per
/// constraint row) is the hub's side of the rows, `W = M_H^-1`, and `B` is block diagonal:
/// each joint's block from its other body alone (zero for a static or kinematic one). With
/// `mu = W G^T lambda` (the hub's velocity change): a joint `k` to a dynamic body has
/// `lambda_k = B_k^-1 (r_k - G_k mu)`; one to a fixed body `G_k mu = r_k`; and
/// `(M_H + sum_dyn G_k^T B_k^-1 G_k) mu - G_S^T lambda_S = sum_dyn G_k^T B_k^-1 r_k`. So `A` (6
/// x 6) for the hub, `C = G_S A^-1 G_S^T` for the fixed-body rows, and one small block per
/// joint, instead of one `n x n` system: linear in the joints.
#[derive(Debug, Clone)]
struct Reduced {
    /// Per row: `G` (linear then angular).
    g: Vec<[Real; 6]>,
    /// Per row of a joint to a dynamic body: `B_k^-1 G_k` (zero for the others).
    b_inv_g: Vec<[Real; 6]>,
    /// Per joint to a dynamic body: the `L D L^T` factors of `B_k`, `m x m` at
    /// `block_offsets[k]` (`m` its rows).
    blocks: Vec<Real>,
    block_offsets: Vec<usize>,
    /// Whether each joint's other body is dynamic.
    dynamic_leaf: Vec<bool>,
    /// The factors of `A`.
    a: [Real; 36],
    /// The rows of the joints to fixed bodies, in order.
    fixed_rows: Vec<usize>,
    /// Per fixed row: `A^-1 G_row^T`.
    a_inv_g: Vec<[Real; 6]>,
    /// The factors of `C`, `s x s` for the `s` fixed rows.
    c: Vec<Real>,
    /// Scratch: a right-hand side per fixed row, and of `A`'s size.
    fixed_work: Vec<Real>,
}

impl HubSolve {
    /// A hub from its joints' batches and whether the hub is each one's body A.
    pub(super) fn new(
        hub: usize,
        batches: Vec<JointBatch<f32>>,
        params: Vec<ParamLanes<f32>>,
        hub_is_a: Vec<bool>,
    ) -> Self {
        // Signatures fill slots 0..rows, a limit's last (see `slot_masks`).
        debug_assert!(batches.iter().all(|b| {
            let rows = b.slots.count_ones();
            b.slots == (1u8 << rows) - 1 && (b.unilateral == 0 || b.unilateral == 1 << (rows - 1))
        }));
        let mut offsets = vec![0];
        let mut limit_rows = Vec::new();
        for b in &batches {
            let first = offsets[offsets.len() - 1];
            let rows = b.slots.count_ones() as usize;
            if b.unilateral != 0 {
                limit_rows.push(first + rows - 1);
            }
            offsets.push(first + rows);
        }
        let n = offsets[offsets.len() - 1];
        let limits = limit_rows.len();
        let mut block_offsets = vec![0];
        for b in &batches {
            let m = b.slots.count_ones() as usize;
            block_offsets.push(block_offsets[block_offsets.len() - 1] + m * m);
        }
        let reduced = Reduced {
            g: vec![[0.0; 6]; n],
            b_inv_g: vec![[0.0; 6]; n],
            blocks: vec![0.0; block_offsets[block_offsets.len() - 1]],
            block_offsets,
            dynamic_leaf: vec![false; batches.len()],
            a: [0.0; 36],
            fixed_rows: Vec::with_capacity(n),
            a_inv_g: Vec::with_capacity(n),
            // Sized at the first prepare: only the rows to fixed bodies are in it.
            c: Vec::new(),
            fixed_work: vec![0.0; n.max(6)],
        };
        HubSolve {
            batches: Batches::new(batches.into_iter().zip(params), JointBatch::row_count),
            hub_is_a,
            offsets,
            hub,
            dense: true,
            factor: if n <= DENSE_MAX_ROWS {
                vec![0.0; n * n]
            } else {
                Vec::new()
            },
            solvable: true,
            hub_inv_mass: 0.0,
            hub_inertia: glam::DMat3::ZERO,
            limit_rows,
            limits_on: [vec![false; limits], vec![false; limits]],
            row_on: vec![true; n],
            factored_limits: vec![false; limits],
            infeasible: Vec::with_capacity(limits),
            reduced,
            work: vec![0.0; n],
        }
    }

    /// Bytes of the hub's storage.
    pub(super) fn bytes(&self) -> usize {
        self.batches.bytes()
            + self.batches.len() * size_of::<bool>()
            + (self.factor.len() + self.work.len() + self.reduced.c.capacity()) * size_of::<Real>()
            + self.offsets.len() * size_of::<usize>()
    }

    /// Active rows at the last prepare.
    pub(super) fn active_rows(&self) -> usize {
        self.batches.active_rows()
    }

    /// Store ([`JointBatch::store`]) of every joint.
    ///
    /// # Safety
    /// As [`JointBatch::store`].
    pub(super) unsafe fn store(&self, out: &JointOutputs, inv_h: f32) {
        // SAFETY: the caller's contract.
        unsafe { self.batches.store(out, inv_h) }
    }

    /// Warm start of every joint, in order.
    ///
    /// # Safety
    /// No other task touches the hub's dynamic bodies during the call (hubs share no dynamic
    /// body, and the hub stage runs alone).
    pub(super) unsafe fn warm_start(&self, access: &BodyAccess) {
        // SAFETY: the caller's contract.
        unsafe { self.batches.warm_start(access) }
    }

    /// Prepare: every joint's rows ([`JointBatch::prepare`]), then the factors: the
    /// hub-reduced ones ([`Reduced`]), or where a pivot of a joint's block would drop a row (a
    /// row that depends on others), the dense ones, which drop it as the decoupling does. A
    /// hub of more than [`DENSE_MAX_ROWS`] rows keeps the reduced factors with the row dropped.
    ///
    /// Limits: a limit row is in the system while its limit is active (an equality there),
    /// out of it (no impulse) while not; [`HubSolve::solve_system`] moves rows in and out.
    /// They start in where the limit is reached (no speculative offset) or, for the velocity
    /// system, carries a warm-start impulse.
    pub(super) fn prepare(&mut self, input: &PrepareInput) {
        self.batches.prepare(input);
        self.hub_inv_mass = input.bodies.inv_mass[self.hub];
        self.hub_inertia = input.bodies.inv_inertia_world[self.hub]
            .as_dmat3()
            .inverse();
        let [v_on, u_on] = &mut self.limits_on;
        let limited = self.batches.iter().filter(|(b, _)| b.unilateral != 0);
        for (((b, rows), v), u) in limited.zip(v_on).zip(u_on) {
            let reached = b.limit_speculative == 0.0;
            *u = reached;
            *v = reached || rows[rows.len() - 1].impulse > 0.0;
        }
        self.factorise(0);
    }

    /// The factors for the system `which` (0: velocities, 1: bias) with its limit rows in or
    /// out ([`HubSolve::prepare`]).
    fn factorise(&mut self, which: usize) {
        self.row_on.fill(true);
        for (&row, &on) in self.limit_rows.iter().zip(&self.limits_on[which]) {
            self.row_on[row] = on;
        }
        self.factored_limits.clone_from(&self.limits_on[which]);
        self.solvable = true;
        self.dense = !self.prepare_reduced(false);
        if self.dense && self.factor.is_empty() {
            self.dense = false;
            self.solvable = self.prepare_reduced(true);
            if !self.solvable {
                tracing::warn!(
                    hub = self.hub,
                    "the hub's mass properties give no finite system: its joints get no \
                     impulse this substep; check the body's mass and inertia"
                );
            }
        } else if self.dense {
            self.prepare_dense();
        }
    }

    /// The dense system's factors.
    fn prepare_dense(&mut self) {
        let n = self.work.len();
        let k = &mut self.factor;
        k.fill(0.0);
        // The lower half of K: the identity on each joint's own rows (1 / effective mass on
        // live rows, 1 on the others: inactive ones, whose rows are zero, and limit rows out of
        // the system; their right-hand sides are zero), the hub's coupling between live rows.
        let live = |i: usize, row: &RowLanes<f32>| row.effective_mass > 0.0 && self.row_on[i];
        for (p, (_, bp_rows)) in self.batches.iter().enumerate() {
            for (s, row) in bp_rows.iter().enumerate() {
                let i = self.offsets[p] + s;
                k[i * n + i] = if live(i, row) {
                    1.0 / Real::from(row.effective_mass)
                } else {
                    1.0
                };
            }
            for (q, (bq, bq_rows)) in self.batches.iter().enumerate().take(p) {
                // J_p^H M_H^-1 (J_q^H)^T, both on the hub's side.
                let (a_p, a_q) = (self.hub_is_a[p], self.hub_is_a[q]);
                let sign = if a_p == a_q { 1.0 } else { -1.0 };
                let inv_mass = Real::from(if a_q { bq.inv_mass_a } else { bq.inv_mass_b });
                for i in 0..self.offsets[p + 1] - self.offsets[p] {
                    let rp = &bp_rows[i];
                    if !live(self.offsets[p] + i, rp) {
                        continue;
                    }
                    // In Real once per row (exact), not per entry.
                    let angular = real3(if a_p { &rp.angular_a } else { &rp.angular_b });
                    let linear = real3(&rp.linear);
                    for j in 0..self.offsets[q + 1] - self.offsets[q] {
                        let rq = &bq_rows[j];
                        if !live(self.offsets[q] + j, rq) {
                            continue;
                        }
                        let inv_i_angular = if a_q {
                            rq.inv_i_angular_a
                        } else {
                            rq.inv_i_angular_b
                        };
                        k[(self.offsets[p] + i) * n + self.offsets[q] + j] =
                            sign * inv_mass * linear.dot(real3(&rq.linear))
                                + angular.dot(real3(&inv_i_angular));
                    }
                }
            }
        }
        ldl_in_place(k, n, Real::from(MIN_K), &mut self.work);
    }

    /// The hub-reduced factors; false where a pivot would drop a row, unless `drop_rows`
    /// (then a dependent row is dropped where it occurs, and false only where the hub's own
    /// mass properties give no finite system).
    // Index loops keep the block algebra in its textbook form.
    #[allow(clippy::needless_range_loop)]
    fn prepare_reduced(&mut self, drop_rows: bool) -> bool {
        let (inv_mass_hub, inertia) = (Real::from(self.hub_inv_mass), self.hub_inertia);
        if inv_mass_hub <= 0.0 || !inertia.is_finite() {
            return false;
        }
        let r = &mut self.reduced;
        let row_on = &self.row_on;
        // Solved rows: active, and in the system (a limit row may be out, see `prepare`).
        let live = |i: usize, row: &RowLanes<f32>| row.effective_mass > 0.0 && row_on[i];
        // A starts as M_H: the mass on the linear part, the world inertia on the angular.
        let mut a = [[0.0 as Real; 6]; 6];
        for i in 0..3 {
            a[i][i] = 1.0 / inv_mass_hub;
            for j in 0..3 {
                a[3 + i][3 + j] = inertia.col(j)[i];
            }
        }
        r.fixed_rows.clear();
        for (p, (b, b_rows)) in self.batches.iter().enumerate() {
            let hub_a = self.hub_is_a[p];
            let (first, rows) = (self.offsets[p], self.offsets[p + 1] - self.offsets[p]);
            // A row acts on body A as (-linear, angular_a), on B as (+linear, angular_b).
            let sign = if hub_a { -1.0 } else { 1.0 };
            for (s, g) in r.g[first..first + rows].iter_mut().enumerate() {
                let row = &b_rows[s];
                let angular = if hub_a { row.angular_a } else { row.angular_b };
                let linear = real3(&row.linear) * sign;
                let angular = real3(&angular);
                *g = if live(first + s, row) {
                    [
                        linear.x, linear.y, linear.z, angular.x, angular.y, angular.z,
                    ]
                } else {
                    [0.0; 6]
                };
            }
            let leaf_inv_mass = Real::from(if hub_a { b.inv_mass_b } else { b.inv_mass_a });
            r.dynamic_leaf[p] = leaf_inv_mass > 0.0;
            if !r.dynamic_leaf[p] {
                // The fixed body's joint: its live rows go to C (the others have a zero row and
                // right-hand side: no impulse, nothing to solve).
                for s in 0..rows {
                    r.b_inv_g[first + s] = [0.0; 6];
                    if live(first + s, &b_rows[s]) {
                        r.fixed_rows.push(first + s);
                    }
                }
                continue;
            }
            // B_k from the other body alone (no cancellation against the hub's part); a row
            // that is not live is the identity there (its G row and right-hand side are zero).
            let block = &mut r.blocks[r.block_offsets[p]..r.block_offsets[p + 1]];
            for i in 0..rows {
                let ri = &b_rows[i];
                for j in 0..rows {
                    let rj = &b_rows[j];
                    block[i * rows + j] = if j > i {
                        0.0
                    } else if !live(first + i, ri) || !live(first + j, rj) {
                        if i == j {
                            1.0
                        } else {
                            0.0
                        }
                    } else {
                        let (angular, inv_i_angular) = if hub_a {
                            (ri.angular_b, rj.inv_i_angular_b)
                        } else {
                            (ri.angular_a, rj.inv_i_angular_a)
                        };
                        leaf_inv_mass * real3(&ri.linear).dot(real3(&rj.linear))
                            + real3(&angular).dot(real3(&inv_i_angular))
                    };
                }
            }
            if ldl_in_place(block, rows, Real::from(MIN_K), &mut r.fixed_work) > 0 && !drop_rows {
                return false;
            }
            // B_k^-1 G_k, a column at a time, and A += G_k^T B_k^-1 G_k.
            for c in 0..6 {
                let column = &mut r.fixed_work[..rows];
                for (s, x) in column.iter_mut().enumerate() {
                    *x = r.g[first + s][c];
                }
                ldl_solve_in_place(block, column);
                for (s, x) in column.iter().enumerate() {
                    r.b_inv_g[first + s][c] = *x;
                }
            }
            for s in 0..rows {
                let (g, bg) = (r.g[first + s], r.b_inv_g[first + s]);
                for i in 0..6 {
                    for j in 0..=i {
                        a[i][j] += g[i] * bg[j];
                    }
                }
            }
        }
        for i in 0..6 {
            for j in 0..6 {
                r.a[i * 6 + j] = if j > i { 0.0 } else { a[i][j] };
            }
        }
        // M_H alone is positive definite; a dropped pivot here is round-off gone wrong.
        if ldl_in_place(&mut r.a, 6, Real::from(MIN_K), &mut r.fixed_work) > 0 {
            return false;
        }
        // C = G_S A^-1 G_S^T over the fixed rows.
        let fixed = r.fixed_rows.len();
        r.a_inv_g.clear();
        for &row in &r.fixed_rows {
            let mut x = r.g[row];
            ldl_solve_in_place(&r.a, &mut x);
            r.a_inv_g.push(x);
        }
        r.c.clear();
        r.c.resize(fixed * fixed, 0.0);
        for i in 0..fixed {
            let g = r.g[r.fixed_rows[i]];
            for j in 0..=i {
                r.c[i * fixed + j] = (0..6).map(|c| g[c] * r.a_inv_g[j][c]).sum();
            }
        }
        // A dependent row among those to fixed bodies is dropped here as the dense factors
        // would drop it (C is the hub's Schur complement of them): redundant supports need no
        // dense system.
        ldl_in_place(&mut r.c, fixed, Real::from(MIN_K), &mut r.fixed_work);
        true
    }

    /// `K^-1 r` in place on `work` with the factors [`HubSolve::prepare`] chose.
    // Index loops keep the block algebra in its textbook form.
    #[allow(clippy::needless_range_loop)]
    fn solve_in_place(&mut self) {
        if self.dense {
            ldl_solve_in_place(&self.factor, &mut self.work);
            return;
        }
        let r = &mut self.reduced;
        let work = &mut self.work;
        // y_k = B_k^-1 r_k on the joints to dynamic bodies, and b = sum G_k^T y_k.
        let mut mu = [0.0 as Real; 6];
        for p in 0..self.batches.len() {
            if !r.dynamic_leaf[p] {
                continue;
            }
            let (first, last) = (self.offsets[p], self.offsets[p + 1]);
            ldl_solve_in_place(
                &r.blocks[r.block_offsets[p]..r.block_offsets[p + 1]],
                &mut work[first..last],
            );
            for row in first..last {
                for (m, g) in mu.iter_mut().zip(r.g[row]) {
                    *m += g * work[row];
                }
            }
        }
        // mu = A^-1 (b + G_S^T lambda_S), lambda_S from C lambda_S = r_S - G_S A^-1 b.
        ldl_solve_in_place(&r.a, &mut mu);
        let fixed = r.fixed_rows.len();
        if fixed > 0 {
            for (i, &row) in r.fixed_rows.iter().enumerate() {
                let g = r.g[row];
                r.fixed_work[i] = work[row] - (0..6).map(|c| g[c] * mu[c]).sum::<Real>();
            }
            ldl_solve_in_place(&r.c, &mut r.fixed_work[..fixed]);
            for (i, &row) in r.fixed_rows.iter().enumerate() {
                let lambda = r.fixed_work[i];
                work[row] = lambda;
                for (m, x) in mu.iter_mut().zip(r.a_inv_g[i]) {
                    *m += x * lambda;
                }
            }
        }
        // lambda_k = y_k - B_k^-1 G_k mu.
        for p in 0..self.batches.len() {
            if r.dynamic_leaf[p] {
                for row in self.offsets[p]..self.offsets[p + 1] {
                    let bg = r.b_inv_g[row];
                    work[row] -= (0..6).map(|c| bg[c] * mu[c]).sum::<Real>();
                }
            }
        }
    }

    /// One velocity pass on `v` (and one on the bias velocities `u` when given), each an
    /// exact solve, then the store when asked.
    ///
    /// # Safety
    /// As [`HubSolve::warm_start`], for both velocity arrays; `store` as
    /// [`JointBatch::store`].
    pub(super) unsafe fn velocity_pass(
        &mut self,
        v: &BodyAccess,
        u: Option<&BodyAccess>,
        store: Option<(&JointOutputs, f32)>,
    ) {
        // SAFETY (both): the caller's contract.
        unsafe {
            // The velocity system: a row's offset is its curvature plus, for a limit row, its
            // speculative `C / h`.
            let offset = |b: &JointBatch<f32>, slot: usize, r: &RowLanes<f32>| {
                let speculative = if b.unilateral & (1 << slot) != 0 {
                    b.limit_speculative
                } else {
                    0.0
                };
                r.curvature + speculative
            };
            self.solve_system(0, v, offset, |r| &mut r.impulse);
            // The bias system, solved exactly too (with the same factors where the same
            // limits are in it).
            if let Some(u) = u {
                self.solve_system(1, u, |_, _, r| r.bias, |r| &mut r.bias_impulse);
            }
        }
        if let Some((out, inv_h)) = store {
            // SAFETY: the caller's contract.
            unsafe { self.store(out, inv_h) };
        }
    }

    /// One system (`which`: 0 velocities, 1 bias) on the velocities `access` views: `K
    /// dlambda = -(J v + offset)` on the velocities as they are, then `v += M^-1 J^T dlambda`
    /// joint by joint (they share the hub) and the accumulated impulses (`impulse`) grow by
    /// `dlambda`.
    ///
    /// With limits, an active-set solve: the rows of the limits in the system are solved as
    /// equalities; then a limit whose accumulated impulse pulls (below 0) has it taken back
    /// and leaves the system, and one out of it whose row is violated (`J v + offset` below
    /// `-LIMIT_TOLERANCE`) enters it; while that changes anything (at most
    /// `ACTIVE_SET_ROUNDS` times), refactorise and solve again from the velocities as they
    /// are. Every limit's accumulated impulse ends at or above 0, as row by row.
    ///
    /// # Safety
    /// As [`HubSolve::warm_start`].
    unsafe fn solve_system(
        &mut self,
        which: usize,
        access: &BodyAccess,
        offset: impl Fn(&JointBatch<f32>, usize, &RowLanes<f32>) -> f32,
        impulse: impl Fn(&mut RowLanes<f32>) -> &mut f32,
    ) {
        // (A hub without limits never refactorises here: skip the comparison, which a
        // two-joint hub's profile showed at 14 % of its step.)
        if !self.factored_limits.is_empty() && self.factored_limits != self.limits_on[which] {
            self.factorise(which);
        }
        let (mut fewest, mut patience) = (usize::MAX, PATIENCE);
        for round in 0..ACTIVE_SET_ROUNDS {
            if !self.solvable {
                return;
            }
            for (p, (b, b_rows)) in self.batches.iter().enumerate() {
                // SAFETY: the caller's contract.
                let vel = unsafe { access.gather_velocities::<f32>(&b.body_a, &b.body_b) };
                for (s, row) in b_rows.iter().enumerate() {
                    let i = self.offsets[p] + s;
                    self.work[i] = if self.row_on[i] {
                        -Real::from(
                            JointBatch::<f32>::velocity_error(&vel, row) + offset(b, s, row),
                        )
                    } else {
                        0.0
                    };
                }
            }
            self.solve_in_place();
            for (p, (b, b_rows, _)) in self.batches.iter_mut().enumerate() {
                // SAFETY: the caller's contract.
                let mut vel = unsafe { access.gather_velocities::<f32>(&b.body_a, &b.body_b) };
                for (s, row) in b_rows.iter_mut().enumerate() {
                    let delta = self.work[self.offsets[p] + s] as f32;
                    *impulse(row) += delta;
                    apply(&mut vel, row, delta, b.inv_mass_a, b.inv_mass_b);
                }
                // SAFETY: the caller's contract; `write` holds the joint's dynamic bodies.
                unsafe { access.scatter_velocities(&vel, &b.body_a, &b.body_b, b.write) };
            }
            // The limits out of place: in the system and pulling, or out of it and violated.
            self.infeasible.clear();
            let mut limits = self.limits_on[which].iter().enumerate();
            for (b, b_rows, _) in self.batches.iter_mut() {
                if b.unilateral == 0 {
                    continue;
                }
                let (k, &on) = limits.next().expect("one entry per limit");
                let slot = b_rows.len() - 1;
                let row = &mut b_rows[slot];
                if row.effective_mass == 0.0 {
                    continue;
                }
                let out_of_place = if on {
                    // A locked joint's row is an equality (`limit_floor`): it may pull.
                    *impulse(row) < 0.0 && b.limit_floor == 0.0
                } else {
                    // SAFETY: the caller's contract.
                    let vel = unsafe { access.gather_velocities::<f32>(&b.body_a, &b.body_b) };
                    JointBatch::<f32>::velocity_error(&vel, row) + offset(b, slot, row)
                        < -LIMIT_TOLERANCE
                };
                if out_of_place {
                    self.infeasible.push(k);
                }
            }
            if self.infeasible.is_empty() {
                return;
            }
            // Block principal pivoting (Judice and Pires): move every limit out of place
            // while that lowers their count (or for `PATIENCE` rounds more), else only the
            // last one (Murty's rule), which cannot cycle: K on any set of rows is positive
            // definite. Moving them all at once alone cycled on a 0.01 kg hub with ten 10 kg
            // bobs on limited hinges until the run went non-finite.
            if self.infeasible.len() < fewest {
                (fewest, patience) = (self.infeasible.len(), PATIENCE);
            } else if patience > 0 {
                patience -= 1;
            } else {
                let last = self.infeasible[self.infeasible.len() - 1];
                self.infeasible.clear();
                self.infeasible.push(last);
            }
            let last_round = round + 1 == ACTIVE_SET_ROUNDS;
            let mut moves = self.infeasible.iter().peekable();
            let mut limits = self.limits_on[which].iter_mut().enumerate();
            for (b, b_rows, _) in self.batches.iter_mut() {
                if b.unilateral == 0 {
                    continue;
                }
                let (k, on) = limits.next().expect("one entry per limit");
                if moves.next_if_eq(&&k).is_none() {
                    continue;
                }
                if *on {
                    // Out, its impulse taken back.
                    let row = &mut b_rows[b_rows.len() - 1];
                    // SAFETY: the caller's contract.
                    let mut vel = unsafe { access.gather_velocities::<f32>(&b.body_a, &b.body_b) };
                    let taken_back = -*impulse(row);
                    *impulse(row) = 0.0;
                    apply(&mut vel, row, taken_back, b.inv_mass_a, b.inv_mass_b);
                    // SAFETY: as above.
                    unsafe { access.scatter_velocities(&vel, &b.body_a, &b.body_b, b.write) };
                    *on = false;
                } else if !last_round {
                    // In, solved from the next round (a last round leaves it for the next
                    // pass: every limit impulse ends at or above zero).
                    *on = true;
                }
            }
            if last_round {
                return;
            }
            self.factorise(which);
        }
    }
}

/// `L D L^T` of the symmetric `n x n` matrix whose lower half is in `k` (row-major), in
/// place: `L` strictly below the diagonal, `1 / D` on it. A pivot at or below `min_pivot`, or
/// at or below [`RELATIVE_PIVOT`] of its row's diagonal (a row that depends on others, up to
/// round-off), gets `1 / D = 0` and a zero row of `L`, so the solve gives that row no impulse
/// and the others do not see it. The upper half is left zero. Returns the number of dropped
/// rows.
fn ldl_in_place(k: &mut [Real], n: usize, min_pivot: Real, a: &mut [Real]) -> usize {
    let mut dropped = 0;
    // Row by row: `k[i][j]` (j < i) becomes `L_ij`, using `a_m = L_im D_m` kept in `a`
    // (scratch of `n`). Slices of whole rows, so that the inner loops index without checks.
    for i in 0..n {
        let (done, rest) = k.split_at_mut(i * n);
        let row = &mut rest[..n];
        for j in 0..i {
            let lower_j = &done[j * n..j * n + j];
            let mut sum = row[j];
            for (a, l) in a[..j].iter().zip(lower_j) {
                sum -= a * l;
            }
            a[j] = sum;
            row[j] = sum * done[j * n + j];
        }
        let diagonal = row[i];
        let mut pivot = diagonal;
        for (a, l) in a[..i].iter().zip(&row[..i]) {
            pivot -= a * l;
        }
        if pivot > min_pivot && pivot > RELATIVE_PIVOT * diagonal {
            row[i] = 1.0 / pivot;
        } else {
            row[..=i].fill(0.0);
            dropped += 1;
        }
    }
    dropped
}

/// `K^-1 r` in place from the factors of [`ldl_in_place`]: `L z = r`, `z /= D`, `L^T y = z`.
fn ldl_solve_in_place(f: &[Real], r: &mut [Real]) {
    // The systems of a carrier or a small hub (a joint's block, the hub's 6 x 6, its fixed
    // rows) with their size a constant: the loops unroll and `r` stays in registers (the
    // generic loops were 37 % of a scene of 400 carriers). The same operations in the same
    // order, so the same bits.
    match r.len() {
        1 => ldl_solve_sized::<1>(f, r),
        2 => ldl_solve_sized::<2>(f, r),
        3 => ldl_solve_sized::<3>(f, r),
        4 => ldl_solve_sized::<4>(f, r),
        5 => ldl_solve_sized::<5>(f, r),
        6 => ldl_solve_sized::<6>(f, r),
        _ => ldl_solve_any(f, r),
    }
}

/// [`ldl_solve_in_place`] for any number of rows.
fn ldl_solve_any(f: &[Real], r: &mut [Real]) {
    let n = r.len();
    for i in 0..n {
        let (solved, rest) = r.split_at_mut(i);
        let mut x = rest[0];
        for (l, y) in f[i * n..i * n + i].iter().zip(solved.iter()) {
            x -= l * y;
        }
        rest[0] = x;
    }
    for (i, r) in r.iter_mut().enumerate() {
        *r *= f[i * n + i];
    }
    for i in (0..n).rev() {
        let (head, solved) = r.split_at_mut(i + 1);
        let mut x = head[i];
        // Column `i` of `L` below the diagonal, `L_mi` for `m > i` (a stride of `n`), in the
        // order of `m`: an iterator, so the loop has no bounds checks.
        let column = f[i * n + i..].iter().step_by(n).skip(1);
        for (l, y) in column.zip(solved.iter()) {
            x -= l * y;
        }
        head[i] = x;
    }
}

/// [`ldl_solve_in_place`] for `N` rows: forward substitution, the `1 / D` scaling, back
/// substitution, each sum in the order of the generic loops.
// Index loops keep the substitutions in their textbook form.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn ldl_solve_sized<const N: usize>(f: &[Real], r: &mut [Real]) {
    let f = &f[..N * N];
    let mut x: [Real; N] = r.try_into().expect("N values");
    for i in 0..N {
        for j in 0..i {
            x[i] -= f[i * N + j] * x[j];
        }
    }
    for i in 0..N {
        x[i] *= f[i * N + i];
    }
    for i in (0..N).rev() {
        for m in i + 1..N {
            x[i] -= f[m * N + i] * x[m];
        }
    }
    r.copy_from_slice(&x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sized_solves_give_the_bits_of_the_generic_one() {
        // Symmetric positive definite systems of 1 to 6 rows with uneven entries.
        for n in 1..=6 {
            let mut k = vec![0.0 as Real; n * n];
            for i in 0..n {
                for j in 0..=i {
                    let x = ((i * 7 + j * 3) % 5) as Real * 0.37 - 0.6;
                    k[i * n + j] = if i == j {
                        n as Real + 1.3 + x
                    } else {
                        x * 0.41
                    };
                }
            }
            ldl_in_place(&mut k, n, 1e-9, &mut [0.0; 6]);
            let rhs: Vec<Real> = (0..n).map(|i| 1.7 - 0.93 * i as Real).collect();
            let (mut sized, mut any) = (rhs.clone(), rhs);
            ldl_solve_in_place(&k, &mut sized);
            ldl_solve_any(&k, &mut any);
            let bits = |v: &[Real]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&sized), bits(&any), "{n} rows");
        }
    }

    #[test]
    fn the_dense_factorisation_solves_and_drops_dependent_rows() {
        let n = 4;
        let full = [
            [4.0, 1.0, 0.5, 0.2],
            [1.0, 3.0, 0.25, 0.1],
            [0.5, 0.25, 2.0, 0.3],
            [0.2, 0.1, 0.3, 1.5],
        ];
        let mut k: Vec<Real> = full.iter().flatten().copied().collect();
        ldl_in_place(&mut k, n, 1e-9, &mut [0.0; 4]);
        let mut x = vec![1.0, -2.0, 0.5, 0.25];
        let r = x.clone();
        ldl_solve_in_place(&k, &mut x);
        for i in 0..n {
            let back: Real = (0..n).map(|m| full[i][m] * x[m]).sum();
            assert!(
                (back - r[i]).abs() < 1e-5,
                "row {i}: {back} against {}",
                r[i]
            );
        }
        // Row 1 is row 0 again: dependent, no impulse.
        let mut k = vec![2.0, 2.0, 2.0, 2.0];
        ldl_in_place(&mut k, 2, 1e-9, &mut [0.0; 2]);
        let mut x = vec![1.0, 1.0];
        ldl_solve_in_place(&k, &mut x);
        assert_eq!(x, vec![0.5, 0.0]);
    }
}
