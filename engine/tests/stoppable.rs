//! A step stopped between two substeps (Ctrl-C in a long frame) keeps the substeps it ran.

use lavender_engine::{Scene, SubstepInfo, World};

/// Poses, velocities and warm-start impulses, and the diagnostics, as bits.
fn bits(w: &World) -> (u64, Vec<u32>) {
    let diagnostics = w.constraint_data().iter().flatten().map(|v| v.to_bits());
    (w.state_hash(), diagnostics.collect())
}

#[test]
fn a_stopped_step_is_the_state_after_its_last_substep_and_goes_on_from_there() {
    let scene = Scene::builtin("chain").unwrap();
    let dt = 0.25; // 60 substeps of 1/240 s
                   // The reference: the whole frame, observed after every substep.
    let mut whole = scene.build().unwrap();
    let mut after = Vec::new();
    whole
        .step_observed(dt, |w, info| after.push((info, bits(w))))
        .unwrap();
    assert_eq!(after.len(), 60);

    for (observed, stop_before) in [(false, 17u32), (true, 1), (false, 59)] {
        let mut world = scene.build().unwrap();
        let mut asked = 0;
        let mut seen: Vec<SubstepInfo> = Vec::new();
        let mut observer = |_: &World, info: SubstepInfo| seen.push(info);
        let report = world
            .step_stoppable(
                dt,
                observed.then_some(&mut observer as &mut _),
                false,
                &mut || {
                    asked += 1;
                    asked == stop_before
                },
            )
            .unwrap();
        // Asked before each substep after the first: the n-th answer stops before substep n.
        assert_eq!((report.substeps, report.stopped_early), (stop_before, true));
        assert_eq!(asked, stop_before);
        let k = stop_before as usize;
        assert_eq!(world.substeps_done(), k as u64);
        let (info, state) = &after[k - 1];
        assert_eq!(world.time(), info.time);
        assert!(
            bits(&world) == *state,
            "stopped after {k}: not that substep's state"
        );
        if observed {
            assert_eq!(seen.len(), k);
        }
        // The next step goes on from there: a frame of the substeps left ends where the
        // whole frame did.
        let left = 60 - stop_before;
        let report = world
            .step_stoppable(report.substep_dt * left as f32, None, false, &mut || false)
            .unwrap();
        assert_eq!((report.substeps, report.stopped_early), (left, false));
        assert_eq!(world.substeps_done(), 60);
        assert!(
            bits(&world) == after[59].1,
            "resumed after {k}: not the whole frame's end"
        );
    }

    // Never stopped, it is `step`, bit for bit.
    let (mut a, mut b) = (scene.build().unwrap(), scene.build().unwrap());
    for _ in 0..3 {
        let report = a.step_stoppable(dt, None, false, &mut || false).unwrap();
        assert_eq!((report.substeps, report.stopped_early), (60, false));
        b.step(dt).unwrap();
        assert!(bits(&a) == bits(&b));
    }
}
