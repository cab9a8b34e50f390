//! Storage of joint batches: the headers ([`JointBatch`]: indices, masses, signature), their
//! joint parameters, and their rows, each in one array in batch order.
//!
//! The rows live apart from the headers, `rows_per(batch)` of them per batch and contiguous,
//! so that a velocity pass over a colour streams one dense array. With six row slots inline
//! in every batch (4 KB a batch), a spherical batch's passes touched 1.9 KB of its 4 KB, at a
//! 4 KB stride, and a velocity pass over the 100 x 100 grid took 1.6 times as long (0.41 to
//! 0.44 ms against 0.26 ms, native build, one thread): twice the pages for the same bytes.

use super::{JointBatch, JointOutputs, PrepareInput, RowLanes, RowScratch};
use crate::joints::ParamLanes;
use crate::lanes::{BodyAccess, Lane, Shared};
use std::ops::Range;

/// One batch borrowed for a stage: its header and rows to change, its parameters to read.
pub(crate) type BatchMut<'a, L> = (
    &'a mut JointBatch<L>,
    &'a mut [RowLanes<L>],
    &'a ParamLanes<L>,
);

/// Batches with their parameters and rows.
#[derive(Debug, Clone)]
pub(crate) struct Batches<L: Lane> {
    heads: Vec<JointBatch<L>>,
    params: Vec<ParamLanes<L>>,
    rows: Vec<RowLanes<L>>,
    /// Batch `k`'s rows are `rows[offsets[k]..offsets[k + 1]]`.
    offsets: Vec<usize>,
}

impl<L: Lane> Default for Batches<L> {
    fn default() -> Self {
        Batches {
            heads: Vec::new(),
            params: Vec::new(),
            rows: Vec::new(),
            offsets: vec![0],
        }
    }
}

impl<L: Lane> Batches<L> {
    /// The batches `items` (header and parameters), each with `rows_per(header)` zero rows.
    pub(crate) fn new(
        items: impl IntoIterator<Item = (JointBatch<L>, ParamLanes<L>)>,
        rows_per: impl Fn(&JointBatch<L>) -> usize,
    ) -> Self {
        let mut batches = Batches::default();
        for (head, params) in items {
            let n = rows_per(&head);
            batches.rows.extend((0..n).map(|_| RowLanes::zero()));
            batches.offsets.push(batches.rows.len());
            batches.heads.push(head);
            batches.params.push(params);
        }
        batches
    }

    /// Number of batches.
    pub(crate) fn len(&self) -> usize {
        self.heads.len()
    }

    /// Batch `k`'s header.
    pub(crate) fn head(&self, k: usize) -> &JointBatch<L> {
        &self.heads[k]
    }

    /// Batch `k`'s rows.
    pub(crate) fn rows(&self, k: usize) -> &[RowLanes<L>] {
        &self.rows[self.offsets[k]..self.offsets[k + 1]]
    }

    /// Batch `k`: header, rows and parameters.
    pub(crate) fn get_mut(&mut self, k: usize) -> BatchMut<'_, L> {
        let rows = &mut self.rows[self.offsets[k]..self.offsets[k + 1]];
        (&mut self.heads[k], rows, &self.params[k])
    }

    /// Every batch's header and rows, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&JointBatch<L>, &[RowLanes<L>])> {
        (0..self.len()).map(|k| (&self.heads[k], self.rows(k)))
    }

    /// Every batch's header, rows and parameters, in order.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = BatchMut<'_, L>> {
        split(&mut self.heads, &mut self.rows, &self.offsets, &self.params)
    }

    /// Active rows of every batch at the last prepare.
    pub(crate) fn active_rows(&self) -> usize {
        self.heads.iter().map(|b| b.active_rows as usize).sum()
    }

    /// Prepare ([`JointBatch::prepare`]) of every batch, in order.
    pub(crate) fn prepare(&mut self, input: &PrepareInput) {
        let mut scratch = RowScratch::default();
        for (b, rows, params) in self.iter_mut() {
            b.prepare(rows, input, params, &mut scratch);
        }
    }

    /// Warm start ([`JointBatch::warm_start`]) of every batch, in order.
    ///
    /// # Safety
    /// As [`JointBatch::warm_start`], for every batch's bodies.
    pub(crate) unsafe fn warm_start(&self, access: &BodyAccess) {
        for (b, rows) in self.iter() {
            // SAFETY: the caller's contract.
            unsafe { b.warm_start(rows, access) };
        }
    }

    /// Store ([`JointBatch::store`]) of every batch.
    ///
    /// # Safety
    /// As [`JointBatch::store`], for every batch's joints.
    pub(crate) unsafe fn store(&self, out: &JointOutputs, inv_h: f32) {
        for (b, rows) in self.iter() {
            // SAFETY: the caller's contract.
            unsafe { b.store(rows, out, inv_h) };
        }
    }

    /// Bytes of storage (headers, parameters, rows).
    pub(crate) fn bytes(&self) -> usize {
        self.heads.len() * (size_of::<JointBatch<L>>() + size_of::<ParamLanes<L>>())
            + self.rows.len() * size_of::<RowLanes<L>>()
            + self.offsets.len() * size_of::<usize>()
    }

    /// A view for tasks that each take a disjoint range of batches.
    pub(crate) fn shared(&mut self) -> SharedBatches<'_, L> {
        SharedBatches {
            heads: Shared::new(&mut self.heads),
            rows: Shared::new(&mut self.rows),
            offsets: &self.offsets,
            params: &self.params,
        }
    }
}

/// The batches `heads` with their rows (`rows` starts at `offsets[0]`'s row) and parameters.
fn split<'a, L: Lane>(
    heads: &'a mut [JointBatch<L>],
    mut rows: &'a mut [RowLanes<L>],
    offsets: &'a [usize],
    params: &'a [ParamLanes<L>],
) -> impl Iterator<Item = BatchMut<'a, L>> {
    heads
        .iter_mut()
        .zip(offsets.windows(2))
        .zip(params)
        .map(move |((head, window), params)| {
            let (mine, rest) = std::mem::take(&mut rows).split_at_mut(window[1] - window[0]);
            rows = rest;
            (head, mine, params)
        })
}

/// [`Batches`] shared by the tasks of a stage, each taking its own range of batches.
pub(crate) struct SharedBatches<'a, L: Lane> {
    heads: Shared<'a, JointBatch<L>>,
    rows: Shared<'a, RowLanes<L>>,
    offsets: &'a [usize],
    params: &'a [ParamLanes<L>],
}

impl<'a, L: Lane> SharedBatches<'a, L> {
    /// The batches `range`: header, rows and parameters.
    ///
    /// # Safety
    /// No other task touches these batches while the borrows live.
    pub(crate) unsafe fn range_mut(
        &self,
        range: Range<usize>,
    ) -> impl Iterator<Item = BatchMut<'a, L>> {
        let offsets = &self.offsets[range.start..=range.end];
        // SAFETY: the caller's contract; a batch range's rows are its own (offsets ascend).
        let (heads, rows) = unsafe {
            (
                self.heads.slice_mut(range.clone()),
                self.rows.slice_mut(offsets[0]..offsets[offsets.len() - 1]),
            )
        };
        split(heads, rows, offsets, &self.params[range])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::joints::JointKind;
    use crate::lanes::{Wide, WIDE_LANES};
    use crate::schedule::Batch;
    use crate::Scene;

    /// Three batches of the shipped chain's joints with 3, 1 and 5 joints, each given as many
    /// rows as joints (any count works: the storage does not read the rows).
    fn three_batches() -> Batches<Wide> {
        let world = Scene::builtin("chain").unwrap().build().unwrap();
        let (joints, bodies) = (world.joints(), world.bodies());
        let ids: [&[u32]; 3] = [&[0, 2, 4], &[6], &[8, 10, 12, 14, 16]];
        Batches::new(
            ids.iter().map(|ids| {
                let batch = Batch {
                    kind: JointKind::Revolute,
                    limited: false,
                    start: 0,
                    len: ids.len() as u32,
                };
                (
                    JointBatch::new(&batch, ids, joints, bodies),
                    super::super::param_lanes(JointKind::Revolute, ids, joints),
                )
            }),
            |b| b.len,
        )
    }

    /// Marks every row with its batch and row number, through `iter_mut`.
    fn mark(batches: &mut Batches<Wide>) {
        for (k, (_, rows, _)) in batches.iter_mut().enumerate() {
            for (i, r) in rows.iter_mut().enumerate() {
                r.impulse = Wide::splat((10 * k + i) as f32);
            }
        }
    }

    #[test]
    fn each_batch_gets_its_own_rows_in_order() {
        let mut batches = three_batches();
        assert_eq!(batches.len(), 3);
        mark(&mut batches);
        for (k, n) in [3, 1, 5].into_iter().enumerate() {
            let rows = batches.rows(k);
            assert_eq!(rows.len(), n);
            for (i, r) in rows.iter().enumerate() {
                assert_eq!(r.impulse.to_array(), [(10 * k + i) as f32; WIDE_LANES]);
            }
            assert_eq!(batches.head(k).len, n);
            assert_eq!(batches.get_mut(k).1.len(), n);
        }
        assert_eq!(
            batches.bytes(),
            3 * (size_of::<JointBatch<Wide>>() + size_of::<ParamLanes<Wide>>())
                + 9 * size_of::<RowLanes<Wide>>()
                + 4 * size_of::<usize>()
        );
    }

    /// Two tasks take disjoint ranges of the shared batches at once and see exactly the
    /// rows `rows(k)` does (the unsafe split of `range_mut`).
    #[test]
    fn tasks_with_disjoint_ranges_see_their_own_rows() {
        let mut batches = three_batches();
        let shared = batches.shared();
        std::thread::scope(|scope| {
            for range in [0..1, 1..3] {
                let shared = &shared;
                scope.spawn(move || {
                    // SAFETY: the two ranges are disjoint.
                    for (k, (head, rows, _)) in unsafe { shared.range_mut(range.clone()) }
                        .enumerate()
                        .map(|(i, item)| (range.start + i, item))
                    {
                        assert_eq!(rows.len(), head.len);
                        for (i, r) in rows.iter_mut().enumerate() {
                            r.bias_impulse = Wide::splat((100 * k + i) as f32);
                        }
                    }
                });
            }
        });
        for k in 0..3 {
            for (i, r) in batches.rows(k).iter().enumerate() {
                assert_eq!(
                    r.bias_impulse.to_array(),
                    [(100 * k + i) as f32; WIDE_LANES]
                );
            }
        }
    }
}
