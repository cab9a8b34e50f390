//! A steady-state step allocates nothing: a counting global allocator, in its own test binary
//! so that it counts no other test's allocations.

use lavender_engine::{GridSpec, JointKind, Scene, Settings, SolverPath};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const STEPS: usize = 200;

fn scene() -> Scene {
    let mut scene = Scene::builtin("limited-revolute").unwrap();
    let chain = Scene::builtin("chain").unwrap();
    scene.chains = chain.chains;
    scene.grids.push(GridSpec {
        name: "grid".into(),
        rows: 10,
        cols: 10,
        spacing: 0.1,
        origin: [0.0, 5.0, 0.0],
        mass: 0.1,
        joint: JointKind::Spherical,
    });
    // A light hub with twenty spokes: the hub solve (its dense system and scratch too).
    let hub = Scene::builtin("hub").unwrap();
    scene.bodies.extend(hub.bodies);
    scene.joints.extend(hub.joints);
    // A hub of ten limited hinges swinging into their stops: its limits' active set (the
    // refactorisations as limits move in and out).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/regressions");
    let mut limited = Scene::load(root.join("hub-10-limited-hinges.toml")).unwrap();
    for b in &mut limited.bodies {
        b.name = format!("lim.{}", b.name);
    }
    for j in &mut limited.joints {
        j.name = format!("lim.{}", j.name);
        j.body_a = format!("lim.{}", j.body_a);
        j.body_b = format!("lim.{}", j.body_b);
    }
    scene.bodies.extend(limited.bodies);
    scene.joints.extend(limited.joints);
    scene
}

/// One test (not several) so that no other test thread allocates while this one counts.
#[test]
fn steady_state_steps_do_not_allocate() {
    let scene = scene();
    // (threads, path): serial runs on this thread; 2 threads use the world's own rayon pool.
    // (threads, path, sleeping): with sleeping on, the warm-up runs long enough (1 s) for
    // the islands at rest to fall asleep, and no island changes state while counting.
    // The last two: the direct chain solve (its chain groups and their scratch too).
    for (threads, path, sleeping, chain_solve) in [
        (1, SolverPath::Wide, false, false),
        (1, SolverPath::Scalar, false, false),
        (2, SolverPath::Wide, false, false),
        (0, SolverPath::Wide, false, false),
        (1, SolverPath::Wide, true, false),
        (1, SolverPath::Wide, false, true),
        (2, SolverPath::Wide, false, true),
    ] {
        let settings = Settings {
            threads,
            solver_path: path,
            sleeping,
            chain_solve,
            ..scene.settings()
        };
        let mut world = scene.build_with(settings).unwrap();
        // The first steps build the schedule, the batches, the pool and the scratch buffers
        // (and let rayon's work queues grow to their high-water mark).
        for _ in 0..if sleeping { 60 } else { 10 } {
            world.step(scene.frame_dt()).unwrap();
        }
        let asleep = world.sleeping_body_count();
        if !sleeping {
            assert_eq!(
                world.schedule().hubs.len(),
                2,
                "the light hub and the limited one are solved directly"
            );
        }
        ALLOCATIONS.store(0, Ordering::SeqCst);
        COUNTING.store(true, Ordering::SeqCst);
        for _ in 0..STEPS {
            world.step(scene.frame_dt()).unwrap();
        }
        COUNTING.store(false, Ordering::SeqCst);
        let n = ALLOCATIONS.load(Ordering::SeqCst);
        assert_eq!(
            world.sleeping_body_count(),
            asleep,
            "an island changed state"
        );
        if sleeping {
            eprintln!("{asleep} of {} bodies asleep", world.body_count());
        }
        // Serial: nothing. Parallel: the step enters the pool once, through rayon's injector
        // (a crossbeam queue that allocates one block per 63 entries, freeing the old one);
        // the engine itself allocates nothing.
        let allowed = if threads == 1 { 0 } else { STEPS.div_ceil(63) };
        eprintln!(
            "{threads} threads, {path:?}, chain solve {chain_solve}: {n} allocations in {STEPS} steps"
        );
        assert!(
            n <= allowed,
            "{n} allocations in {STEPS} steps ({threads} threads, {path:?}, chain solve {chain_solve})"
        );
    }
}
