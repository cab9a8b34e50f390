//! The direct chain solve ([`crate::Settings::chain_solve`]): each chain of joints
//! ([`crate::schedule::chains`]) is solved exactly in every velocity pass, by one forward and
//! one backward sweep over its block-tridiagonal system, instead of row by row.
//!
//! A chain's joints `1..n` (one [`JointBatch`] per position, one chain per lane) are prepared
//! like any batch: rows at the current poses, decoupled, so that each joint's own block of
//! `K = J M^-1 J^T` is the identity (an inactive row's diagonal is set to 1, its row is
//! zero). Consecutive joints share a body `s`, which couples them:
//!
//! `E_k = K_(k,k-1) = J_k^s M_s^-1 (J_(k-1)^s)^T`, where a row acts on body A as
//! `(-linear, angular_a)` and on body B as `(+linear, angular_b)`.
//!
//! Prepare factorises the system (block Thomas algorithm): `D_1 = K_11`,
//! `D_k = K_kk - E_k D_(k-1)^-1 E_k^T`, keeping `E_k` and the `L D L^T` factors of `D_k`
//! (`E D^-1 E^T` as `W^T diag(1/d) W` with `W = L^-1 E^T`). A velocity pass solves
//! `K dlambda = -(J v + offset)` on the current velocities: forward
//! `y_k = D_k^-1 (r_k - E_k y_(k-1))`, backward
//! `dlambda_k = y_k - D_k^-1 E_(k+1)^T dlambda_(k+1)`, then applies `dlambda` joint by joint.
//! The bias system (split impulses) is swept joint by joint instead (see [`bias_sweep`] for
//! why). The joints that touch a chain from outside (a net's rows, say) are solved by the
//! colours after the chains, in the same pass: block Gauss-Seidel with chains as blocks.
//!
//! Cost: a factorisation of about the work of half a decoupling per joint in prepare, and
//! per pass four small matrix-vector products and two gathers per joint besides the row
//! work of a Gauss-Seidel pass. Every lane computes what one lane would, so the scalar and
//! wide paths agree bit for bit.

use super::{apply, relax_row, Batches, JointBatch, JointOutputs, PrepareInput, RowLanes};
use crate::joints::ParamLanes;
use crate::lanes::{BodyAccess, Lane, WriteMask};
use crate::rows::{LIMIT_SLOT, MIN_K};
use crate::schedule::chains::{Link, LINK_NEXT_A, LINK_PREV_B};

/// One group of chains, one per lane, of one shape ([`crate::schedule::ChainGroup`]).
///
/// Blocks are `M x M` for `M` rows per joint, stored flat (row-major, `M * M` lanes per
/// position), so that a spherical chain streams 9 lanes per block, not a fixed 36.
#[derive(Debug, Clone)]
pub(crate) struct ChainLanes<L: Lane> {
    /// Position `k`'s joints, one chain per lane, each with `rows` rows.
    batches: Batches<L>,
    /// `links[k - 1]`: how position `k` meets position `k - 1`.
    links: Vec<Link>,
    /// Rows per joint the blocks span: the most any position has (3 spherical, 5 revolute
    /// and prismatic, 6 fixed); a joint with fewer has zero rows in the rest (neutral).
    rows: usize,
    /// Per position, `E_k = K_(k,k-1)` (rows: the rows of `k`, columns: those of `k - 1`;
    /// zero at `k = 0`).
    coupling: Vec<L>,
    /// Per position, the factors of `D_k = L D L^T`: `L` strictly below the diagonal (unit
    /// diagonal implied), `1 / D` on the diagonal (0 for a dropped row).
    factor: Vec<L>,
    /// Scratch of a pass: per position, `y_k`, then `dlambda_k`.
    work: Vec<L>,
    /// Whether some position's joints have a limit (then `rows` is 6 and slot 5 is the
    /// limit's: see `slot_masks`).
    has_limits: bool,
    /// Per position, the lanes (bit `i` for lane `i`) whose limit row is in the velocity
    /// system ([`ChainLanes::solve_with_limits`]); 0 at positions without a limit.
    limit_on: Vec<u32>,
    /// `limit_on` at the last factorisation (the factors are of this system).
    factored_on: Vec<u32>,
    /// Scratch of a round: per position, the lanes whose limit is out of place.
    out_of_place: Vec<u32>,
}

/// Most solves of a chain group's velocity system in one velocity pass while its active
/// limits change ([`ChainLanes::solve_with_limits`]); a limit still out of place after them
/// is moved in the next pass. As the hub solve's.
const ACTIVE_SET_ROUNDS: usize = 32;

/// Rounds that may move every limit out of place without lowering their count before a lane
/// moves one at a time (as the hub solve).
const PATIENCE: usize = 3;

/// How far a limit out of the system may be violated before it enters it (rad/s, of
/// `J v + offset`): above the round-off of an exact solve.
const LIMIT_TOLERANCE: f32 = 1e-6;

/// The lanes whose bit is set in `bits`, as a lane mask.
#[inline(always)]
fn lane_mask<L: Lane>(bits: u32) -> L::Mask {
    L::from_fn(|i| if bits >> i & 1 != 0 { 1.0 } else { 0.0 }).gt(L::splat(0.0))
}

/// `write` restricted to the lanes in `bits`.
fn write_only(write: WriteMask, bits: u32) -> WriteMask {
    WriteMask {
        a: write.a & bits as u16,
        b: write.b & bits as u16,
    }
}

impl<L: Lane> ChainLanes<L> {
    /// A group from its batches (position by position) and links.
    pub(super) fn new(
        batches: Vec<JointBatch<L>>,
        params: Vec<ParamLanes<L>>,
        links: Vec<Link>,
    ) -> Self {
        let n = batches.len();
        debug_assert_eq!(links.len() + 1, n);
        let rows = batches
            .iter()
            .map(|b| b.slots.count_ones() as usize)
            .max()
            .unwrap_or(0);
        // Signatures fill slots 0..count, a limit's last (see `slot_masks`); a limited joint
        // has six.
        debug_assert!(batches.iter().all(|b| {
            let count = b.slots.count_ones();
            b.slots == (1u8 << count) - 1 && (b.unilateral == 0 || b.unilateral == 1 << 5)
        }));
        debug_assert!(L::WIDTH <= 16);
        let has_limits = batches.iter().any(|b| b.unilateral != 0);
        let zero = L::splat(0.0);
        ChainLanes {
            batches: Batches::new(batches.into_iter().zip(params), |_| rows),
            links,
            rows,
            coupling: vec![zero; n * rows * rows],
            factor: vec![zero; n * rows * rows],
            work: vec![zero; n * rows],
            has_limits,
            limit_on: vec![0; n],
            factored_on: vec![0; n],
            out_of_place: vec![0; n],
        }
    }

    /// Bytes of the group.
    pub(super) fn bytes(&self) -> usize {
        let n = self.batches.len();
        self.batches.bytes()
            + n * size_of::<Link>()
            + (self.coupling.len() + self.factor.len() + self.work.len()) * size_of::<L>()
    }

    /// Active rows at the last prepare.
    pub(super) fn active_rows(&self) -> usize {
        self.batches.active_rows()
    }

    /// Store ([`JointBatch::store`]) of every position.
    ///
    /// # Safety
    /// As [`JointBatch::store`].
    pub(super) unsafe fn store(&self, out: &JointOutputs, inv_h: f32) {
        // SAFETY: the caller's contract.
        unsafe { self.batches.store(out, inv_h) }
    }

    /// Prepare: every position's rows ([`JointBatch::prepare`]), then the factorisation.
    ///
    /// Limits: a limit row is in the velocity system while its limit is active (an equality
    /// there), out of it (no impulse) while not; [`ChainLanes::solve_with_limits`] moves rows
    /// in and out. They start in where the limit is reached (no speculative offset) or
    /// carries a warm-start impulse (as the hub solve's).
    pub(super) fn prepare(&mut self, input: &PrepareInput) {
        self.batches.prepare(input);
        if self.has_limits {
            let zero = L::splat(0.0);
            for (k, (b, rows)) in self.batches.iter().enumerate() {
                self.limit_on[k] = if b.unilateral == 0 {
                    0
                } else {
                    let row = &rows[LIMIT_SLOT];
                    let active = L::mask_bits(row.effective_mass.gt(zero));
                    let pushing = L::mask_bits(row.impulse.gt(zero));
                    // A reached limit has no speculative offset (a separated one's is > 0).
                    let separated = L::mask_bits(b.limit_speculative.gt(zero));
                    active & (pushing | !separated)
                };
            }
        }
        match self.rows {
            3 => self.factorize::<3>(0),
            5 => self.factorize::<5>(0),
            _ => self.factorize::<6>(0),
        }
    }

    /// `E_k` and the `L D L^T` factors of `D_k` for the positions `from..` (see the module
    /// documentation), over `M` rows per joint, with the limit rows out of the system
    /// (`limit_on`) as zero rows. `D_k` depends on the positions up to `k` alone, so factors
    /// before `from` are kept when their `limit_on` has not changed since they were made:
    /// the bits of a factorisation from 0.
    fn factorize<const M: usize>(&mut self, from: usize) {
        let (zero, one, min_k) = (L::splat(0.0), L::splat(1.0), L::splat(MIN_K));
        // A limit row in the system: lanes of `limit_on`; every row of an unlimited joint.
        let limit_in = |k: usize| lane_mask::<L>(self.limit_on[k]);
        for k in from..self.batches.len() {
            let c = self.batches.rows(k);
            let c_limited = self.batches.head(k).unilateral != 0;
            // K_kk: the identity after decoupling (1 / effective mass on active rows, 1 on
            // inactive and unused ones, whose rows and right-hand sides are zero, and on limit
            // rows out of the system, whose right-hand sides and couplings are zero).
            let mut d = [[zero; M]; M];
            for (s, d) in d.iter_mut().enumerate() {
                let m = c[s].effective_mass;
                d[s] = L::select(m.gt(zero), one / m, one);
            }
            if c_limited {
                d[LIMIT_SLOT][LIMIT_SLOT] = L::select(limit_in(k), d[LIMIT_SLOT][LIMIT_SLOT], one);
            }
            let (before, rest) = self.factor.split_at_mut(k * M * M);
            if k > 0 {
                let e = &mut self.coupling[k * M * M..][..M * M];
                let p = (self.batches.head(k - 1), self.batches.rows(k - 1));
                coupling::<L, M>(p, c, self.links[k - 1], e);
                if c_limited {
                    let on = limit_in(k);
                    for x in &mut e[LIMIT_SLOT * M..][..M] {
                        *x = L::select(on, *x, zero);
                    }
                }
                if p.0.unilateral != 0 {
                    let on = limit_in(k - 1);
                    for i in 0..M {
                        let x = &mut e[i * M + LIMIT_SLOT];
                        *x = L::select(on, *x, zero);
                    }
                }
                // D_k -= E D_(k-1)^-1 E^T = W^T diag(1/d) W with W = L_(k-1)^-1 E^T: one
                // triangular solve per row of E, then a symmetric product (lower half).
                let f = &before[(k - 1) * M * M..];
                let mut w = [[zero; M]; M];
                for (i, w) in w.iter_mut().enumerate() {
                    for j in 0..M {
                        let mut x = e[i * M + j];
                        for m in 0..j {
                            x = x - f[j * M + m] * w[m];
                        }
                        w[j] = x;
                    }
                }
                for i in 0..M {
                    let scaled: [L; M] = std::array::from_fn(|j| w[i][j] * f[j * M + j]);
                    for i2 in 0..=i {
                        let mut sum = zero;
                        for j in 0..M {
                            sum = sum + scaled[j] * w[i2][j];
                        }
                        d[i][i2] = d[i][i2] - sum;
                    }
                }
            }
            ldl::<L, M>(&d, min_k, &mut rest[..M * M]);
        }
        self.factored_on[from..].copy_from_slice(&self.limit_on[from..]);
    }

    /// Warm start of every position, in order.
    ///
    /// # Safety
    /// No other task touches the group's dynamic bodies during the call (chains share no
    /// dynamic body, and the chain stage runs alone).
    pub(super) unsafe fn warm_start(&self, access: &BodyAccess) {
        // SAFETY: the caller's contract.
        unsafe { self.batches.warm_start(access) }
    }

    /// One velocity pass on `v` (and one bias pass on `u` when given), each an exact solve
    /// of the chains' systems, then the store when asked.
    ///
    /// # Safety
    /// As [`ChainLanes::warm_start`], for both velocity arrays; `store` as
    /// [`JointBatch::store`].
    pub(super) unsafe fn velocity_pass(
        &mut self,
        v: &BodyAccess,
        u: Option<&BodyAccess>,
        store: Option<(&JointOutputs, f32)>,
    ) {
        // SAFETY (all): the caller's contract.
        unsafe {
            match self.rows {
                3 => self.solve::<3>(v, u),
                5 => self.solve::<5>(v, u),
                _ => self.solve::<6>(v, u),
            }
            if let Some((out, inv_h)) = store {
                self.store(out, inv_h);
            }
        }
    }

    /// The velocity system (impulses `impulse`) on `v`:
    /// `K dlambda = -(J v + offset)`, then `v += M^-1 J^T dlambda` and the accumulated
    /// impulses grow by `dlambda`; with `u`, the bias system's sweep ([`bias_sweep`]) joint
    /// by joint in the same loop as the velocity system's last sweep (the systems share no
    /// state: the bits of running them one after the other). With limits,
    /// [`ChainLanes::solve_with_limits`].
    ///
    /// # Safety
    /// As [`ChainLanes::warm_start`], for both arrays.
    unsafe fn solve<const M: usize>(&mut self, v: &BodyAccess, u: Option<&BodyAccess>) {
        // SAFETY (both): the caller's contract.
        unsafe {
            if self.has_limits {
                self.solve_with_limits::<M>(v);
                if let Some(u) = u {
                    for k in 0..self.batches.len() {
                        let (b, rows, _) = self.batches.get_mut(k);
                        bias_sweep(b, rows, u);
                    }
                }
            } else {
                self.sweep::<M>(v, u, u32::MAX);
            }
        }
    }

    /// One exact solve of the velocity system as it stands (the limit rows of `limit_on` in
    /// it, the others out), applied in the lanes of `lanes` only (the others keep their
    /// velocities and impulses bit for bit); with `u`, the bias sweep in the same loop.
    ///
    /// # Safety
    /// As [`ChainLanes::warm_start`], for both arrays.
    unsafe fn sweep<const M: usize>(&mut self, v: &BodyAccess, u: Option<&BodyAccess>, lanes: u32) {
        let zero = L::splat(0.0);
        let n = self.batches.len();
        // Forward: y_k = D_k^-1 (r_k - E_k y_(k-1)), r_k = -(J_k v + offset) on the
        // velocities as they are (nothing is applied before the backward sweep ends).
        let mut y_previous = [zero; M];
        for k in 0..n {
            let (b, rows) = (self.batches.head(k), self.batches.rows(k));
            // SAFETY: the caller's contract.
            let vel = unsafe { v.gather_velocities::<L>(&b.body_a, &b.body_b) };
            let f = &self.factor[k * M * M..][..M * M];
            let e = &self.coupling[k * M * M..][..M * M];
            let limited = b.unilateral != 0;
            let mut r: [L; M] = std::array::from_fn(|s| {
                let row = &rows[s];
                // The offset: the curvature plus, for a limit row, its speculative `C / h`,
                // added as the colour kernels add it (same bits).
                let speculative = if limited && s == LIMIT_SLOT {
                    b.limit_speculative
                } else {
                    zero
                };
                -(JointBatch::<L>::velocity_error(&vel, row) + (row.curvature + speculative))
            });
            if limited {
                // A limit row out of the system: no right-hand side, so no impulse.
                let on = lane_mask::<L>(self.limit_on[k]);
                r[LIMIT_SLOT] = L::select(on, r[LIMIT_SLOT], zero);
            }
            if k > 0 {
                for (i, r) in r.iter_mut().enumerate() {
                    let mut sum = zero;
                    for j in 0..M {
                        sum = sum + e[i * M + j] * y_previous[j];
                    }
                    *r = *r - sum;
                }
            }
            y_previous = ldl_solve::<L, M>(f, r);
            self.work[k * M..][..M].copy_from_slice(&y_previous);
        }
        // Backward: dlambda_k = y_k - D_k^-1 E_(k+1)^T dlambda_(k+1).
        let mut next = y_previous;
        for k in (0..n.saturating_sub(1)).rev() {
            let e = &self.coupling[(k + 1) * M * M..][..M * M];
            let f = &self.factor[k * M * M..][..M * M];
            let t: [L; M] = std::array::from_fn(|j| {
                let mut sum = zero;
                for i in 0..M {
                    sum = sum + e[i * M + j] * next[i];
                }
                sum
            });
            let correction = ldl_solve::<L, M>(f, t);
            let y = &mut self.work[k * M..][..M];
            for (y, c) in y.iter_mut().zip(correction) {
                *y = *y - c;
            }
            next.copy_from_slice(y);
        }
        // Apply, position by position (consecutive positions share a body).
        let all = lanes == u32::MAX;
        let solved = lane_mask::<L>(lanes);
        for k in 0..n {
            let (b, rows, _) = self.batches.get_mut(k);
            // SAFETY: the caller's contract.
            let mut vel = unsafe { v.gather_velocities::<L>(&b.body_a, &b.body_b) };
            for (s, &delta) in self.work[k * M..][..M].iter().enumerate() {
                let row = &mut rows[s];
                let grown = row.impulse + delta;
                row.impulse = if all {
                    grown
                } else {
                    L::select(solved, grown, row.impulse)
                };
                apply(&mut vel, row, delta, b.inv_mass_a, b.inv_mass_b);
            }
            let write = if all {
                b.write
            } else {
                write_only(b.write, lanes)
            };
            // SAFETY: the caller's contract; `write` holds dynamic bodies of real lanes.
            unsafe { v.scatter_velocities(&vel, &b.body_a, &b.body_b, write) };
            if let Some(u) = u {
                // SAFETY: as above.
                unsafe { bias_sweep(b, rows, u) };
            }
        }
    }

    /// The velocity system with limits: an active-set solve, lane by lane (each lane a chain
    /// of its own, as the hub solve does it for one hub). The limit rows in the system are
    /// solved as equalities ([`ChainLanes::sweep`]); then a limit whose accumulated impulse
    /// pulls (below 0) has it taken back and leaves the system, and one out of it whose row
    /// is violated (`J v + offset` below [`LIMIT_TOLERANCE`]) enters it; while that changes
    /// anything in a lane (at most [`ACTIVE_SET_ROUNDS`] times), refactorise and solve again
    /// from the velocities as they are, in the lanes still moving limits. Every limit's
    /// accumulated impulse ends at or above 0, as row by row.
    ///
    /// Block principal pivoting as the hub's: every limit out of place moves while that
    /// lowers their count in the lane (or for [`PATIENCE`] rounds more), then only the last
    /// one along the chain (Murty's rule, which cannot cycle). A lane that is done is never
    /// written again in the pass, so each lane's bits are those of its chain solved alone:
    /// the scalar and wide paths agree bit for bit.
    ///
    /// # Safety
    /// As [`ChainLanes::warm_start`].
    unsafe fn solve_with_limits<const M: usize>(&mut self, v: &BodyAccess) {
        let zero = L::splat(0.0);
        let n = self.batches.len();
        let mut open: u32 = (1u32 << L::WIDTH) - 1;
        let mut fewest = [usize::MAX; 16];
        let mut patience = [PATIENCE; 16];
        for round in 0..ACTIVE_SET_ROUNDS {
            // Refactorise from the first position whose limits moved (the factors before
            // it are those of this system).
            let first_moved = (0..n).find(|&k| self.factored_on[k] != self.limit_on[k]);
            #[cfg(test)]
            let first_moved = first_moved.map(|k| if tests::refactor_all() { 0 } else { k });
            if let Some(from) = first_moved {
                self.factorize::<M>(from);
            }
            // SAFETY: the caller's contract.
            unsafe { self.sweep::<M>(v, None, open) };
            // The limits out of place: in the system and pulling, or out of it and violated.
            let mut count = [0usize; 16];
            let mut last = [usize::MAX; 16];
            for k in 0..n {
                let (b, rows) = (self.batches.head(k), self.batches.rows(k));
                self.out_of_place[k] = 0;
                if b.unilateral == 0 {
                    continue;
                }
                let row = &rows[LIMIT_SLOT];
                let active = L::mask_bits(row.effective_mass.gt(zero));
                let on = self.limit_on[k];
                // A locked joint's row is an equality (`limit_floor`): it may pull.
                let locked = L::mask_bits(zero.gt(b.limit_floor));
                let pulling = L::mask_bits(zero.gt(row.impulse)) & on & !locked;
                // SAFETY: the caller's contract.
                let vel = unsafe { v.gather_velocities::<L>(&b.body_a, &b.body_b) };
                let error = JointBatch::<L>::velocity_error(&vel, row)
                    + (row.curvature + b.limit_speculative);
                let violated = L::mask_bits(L::splat(-LIMIT_TOLERANCE).gt(error)) & !on;
                let bits = (pulling | violated) & active & open;
                self.out_of_place[k] = bits;
                for (lane, (count, last)) in count.iter_mut().zip(&mut last).enumerate() {
                    if bits >> lane & 1 != 0 {
                        *count += 1;
                        *last = k;
                    }
                }
            }
            // Per lane: done, or which limits move.
            let mut one_at_a_time = 0u32;
            for lane in 0..L::WIDTH {
                let bit = 1u32 << lane;
                if open & bit == 0 {
                    continue;
                }
                if count[lane] == 0 {
                    open &= !bit;
                } else if count[lane] < fewest[lane] {
                    (fewest[lane], patience[lane]) = (count[lane], PATIENCE);
                } else if patience[lane] > 0 {
                    patience[lane] -= 1;
                } else {
                    one_at_a_time |= bit;
                }
            }
            if open == 0 {
                return;
            }
            let last_round = round + 1 == ACTIVE_SET_ROUNDS;
            for k in 0..n {
                let mut moves = self.out_of_place[k] & open;
                for (lane, &last_moved) in last.iter().enumerate().take(L::WIDTH) {
                    if one_at_a_time >> lane & 1 != 0 && last_moved != k {
                        moves &= !(1u32 << lane);
                    }
                }
                if moves == 0 {
                    continue;
                }
                let taken_out = moves & self.limit_on[k];
                if taken_out != 0 {
                    // Out, its impulse taken back.
                    let (b, rows, _) = self.batches.get_mut(k);
                    let row = &mut rows[LIMIT_SLOT];
                    let out = lane_mask::<L>(taken_out);
                    // SAFETY: the caller's contract.
                    let mut vel = unsafe { v.gather_velocities::<L>(&b.body_a, &b.body_b) };
                    let taken_back = L::select(out, zero - row.impulse, zero);
                    row.impulse = L::select(out, zero, row.impulse);
                    apply(&mut vel, row, taken_back, b.inv_mass_a, b.inv_mass_b);
                    let write = write_only(b.write, taken_out);
                    // SAFETY: as above; `write` holds dynamic bodies of real lanes.
                    unsafe { v.scatter_velocities(&vel, &b.body_a, &b.body_b, write) };
                    self.limit_on[k] &= !taken_out;
                }
                if !last_round {
                    // In, solved from the next round (a last round leaves it for the next
                    // pass: every limit impulse ends at or above zero).
                    self.limit_on[k] |= moves & !taken_out;
                }
            }
        }
    }
}

/// The bias system on `u` at one position of the chains: one Gauss-Seidel update of each
/// row (offset `bias`, impulses `bias_impulse`), not a direct solve; position by position,
/// a sweep along the chains.
///
/// Why: solved exactly, the split impulses correct every position error in one substep,
/// including the error's components along the chain's softest modes, which takes large pose
/// changes where the linearisation no longer holds. The shipped 100-link chain then came
/// apart after 1.2 s (anchor errors of 1.7 m at 3 s with `error_reduction` 0.2, 1.2 m at
/// 0.05), where a sweep (like the colours' bias passes, which converge slowly in exactly
/// those modes) keeps its peak at 6.9e-3 m (the default Gauss-Seidel run: 7.6e-3 m; without
/// curvature offsets 9.5e-3 m and 7.8e-3 m).
///
/// # Safety
/// As [`ChainLanes::warm_start`].
unsafe fn bias_sweep<L: Lane>(b: &JointBatch<L>, rows: &mut [RowLanes<L>], u: &BodyAccess) {
    // SAFETY: the caller's contract.
    let mut vel = unsafe { u.gather_velocities::<L>(&b.body_a, &b.body_b) };
    let masses = (b.inv_mass_a, b.inv_mass_b);
    // The signature's slots are `0..row_count` (the rest, up to the group's row count, are
    // zero rows of a joint with fewer).
    for (slot, row) in rows[..b.row_count()].iter_mut().enumerate() {
        relax_row(
            &mut vel,
            row,
            |r| r.bias,
            |r| &mut r.bias_impulse,
            (b.unilateral & (1 << slot) != 0).then_some(b.limit_floor),
            masses,
        );
    }
    // SAFETY: the caller's contract; `write` holds dynamic bodies of real lanes.
    unsafe { u.scatter_velocities(&vel, &b.body_a, &b.body_b, b.write) };
}

/// `E = K_(c,p)` between consecutive positions `p` (before) and `c` (after), which meet as
/// `link` says: `E[i][j] = J_c,i^s M_s^-1 (J_p,j^s)^T` on their shared body `s`, over `M`
/// rows per joint.
fn coupling<L: Lane, const M: usize>(
    (p, p_rows): (&JointBatch<L>, &[RowLanes<L>]),
    c_rows: &[RowLanes<L>],
    link: Link,
    e: &mut [L],
) {
    let prev_b = link & LINK_PREV_B != 0;
    let next_a = link & LINK_NEXT_A != 0;
    // A row's linear part acts on A with -1 and on B with +1.
    let sign = if prev_b == next_a { -1.0 } else { 1.0 };
    let inv_mass = if prev_b { p.inv_mass_b } else { p.inv_mass_a };
    let scaled_mass = L::splat(sign) * inv_mass;
    for i in 0..M {
        let rc = &c_rows[i];
        let angular = if next_a { rc.angular_a } else { rc.angular_b };
        for j in 0..M {
            let rp = &p_rows[j];
            let inv_i_angular = if prev_b {
                rp.inv_i_angular_b
            } else {
                rp.inv_i_angular_a
            };
            e[i * M + j] = scaled_mass * rc.linear.dot(rp.linear) + angular.dot(inv_i_angular);
        }
    }
}

/// The `L D L^T` factors of the symmetric positive definite block `d` (its lower half is
/// read), packed as in `ChainLanes::factor`. A pivot at or below `min_pivot` (a row that
/// depends on others) gets `1 / D = 0` and a zero row of `L`, so the solve gives that row no
/// impulse and the others do not see it.
fn ldl<L: Lane, const M: usize>(d: &[[L; M]; M], min_pivot: L, f: &mut [L]) {
    let (zero, one) = (L::splat(0.0), L::splat(1.0));
    let f = &mut f[..M * M];
    // `a[i][m] = L_im D_m`.
    let mut a = [[zero; M]; M];
    for i in 0..M {
        for j in 0..i {
            let mut sum = d[i][j];
            for m in 0..j {
                sum = sum - a[i][m] * f[j * M + m];
            }
            a[i][j] = sum;
            f[i * M + j] = sum * f[j * M + j];
        }
        let mut pivot = d[i][i];
        for m in 0..i {
            pivot = pivot - a[i][m] * f[i * M + m];
        }
        let kept = pivot.gt(min_pivot);
        f[i * M + i] = L::select(kept, one / pivot, zero);
        for m in 0..i {
            f[i * M + m] = L::select(kept, f[i * M + m], zero);
            a[i][m] = L::select(kept, a[i][m], zero);
        }
        for m in i + 1..M {
            f[i * M + m] = zero;
        }
    }
}

/// `D^-1 r` from the factors `f` of `D` ([`ldl`]): `L z = r`, `z /= D`, `L^T y = z`.
#[inline(always)]
fn ldl_solve<L: Lane, const M: usize>(f: &[L], mut r: [L; M]) -> [L; M] {
    let f = &f[..M * M];
    for i in 0..M {
        for m in 0..i {
            r[i] = r[i] - f[i * M + m] * r[m];
        }
    }
    for (i, r) in r.iter_mut().enumerate() {
        *r = *r * f[i * M + i];
    }
    for i in (0..M).rev() {
        for m in i + 1..M {
            r[i] = r[i] - f[m * M + i] * r[m];
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scene, Settings};
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Every refactorisation of [`ChainLanes::solve_with_limits`] from position 0 (for
    /// [`refactoring_from_the_first_moved_limit_keeps_the_bits`]; other tests running
    /// meanwhile get the same bits either way, which is the claim tested).
    static REFACTOR_ALL: AtomicBool = AtomicBool::new(false);

    pub(super) fn refactor_all() -> bool {
        REFACTOR_ALL.load(Ordering::Relaxed)
    }

    /// Ten released chains of 3 to 12 hinges with stops at +-0.10 to +-0.28 rad, sharing
    /// lanes: limits come on and go off at different positions of different lanes.
    fn limited_ropes() -> Scene {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/regressions");
        Scene::load(root.join("limited-ropes.toml")).unwrap()
    }

    #[test]
    fn refactoring_from_the_first_moved_limit_keeps_the_bits() {
        let scene = limited_ropes();
        let run = |all: bool| {
            REFACTOR_ALL.store(all, Ordering::Relaxed);
            let mut w = scene.build().unwrap();
            let settings = Settings {
                chain_solve: true,
                velocity_iterations: 1,
                position_iterations: 0,
                ..scene.settings()
            };
            w.set_settings(settings).unwrap();
            let hashes: Vec<u64> = (0..60)
                .map(|_| {
                    w.step(scene.frame_dt()).unwrap();
                    w.state_hash()
                })
                .collect();
            REFACTOR_ALL.store(false, Ordering::Relaxed);
            (
                hashes,
                w.solver_state().chunks(6).filter(|r| r[5] > 0.0).count(),
            )
        };
        let (partial, pushing) = run(false);
        let (full, _) = run(true);
        // The limits are in play: some stop pushes at the end of the second.
        assert!(pushing > 0, "no limit pushing");
        assert_eq!(
            partial, full,
            "refactoring from the first moved limit changed bits"
        );
    }

    #[test]
    fn ldl_solves_a_symmetric_positive_definite_block() {
        let a = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]];
        let mut f = [0.0; 9];
        ldl::<f32, 3>(&a, 1e-9, &mut f);
        let r = [1.0, -2.0, 0.5];
        let x = ldl_solve::<f32, 3>(&f, r);
        for i in 0..3 {
            let back: f32 = (0..3).map(|m| a[i][m] * x[m]).sum();
            assert!(
                (back - r[i]).abs() < 1e-6,
                "row {i}: {back} against {}",
                r[i]
            );
        }
    }

    #[test]
    fn a_singular_pivot_gives_its_row_no_impulse() {
        // Row 1 is row 0 again: dependent.
        let d = [[2.0, 2.0], [2.0, 2.0]];
        let mut f = [0.0; 4];
        ldl::<f32, 2>(&d, 1e-9, &mut f);
        let x = ldl_solve::<f32, 2>(&f, [1.0, 1.0]);
        assert_eq!(x[1], 0.0);
        assert_eq!(x[0], 0.5);
    }
}
