"""lavender.Sim: construction, settings, state access and errors."""

import pathlib
import threading
import time
import warnings

import numpy as np
import pytest

import lavender
from conftest import hinge_scene

REPO = pathlib.Path(__file__).resolve().parents[2]
PENDULUM = REPO / "data" / "scenes" / "pendulum.toml"


def test_every_way_to_name_a_scene_builds_the_same_world():
    by_name = lavender.Sim("pendulum")
    by_path = lavender.Sim(PENDULUM)
    by_str_path = lavender.Sim(str(PENDULUM))
    by_toml = lavender.Sim.from_toml(PENDULUM.read_text())
    by_dict = lavender.Sim(
        {
            "description": "one revolute pendulum released from 0.1 rad",
            "world": {"dt": 1 / 60},
            "body": [
                {"name": "pivot", "kind": "static"},
                {
                    "name": "bob",
                    "position": np.array([0.09983342, -0.99500417, 0.0]),
                    "rotation": [0.0, 0.0, 0.04997917, 0.99875026],
                    "mass": 1.0,
                    "box": (0.05, 0.05, 0.05),
                },
            ],
            "joint": [
                {
                    "name": "hinge",
                    "kind": "revolute",
                    "body_a": "pivot",
                    "body_b": "bob",
                    "anchor_b": [0.0, 1.0, 0.0],
                    "axis": [0.0, 0.0, 1.0],
                    "reference_rotation": [0.0, 0.0, 0.0, 1.0],
                }
            ],
        }
    )
    sims = [by_name, by_path, by_str_path, by_toml]
    for sim in sims:
        sim.run(0.5)
    hashes = {sim.state_hash() for sim in sims}
    assert len(hashes) == 1
    assert by_dict.body_names == ["pivot", "bob"] and by_dict.joint_names == ["hinge"]
    for name in lavender.shipped_scenes():
        assert lavender.Sim(name).body_count > 0


def test_a_shipped_name_wins_over_a_file_of_that_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chain").write_text('[[chain]]\nname = "c"\nlinks = 3\n')
    assert lavender.Sim("chain").body_count == 101
    assert lavender.Sim("./chain").body_count == 4


def test_generator_counts_must_be_whole_numbers():
    for call in (
        lambda: lavender.SceneBuilder().chain("c", 2.5),
        lambda: lavender.SceneBuilder().grid("g", 3, "4"),
        lambda: lavender.SceneBuilder().grid("g", True, 3),
        lambda: lavender.SceneBuilder().chain("c", float("inf")),
        lambda: lavender.SceneBuilder().chain("c", float("nan")),
        lambda: lavender.SceneBuilder().chain("c", np.float64(2.5)),
    ):
        with pytest.raises(ValueError, match="must be a whole number"):
            call()
    assert lavender.SceneBuilder().chain("c", 3.0).build().body_count == 4
    # NumPy integers, as from np.arange (QA 2026-12-07: refused as "not a whole number").
    assert lavender.SceneBuilder().chain("c", np.int64(3)).build().body_count == 4
    assert lavender.SceneBuilder().grid("g", np.int32(2), np.uint8(3)).build().body_count == 6
    # The smallest grid the scene file takes, said once (QA 2026-12-07: "at least 1" for 0 rows,
    # then "needs rows >= 2" for 1).
    for rows in (0, 1):
        with pytest.raises(ValueError, match="rows = .* must be at least 2"):
            lavender.SceneBuilder().grid("g", rows, 5)


def test_vectors_and_numbers_are_not_strings_sets_or_bools():
    # QA (2026-12-06): position="123" built a body at [1, 2, 3]; mass=True weighed 1 kg.
    for call, match in (
        (lambda: lavender.SceneBuilder().body("x", position="123"), "sequence of 3 numbers"),
        (lambda: lavender.SceneBuilder().body("x", position={1.0, 2.0, 3.0}), "sequence"),
        (lambda: lavender.SceneBuilder().body("x", position=7.0), "sequence"),
        (lambda: lavender.SceneBuilder().body("x", position=np.zeros((3, 1))), "a number"),
        (lambda: lavender.SceneBuilder().body("x", mass=True), "mass must be a number"),
        (lambda: lavender.SceneBuilder().body("x", mass="1"), "mass must be a number"),
        (lambda: lavender.Sim({"chain": [{"name": "c", "links": 2**70}]}), "too large"),
    ):
        with pytest.raises(ValueError, match=match):
            call()
    built = lavender.SceneBuilder().body("x", position=np.array([1.0, 2.0, 3.0]), mass=np.float32(2))
    assert built.build().body_count == 1


def test_a_scene_dict_that_contains_itself_is_a_value_error():
    # QA (2026-12-07): a self-referencing or very deeply nested dict overflowed the stack.
    d = {"description": "x"}
    d["world"] = d
    with pytest.raises(ValueError, match="more than 32 levels deep"):
        lavender.Sim(d)
    x = 0
    for _ in range(20000):
        x = [x]
    with pytest.raises(ValueError, match="more than 32 levels deep"):
        lavender.Sim({"body": [{"name": "a", "position": x}]})


def test_a_vector_of_bools_is_refused():
    # QA (2026-12-07): gravity=[True, 0, 0] was [1, 0, 0], where dt=True is refused.
    with pytest.raises(ValueError, match="not bools"):
        lavender.Sim("pendulum", gravity=[True, 0, 0])
    sim = lavender.Sim("pendulum")
    with pytest.raises(ValueError, match="not bools"):
        sim.set_body_velocity("bob", np.array([True, False, False]))
    sim.set_body_velocity("bob", np.array([1.0, 0.0, 0.0]))  # numbers still are
    # Nor complex numbers (QA 2026-12-07: taken with NumPy's ComplexWarning only, their
    # imaginary parts dropped).
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for vector in [np.array([1 + 2j, 0, 0]), [1j, 0.0, 0.0], np.array([1, 0, 0], dtype=np.complex64)]:
            with pytest.raises(ValueError, match="real numbers, not complex ones"):
                sim.set_body_velocity("bob", vector)
        with pytest.raises(ValueError, match="real numbers, not complex ones"):
            lavender.Sim("pendulum", gravity=np.array([0, -9.81 + 0j, 0]))
    assert np.array_equal(sim.body_velocity("bob")[0], [1.0, 0.0, 0.0])


def test_a_count_beyond_64_bits_is_too_large_not_fractional():
    with pytest.raises(ValueError, match="too large"):
        lavender.Sim("pendulum", velocity_iterations=10**20)
    with pytest.raises(ValueError, match=">= 1"):
        lavender.Sim("pendulum", velocity_iterations=-(10**20))
    # The smallest value each count takes (QA 2026-12-07: -1 was told ">= 0", then 0 refused).
    with pytest.raises(ValueError, match=r"velocity_iterations.*>= 1"):
        lavender.Sim("pendulum", velocity_iterations=-1)
    with pytest.raises(ValueError, match=r"position_iterations.*>= 0"):
        lavender.Sim("pendulum", position_iterations=-1)
    # In a scene dict, serde's "expected u32" gets the rule (QA 2026-12-07).
    with pytest.raises(ValueError, match=r"`world.velocity_iterations` = -1 must be a whole number >= 1"):
        lavender.Sim({"world": {"velocity_iterations": -1}, "body": [{"name": "a"}]})
    with pytest.raises(ValueError, match=r"`world.position_iterations` = -2 must be a whole number >= 0"):
        lavender.Sim({"world": {"position_iterations": -2}, "body": [{"name": "a"}]})
    with pytest.raises(ValueError, match=r"`chain\[0\].links` = -3 must be a whole number >= 1"):
        lavender.Sim({"chain": [{"name": "c", "links": -3}]})


def test_an_energy_that_overflows_single_precision_is_warned_about():
    # QA (2026-12-06): a free body sent at 3e38 m/s stays finite, its energy is inf.
    sim = lavender.Sim.from_toml('[[body]]\nname = "k"\nlinear_velocity = [3e38, 0.0, 0.0]\n')
    with pytest.warns(RuntimeWarning, match="overflowed single precision"):
        sim.run(0.05)
    assert not np.isfinite(sim.total_energy())
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lavender.Sim("pendulum").run(0.05)
    # step() says it too, once per Sim (QA 2026-12-07: only run() did).
    sim = lavender.Sim.from_toml('[[body]]\nname = "k"\nlinear_velocity = [3e38, 0.0, 0.0]\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            sim.step()
    assert [str(w.message)[:50] for w in caught] == [
        "diagnostics or the energy overflowed single precis"
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pendulum = lavender.Sim("pendulum")
        for _ in range(3):
            pendulum.step()


def test_a_pendulum_far_from_the_origin_is_warned_about():
    # QA (2026-12-06): hung at x = 1e8 m (f32 resolves 8 m there) it never moved, silently.
    scene = (
        lavender.SceneBuilder()
        .body("pivot", kind="static", position=[1e8, 0.0, 0.0])
        .body("bob", position=[1e8 + 1.0, 0.0, 0.0], mass=1.0)
        .joint("ball", "spherical", "pivot", "bob", anchor_b=[-1.0, 0.0, 0.0])
    )
    with pytest.warns(RuntimeWarning, match="`bob` is 1.000e8 m from the origin"):
        scene.build().run(0.05)


def test_a_run_no_lifetime_would_end_is_refused():
    # As `lavender run --duration 1e30` (QA 2026-12-06: it stepped until Ctrl-C).
    sim = lavender.Sim("pendulum")
    with pytest.raises(ValueError, match="at most 1e12 frames"):
        sim.run(1e30)
    assert sim.time == 0.0


def test_settings_are_keyword_arguments():
    sim = lavender.Sim(
        "pendulum",
        dt=1 / 120,
        velocity_iterations=16,
        position_iterations=0,
        max_substep=1 / 480,
        gravity=[0, -1, 0],
        error_reduction=0.1,
        warm_starting=False,
    )
    s = sim.settings
    assert (s["velocity_iterations"], s["position_iterations"], s["warm_starting"]) == (16, 0, False)
    assert s["gravity"] == pytest.approx([0, -1, 0])
    assert sim.frame_dt == pytest.approx(1 / 120)
    assert sim.step() == 4 and sim.substeps_for(1 / 60) == 8
    sim.set_settings(velocity_iterations=4, dt=1 / 60)
    assert sim.settings["velocity_iterations"] == 4 and sim.step() == 8
    with pytest.raises(ValueError, match="velocity_iterations"):
        sim.set_settings(velocity_iterations=0)
    assert sim.settings["velocity_iterations"] == 4, "unchanged on error"


def test_bias_iterations_is_a_setting_and_checked():
    default = lavender.Sim("chain")
    assert default.settings["bias_iterations"] is None, "one bias pass per velocity pass"
    fewer = lavender.Sim("chain", bias_iterations=2)
    assert fewer.settings["bias_iterations"] == 2
    explicit = lavender.Sim("chain", bias_iterations=default.settings["velocity_iterations"])
    for sim in (default, fewer, explicit):
        sim.run(0.5)
    assert explicit.state_hash() == default.state_hash()
    assert fewer.state_hash() != default.state_hash()
    with pytest.raises(ValueError, match="bias_iterations"):
        fewer.set_settings(bias_iterations=9)
    assert fewer.settings["bias_iterations"] == 2, "unchanged on error"
    # "all" takes a number back (None leaves a setting as it is): one per velocity pass.
    again = lavender.Sim("chain", bias_iterations=2)
    again.set_settings(bias_iterations="all")
    assert again.settings["bias_iterations"] is None
    again.run(0.5)
    assert again.state_hash() == default.state_hash()
    with pytest.raises(ValueError, match='whole number or "all"'):
        again.set_settings(bias_iterations="most")


def test_chain_solve_is_a_setting_that_solves_the_grid_columns_in_one_pass():
    default = lavender.Sim("grid")
    assert default.settings["chain_solve"] is False
    direct = lavender.Sim("grid", chain_solve=True, velocity_iterations=1, position_iterations=1)
    assert direct.settings["chain_solve"] is True
    peak = {"default": 0.0, "direct": 0.0}
    for _ in range(30):
        default.step()
        direct.step()
        peak["default"] = max(peak["default"], float(default.constraint_data()[:, 3].max()))
        peak["direct"] = max(peak["direct"], float(direct.constraint_data()[:, 3].max()))
    # Measured over 0.5 s: 4.44e-4 m (8 Gauss-Seidel passes, 2 projections) against
    # 6.42e-7 m (one direct pass, one projection); engine/tests/chain_solve.rs checks both.
    assert peak["direct"] < 2e-6 and peak["default"] > 1e-4, peak
    with pytest.raises(ValueError, match="chain_solve"):
        direct.set_settings(chain_solve="yes")
    direct.set_settings(chain_solve=False)
    assert direct.settings["chain_solve"] is False


def test_curvature_is_a_setting_that_keeps_a_fast_swing_s_energy():
    scene = pathlib.Path(__file__).resolve().parents[2] / "data" / "regressions" / "pendulum-1rad.toml"
    lost = {}
    for curvature in (True, False):
        sim = lavender.Sim(str(scene), curvature=curvature)
        assert sim.settings["curvature"] is curvature
        # Energy above the bob hanging at rest (1 kg, 1 m below the pivot), J.
        start = sim.total_energy() + 9.81
        sim.run(10.0)
        lost[curvature] = (start - (sim.total_energy() + 9.81)) / start
    # Measured: 12.07 % without the offsets (first order in the substep), 0.55 % with them
    # (an oscillation within +-0.62 %); tests/dynamics.rs checks both over 100 s.
    assert lost[False] == pytest.approx(0.1207, rel=0.02), lost
    assert abs(lost[True]) < 0.0065, lost
    assert lavender.Sim("pendulum").settings["curvature"] is True, "on by default"
    with pytest.raises(ValueError, match="curvature"):
        sim.set_settings(curvature="yes")


def test_speculative_limits_are_a_setting_that_stops_directly_solved_ropes_at_their_stops():
    scene = REPO / "data" / "regressions" / "limited-ropes.toml"
    worst = {}
    for speculative in (False, True):
        sim = lavender.Sim(str(scene), chain_solve=True, speculative_limits=speculative)
        assert sim.settings["speculative_limits"] is speculative
        worst[speculative] = 0.0
        for _ in range(60):
            sim.step()
            worst[speculative] = max(worst[speculative], float(sim.constraint_data()[:, 5].max()))
    # Measured at the ends of the first second's frames: 0.058 rad past a stop without, 0.028
    # with (tests/limits.rs checks every substep of the whole run: 0.086 and 0.050; 0.078 and
    # 0.038 here before held hinges were projected onto their stops, 2026-12-07).
    assert 0.045 < worst[False] < 0.075 and worst[True] < 0.04, worst
    assert worst[True] < 0.6 * worst[False], worst
    assert lavender.Sim("pendulum").settings["speculative_limits"] is False, "off by default"
    with pytest.raises(ValueError, match="speculative_limits"):
        sim.set_settings(speculative_limits="yes")


def test_threads_and_solver_path_give_identical_runs():
    hashes = set()
    for threads in (1, 2):
        for path in ("wide", "scalar"):
            sim = lavender.Sim("chain", threads=threads, solver_path=path)
            assert (sim.settings["threads"], sim.settings["solver_path"]) == (threads, path)
            sim.run(0.25)
            hashes.add(sim.state_hash())
    assert len(hashes) == 1
    with pytest.raises(ValueError, match="solver_path"):
        lavender.Sim("chain", solver_path="simd")
    with pytest.raises(ValueError, match="threads"):
        lavender.Sim("chain", threads=-2)
    with pytest.raises(TypeError, match="velocity_iteration"):
        lavender.Sim("chain", velocity_iteration=3)


def test_more_threads_than_cores_warn():
    import os

    many = (os.cpu_count() or 1) + 1
    with pytest.warns(RuntimeWarning, match=f"threads = {many} is more than"):
        sim = lavender.Sim("pendulum", threads=many)
    with pytest.warns(RuntimeWarning, match="bit for bit"):
        sim.set_settings(threads=many + 1)


def test_a_sim_stepping_in_another_thread_is_busy_not_broken():
    import threading

    sim = lavender.Sim("chain")
    worker = threading.Thread(target=sim.run, args=(3.0,))
    worker.start()
    seen_busy = False
    while worker.is_alive() and not seen_busy:
        seen_busy = "busy" in repr(sim)  # repr never raises
    worker.join()
    assert seen_busy
    assert abs(sim.time - 3.0) < 1e-3 and "busy" not in repr(sim)
    # While busy, other calls raise RuntimeError (documented), and the run is unharmed.
    worker = threading.Thread(target=sim.run, args=(1.0,))
    worker.start()
    raised = False
    while worker.is_alive() and not raised:
        try:
            sim.time
        except RuntimeError:
            raised = True
    worker.join()
    assert raised and abs(sim.time - 4.0) < 1e-3


def test_bodies_and_velocities_as_arrays():
    sim = lavender.Sim("pendulum")
    assert sim.positions().shape == (2, 3) and sim.rotations().shape == (2, 4)
    assert sim.poses().shape == (2, 7) and sim.velocities().shape == (2, 6)
    sim.set_body_velocity("bob", linear=[1.0, 2.0, 3.0])
    np.testing.assert_array_equal(sim.linear_velocities()[1], [1, 2, 3])
    sim.set_body_velocity(1, angular=[0.0, 0.0, 0.5])
    v, w = sim.body_velocity("bob")
    np.testing.assert_array_equal(v, [1, 2, 3])
    np.testing.assert_array_equal(w, [0, 0, 0.5])
    np.testing.assert_array_equal(sim.angular_velocities()[1], [0, 0, 0.5])
    sim.set_body_pose(-1, position=[0.0, -1.0, 0.0], rotation=[0, 0, 0, 1])
    np.testing.assert_array_equal(sim.poses()[1], [0, -1, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(sim.velocities()[1], [1, 2, 3, 0, 0, 0.5])


def test_joint_forces_hold_the_pendulum_up():
    sim = lavender.Sim("pendulum", dt=1 / 240)
    sim.set_body_pose("bob", [0.0, -1.0, 0.0], [0, 0, 0, 1])
    sim.set_body_velocity("bob", [0, 0, 0], [0, 0, 0])
    sim.step()
    forces = sim.joint_forces()
    assert set(forces) == {"force_on_b", "force_on_a", "torque_on_b", "torque_on_a"}
    assert forces["force_on_b"].shape == (1, 3)
    # Hanging at rest, the hinge carries the bob's weight: m g = 9.81 N upwards.
    assert forces["force_on_b"][0, 1] == pytest.approx(9.81, rel=1e-3)
    np.testing.assert_allclose(forces["force_on_a"], -forces["force_on_b"])


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: lavender.Sim("no-such-scene"), ValueError, "shipped scenes: pendulum"),
        (lambda: lavender.Sim("missing/dir/scene.toml"), FileNotFoundError, "cannot read"),
        (lambda: lavender.Sim(pathlib.Path("/nonexistent.toml")), OSError, "nonexistent"),
        (lambda: lavender.Sim({"body": [{"name": "a", "mass": -1.0}]}), ValueError, "mass"),
        (
            lambda: lavender.Sim({"body": [{"name": "a", "inertia": [1.0, 1.0, 5.0]}]}),
            ValueError,
            "body `a`.*belongs to no rigid body",
        ),
        (lambda: lavender.Sim({"bodies": []}), ValueError, "unknown field"),
        (lambda: lavender.Sim.from_toml("[[body]]\nname = 3"), ValueError, "scene <string>"),
        (lambda: lavender.Sim("pendulum", velocity_iterations=-1), ValueError, "velocity_iterations"),
        (lambda: lavender.Sim("pendulum", max_substep=0.0), ValueError, "max_substep"),
        (lambda: lavender.Sim("pendulum", gravity=[0, 1]), ValueError, "gravity"),
        (lambda: lavender.Sim("pendulum").step(-1.0), ValueError, "time step"),
        (lambda: lavender.Sim("pendulum").step(float("nan")), ValueError, "time step"),
        (lambda: lavender.Sim("pendulum").set_body_pose("nobody", [0, 0, 0]), ValueError, "nobody"),
        (lambda: lavender.Sim("pendulum").set_body_pose(5, [0, 0, 0]), ValueError, "out of range"),
        (lambda: lavender.Sim("pendulum").set_body_pose(1, [0, 0, 0], [0, 0, 0, 0]), ValueError, "bob"),
        (lambda: lavender.Sim("pendulum").set_body_pose(1, [float("inf"), 0, 0]), ValueError, "bob"),
        (lambda: lavender.Sim("pendulum").set_body_velocity("pivot", [1, 0, 0]), ValueError, "static"),
        (lambda: lavender.Sim(42), TypeError, "scene"),
    ],
)
def test_bad_input_raises_with_the_engine_message(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_non_finite_step_is_an_exception_and_rolls_back():
    sim = hinge_scene(gravity=(0, -9.81, 0)).build()
    sim.step(1 / 60)
    before = sim.state_hash()
    sim.set_body_velocity("arm", linear=[3e38, 3e38, 0])
    with pytest.raises(lavender.NonFiniteError, match="arm"):
        sim.step(1 / 60)
    assert issubclass(lavender.NonFiniteError, ValueError)
    assert sim.state_hash() != before  # the velocity change stays; the step was undone
    assert np.isfinite(sim.positions()).all()


def test_step_releases_the_gil():
    sim = lavender.Sim("grid")
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=count)
    thread.start()
    time.sleep(0.01)
    t0 = time.perf_counter()
    sim.run(4.0)  # about 0.3 s of stepping (0.04 s for 0.5 s of the 20 x 20 grid)
    t1 = time.perf_counter()
    stop.set()
    thread.join()
    during = [t for t in ticks if t0 < t < t1]
    assert t1 - t0 > 0.05, "the run is long enough to observe"
    assert len(during) >= 3, f"the other thread ran {len(during)} times in {t1 - t0:.3f} s"


def test_ctrl_c_stops_a_long_run():
    import _thread
    import signal

    # A shell that starts a job in the background (CI) leaves SIGINT ignored, and then
    # Python installs no handler and interrupt_main does nothing: install Python's own.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        sim = lavender.Sim("grid")
        timer = threading.Timer(0.2, _thread.interrupt_main)
        timer.start()
        t0 = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            sim.run(120.0)  # tens of seconds of stepping unless interrupted
        timer.cancel()
        assert time.perf_counter() - t0 < 5.0
        assert 0 < sim.time < 120.0
        sim.step()  # the Sim is still usable
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_inside_one_long_step_ends_it_between_two_substeps(tmp_path):
    import _thread
    import signal

    # Carried QA item (2026-12-06): step(dt) of thousands of substeps could not be stopped.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    path = tmp_path / "run.lvlog"
    try:
        sim = lavender.Sim("chain")
        h = 1.0 / 240.0
        sim.record(path)
        timer = threading.Timer(0.3, _thread.interrupt_main)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            sim.step(100.0)  # 24,000 substeps, seconds of stepping unless interrupted
        timer.cancel()
        done = sim.substeps_done
        assert 0 < done < 24000, "stopped inside the frame"
        assert sim.time == pytest.approx(done * h, rel=1e-6)  # h in single precision
        # The world is the state after its last substep, and the log holds every substep run.
        log = lavender.Log(path)
        assert len(log) == done and log[done - 1].substep == done - 1
        assert np.array_equal(log[done - 1].poses, sim.poses())
        assert np.array_equal(log[done - 1].diagnostics, sim.constraint_data())
        # It goes on from there, recorded, and the log resumes bit for bit.
        sim.step()
        summary = sim.stop_recording()
        assert summary["frames"] == done + 4
        resumed = lavender.Log(path).resume(done - 1)
        resumed.step(h)
        assert np.array_equal(resumed.poses(), lavender.Log(path)[done].poses)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_interrupted_run_leaves_what_it_recorded_in_the_file(tmp_path):
    import _thread
    import signal

    # QA (2026-12-07): Ctrl-C during a recorded run raised KeyboardInterrupt before the
    # frames staged on the stepping thread (small frames) reached the file; a Log opened
    # then, or a follower, missed up to hundreds of frames until the next call.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    path = tmp_path / "run.lvlog"
    try:
        sim = lavender.Sim("pendulum")
        sim.record(path)
        timer = threading.Timer(0.3, _thread.interrupt_main)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            sim.run(100000.0)
        timer.cancel()
        done = sim.substeps_done
        assert done > 0
        assert len(lavender.Log(path)) == done
        sim.stop_recording()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_help_explains():
    assert "zero-copy" in lavender.Sim.constraint_data.__doc__
    assert "scene" in lavender.Sim.__doc__
    assert lavender.Sim.__module__ == "lavender"
    assert "copy=True" in lavender.Sim.constraint_data.__text_signature__
    assert "lavender" in repr(lavender.Sim("pendulum"))


def test_the_build_names_its_features_and_lane_count():
    # 16 lanes only on an AVX-512 build (with the `lanes16` feature); 8 everywhere else.
    assert lavender.SIMD_LANES in (8, 16)
    if "avx512f" not in lavender.TARGET_FEATURES:
        assert lavender.SIMD_LANES == 8


def test_a_frame_step_is_checked_when_the_sim_is_built_and_when_settings_change():
    with pytest.raises(ValueError, match="239998 substeps"):
        lavender.Sim("pendulum", dt=1000.0)
    with pytest.raises(ValueError, match="dt = 1e-300"):
        lavender.Sim("pendulum", dt=1e-300)
    sim = lavender.Sim("pendulum")
    with pytest.raises(ValueError, match="substeps"):
        sim.set_settings(max_substep=1e-9)
    assert sim.settings["max_substep"] > 1e-3
    with pytest.raises(ValueError, match="keyframe_every = -1"):
        sim.record("k.lvlog", keyframe_every=-1)
    with pytest.raises(ValueError, match="must be at least 1"):
        lavender.SceneBuilder().chain("c", -1)


def test_numbers_beyond_single_precision_are_refused_as_given_not_as_inf():
    sim = lavender.Sim("pendulum")
    with pytest.raises(ValueError, match=r"position\[0\] = 1e39 is beyond single precision"):
        sim.set_body_pose(1, [1e39, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"\[1\] = -2e40 is beyond single precision"):
        sim.set_body_velocity(1, [0.0, -2e40, 0.0])
    # Still refused as not finite when the value given is not finite.
    with pytest.raises(ValueError, match="not finite"):
        sim.set_body_pose(1, [float("inf"), 0.0, 0.0])
    # NaN is the setting's error, not "NaN substeps" from the frame-step check.
    with pytest.raises(ValueError, match="max_substep") as error:
        sim.set_settings(max_substep=float("nan"))
    assert "substeps" not in str(error.value), str(error.value)
    with pytest.raises(ValueError, match="max_substep") as error:
        lavender.Sim("pendulum", max_substep=float("nan"))
    assert "substeps" not in str(error.value), str(error.value)
    with pytest.raises(ValueError, match="gravity|error_reduction.*beyond single precision"):
        sim.set_settings(error_reduction=1e39)
    assert sim.time == 0.0


def test_bodies_are_names_or_indices_negative_from_the_end_never_bools():
    sim = lavender.Sim("pendulum")
    last = sim.body_count - 1
    assert np.array_equal(sim.body_pose(-1)[0], sim.body_pose(last)[0])
    assert np.array_equal(sim.body_pose(sim.body_names[-1])[0], sim.body_pose(last)[0])
    with pytest.raises(TypeError, match="index or a name, got True"):
        sim.set_body_pose(True, [0.0, 0.0, 0.0])
    with pytest.raises(TypeError, match="index or a name, got None"):
        sim.body_pose(None)
    # An unknown name lists the names containing it, ignoring case (as `scrub --joint`).
    chain = lavender.Sim("chain")
    with pytest.raises(ValueError, match=r'no body named "LINK7".*names containing it: '
                       r"chain\.link7, chain\.link70"):
        chain.body_pose("LINK7")
    with pytest.raises(ValueError, match=r'no body named "nothing" \(101 bodies\)$'):
        chain.body_pose("nothing")
    with pytest.raises(ValueError, match="out of range"):
        sim.body_pose(-sim.body_count - 1)
    with pytest.raises(ValueError, match="out of range"):
        sim.body_pose(2**70)
    with pytest.raises(ValueError, match="dt must be a number of seconds, got True"):
        sim.step(True)
    with pytest.raises(ValueError, match="duration must be a number of seconds, got 'x'"):
        sim.run("x")
    for setting in ({"dt": True}, {"velocity_iterations": True}, {"max_substep": False}):
        with pytest.raises(ValueError, match="not True or False"):
            lavender.Sim("pendulum", **setting)


def test_a_joint_f32_cannot_hold_is_a_runtime_warning():
    needle = (
        lavender.SceneBuilder(gravity=[0, -9.81, 0])
        .body("pivot", kind="static")
        .body("bob", position=[1, 0, 0], mass=1.0, inertia=[1e-8, 1e-8, 1e-8])
        .revolute("arm", "pivot", "bob", anchor_b=[-1, 0, 0])
    )
    with pytest.warns(RuntimeWarning, match=r"joint `arm`: body `bob` has m r\^2 / I = 1.0e8"):
        needle.build()
    # A body given only a mass is a 0.1 m cube of it: no warning, and the hinge holds.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim = (
            lavender.SceneBuilder(gravity=[0, -9.81, 0])
            .body("pivot", kind="static")
            .body("bob", position=[1, 0, 0], mass=1e6)
            .revolute("arm", "pivot", "bob", anchor_b=[-1, 0, 0])
            .build()
        )
    sim.run(1.0)
    assert sim.constraint_data()[0, 3] < 1e-4


def test_run_warns_when_joints_end_beyond_single_precision():
    import warnings

    regressions = pathlib.Path(__file__).parents[2] / "data" / "regressions"
    # A block on an unlimited slider along a hinged rail, solved row by row, fallen 90 m: the
    # rows across the slide act on the rail that far from its centre.
    sim = lavender.Sim(str(regressions / "slider-far-out.toml"))
    with pytest.warns(RuntimeWarning, match="single precision reliably holds"):
        sim.run()
    # And from when, as `lavender run` says (beside the end-of-run warning, which
    # pytest.warns would pass on unmatched).
    sim = lavender.Sim(str(regressions / "slider-far-out.toml"))
    with pytest.warns(RuntimeWarning) as caught:
        sim.run()
    messages = [str(w.message) for w in caught]
    assert any("from frame 241 of this run (t = 4.017 s) on" in m for m in messages), messages
    assert all("single precision reliably holds" in m for m in messages), messages
    # A hub's sliders 100 m out: the hub solve (f64) holds them, nothing to say (in f32 it
    # came apart from 4.1 s on, and this warned).
    for scene in [str(regressions / "hub-100-sliders.toml"), "chain"]:
        sim = lavender.Sim(scene)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sim.run(8.0 if scene != "chain" else 1.0)


def test_a_run_shorter_than_half_a_frame_says_it_ran_nothing():
    # QA (2026-12-06): run(0.001) at 1/60 s frames returned 0 without a word.
    sim = lavender.Sim("pendulum")
    with pytest.warns(RuntimeWarning, match="less than half a frame"):
        assert sim.run(0.001) == 0
    assert sim.time == 0.0
    assert sim.run(0.001, dt=0.001) == 1, "a frame of the duration's own length runs"


def test_a_run_that_is_not_whole_frames_says_what_it_ran():
    import warnings

    # QA: run(1.0, dt=0.4) ran 3 frames (1.2 s) without a word; `lavender run` notes it.
    sim = lavender.Sim("pendulum")
    with pytest.warns(RuntimeWarning, match=r"2\.5000 frames of 0\.4 s.*number, 2 \(0\.8"):
        sim.run(1.0, dt=0.4)
    assert abs(sim.time - 0.8) < 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.run(1.0)  # 60 frames of 1/60 s: nothing to say
    with pytest.raises(ValueError, match=r"duration = -1e-300: it must be"):
        sim.run(-1e-300)


def test_the_current_world_as_scene_text_rebuilds_it_bit_for_bit():
    sim = lavender.Sim("prismatic-slider", velocity_iterations=5, error_reduction=0.3)
    sim.set_body_velocity("block", [0.3, 0.1, 0.0], [0.0, 0.0, 2.0])
    sim.run(0.25)
    text = sim.scene_toml(current=True)
    again = lavender.Sim.from_toml(text)
    for read in ("poses", "velocities", "constraint_data"):
        a, b = getattr(sim, read)(), getattr(again, read)()
        assert a.tobytes() == b.tobytes(), read
    assert again.settings["velocity_iterations"] == 5
    assert again.settings["error_reduction"] == pytest.approx(0.3)
    assert again.frame_dt == sim.frame_dt
    assert again.body_names == sim.body_names and again.joint_names == sim.joint_names
    # Without `current`, the scene as built, as before.
    assert "[[body]]" in sim.scene_toml() and sim.scene_toml() != text


def test_a_run_continued_from_scene_text_departs_without_the_warm_start():
    # The README's figure: scene text holds no warm-start impulses, so the 100-link chain
    # rebuilt from it at 0.5 s and run 0.3 s further is 6.0 cm from the original (measured
    # 0.0597 m); the poses it started from are the same bits.
    sim = lavender.Sim("chain")
    sim.run(0.5)
    again = lavender.Sim.from_toml(sim.scene_toml(current=True))
    assert again.poses().tobytes() == sim.poses().tobytes()
    sim.run(0.3)
    again.run(0.3)
    apart = np.linalg.norm(sim.positions() - again.positions(), axis=1).max()
    assert apart == pytest.approx(0.060, rel=0.1), apart


def test_a_sim_is_not_copied_or_pickled_and_says_what_to_do():
    # QA (2026-12-06): copy.copy said "cannot pickle 'lavender.Sim' object".
    import copy
    import pickle

    sim = lavender.Sim("pendulum")
    sim.run(0.1)
    for call in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match=r"cannot be copied or pickled.*scene_toml\(current=True\)"):
            call(sim)
    # The advice works: the same world, bit for bit in its poses.
    again = lavender.Sim.from_toml(sim.scene_toml(current=True))
    np.testing.assert_array_equal(again.poses(), sim.poses())


def test_solver_state_holds_the_impulses_a_keyframe_stores_and_the_projections_mark(tmp_path):
    # The limited pendulum reaches its -0.6 rad stop at substep 179: the projection pushes it
    # back and marks the lower stop (the velocity solve gave it no impulse that substep), the
    # next substep's row then stops it with a real impulse.
    sim = lavender.Sim("limited-revolute")
    path = tmp_path / "l.lvlog"
    sim.record(path, keyframe_every=1)
    states = []
    for _ in range(182):
        sim.step(1 / 240)
        states.append(sim.solver_state())
    sim.stop_recording()
    assert all(s.dtype == np.float32 and s.shape == (6,) for s in states)
    limit = [float(s[5]) for s in states]
    tiny = float(np.finfo(np.float32).tiny)
    assert limit[178] == 0.0 and limit[179] == tiny, limit[176:182]
    assert limit[180] > 1.0, limit[176:182]
    log = lavender.Log(path)
    for i in (0, 179, 180, 181):
        assert np.array_equal(log[i].solver_state, states[i]), i
    assert log[181].state_hash == sim.state_hash()


def _door(lower_on_frame_x, lower_on_door_x):
    """A 20 kg door on two hinges about z from a static frame: the upper on the line x = 0,
    the lower's anchors at x = ``lower_on_frame_x`` on the frame and ``lower_on_door_x`` on
    the door (in the world, as built)."""
    sb = (
        lavender.SceneBuilder()
        .body("frame", kind="static")
        .body("door", position=[0.5, 0, 0], mass=20, box=[0.5, 0.02, 1.0])
    )
    sb.revolute("upper", "frame", "door", anchor_a=[0, 0, 0.9], anchor_b=[-0.5, 0, 0.9], axis=[0, 0, 1])
    sb.revolute(
        "lower",
        "frame",
        "door",
        anchor_a=[lower_on_frame_x, 0, -0.9],
        anchor_b=[lower_on_door_x - 0.5, 0, -0.9],
        axis=[0, 0, 1],
    )
    return sb.build()


def test_joints_on_one_pair_that_disagree_are_warned_about():
    # QA 2026-12-07: a door on two hinges 1 cm out of line gained 32 J in 30 s, with no word.
    def door(misalignment):
        return _door(misalignment, 0.0)

    with pytest.warns(RuntimeWarning, match=r"joint `lower` joins `frame` and `door`, as `upper` does; it is 1.00e-2 m"):
        door(0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        door(0.0)


def test_joints_that_lock_their_pair_by_accident_are_warned_about():
    # QA 2026-12-07: a door whose hinge lines were apart held as built, then rattled and lost
    # its swing, with no word.
    def door(gap):
        return _door(gap, gap)

    with pytest.warns(
        RuntimeWarning, match=r"1 pair of bodies locked .* `upper` and `lower` join `frame` and `door`.* 6\.96e-4 m"
    ):
        door(0.001)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        door(0.0)


def test_substeps_too_long_for_a_swing_are_warned_about():
    # QA 2026-12-07: a pendulum run with max_substep = dt = 1 s came apart, with no word.
    def pendulum(h):
        sb = lavender.SceneBuilder(dt=h, max_substep=h)
        sb.body("pivot", kind="static").body("bob", position=[0, -1, 0], mass=1.0, box=[0.05, 0.05, 0.05])
        return sb.revolute("hinge", "pivot", "bob", anchor_b=[0, 1, 0], axis=[0, 0, 1]).build()

    with pytest.warns(RuntimeWarning, match=r"joint `hinge` holds `bob` as a pendulum .* give it 8\.0 per swing") as w:
        pendulum(0.25)
    # Raised at the caller's line (QA: at the builder's).
    assert w[0].filename == __file__
    # Frames of 1/60 s run 1/60 s substeps whatever max_substep above it (QA: warned about).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lavender.Sim("pendulum", max_substep=0.25, dt=1 / 60)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pendulum(1 / 60)


def test_longer_frames_and_settings_are_judged_against_each_swing():
    # Judged at build for the scene's frames only (noted 2026-12-07): a step(dt) or a
    # set_settings whose substeps are longer is judged again, once per longer substep.
    sim = lavender.Sim("pendulum", max_substep=0.25)  # 1/60 s frames: 1/60 s substeps
    with pytest.warns(RuntimeWarning, match=r"joint `hinge` holds `bob` .* give it 8\.0 per swing") as w:
        sim.step(0.25)
    assert len(w) == 1 and w[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.step(0.25)  # judged already
        sim.step(1 / 60)  # shorter substeps
        sim.run(duration=0.5, dt=0.25)
    sim = lavender.Sim("pendulum", dt=0.25)  # capped at 1/240 s substeps
    with pytest.warns(RuntimeWarning, match=r"give it 8\.0 per swing"):
        sim.set_settings(max_substep=0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.set_settings(max_substep=1.0)  # frames of 0.25 s: the same substeps
    with pytest.warns(RuntimeWarning, match=r"give it 2\.0 per swing"):
        sim.run(duration=2.0, dt=1.0)


def test_joints_far_from_holding_at_the_start_are_warned_about():
    # QA 2026-12-07: a weld between boxes 1 m apart snapped one across, with no word.
    def weld(gap):
        sb = lavender.SceneBuilder().body("a", kind="static").body("b", position=[gap, 0, 0])
        return sb.fixed("weld", "a", "b").build()

    with pytest.warns(RuntimeWarning, match=r"1 joint starts far from holding.*joint `weld`, 1\.00e0 m"):
        weld(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        weld(0.0)


def test_a_logs_header_names_the_settings_as_sim_settings_does(tmp_path):
    # QA 2026-12-07: bias_iterations was 8 in the header and None in Sim.settings.
    for kwargs in ({}, {"bias_iterations": 2}):
        sim = lavender.Sim("limited-revolute", **kwargs)
        path = tmp_path / f"run{len(kwargs)}.lvlog"
        sim.record(path)
        sim.step()
        sim.stop_recording()
        header = lavender.Log(path).header["settings"]
        for key, value in sim.settings.items():
            if key not in ("threads", "solver_path"):
                assert header[key] == value, key


def test_a_recording_whose_writes_fail_says_it_once(tmp_path):
    """QA (2026-12-08, a full disk): the error of a failed write was followed by "closing
    the log failed too: could not encode a frame: the recording thread already stopped".
    A file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) fails writes as a full disk does."""
    import resource
    import signal
    import subprocess
    import sys

    log = tmp_path / "cut.lvlog"
    script = (
        "import lavender\n"
        "sim = lavender.Sim('chain')\n"
        f"sim.record({str(log)!r})\n"
        "try:\n"
        "    sim.run(10.0)\n"
        "except OSError as e:\n"
        "    print(e)\n"
    )

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    out = subprocess.run([sys.executable, "-c", script], preexec_fn=limit,
                         capture_output=True, text=True, check=True)
    message = out.stdout
    assert "File too large" in message, message
    assert "the log holds the substeps before the failure" in message, message
    assert "failed too" not in message and "already stopped" not in message, message
    frames = len(lavender.Log(log))
    assert frames > 50, frames
