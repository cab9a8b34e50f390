//! The hub solve: a hub's joints ([`crate::schedule::hubs`]) solved exactly in every velocity
//! pass, instead of row by row.
//!
//! Each joint is one scalar [`JointBatch`] (the hub's joints have no common shape to share
//! lanes), prepared like any batch: rows decoupled, so that each joint's own block of
//! `K = J M^-1 J^T` is the identity. Two joints of a hub share only the hub `H` (their other
//! bodies are distinct, or static or kinematic), so the rest of `K` is the coupling through
//! the hub: `K[(k,i),(l,j)] = J_ki^H M_H^-1 (J_lj^H)^T`, where a row acts on body A as
//! `(-linear, angular_a)` and on body B as `(+linear, angular_b)`. Prepare builds this dense
//! system (at most [`crate::schedule::hubs::HUB_MAX_JOINTS`] joints of up to 6 rows) and
//! factorises it (`L D L^T`, a dependent row dropped as in the decoupling); a velocity pass
//! solves `K dlambda = -(J v + offset)` on the current velocities and applies `dlambda`
//! joint by joint. The bias system (split impulses) is solved exactly too, with the same
//! factors, unlike the chain solve's (which sweeps it joint by joint: solved exactly along a
//! long chain it made large pose changes along the chain's soft modes). A hub is a star, with
//! no long soft modes, and the exact bias solve measured better than a sweep everywhere: the
//! swinging shipped `hub` scene's anchor error over 10 s 3.3e-5 m against 3.6e-4 m, a hub
//! spun at 10 rad/s 1.4e-2 m against 0.24 m, a hub of every joint type 1.7e-7 m against
//! 9.7e-7 m. The joints that touch the hub's bodies from outside are solved by the colours
//! after the hubs, in the same pass (block Gauss-Seidel).
//!
//! Plain `f32` on both paths, so the scalar and wide paths agree bit for bit.

use super::{apply, JointBatch, JointOutputs, PrepareInput};
use crate::joints::ParamLanes;
use crate::lanes::BodyAccess;
use crate::rows::MIN_K;

/// One hub's joints and their factorised system.
#[derive(Debug, Clone)]
pub(crate) struct HubSolve {
    /// The joints, in joint order, one scalar batch each.
    batches: Vec<JointBatch<f32>>,
    params: Vec<ParamLanes<f32>>,
    /// Whether the hub is each joint's body A.
    hub_is_a: Vec<bool>,
    /// First row of each joint in the system, and the row count at the end.
    offsets: Vec<usize>,
    /// The `L D L^T` factors, `n x n` row-major: `L` strictly below the diagonal, `1 / D` on
    /// it (0 for a dropped row).
    factor: Vec<f32>,
    /// Scratch of a pass: the right-hand side, then `dlambda`.
    work: Vec<f32>,
}

impl HubSolve {
    /// A hub from its joints' batches and whether the hub is each one's body A.
    pub(super) fn new(
        batches: Vec<JointBatch<f32>>,
        params: Vec<ParamLanes<f32>>,
        hub_is_a: Vec<bool>,
    ) -> Self {
        // Unlimited signatures fill slots 0..rows (see `slot_masks`).
        debug_assert!(batches
            .iter()
            .all(|b| b.slots == (1u8 << b.slots.count_ones()) - 1 && b.unilateral == 0));
        let mut offsets = vec![0];
        for b in &batches {
            offsets.push(offsets[offsets.len() - 1] + b.slots.count_ones() as usize);
        }
        let n = offsets[offsets.len() - 1];
        HubSolve {
            batches,
            params,
            hub_is_a,
            offsets,
            factor: vec![0.0; n * n],
            work: vec![0.0; n],
        }
    }

    /// Bytes of the hub's storage.
    pub(super) fn bytes(&self) -> usize {
        self.batches.len()
            * (size_of::<JointBatch<f32>>() + size_of::<ParamLanes<f32>>() + size_of::<bool>())
            + (self.factor.len() + self.work.len()) * size_of::<f32>()
            + self.offsets.len() * size_of::<usize>()
    }

    /// Active rows at the last prepare.
    pub(super) fn active_rows(&self) -> usize {
        self.batches.iter().map(|b| b.active_rows as usize).sum()
    }

    /// Store ([`JointBatch::store`]) of every joint.
    ///
    /// # Safety
    /// As [`JointBatch::store`].
    pub(super) unsafe fn store(&self, out: &JointOutputs, inv_h: f32) {
        for b in &self.batches {
            // SAFETY: the caller's contract.
            unsafe { b.store(out, inv_h) };
        }
    }

    /// Warm start of every joint, in order.
    ///
    /// # Safety
    /// No other task touches the hub's dynamic bodies during the call (hubs share no dynamic
    /// body, and the hub stage runs alone).
    pub(super) unsafe fn warm_start(&self, access: &BodyAccess) {
        for b in &self.batches {
            // SAFETY: the caller's contract.
            unsafe { b.warm_start(access) };
        }
    }

    /// Prepare: every joint's rows ([`JointBatch::prepare`]), then the system and its
    /// factors.
    pub(super) fn prepare(&mut self, input: &PrepareInput) {
        for (b, params) in self.batches.iter_mut().zip(&self.params) {
            b.prepare(input, params);
        }
        let n = self.work.len();
        let k = &mut self.factor;
        k.fill(0.0);
        // The lower half of K: the identity on each joint's own rows (1 / effective mass on
        // active rows, 1 on inactive ones, whose rows and right-hand sides are zero), the
        // hub's coupling between joints.
        for (p, bp) in self.batches.iter().enumerate() {
            for s in 0..self.offsets[p + 1] - self.offsets[p] {
                let m = bp.rows[s].effective_mass;
                let i = self.offsets[p] + s;
                k[i * n + i] = if m > 0.0 { 1.0 / m } else { 1.0 };
            }
            for (q, bq) in self.batches.iter().enumerate().take(p) {
                // J_p^H M_H^-1 (J_q^H)^T, both on the hub's side.
                let (a_p, a_q) = (self.hub_is_a[p], self.hub_is_a[q]);
                let sign = if a_p == a_q { 1.0 } else { -1.0 };
                let inv_mass = if a_q { bq.inv_mass_a } else { bq.inv_mass_b };
                for i in 0..self.offsets[p + 1] - self.offsets[p] {
                    let rp = &bp.rows[i];
                    let angular = if a_p { rp.angular_a } else { rp.angular_b };
                    for j in 0..self.offsets[q + 1] - self.offsets[q] {
                        let rq = &bq.rows[j];
                        let inv_i_angular = if a_q {
                            rq.inv_i_angular_a
                        } else {
                            rq.inv_i_angular_b
                        };
                        k[(self.offsets[p] + i) * n + self.offsets[q] + j] =
                            sign * inv_mass * rp.linear.dot(rq.linear) + angular.dot(inv_i_angular);
                    }
                }
            }
        }
        ldl_in_place(k, n, MIN_K, &mut self.work);
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
        // r = -(J v + offset) on the velocities as they are.
        for (p, b) in self.batches.iter().enumerate() {
            // SAFETY: the caller's contract.
            let vel = unsafe { v.gather_velocities::<f32>(&b.body_a, &b.body_b) };
            for s in 0..self.offsets[p + 1] - self.offsets[p] {
                let row = &b.rows[s];
                self.work[self.offsets[p] + s] =
                    -(JointBatch::<f32>::velocity_error(&vel, row) + row.speculative);
            }
        }
        ldl_solve_in_place(&self.factor, &mut self.work);
        // Apply, joint by joint (they share the hub).
        for (p, b) in self.batches.iter_mut().enumerate() {
            // SAFETY: the caller's contract.
            let mut vel = unsafe { v.gather_velocities::<f32>(&b.body_a, &b.body_b) };
            for s in 0..self.offsets[p + 1] - self.offsets[p] {
                let delta = self.work[self.offsets[p] + s];
                let row = &mut b.rows[s];
                row.impulse += delta;
                apply(&mut vel, row, delta, b.inv_mass_a, b.inv_mass_b);
            }
            // SAFETY: the caller's contract; `write` holds the joint's dynamic bodies.
            unsafe { v.scatter_velocities(&vel, &b.body_a, &b.body_b, b.write) };
        }
        if let Some(u) = u {
            // The bias system, solved exactly too: `K dlambda = -(J u + bias)` on the bias
            // velocities, with the same factors.
            for (p, b) in self.batches.iter().enumerate() {
                // SAFETY: the caller's contract.
                let vel = unsafe { u.gather_velocities::<f32>(&b.body_a, &b.body_b) };
                for s in 0..self.offsets[p + 1] - self.offsets[p] {
                    let row = &b.rows[s];
                    self.work[self.offsets[p] + s] =
                        -(JointBatch::<f32>::velocity_error(&vel, row) + row.bias);
                }
            }
            ldl_solve_in_place(&self.factor, &mut self.work);
            for (p, b) in self.batches.iter_mut().enumerate() {
                // SAFETY: the caller's contract.
                let mut vel = unsafe { u.gather_velocities::<f32>(&b.body_a, &b.body_b) };
                for s in 0..self.offsets[p + 1] - self.offsets[p] {
                    let delta = self.work[self.offsets[p] + s];
                    let row = &mut b.rows[s];
                    row.bias_impulse += delta;
                    apply(&mut vel, row, delta, b.inv_mass_a, b.inv_mass_b);
                }
                // SAFETY: as above.
                unsafe { u.scatter_velocities(&vel, &b.body_a, &b.body_b, b.write) };
            }
        }
        if let Some((out, inv_h)) = store {
            // SAFETY: the caller's contract.
            unsafe { self.store(out, inv_h) };
        }
    }
}

/// `L D L^T` of the symmetric `n x n` matrix whose lower half is in `k` (row-major), in
/// place: `L` strictly below the diagonal, `1 / D` on it. A pivot at or below `min_pivot` (a
/// row that depends on others) gets `1 / D = 0` and a zero row of `L`, so the solve gives
/// that row no impulse and the others do not see it. The upper half is left zero.
fn ldl_in_place(k: &mut [f32], n: usize, min_pivot: f32, a: &mut [f32]) {
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
        let mut pivot = row[i];
        for (a, l) in a[..i].iter().zip(&row[..i]) {
            pivot -= a * l;
        }
        if pivot > min_pivot {
            row[i] = 1.0 / pivot;
        } else {
            row[..=i].fill(0.0);
        }
    }
}

/// `K^-1 r` in place from the factors of [`ldl_in_place`]: `L z = r`, `z /= D`, `L^T y = z`.
fn ldl_solve_in_place(f: &[f32], r: &mut [f32]) {
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
        for (m, y) in solved.iter().enumerate() {
            x -= f[(i + 1 + m) * n + i] * y;
        }
        head[i] = x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dense_factorisation_solves_and_drops_dependent_rows() {
        let n = 4;
        let full = [
            [4.0, 1.0, 0.5, 0.2],
            [1.0, 3.0, 0.25, 0.1],
            [0.5, 0.25, 2.0, 0.3],
            [0.2, 0.1, 0.3, 1.5],
        ];
        let mut k: Vec<f32> = full.iter().flatten().copied().collect();
        ldl_in_place(&mut k, n, 1e-9, &mut [0.0; 4]);
        let mut x = vec![1.0, -2.0, 0.5, 0.25];
        let r = x.clone();
        ldl_solve_in_place(&k, &mut x);
        for i in 0..n {
            let back: f32 = (0..n).map(|m| full[i][m] * x[m]).sum();
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
