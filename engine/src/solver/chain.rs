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
//! `D_k = K_kk - E_k D_(k-1)^-1 E_k^T`, keeping `E_k` and `G_k = D_k^-1`. A velocity pass
//! solves `K dlambda = -(J v + offset)` on the current velocities: forward
//! `y_k = G_k (r_k - E_k y_(k-1))`, backward `dlambda_k = y_k - G_k E_(k+1)^T dlambda_(k+1)`,
//! then applies `dlambda` joint by joint. The bias system (split impulses) shares the factors.
//! The joints that touch a chain from outside (a net's rows, say) are solved by the colours
//! after the chains, in the same pass: block Gauss-Seidel with chains as blocks.
//!
//! Cost: a factorisation of about the work of one more decoupling per joint in prepare, and
//! per pass four small matrix-vector products per joint besides the row work of a
//! Gauss-Seidel pass. Every lane computes what one lane would, so the scalar and wide paths
//! agree bit for bit.

use super::{apply, JointBatch, JointOutputs, PrepareInput};
use crate::joints::ParamLanes;
use crate::lanes::{BodyAccess, Lane, PairVelocities};
use crate::rows::{MAX_ROWS_PER_JOINT, MIN_K};
use crate::schedule::chains::{Link, LINK_NEXT_A, LINK_PREV_B};

const N: usize = MAX_ROWS_PER_JOINT;

/// A block of the chain system, indexed by row slot.
type Block<L> = [[L; N]; N];

fn zero_block<L: Lane>() -> Block<L> {
    [[L::splat(0.0); N]; N]
}

/// One group of chains, one per lane, of one shape ([`crate::schedule::ChainGroup`]).
#[derive(Debug, Clone)]
pub(crate) struct ChainLanes<L: Lane> {
    /// Position `k`'s joints, one chain per lane.
    pub(super) batches: Vec<JointBatch<L>>,
    pub(super) params: Vec<ParamLanes<L>>,
    /// `links[k - 1]`: how position `k` meets position `k - 1`.
    links: Vec<Link>,
    /// Rows per joint the blocks span: the most any position has (3 spherical, 5 revolute
    /// and prismatic, 6 fixed); a joint with fewer has zero rows in the rest (neutral).
    rows: usize,
    /// `E_k = K_(k,k-1)` (rows: slots of `k`, columns: slots of `k - 1`; unused at `k = 0`).
    coupling: Vec<Block<L>>,
    /// `G_k = D_k^-1`.
    inverse: Vec<Block<L>>,
    /// Scratch of a pass: per position, `y_k`, then `dlambda_k`, of the velocity system and
    /// of the bias system.
    work: Vec<[[L; N]; 2]>,
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
        // Unlimited signatures fill slots 0..rows (see `slot_masks`).
        debug_assert!(batches
            .iter()
            .all(|b| b.slots == (1u8 << b.slots.count_ones()) - 1 && b.unilateral == 0));
        ChainLanes {
            batches,
            params,
            links,
            rows,
            coupling: vec![zero_block(); n],
            inverse: vec![zero_block(); n],
            work: vec![[[L::splat(0.0); N]; 2]; n],
        }
    }

    /// Bytes of the group.
    pub(super) fn bytes(&self) -> usize {
        let n = self.batches.len();
        n * (size_of::<JointBatch<L>>()
            + size_of::<ParamLanes<L>>()
            + 2 * size_of::<Block<L>>()
            + size_of::<[[L; N]; 2]>()
            + size_of::<Link>())
    }

    /// Prepare: every position's rows ([`JointBatch::prepare`]), then the factorisation.
    pub(super) fn prepare(&mut self, input: &PrepareInput) {
        for (b, params) in self.batches.iter_mut().zip(&self.params) {
            b.prepare(input, params);
        }
        match self.rows {
            3 => self.factorize::<3>(),
            5 => self.factorize::<5>(),
            _ => self.factorize::<6>(),
        }
    }

    /// `E_k` and `G_k` for every position (see the module documentation), over `M` rows per
    /// joint.
    fn factorize<const M: usize>(&mut self) {
        let (zero, one, min_k) = (L::splat(0.0), L::splat(1.0), L::splat(MIN_K));
        for k in 0..self.batches.len() {
            let c = &self.batches[k];
            // K_kk: the identity after decoupling (1 / effective mass on active rows, 1 on
            // inactive and unused ones, whose rows and right-hand sides are zero).
            let mut d = zero_block::<L>();
            for (s, d) in d.iter_mut().enumerate().take(M) {
                let m = c.rows[s].effective_mass;
                d[s] = L::select(m.gt(zero), one / m, one);
            }
            if k > 0 {
                let e = coupling::<L, M>(&self.batches[k - 1], c, self.links[k - 1]);
                // D_k -= E G_(k-1) E^T.
                let g = &self.inverse[k - 1];
                let mut eg = zero_block::<L>();
                for i in 0..M {
                    for j in 0..M {
                        let mut sum = zero;
                        for m in 0..M {
                            sum = sum + e[i][m] * g[m][j];
                        }
                        eg[i][j] = sum;
                    }
                }
                for i in 0..M {
                    for i2 in 0..M {
                        let mut sum = zero;
                        for j in 0..M {
                            sum = sum + eg[i][j] * e[i2][j];
                        }
                        d[i][i2] = d[i][i2] - sum;
                    }
                }
                self.coupling[k] = e;
            }
            self.inverse[k] = inverse::<L, M>(d, min_k);
        }
    }

    /// Warm start of every position, in order.
    ///
    /// # Safety
    /// No other task touches the group's dynamic bodies during the call (chains share no
    /// dynamic body, and the chain stage runs alone).
    pub(super) unsafe fn warm_start(&self, access: &BodyAccess) {
        for b in &self.batches {
            // SAFETY: the caller's contract.
            unsafe { b.warm_start(access) };
        }
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
            match (self.rows, u) {
                (3, None) => self.solve::<3, false>(v, v),
                (3, Some(u)) => self.solve::<3, true>(v, u),
                (5, None) => self.solve::<5, false>(v, v),
                (5, Some(u)) => self.solve::<5, true>(v, u),
                (_, None) => self.solve::<6, false>(v, v),
                (_, Some(u)) => self.solve::<6, true>(v, u),
            }
            if let Some((out, inv_h)) = store {
                for b in &self.batches {
                    b.store(out, inv_h);
                }
            }
        }
    }

    /// For the velocity system (`v`, offset `speculative`, impulses `impulse`) and, with
    /// `BIAS`, the bias system (`u`, offset `bias`, impulses `bias_impulse`), which share the
    /// factors: `K dlambda = -(J v + offset)`, then `v += M^-1 J^T dlambda` and the
    /// accumulated impulses grow by `dlambda`. The two systems share no state, so solving
    /// them in the same sweeps gives the bits of solving them apart.
    ///
    /// # Safety
    /// As [`ChainLanes::warm_start`], for both arrays.
    unsafe fn solve<const M: usize, const BIAS: bool>(&mut self, v: &BodyAccess, u: &BodyAccess) {
        let zero = L::splat(0.0);
        let n = self.batches.len();
        let systems = if BIAS { 2 } else { 1 };
        // Forward: y_k = G_k (r_k - E_k y_(k-1)), r_k = -(J_k v + offset) on the velocities
        // as they are (nothing is applied before the backward sweep ends).
        for k in 0..n {
            let b = &self.batches[k];
            // SAFETY: the caller's contract.
            let vel = unsafe {
                [
                    v.gather_velocities::<L>(&b.body_a, &b.body_b),
                    if BIAS {
                        u.gather_velocities::<L>(&b.body_a, &b.body_b)
                    } else {
                        PairVelocities::zero()
                    },
                ]
            };
            for system in 0..systems {
                let mut r = [zero; N];
                for (s, r) in r.iter_mut().enumerate().take(M) {
                    let row = &b.rows[s];
                    let offset = if system == 0 {
                        row.speculative
                    } else {
                        row.bias
                    };
                    *r = -(JointBatch::<L>::velocity_error(&vel[system], row) + offset);
                }
                if k > 0 {
                    let (e, y) = (&self.coupling[k], &self.work[k - 1][system]);
                    for (i, r) in r.iter_mut().enumerate().take(M) {
                        let mut sum = zero;
                        for j in 0..M {
                            sum = sum + e[i][j] * y[j];
                        }
                        *r = *r - sum;
                    }
                }
                self.work[k][system] = mat_vec::<L, M>(&self.inverse[k], &r);
            }
        }
        // Backward: dlambda_k = y_k - G_k E_(k+1)^T dlambda_(k+1).
        for k in (0..n.saturating_sub(1)).rev() {
            let e = &self.coupling[k + 1];
            for system in 0..systems {
                let next = self.work[k + 1][system];
                let mut t = [zero; N];
                for (j, t) in t.iter_mut().enumerate().take(M) {
                    let mut sum = zero;
                    for i in 0..M {
                        sum = sum + e[i][j] * next[i];
                    }
                    *t = sum;
                }
                let correction = mat_vec::<L, M>(&self.inverse[k], &t);
                for s in 0..M {
                    self.work[k][system][s] = self.work[k][system][s] - correction[s];
                }
            }
        }
        // Apply, position by position (consecutive positions share a body).
        for k in 0..n {
            let b = &mut self.batches[k];
            let masses = (b.inv_mass_a, b.inv_mass_b);
            // SAFETY: the caller's contract.
            let mut vel = unsafe { v.gather_velocities::<L>(&b.body_a, &b.body_b) };
            for s in 0..M {
                let delta = self.work[k][0][s];
                let row = &mut b.rows[s];
                row.impulse = row.impulse + delta;
                apply(&mut vel, row, delta, masses.0, masses.1);
            }
            // SAFETY: the caller's contract; `write` holds dynamic bodies of real lanes.
            unsafe { v.scatter_velocities(&vel, &b.body_a, &b.body_b, b.write) };
            if BIAS {
                // SAFETY: as above.
                let mut vel = unsafe { u.gather_velocities::<L>(&b.body_a, &b.body_b) };
                for s in 0..M {
                    let delta = self.work[k][1][s];
                    let row = &mut b.rows[s];
                    row.bias_impulse = row.bias_impulse + delta;
                    apply(&mut vel, row, delta, masses.0, masses.1);
                }
                // SAFETY: as above.
                unsafe { u.scatter_velocities(&vel, &b.body_a, &b.body_b, b.write) };
            }
        }
    }
}

/// `E = K_(c,p)` between consecutive positions `p` (before) and `c` (after), which meet as
/// `link` says: `E[i][j] = J_c,i^s M_s^-1 (J_p,j^s)^T` on their shared body `s`, over `M`
/// rows per joint.
fn coupling<L: Lane, const M: usize>(p: &JointBatch<L>, c: &JointBatch<L>, link: Link) -> Block<L> {
    let prev_b = link & LINK_PREV_B != 0;
    let next_a = link & LINK_NEXT_A != 0;
    // A row's linear part acts on A with -1 and on B with +1.
    let sign = if prev_b == next_a { -1.0 } else { 1.0 };
    let inv_mass = if prev_b { p.inv_mass_b } else { p.inv_mass_a };
    let scaled_mass = L::splat(sign) * inv_mass;
    let mut e = zero_block::<L>();
    for (i, e) in e.iter_mut().enumerate().take(M) {
        let rc = &c.rows[i];
        let angular = if next_a { rc.angular_a } else { rc.angular_b };
        for (j, e) in e.iter_mut().enumerate().take(M) {
            let rp = &p.rows[j];
            let inv_i_angular = if prev_b {
                rp.inv_i_angular_b
            } else {
                rp.inv_i_angular_a
            };
            *e = scaled_mass * rc.linear.dot(rp.linear) + angular.dot(inv_i_angular);
        }
    }
    e
}

/// `m x` over the first `M` rows.
#[inline(always)]
fn mat_vec<L: Lane, const M: usize>(m: &Block<L>, x: &[L; N]) -> [L; N] {
    let mut y = [L::splat(0.0); N];
    for (i, y) in y.iter_mut().enumerate().take(M) {
        let mut sum = L::splat(0.0);
        for j in 0..M {
            sum = sum + m[i][j] * x[j];
        }
        *y = sum;
    }
    y
}

/// The inverse of the symmetric positive definite block `d` over its first `M` rows
/// (Gauss-Jordan; no pivoting needed). A pivot at or below `min_pivot` (a singular system:
/// the row depends on others) zeroes its row of the inverse, so that row takes no impulse.
fn inverse<L: Lane, const M: usize>(mut d: Block<L>, min_pivot: L) -> Block<L> {
    let (zero, one) = (L::splat(0.0), L::splat(1.0));
    let mut inv = zero_block::<L>();
    for (i, row) in inv.iter_mut().enumerate().take(M) {
        row[i] = one;
    }
    for p in 0..M {
        let pivot = d[p][p];
        let scale = L::select(pivot.gt(min_pivot), one / pivot, zero);
        for j in 0..M {
            d[p][j] = d[p][j] * scale;
            inv[p][j] = inv[p][j] * scale;
        }
        for r in 0..M {
            if r == p {
                continue;
            }
            let f = d[r][p];
            for j in 0..M {
                d[r][j] = d[r][j] - f * d[p][j];
                inv[r][j] = inv[r][j] - f * inv[p][j];
            }
        }
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_of_a_symmetric_positive_definite_block() {
        let mut d = zero_block::<f32>();
        let a = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]];
        for i in 0..3 {
            for j in 0..3 {
                d[i][j] = a[i][j];
            }
        }
        let inv = inverse::<f32, 3>(d, 1e-9);
        for i in 0..3 {
            for j in 0..3 {
                let product: f32 = (0..3).map(|m| a[i][m] * inv[m][j]).sum();
                let expected = if i == j { 1.0 } else { 0.0 };
                assert!((product - expected).abs() < 1e-6, "{i} {j}: {product}");
            }
        }
    }

    #[test]
    fn a_singular_pivot_gives_its_row_no_impulse() {
        let mut d = zero_block::<f32>();
        d[0][0] = 2.0;
        let inv = inverse::<f32, 2>(d, 1e-9);
        assert_eq!(inv[0][0], 0.5);
        assert_eq!(inv[1][1], 0.0);
    }
}
