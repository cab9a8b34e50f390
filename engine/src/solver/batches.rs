//! Storage of joint batches: the headers ([`JointBatch`]: indices, masses, signature), their
//! joint parameters, and their rows, each in one array in batch order.
//!
//! The rows live apart from the headers, `rows_per(batch)` of them per batch and contiguous,
//! so that a velocity pass over a colour streams one dense array. With six row slots inline
//! in every batch (4 KB a batch), a spherical batch touched 1.9 KB of its 4 KB and the
//! 100 x 100 grid's velocity passes ran about a third slower: twice the pages and a stride
//! that maps every batch to the same cache sets.

use super::{JointBatch, RowLanes};
use crate::joints::ParamLanes;
use crate::lanes::{Lane, Shared};
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
