//! How stages spread their work over threads: [`Exec`] for one loop, [`Stages`] for a run of
//! dependent loops in one parallel region.
//!
//! Work is split into items fixed by the scene alone (chunks of batches, bodies or projection
//! groups), never by the thread count; the items of one loop are independent, so any thread
//! may run any item in any order and the results are bitwise the same.

use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How a stage spreads its work: serially, or in rayon tasks of a fixed size (the split
/// depends on the scene alone; results do not depend on it in any case, because the items of
/// one parallel loop are independent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exec {
    Serial,
    Parallel,
}

/// Flushes denormal floats to zero on this thread while alive (x86-64: the MXCSR's
/// flush-to-zero and denormals-are-zero bits), then restores the thread's mode.
///
/// Why: a denormal (magnitude below 1.2e-38) costs a microcode assist of about a hundred
/// cycles per operation. The direct chain solve drives the out-of-plane velocities of a
/// planar chain towards zero geometrically, and once they were denormal every stage that
/// read them slowed down: 2.3 to 4 times for the pose integration, 1.8 times for the
/// diagnostics (100 x 100 chain). Physics engines run their steps this way (Jolt's
/// `FPFlushDenormals`). Every thread that does the engine's arithmetic holds one (the
/// calling thread in `World::in_pool`, every rayon task of [`Exec`] and [`Stages`]), so
/// results stay bitwise the same for every thread count; user code called back between
/// substeps runs in the thread's own mode.
pub(crate) struct FlushDenormals {
    #[cfg(target_arch = "x86_64")]
    saved: u32,
}

#[cfg(target_arch = "x86_64")]
const MXCSR_FTZ_DAZ: u32 = 0x8040;

impl FlushDenormals {
    /// Flush-to-zero and denormals-are-zero on, until dropped.
    #[inline]
    pub(crate) fn new() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: reading and writing this thread's SSE control register is always
            // available on x86-64 (SSE2 is part of the base ISA); setting FTZ/DAZ changes how
            // denormal results and inputs round, nothing else, and `drop` restores the
            // previous value. The intrinsics are deprecated in favour of inline assembly with
            // the same effect.
            #[allow(deprecated)]
            let saved = unsafe {
                let saved = std::arch::x86_64::_mm_getcsr();
                std::arch::x86_64::_mm_setcsr(saved | MXCSR_FTZ_DAZ);
                saved
            };
            FlushDenormals { saved }
        }
        #[cfg(not(target_arch = "x86_64"))]
        FlushDenormals {}
    }
}

impl Drop for FlushDenormals {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: as in `new`: restores the value read there.
        #[cfg(target_arch = "x86_64")]
        #[allow(deprecated)]
        unsafe {
            std::arch::x86_64::_mm_setcsr(self.saved)
        };
    }
}

/// Batches per rayon task.
pub(crate) const BATCH_CHUNK: usize = 8;
/// Colour projection groups (eight joints each) per rayon task.
pub(crate) const SHARED_CHUNK: usize = 16;
/// Bodies or joints per rayon task in per-item loops.
pub(crate) const ITEM_CHUNK: usize = 512;

impl Exec {
    /// A loop of `len` items in tasks of `chunk` runs serially when it is one task: entering
    /// rayon costs microseconds, more than a small scene's whole stage.
    fn for_len(self, len: usize, chunk: usize) -> Exec {
        if len <= chunk {
            Exec::Serial
        } else {
            self
        }
    }

    /// Calls `f(first, chunk)` for consecutive chunks of `chunk` items (the last may be
    /// shorter), `first` being the index of the chunk's first item. The chunks are fixed by
    /// `chunk` alone, whatever the thread count.
    pub(crate) fn for_each_chunk<T: Send>(
        self,
        items: &mut [T],
        chunk: usize,
        f: &(impl Fn(usize, &mut [T]) + Sync),
    ) {
        match self.for_len(items.len(), chunk) {
            Exec::Serial => items
                .chunks_mut(chunk)
                .enumerate()
                .for_each(|(c, x)| f(c * chunk, x)),
            Exec::Parallel => items.par_chunks_mut(chunk).enumerate().for_each(|(c, x)| {
                let _fpu = FlushDenormals::new();
                f(c * chunk, x)
            }),
        }
    }

    /// Calls `f(i, &mut items[i])` for every item.
    pub(crate) fn for_each_indexed<T: Send>(
        self,
        items: &mut [T],
        f: &(impl Fn(usize, &mut T) + Sync),
    ) {
        match self.for_len(items.len(), ITEM_CHUNK) {
            Exec::Serial => items.iter_mut().enumerate().for_each(|(i, x)| f(i, x)),
            Exec::Parallel => {
                items
                    .par_chunks_mut(ITEM_CHUNK)
                    .enumerate()
                    .for_each(|(c, chunk)| {
                        let _fpu = FlushDenormals::new();
                        for (k, x) in chunk.iter_mut().enumerate() {
                            f(c * ITEM_CHUNK + k, x);
                        }
                    })
            }
        }
    }

    /// Calls `f(i, &mut a[i], &mut b[i])` for every index of two slices of equal length: one
    /// parallel loop where two per-array loops entered rayon twice.
    pub(crate) fn for_each_pair<A: Send, B: Send>(
        self,
        a: &mut [A],
        b: &mut [B],
        f: &(impl Fn(usize, &mut A, &mut B) + Sync),
    ) {
        assert_eq!(a.len(), b.len(), "paired arrays differ in length");
        match self.for_len(a.len(), ITEM_CHUNK) {
            Exec::Serial => a
                .iter_mut()
                .zip(b.iter_mut())
                .enumerate()
                .for_each(|(i, (x, y))| f(i, x, y)),
            Exec::Parallel => a
                .par_chunks_mut(ITEM_CHUNK)
                .zip(b.par_chunks_mut(ITEM_CHUNK))
                .enumerate()
                .for_each(|(c, (xs, ys))| {
                    let _fpu = FlushDenormals::new();
                    for (k, (x, y)) in xs.iter_mut().zip(ys.iter_mut()).enumerate() {
                        f(c * ITEM_CHUNK + k, x, y);
                    }
                }),
        }
    }
}

/// A counter on a cache line of its own, so that threads counting on one do not invalidate
/// the others.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Counter(AtomicUsize);

/// Many dependent loops (stages) in one parallel region: the colours of every velocity pass,
/// or of every projection pass, one after another.
///
/// Entering rayon once per colour and pass puts the threads to sleep and wakes them
/// 40 to 60 times per substep; a region enters once. Every thread of the pool (worker `w` of
/// `T`) walks the stages in order. In each stage it runs the items of its own block (the
/// `w`-th of `T` contiguous blocks, so a thread keeps the same batches, and their bodies in
/// its cache, from pass to pass), claiming them one at a time from the block's counter, then
/// helps with the other blocks the same way, and waits until every item of the stage has
/// finished before it starts the next stage.
///
/// Deadlock-free whatever rayon does with the threads: a thread waits only once every item
/// of the stage is claimed, an item is claimed only by a thread that is running it (runs do
/// not block), and a thread publishes how many items it finished as soon as it finds nothing
/// left to claim, before it waits; so the wait ends. A thread that starts late (rayon ran its half of the
/// `join` after the other) finds the finished stages' items all claimed and walks through.
/// If an item panics, the waiting threads give up and the panic reaches the caller.
#[derive(Debug, Default)]
pub(crate) struct Stages {
    /// Items claimed, per stage and block: `claimed[stage * threads + block]`.
    claimed: Vec<Counter>,
    /// Items finished, per stage.
    finished: Vec<Counter>,
    poisoned: AtomicBool,
}

impl Clone for Stages {
    /// A fresh region (the counters hold no state between runs).
    fn clone(&self) -> Self {
        Stages::default()
    }
}

/// Spins before a waiting thread starts yielding its core.
const SPINS_BEFORE_YIELD: u32 = 64;

impl Stages {
    /// Runs `work(stage, items)` over `0..items(stage)`, for `stage in 0..stages` in order:
    /// every item of a stage finishes before any item of the next starts. The items of one
    /// stage run in parallel with `Exec::Parallel` (`items` one item long) and must be
    /// independent; serially, `work` gets each stage's items in one call.
    ///
    /// Allocates only when `stages` or the pool's thread count exceeds every earlier call's.
    pub(crate) fn run(
        &mut self,
        exec: Exec,
        stages: usize,
        items: &(impl Fn(usize) -> usize + Sync),
        work: &(impl Fn(usize, Range<usize>) + Sync),
    ) {
        let threads = rayon::current_num_threads();
        if exec == Exec::Serial || threads == 1 || (0..stages).all(|s| items(s) <= 1) {
            for stage in 0..stages {
                let n = items(stage);
                if n > 0 {
                    work(stage, 0..n);
                }
            }
            return;
        }
        if self.claimed.len() < stages * threads {
            self.claimed.resize_with(stages * threads, Counter::default);
        }
        if self.finished.len() < stages {
            self.finished.resize_with(stages, Counter::default);
        }
        for c in self.claimed[..stages * threads]
            .iter_mut()
            .chain(&mut self.finished[..stages])
        {
            *c.0.get_mut() = 0;
        }
        *self.poisoned.get_mut() = false;
        let this = &*self;
        launch(0, threads, &|worker| {
            let _fpu = FlushDenormals::new();
            this.walk(worker, threads, stages, items, work)
        });
    }

    /// Worker `worker`'s walk through the stages.
    fn walk(
        &self,
        worker: usize,
        threads: usize,
        stages: usize,
        items: &(impl Fn(usize) -> usize + Sync),
        work: &(impl Fn(usize, Range<usize>) + Sync),
    ) {
        for stage in 0..stages {
            let len = items(stage);
            let claimed = &self.claimed[stage * threads..(stage + 1) * threads];
            // Items this thread finished, published once per stage: an atomic add per item
            // on a line both threads write moved the line between the cores for every item.
            let mut done = 0;
            for k in 0..threads {
                let block = (worker + k) % threads;
                let (start, end) = (block * len / threads, (block + 1) * len / threads);
                loop {
                    let item = start + claimed[block].0.fetch_add(1, Ordering::Relaxed);
                    if item >= end {
                        break;
                    }
                    let guard = PoisonOnUnwind(&self.poisoned);
                    work(stage, item..item + 1);
                    std::mem::forget(guard);
                    done += 1;
                }
            }
            if done > 0 {
                // Release: the items' writes happen before a waiter sees them finished.
                self.finished[stage].0.fetch_add(done, Ordering::Release);
            }
            let mut spins = 0;
            // Acquire: pairs with every thread's release above.
            while self.finished[stage].0.load(Ordering::Acquire) < len {
                if self.poisoned.load(Ordering::Relaxed) {
                    return;
                }
                if spins < SPINS_BEFORE_YIELD {
                    spins += 1;
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
    }
}

/// Marks the region poisoned if dropped while unwinding from an item.
struct PoisonOnUnwind<'a>(&'a AtomicBool);

impl Drop for PoisonOnUnwind<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `worker(first..first + threads)` on up to `threads` threads of the current rayon
/// pool: a tree of `join`s (no allocation; rayon may run both halves on one thread, which
/// [`Stages`] tolerates).
fn launch(first: usize, threads: usize, worker: &(impl Fn(usize) + Sync)) {
    if threads <= 1 {
        worker(first);
    } else {
        let half = threads / 2;
        rayon::join(
            || launch(first, threads - half, worker),
            || launch(first + threads - half, half, worker),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn denormals_flush_to_zero_while_the_guard_lives_and_not_after() {
        let tiny = std::hint::black_box(1e-20_f32);
        let product = || std::hint::black_box(tiny) * std::hint::black_box(tiny);
        assert!(product() > 0.0, "1e-40 is a denormal, not zero, by default");
        {
            let _fpu = FlushDenormals::new();
            assert_eq!(product(), 0.0);
            // Inputs too: a denormal reads as zero.
            let denormal = std::hint::black_box(f32::from_bits(1));
            assert_eq!(denormal * std::hint::black_box(1e30_f32), 0.0);
        }
        assert!(product() > 0.0, "the thread's mode is restored");
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// Runs `stages` over stages of `sizes` items and returns the stage of every item run, in
    /// the order they ran.
    fn run_order(stages: &mut Stages, sizes: &[usize]) -> Vec<usize> {
        let order = Mutex::new(Vec::new());
        stages.run(Exec::Parallel, sizes.len(), &|s| sizes[s], &|s, range| {
            order.lock().unwrap().extend(range.map(|_| s));
        });
        order.into_inner().unwrap()
    }

    /// Every item ran once per stage, and no stage's item ran before an earlier stage's.
    fn assert_stage_order(order: &[usize], sizes: &[usize]) {
        assert_eq!(order.len(), sizes.iter().sum::<usize>());
        assert!(
            order.windows(2).all(|w| w[0] <= w[1]),
            "stages ran out of order"
        );
    }

    /// Every item of every stage runs once, and no item of a stage starts before the previous
    /// stage has finished, on 1 to 4 threads and with stages of 0, 1 and many items.
    #[test]
    fn stages_run_every_item_once_in_stage_order() {
        let sizes = [3usize, 0, 1, 17, 64, 2, 0, 9];
        for threads in 1..=4 {
            let pool = pool(threads);
            let runs: Vec<Vec<AtomicUsize>> = sizes
                .iter()
                .map(|&n| (0..n).map(|_| AtomicUsize::new(0)).collect())
                .collect();
            let order = Mutex::new(Vec::new());
            let mut stages = Stages::default();
            pool.install(|| {
                stages.run(Exec::Parallel, sizes.len(), &|s| sizes[s], &|s, range| {
                    if threads > 1 {
                        assert_eq!(range.len(), 1, "parallel items come one at a time");
                    }
                    // Every item of earlier stages has run when these start.
                    for (earlier, items) in runs[..s].iter().enumerate() {
                        for (k, r) in items.iter().enumerate() {
                            assert_eq!(r.load(Ordering::SeqCst), 1, "stage {earlier} item {k}");
                        }
                    }
                    for i in range {
                        runs[s][i].fetch_add(1, Ordering::SeqCst);
                        order.lock().unwrap().push(s);
                    }
                })
            });
            for (s, items) in runs.iter().enumerate() {
                for r in items {
                    assert_eq!(
                        r.load(Ordering::SeqCst),
                        1,
                        "stage {s} on {threads} threads"
                    );
                }
            }
            assert_stage_order(&order.into_inner().unwrap(), &sizes);
        }
    }

    /// Regions nested in other rayon work (say, several worlds stepped in parallel on one
    /// pool) finish even when rayon runs a region's workers one after another on one thread:
    /// here 8 regions at once on 2 threads, each checking its stage order.
    #[test]
    fn concurrent_regions_on_a_small_pool_finish_in_order() {
        let sizes = [5usize, 40, 1, 17];
        let results: Vec<Vec<usize>> = pool(2).install(|| {
            (0..8)
                .into_par_iter()
                .map(|_| run_order(&mut Stages::default(), &sizes))
                .collect()
        });
        for order in results {
            assert_stage_order(&order, &sizes);
        }
    }

    /// A panicking item reaches the caller instead of leaving the other threads waiting.
    #[test]
    fn a_panicking_item_reaches_the_caller() {
        let pool = pool(2);
        let mut stages = Stages::default();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| {
                stages.run(Exec::Parallel, 3, &|_| 8, &|s, range| {
                    if s == 1 && range.contains(&5) {
                        panic!("item 5");
                    }
                })
            })
        }));
        assert!(result.is_err());
        // The region is usable again afterwards.
        let count = AtomicUsize::new(0);
        pool.install(|| {
            stages.run(Exec::Parallel, 2, &|_| 10, &|_, range| {
                count.fetch_add(range.len(), Ordering::Relaxed);
            })
        });
        assert_eq!(count.load(Ordering::Relaxed), 20);
    }
}
