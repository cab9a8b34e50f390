"""Recording from a Sim and reading the run back through lavender.Log."""

import errno
import os
import shutil

import numpy as np
import pytest

import lavender
from conftest import hinge_scene


def record_substeps(sim, path, substeps, before_substep=None):
    """Records ``substeps`` single-substep frames; returns what the Sim reported after each.
    ``before_substep(k, sim)`` runs before substep k."""
    h = sim.settings["max_substep"]
    sim.record(path)
    seen = []
    for k in range(substeps):
        if before_substep is not None:
            before_substep(k, sim)
        assert sim.step(h) == 1
        seen.append(
            dict(
                substep=sim.substeps_done - 1,
                time=sim.time,
                diagnostics=sim.constraint_data(),
                poses=sim.poses(),
                velocities=sim.velocities(),
                energy=sim.total_energy(),
                hash=sim.state_hash(),
            )
        )
    summary = sim.stop_recording()
    assert summary["frames"] == substeps and summary["path"] == str(path)
    return seen


def test_recorded_run_equals_what_the_sim_reported_at_each_substep(tmp_path):
    path = tmp_path / "chain.lvlog"
    sim = lavender.Sim("chain")
    seen = record_substeps(sim, path, 60)
    log = lavender.Log(path)
    assert len(log) == 60 and log.finished and log.recovery is None
    assert log.joint_names == sim.joint_names and log.body_names == sim.body_names
    assert log.header["world"]["velocity_iterations"] == sim.settings["velocity_iterations"]
    for i, s in enumerate(seen):
        frame = log[i]
        assert (frame.index, frame.substep, frame.time) == (i, s["substep"], s["time"])
        assert frame.state_hash == s["hash"] and frame.total_energy == s["energy"]
        np.testing.assert_array_equal(frame.diagnostics, s["diagnostics"])
        np.testing.assert_array_equal(frame.poses, s["poses"])
        np.testing.assert_array_equal(frame.velocities, s["velocities"])
        np.testing.assert_array_equal(log.diagnostics(i), s["diagnostics"])
    np.testing.assert_array_equal(log.substeps(), [s["substep"] for s in seen])
    np.testing.assert_array_equal(log.times(), [s["time"] for s in seen])
    for column in range(8):
        np.testing.assert_array_equal(
            log.column(5, column), [s["diagnostics"][5, column] for s in seen]
        )
    np.testing.assert_array_equal(
        log.column("chain.joint7", "anchor_error_norm"), [s["diagnostics"][7, 3] for s in seen]
    )
    # A negative column counts from the end, as bodies, joints and frames do.
    np.testing.assert_array_equal(log.column(5, -1), log.column(5, 7))
    np.testing.assert_array_equal(
        log.joint_diagnostics("chain.joint7"), [s["diagnostics"][7] for s in seen]
    )
    np.testing.assert_array_equal(log.joint_diagnostics(-1), [s["diagnostics"][-1] for s in seen])
    np.testing.assert_array_equal(log.body_poses("chain.link3"), [s["poses"][4] for s in seen])
    np.testing.assert_array_equal(log.body_velocities(-1), [s["velocities"][-1] for s in seen])
    summaries = log.summaries()
    np.testing.assert_array_equal(
        summaries["max_anchor_error"], [s["diagnostics"][:, 3].max() for s in seen]
    )
    np.testing.assert_array_equal(
        summaries["max_anchor_error_joint"], [s["diagnostics"][:, 3].argmax() for s in seen]
    )
    assert not summaries["non_finite"].any()
    np.testing.assert_array_equal(summaries["total_energy"], [s["energy"] for s in seen])


def test_multi_substep_frames_and_access_by_substep_and_time(tmp_path):
    path = tmp_path / "pendulum.lvlog"
    sim = lavender.Sim("pendulum")  # 1/60 s frames: 4 substeps each
    sim.record(path)
    ends = []
    for _ in range(10):
        assert sim.step() == 4
        ends.append((sim.substeps_done - 1, sim.time, sim.constraint_data()))
    del sim  # closes the recording
    log = lavender.Log(path)
    assert len(log) == 40 and log.finished
    for substep, t, data in ends:
        frame = log.frame_at_substep(substep)
        assert frame.time == t
        np.testing.assert_array_equal(frame.diagnostics, data)
        assert log.frame_at_time(t).substep == substep
        assert log.frame_at_time(t + 1e-4).substep == substep  # the nearest frame
        assert log.frame_at_time(round(t, 5)).substep == substep  # a time printed with 5 digits
    assert log[-1].substep == 39 and log.frame(-40).substep == 0
    assert [f.substep for f in log][:3] == [0, 1, 2]
    assert log[0].has_solver_state and log[0].solver_state.shape == (6,)
    with pytest.raises(IndexError):
        log[40]
    # As for a list: an int beyond 64 bits is out of range, not an OverflowError.
    with pytest.raises(IndexError, match="the log has 40 frames"):
        log[2**64]
    with pytest.raises(IndexError):
        log.frame(-(2**70))
    # NumPy integers too, and the other calls that take a frame or a substep (QA 2026-12-07:
    # "not uint64", and a bare OverflowError).
    with pytest.raises(IndexError, match="the log has 40 frames"):
        log[np.uint64(2**63 + 5)]
    with pytest.raises(IndexError, match="the log has 40 frames"):
        log.diagnostics(2**70)
    with pytest.raises(ValueError, match="no frame for substep 9223372036854775813"):
        log.frame_at_substep(np.uint64(2**63 + 5))
    with pytest.raises(ValueError, match="not in the log"):
        log.resume(2**70)
    assert np.array_equal(log.diagnostics(np.int32(-1)), log[39].diagnostics)
    assert log[np.int64(-1)].substep == 39
    with pytest.raises(TypeError, match="not float"):
        log[1.0]
    with pytest.raises(ValueError, match="substep 99"):
        log.frame_at_substep(99)
    assert log.frame_at_time(0.0).substep == 0  # the run's start: its first substep
    with pytest.raises(ValueError, match="precedes the first frame"):
        log.frame_at_time(-0.01)
    with pytest.raises(ValueError, match="joint"):
        log.column(3, 0)
    with pytest.raises(ValueError, match="column"):
        log.column(0, 8)
    with pytest.raises(ValueError, match=r"column -9 is out of range"):
        log.column(0, -9)
    with pytest.raises(ValueError, match="no diagnostic column"):
        log.column(0, "speed")


def test_frame_arrays_are_read_in_place_and_keep_the_log_alive(tmp_path):
    path = tmp_path / "p.lvlog"
    sim = lavender.Sim("pendulum")
    sim.record(path)
    sim.run(0.1)
    sim.stop_recording()
    log = lavender.Log(path)
    frame = log[3]
    diagnostics, poses = frame.diagnostics, frame.poses
    expected = log.column(0, 7)[3]
    assert not diagnostics.flags.writeable and not diagnostics.flags.owndata
    with pytest.raises(ValueError):
        diagnostics.flags.writeable = True
    del log, frame
    assert diagnostics[0, 7] == expected and poses.shape == (2, 7)


def test_refresh_follows_a_run_still_being_recorded(tmp_path):
    # A Log opened while the Sim records sees the frames written so far (the recording
    # thread works at most a few substeps behind); refresh() picks up the rest, and arrays
    # taken before a refresh stay valid after it re-maps the (grown) file.
    path = tmp_path / "live.lvlog"
    sim = lavender.Sim("chain")
    sim.record(path)
    sim.run(0.25)  # 60 substeps
    log = lavender.Log(path)
    first = len(log)
    assert 50 <= first <= 60 and not log.finished
    early = log[0].diagnostics
    early_poses = log[0].poses
    expected, expected_poses = early.copy(), early_poses.copy()
    sim.run(1.0)  # 240 more substeps: the file grows by far more than a page
    added = log.refresh()
    assert added >= 180 and len(log) == first + added
    summary = sim.stop_recording()
    assert summary["frames"] == 300
    rest = log.refresh()
    assert len(log) == 300 and first + added + rest == 300 and log.finished
    assert log.refresh() == 0
    np.testing.assert_array_equal(early, expected)
    np.testing.assert_array_equal(early_poses, expected_poses)
    # The refreshed log reads like one opened after the run.
    again = lavender.Log(path)
    np.testing.assert_array_equal(log.column(5, 3), again.column(5, 3))
    np.testing.assert_array_equal(log[-1].poses, again[-1].poses)
    del log, again
    np.testing.assert_array_equal(early, expected)
    # A new recording to the path replaces the file: refresh says so instead of 0 forever.
    old = lavender.Log(path)
    sim.record(path)
    sim.step()
    with pytest.raises(OSError, match="another file"):
        old.refresh()
    assert len(old) == 300
    sim.stop_recording()


def test_recording_over_an_open_log_leaves_the_reader_intact(tmp_path):
    path = tmp_path / "again.lvlog"
    first = lavender.Sim("pendulum")
    first.record(path)
    first.run(0.2)
    first.stop_recording()
    old = lavender.Log(path)
    old_diagnostics = old[-1].diagnostics
    expected = old_diagnostics.copy()
    second = lavender.Sim("chain")
    second.record(path)  # replaces the file while `old` maps it
    second.run(0.1)
    second.stop_recording()
    np.testing.assert_array_equal(old_diagnostics, expected)
    assert len(old) == 48 and lavender.Log(path).joint_count == 100


def test_spike_planted_at_a_known_substep_is_found(tmp_path):
    path = tmp_path / "spike.lvlog"
    planted = 57
    # No projection: the kick shows in the diagnostics after its substep.
    sim = hinge_scene().build(position_iterations=0)

    def kick(k, sim):
        if k == planted:
            position, rotation = sim.body_pose("arm")
            sim.set_body_pose("arm", position + [0.0, 0.05, 0.0], rotation)

    seen = record_substeps(sim, path, 120, kick)
    log = lavender.Log(path)
    spikes = log.spikes()
    assert spikes, "the kick is found"
    first = spikes[0]
    assert first["substep"] == seen[planted]["substep"] == planted
    assert (first["joint"], first["joint_name"]) == (0, "hinge")
    assert (first["column"], first["column_name"]) == (3, "anchor_error_norm")
    assert first["value"] == pytest.approx(seen[planted]["diagnostics"][0, 3])
    assert first["value"] > 0.01 and first["baseline"] < 1e-3
    assert first["time"] == pytest.approx(seen[planted]["time"])
    assert all(s["substep"] >= planted for s in spikes)
    # The same finder with a column subset, by name.
    only = log.spikes(columns=["anchor_error_norm"])
    assert [s["substep"] for s in only] == [planted]
    assert log.spikes(k=1e9) == []
    worst = log.worst_joints(1)
    assert worst[0]["name"] == "hinge" and worst[0]["anchor_error_substep"] == planted
    # The hinge has no limit: no violation, so no substep of one (it said 0 before).
    assert worst[0]["peak_limit_violation"] == 0.0
    assert worst[0]["limit_violation_substep"] is None
    with pytest.raises(ValueError):
        log.spikes(columns=[9])


def test_diff_finds_the_first_divergent_substep(tmp_path):
    a, b, c = (tmp_path / f"{n}.lvlog" for n in "abc")
    for path in (a, b):
        record_substeps(hinge_scene(gravity=(0, -9.81, 0)).build(), path, 50)

    def nudge(k, sim):
        if k == 30:
            sim.set_body_velocity("arm", angular=[0.0, 0.0, 1e-3])

    record_substeps(hinge_scene(gravity=(0, -9.81, 0)).build(), c, 50, nudge)
    la, lb, lc = lavender.Log(a), lavender.Log(b), lavender.Log(c)
    same = la.diff(lb)
    assert same["identical"] and same["first_divergent_substep"] is None
    assert same["frames_compared"] == 50 and same["max_deviation"]["value"] == 0.0
    report = la.diff(lc)
    assert not report["identical"] and report["first_divergent_substep"] == 30
    assert report["where"]["kind"] in ("body", "joint")
    assert report["max_deviation"]["value"] > 0.0
    assert la.diff(lc, atol=1.0)["identical"]
    # The series: every frame pair's largest deviation by kind, 0 before the nudge.
    series = la.diff(lc, series=True)["series"]
    assert "series" not in report
    np.testing.assert_array_equal(series["substep"], la.substeps())
    np.testing.assert_array_equal(series["time"], la.times())
    moved = series["velocity"] > 0
    assert not moved[:30].any() and moved[30]
    # The position moved by at most the velocity difference over one substep.
    h = 1 / 240
    assert 0 < series["position"][30] <= series["velocity"][30] * h * 1.01
    worst = max(series[k].max() for k in ("position", "rotation", "velocity", "diagnostics"))
    assert worst == report["max_deviation"]["value"]
    other = tmp_path / "other.lvlog"
    record_substeps(lavender.Sim("pendulum"), other, 5)
    with pytest.raises(ValueError, match="different scenes"):
        la.diff(lavender.Log(other))
    forced = la.diff(lavender.Log(other), force=True)
    assert forced["scene_hash_mismatch"]
    # The other log by its path, str or pathlib (QA 2026-12-08: a bare TypeError).
    assert la.diff(str(c)) == report and la.diff(c) == report
    with pytest.raises(OSError):
        la.diff(tmp_path / "missing.lvlog")
    with pytest.raises(TypeError, match="str or os.PathLike"):
        la.diff(3)


def test_a_torn_or_damaged_log_is_an_exception_not_a_crash(tmp_path):
    path = tmp_path / "whole.lvlog"
    record_substeps(lavender.Sim("pendulum"), path, 20)
    data = path.read_bytes()
    torn = tmp_path / "torn.lvlog"
    torn.write_bytes(data[: len(data) // 2])
    log = lavender.Log(torn)
    assert not log.finished and log.recovery["dropped_bytes"] > 0
    assert 0 < len(log) < 20
    _ = log[-1].diagnostics
    damaged = tmp_path / "damaged.lvlog"
    flipped = bytearray(data)
    middle = len(data) // 2
    flipped[middle : middle + 8] = b"\xff" * 8
    damaged.write_bytes(bytes(flipped))
    broken = lavender.Log(damaged)
    with pytest.raises(OSError, match="corrupt"):
        for i in range(len(broken)):
            broken[i].diagnostics
    with pytest.raises(OSError, match="not a Lavender log"):
        (tmp_path / "text.lvlog").write_text("hello")
        lavender.Log(tmp_path / "text.lvlog")
    with pytest.raises(FileNotFoundError) as missing:
        lavender.Log(tmp_path / "missing.lvlog")
    # The system's error number (QA 2026-12-07: None); the message names the file.
    assert missing.value.errno == errno.ENOENT
    assert str(tmp_path / "missing.lvlog") in str(missing.value)


def test_a_recording_the_system_refuses_names_the_file_and_errno():
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs Linux's /proc")
    # /proc takes no new files: the first step, which creates the file, fails there.
    for name in ("/proc/lavender-test.lvlog", "/proc/lavender-test.h5"):
        sim = lavender.Sim("pendulum")
        sim.record(name)
        with pytest.raises(FileNotFoundError, match="No such file") as refused:
            sim.step()
        assert refused.value.errno == errno.ENOENT, name
        assert name in str(refused.value)


def test_a_damaged_record_in_a_log_without_a_footer_is_passed_over(tmp_path):
    # QA (2026-12-06): one corrupt record in a killed writer's log dropped every frame after it.
    path = tmp_path / "whole.lvlog"
    record_substeps(lavender.Sim("pendulum"), path, 20)
    data = bytearray(path.read_bytes()[:-64])  # the trailer cut, as a killed writer leaves it
    data[len(data) // 2] ^= 0x10
    damaged = tmp_path / "damaged.lvlog"
    damaged.write_bytes(bytes(data))
    log = lavender.Log(damaged)
    rec = log.recovery
    assert len(log) == 19 and rec["kind"] == "unusable_footer" and rec["offset"] > 0
    (gap,) = rec["skipped"]
    assert gap["before_substep"] == gap["after_substep"] + 2 and gap["bytes"] > 0
    # As the command line's JSON names it: the recovered frame before the gap.
    assert log.substeps()[gap["after_frame"]] == gap["after_substep"]
    assert gap["after_substep"] + 1 not in log.substeps()
    with pytest.raises(OSError, match="hold no valid frame"):
        log.export_hdf5(tmp_path / "out.h5")
    torn = tmp_path / "torn.lvlog"
    torn.write_bytes(path.read_bytes()[:-100])
    rec = lavender.Log(torn).recovery
    assert rec["skipped"] == [] and rec["kind"] in ("torn_tail", "unusable_footer")
    # Cut inside a frame, no writer holding it: the reason says so, as the command line's
    # note does (QA 2026-12-08: Python said "still writing it, or was stopped mid-write").
    cut = tmp_path / "cut.lvlog"
    cut.write_bytes(path.read_bytes()[: len(path.read_bytes()) * 6 // 10])
    rec = lavender.Log(cut).recovery
    assert rec["kind"] in ("torn_tail", "no_footer"), rec
    assert "no writer holds it now" in rec["reason"] and "cut short" in rec["reason"], rec


def test_resume_reproduces_the_recorded_frames(tmp_path):
    path = tmp_path / "r.lvlog"
    sim = lavender.Sim("pendulum")
    sim.record(path)
    sim.run(0.5)
    sim.stop_recording()
    log = lavender.Log(path)
    resumed = log.resume(15)  # the end of the fourth 4-substep frame
    assert resumed.substeps_done == 16 and resumed.state_hash() == log.frame_at_substep(15).state_hash
    for _ in range(3):
        resumed.step()
        assert resumed.state_hash() == log.frame_at_substep(resumed.substeps_done - 1).state_hash
    with pytest.raises(ValueError):
        log.resume(10_000)


def test_record_errors(tmp_path):
    sim = lavender.Sim("pendulum")
    with pytest.raises(OSError):
        sim.record(tmp_path / "no" / "such" / "dir" / "x.lvlog")
    assert sim.recording is None and sim.stop_recording() is None
    sim.record(tmp_path / "x.lvlog")
    assert sim.recording == str(tmp_path / "x.lvlog")
    with pytest.raises(ValueError, match="already recording"):
        sim.record(tmp_path / "y.lvlog")
    with pytest.raises(ValueError, match="while recording"):
        sim.set_settings(velocity_iterations=3)
    sim.step()
    assert sim.stop_recording()["frames"] == 4


def test_a_recording_of_nothing_leaves_an_earlier_file_as_it_was(tmp_path):
    # QA (2026-12-05): record() then stop_recording() with no step replaced the file.
    for name in ("keep.lvlog", "keep.h5"):
        path = tmp_path / name
        path.write_bytes(b"an earlier run")
        sim = lavender.Sim("pendulum")
        sim.record(path)
        with pytest.warns(RuntimeWarning, match="nothing was recorded"):
            summary = sim.stop_recording()
        assert (summary["frames"], summary["bytes"]) == (0, 0)
        assert path.read_bytes() == b"an earlier run"
    # A first substep that fails is recorded: the log is that one non-finite frame (QA,
    # 2026-12-05: the failing substep was left out, so nothing showed where it went wrong).
    path = tmp_path / "nan.lvlog"
    path.write_bytes(b"an earlier run")
    sim = hinge_scene(gravity=(0, -9.81, 0)).build()
    sim.set_body_velocity("arm", linear=[3e38, 3e38, 0])
    sim.record(path)
    with pytest.raises(lavender.NonFiniteError, match="the one that went non-finite"):
        sim.step(1 / 60)
    log = lavender.Log(path)
    assert log.finished and len(log) == 1 and log[0].substep == 0
    assert not np.isfinite(log[0].poses).all()
    assert sim.substeps_done == 0, "the world rolled back"
    assert sim.recording is None and sim.stop_recording() is None, "the failure ended it"


def test_two_recordings_to_one_path_are_refused(tmp_path):
    # QA (2026-12-05): a second Sim recording to the same path took the first's frames.
    for name in ("same.lvlog", "same.h5"):
        path = tmp_path / name
        a, b = lavender.Sim("pendulum"), lavender.Sim("chain")
        a.record(path)
        a.step()
        with pytest.raises(OSError, match="still writing it"):
            b.record(path)
        assert b.recording is None
        a.step()
        assert a.stop_recording()["frames"] == 8
        b.record(path)  # free again
        b.step()
        assert b.stop_recording()["frames"] == 4


def test_hdf5_export_and_recording_match_the_log(tmp_path):
    h5py = pytest.importorskip("h5py")
    log_path, direct, exported = tmp_path / "run.lvlog", tmp_path / "direct.h5", tmp_path / "exp.h5"
    for path in (log_path, direct):
        record_substeps(lavender.Sim("chain"), path, 30)
    log = lavender.Log(log_path)
    summary = log.export_hdf5(exported)
    assert summary["frames"] == 30
    for path in (direct, exported):
        with h5py.File(path, "r") as f:
            np.testing.assert_array_equal(f["substep"][:], log.substeps())
            np.testing.assert_array_equal(f["time"][:], log.times())
            diagnostics = f["joints/diagnostics"][:]
            assert diagnostics.shape == (30, log.joint_count, 8)
            for i in (0, 17, 29):
                np.testing.assert_array_equal(diagnostics[i], log[i].diagnostics)
                np.testing.assert_array_equal(f["bodies/pose"][i], log[i].poses)
                np.testing.assert_array_equal(f["bodies/velocity"][i], log[i].velocities)
            # The same names and values (QA, 2026-12-05: the names differed).
            summaries = log.summaries()
            assert set(f["summary"]) | {"substep", "time"} == set(summaries)
            for key in f["summary"]:
                np.testing.assert_array_equal(f["summary"][key][:], summaries[key], err_msg=key)
            assert summaries["state_hash"][17] == log[17].state_hash == log[17].summary["state_hash"]
    every = log.export_hdf5(tmp_path / "every.h5", from_substep=10, to_substep=19, every=3)
    assert every["frames"] == 4
    with h5py.File(tmp_path / "every.h5", "r") as f:
        np.testing.assert_array_equal(f["substep"][:], [10, 13, 16, 19])


def test_recording_to_a_device_never_unlinks_it(tmp_path):
    import os
    import stat

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    # A recording needs a .lvlog or .h5 name: reach the device through a link of that name.
    link = tmp_path / "full.lvlog"
    link.symlink_to("/dev/full")
    sim = lavender.Sim("pendulum")
    with pytest.raises(OSError, match="full.lvlog"):
        sim.record(link)
        sim.run(1.0)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    assert link.is_symlink()
    assert sim.recording is None


def test_record_and_export_need_their_extensions_and_never_replace_the_scene(tmp_path):
    import pathlib

    scene = tmp_path / "scene.toml"
    shipped = pathlib.Path(__file__).resolve().parents[2] / "data" / "scenes" / "pendulum.toml"
    scene.write_text(shipped.read_text())
    link = tmp_path / "scene.lvlog"
    link.symlink_to(scene)
    with pytest.raises(ValueError, match="is the file being read"):
        lavender.Sim(scene).record(link)
    assert scene.read_text() == shipped.read_text()
    sim = lavender.Sim("pendulum")
    for bad in ("r.txt", "r", "r.hdf"):
        with pytest.raises(ValueError, match="NAME.lvlog"):
            sim.record(tmp_path / bad)
    path = tmp_path / "run.lvlog"
    record_substeps(sim, path, 4)
    with pytest.raises(ValueError, match="NAME.h5"):
        lavender.Log(path).export_hdf5(tmp_path / "x.txt")


def test_a_failed_step_ends_the_recording_with_a_readable_log(tmp_path):
    path = tmp_path / "nan.lvlog"
    sim = hinge_scene(gravity=(0, -9.81, 0)).build()
    sim.record(path)
    sim.step(1 / 60)
    sim.set_body_velocity("arm", linear=[3e38, 3e38, 0])
    with pytest.raises(lavender.NonFiniteError, match="recording to .* stopped") as failed:
        sim.step(1 / 60)
    assert "the one that went non-finite" in str(failed.value)
    assert sim.recording is None
    log = lavender.Log(path)
    # The four substeps of the first step, then the one that went non-finite (the world
    # rolled it back; the log keeps it, where the spike finder names it).
    assert log.finished and len(log) == 5
    assert all(np.isfinite(log[i].poses).all() for i in range(4))
    last = log[4]
    assert last.substep == 4 and not np.isfinite(last.poses).all()
    assert not np.isfinite(last.diagnostics[0]).all()
    spikes = log.spikes()
    assert spikes[-1]["substep"] == 4 and spikes[-1]["joint_name"] == "hinge"
    assert not np.isfinite(spikes[-1]["value"])
    assert sim.substeps_done == 4, "the world rolled back to the end of the first step"


def test_a_step_with_the_wrong_substeps_is_refused_and_the_recording_goes_on(tmp_path):
    # QA (2026-12-05): step(0.01) on a recording of 1/60 s frames raised OSError and ended
    # the recording.
    path = tmp_path / "run.lvlog"
    sim = lavender.Sim("pendulum")
    sim.record(path)
    sim.step(1 / 60)
    with pytest.raises(ValueError, match="the recording's are") as refused:
        sim.step(0.01)
    assert not isinstance(refused.value, OSError)
    assert sim.recording is not None and sim.substeps_done == 4
    sim.step(1 / 60)
    sim.stop_recording()
    log = lavender.Log(path)
    assert len(log) == 8 and [log[i].substep for i in range(8)] == list(range(8))


def test_a_resumed_run_records_under_the_original_scene_and_never_over_its_log(tmp_path):
    path = tmp_path / "run.lvlog"
    sim = lavender.Sim("pendulum")
    sim.record(path)
    sim.run(0.5)
    sim.stop_recording()
    log = lavender.Log(path)
    resumed = log.resume(39)  # the end of frame 10; substeps 40.. follow
    with pytest.raises(ValueError, match="is the file being read"):
        resumed.record(path)
    detail_path = tmp_path / "detail.lvlog"
    resumed.record(detail_path)
    for _ in range(5):
        resumed.step()
    resumed.stop_recording()
    detail = lavender.Log(detail_path)
    assert detail.header["scene_hash"] == log.header["scene_hash"]
    # No force needed: the same scene. The original goes on after the detail ends.
    whole = log.diff(detail)
    assert not whole["identical"] and whole["reason"] == "log_ends"
    assert whole["first_divergent_substep"] == 60
    overlap = log.diff(detail, overlap=True)
    assert overlap["identical"] and overlap["reason"] is None
    assert (overlap["first_common_substep"], overlap["last_common_substep"]) == (40, 59)
    assert overlap["frames_compared"] == 20


def test_an_export_never_replaces_its_log_and_an_empty_range_is_an_error(tmp_path):
    path = tmp_path / "run.lvlog"
    record_substeps(lavender.Sim("pendulum"), path, 12)
    before = path.read_bytes()
    log = lavender.Log(path)
    with pytest.raises(ValueError, match="NAME.h5"):
        log.export_hdf5(path)
    same = tmp_path / "same.h5"
    same.symlink_to(path)
    with pytest.raises(ValueError, match="is the file being read"):
        log.export_hdf5(same)
    with pytest.raises(ValueError, match="no frame to export from substep 100"):
        log.export_hdf5(tmp_path / "late.h5", from_substep=100)
    assert path.read_bytes() == before
    assert not (tmp_path / "late.h5").exists()
    assert len(log) == 12 and log[11].substep == 11


def test_negative_substeps_and_counts_are_value_errors(tmp_path):
    path = tmp_path / "run.lvlog"
    record_substeps(lavender.Sim("pendulum"), path, 4)
    log = lavender.Log(path)
    for call, name in [
        (lambda: log.frame_at_substep(-1), "substep"),
        (lambda: log.resume(-1), "substep"),
        (lambda: log.worst_joints(-1), "n"),
        (lambda: log.spikes(window=-1), "window"),
        (lambda: log.export_hdf5(tmp_path / "x.h5", every=-2), "every"),
        (lambda: log.export_hdf5(tmp_path / "x.h5", from_substep=-3), "from_substep"),
        (lambda: log.export_hdf5(tmp_path / "x.h5", to_substep=-(2**70)), "to_substep"),
    ]:
        with pytest.raises(ValueError, match=f"{name} = -"):
            call()
    # As `lavender export`: bounds the wrong way round are named; an int beyond 64 bits is
    # past every log, not an OverflowError.
    with pytest.raises(ValueError, match="to_substep = 1 is before from_substep = 2"):
        log.export_hdf5(tmp_path / "x.h5", from_substep=2, to_substep=1)
    assert log.export_hdf5(tmp_path / "all.h5", to_substep=10**30)["frames"] == 4
    with pytest.raises(ValueError, match="no frame to export"):
        log.export_hdf5(tmp_path / "none.h5", from_substep=10**30)
    with pytest.raises(ValueError, match="time = NaN"):
        log.frame_at_time(float("nan"))
    # As `scrub --time inf` (QA 2026-12-06: inf gave the last frame here).
    with pytest.raises(ValueError, match="time = inf: give a finite number"):
        log.frame_at_time(float("inf"))
    with pytest.raises(ValueError, match="columns is empty"):
        log.spikes(columns=[])
    with pytest.raises(ValueError, match="no frame for substep 18446744073709551616"):
        log.frame_at_substep(2**64)
    with pytest.raises(ValueError, match="must be >= 0"):
        log.frame_at_substep(-(2**70))
    # Counts beyond 64 bits name the argument and the number (QA 2026-12-07: a bare
    # "OverflowError: int too big to convert"); True and False are not counts.
    sim = lavender.Sim("pendulum")
    for call, name in [
        (lambda big: log.worst_joints(big), "n"),
        (lambda big: log.spikes(window=big), "window"),
        (lambda big: log.spikes(min_history=big), "min_history"),
        (lambda big: log.export_hdf5(tmp_path / "x.h5", every=big), "every"),
        (lambda big: sim.record(tmp_path / "k.lvlog", keyframe_every=big), "keyframe_every"),
    ]:
        with pytest.raises(ValueError, match=rf"^{name} = {2**70}: is too large \(at most 9223372036854775807\)"):
            call(2**70)
        with pytest.raises(ValueError, match=rf"^{name} = -{2**70}: must be >= 0"):
            call(-(2**70))
        with pytest.raises(TypeError, match=rf"{name} must be a whole number, not True"):
            call(True)
        with pytest.raises(TypeError, match=rf"{name} must be a whole number, got 2.5"):
            call(2.5)
    assert not (tmp_path / "x.h5").exists() and not (tmp_path / "k.lvlog").exists()
    # NumPy integers are whole numbers.
    assert len(log.worst_joints(np.int64(1))) == 1


def test_a_keyboard_interrupt_stops_an_hdf5_export_and_leaves_nothing(tmp_path):
    import os
    import signal
    import threading

    # 1,920 frames of the 20 x 20 grid (88 MB): its export takes about 1.5 s, and the
    # export hears signals every 256 frames.
    log_path = tmp_path / "grid.lvlog"
    sim = lavender.Sim("grid")
    sim.record(log_path)
    sim.run(8.0)
    sim.stop_recording()
    log = lavender.Log(log_path)
    out = tmp_path / "out.h5"
    out.write_bytes(b"earlier")
    # Ctrl-C from another thread 0.1 s in: Python's handler raises KeyboardInterrupt in the
    # main thread when the export next checks for signals.
    timer = threading.Timer(0.1, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            log.export_hdf5(out)
    finally:
        timer.cancel()
    assert out.read_bytes() == b"earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.lvlog", "out.h5"]
    # Uninterrupted, the same export finishes.
    assert log.export_hdf5(out)["frames"] == len(log)


def test_a_log_closes_and_works_as_a_context_manager(tmp_path):
    # QA (2026-12-05): a Log had no close(); its map lived until garbage collection.
    path = tmp_path / "run.lvlog"
    record_substeps(lavender.Sim("pendulum"), path, 8)
    with lavender.Log(path) as log:
        assert len(log) == 8
        kept = log[3].poses  # read in place: keeps its own mapping
        expected = kept.copy()
    assert repr(log).endswith("closed>") and log.path == str(path)
    for call in (lambda: len(log), lambda: log[0], lambda: log.spikes(), log.refresh,
                 lambda: log.finished, lambda: log.column(0, 3)):
        with pytest.raises(ValueError, match="is closed"):
            call()
    assert np.array_equal(kept, expected), "an array read in place outlives close()"
    log.close()  # twice is fine
    again = lavender.Log(path)
    again.close()
    # Exceptions inside the block propagate; the log is closed either way.
    with pytest.raises(KeyError):
        with lavender.Log(path) as log:
            raise KeyError("inside")
    with pytest.raises(ValueError, match="is closed"):
        len(log)


def test_spike_parameters_are_checked_with_messages_that_name_them(tmp_path):
    # QA (2026-12-05): min_history=0 said the window was too short, a window longer than
    # the log was not cut to it as the CLI does, and columns="name" was a bare TypeError.
    path = tmp_path / "run.lvlog"
    sim = hinge_scene().build(position_iterations=0)

    def kick(k, sim):
        if k == 30:
            position, rotation = sim.body_pose("arm")
            sim.set_body_pose("arm", position + [0.0, 0.05, 0.0], rotation)

    record_substeps(sim, path, 60, kick)
    log = lavender.Log(path)
    assert [s["substep"] for s in log.spikes(columns="anchor_error_norm")] == [30]
    everything = dict(k=2.0, abs_threshold=0.0, columns=range(8))
    assert len(log.spikes(**everything)) > 3
    for below in (0, -1):
        with pytest.raises(ValueError, match="min_history must be at least 1"):
            log.spikes(min_history=below)
    with pytest.raises(ValueError, match="window of 3 substeps must hold at least min_history = 4"):
        log.spikes(window=3, min_history=4)
    # A window longer than the log judges against every earlier frame, as 60 does (and
    # allocates for 60, not for a billion substeps of history).
    assert log.spikes(window=10**9, **everything) == log.spikes(window=60, **everything)
    for one, listed in (("anchor_error_norm", [3]), (7, ["joint_coordinate"]), (1, [1])):
        found = log.spikes(columns=one, k=2.0, abs_threshold=0.0)
        assert found and found == log.spikes(columns=listed, k=2.0, abs_threshold=0.0), one
    with pytest.raises(ValueError, match="columns is a column"):
        log.spikes(columns=3.5)
    with pytest.raises(ValueError, match="no diagnostic column named"):
        log.spikes(columns=["nope"])


def test_a_log_truncated_in_place_is_an_oserror_not_a_crash(tmp_path):
    # QA (2026-12-05): `cp other.lvlog run.lvlog` over an open log, then a read: SIGBUS.
    path = tmp_path / "run.lvlog"
    record_substeps(lavender.Sim("pendulum"), path, 8)
    log = lavender.Log(path)
    kept = np.array(log[7].poses)  # a copy survives anything
    with open(path, "r+b") as f:
        f.truncate(200)
    for call in (lambda: len(log), lambda: log[7], lambda: log.column(0, 3), log.refresh):
        with pytest.raises(OSError, match="shrank from .* to 200 bytes while open"):
            call()
    assert kept.shape == (2, 7)
    log.close()


def test_a_log_written_over_in_place_longer_is_an_oserror_not_a_crash(tmp_path):
    # QA (2026-12-07): `cp big.lvlog run.lvlog` over an open log (as long or longer): a frame
    # read before was served from the other file's bytes (a shape of 1.7e9 joints, SIGSEGV).
    path, big = tmp_path / "run.lvlog", tmp_path / "big.lvlog"
    record_substeps(lavender.Sim("pendulum"), path, 8)
    record_substeps(lavender.Sim("chain"), big, 8)
    log = lavender.Log(path)
    kept = np.array(log[5].diagnostics)
    with open(path, "r+b") as f:  # in place, as cp does
        f.truncate(0)
        f.write(big.read_bytes())
    with pytest.raises(OSError, match="changed since they were checked: another program wrote over"):
        log[5].diagnostics
    with pytest.raises(OSError, match="is corrupt"):  # frames never read: checked as new
        log.column(0, 3)
    assert kept.shape == (1, 8)
    log.close()


def test_refresh_beside_reads_in_another_thread_does_not_deadlock(tmp_path):
    # QA (2026-12-07): refresh() held the Log's lock while taking the GIL back, and a thread
    # holding the GIL waiting to read the Log hung the process. Run in a child with a timeout,
    # so that a regression fails instead of hanging the suite.
    import subprocess
    import sys

    path = tmp_path / "run.lvlog"
    record_substeps(lavender.Sim("chain"), path, 20)
    code = f"""
import threading, time, lavender
log = lavender.Log({str(path)!r})
stop = time.monotonic() + 1.0
def follow():
    while time.monotonic() < stop:
        log.refresh()
t = threading.Thread(target=follow)
t.start()
n = 0
while time.monotonic() < stop:
    n += len(log)
t.join()
print(n > 0)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr


def test_bools_and_huge_substeps_are_refused_by_name(tmp_path):
    # QA (2026-12-07): log[True] was frame 1; resume(10**30) named 2**64 - 1.
    path = tmp_path / "run.lvlog"
    record_substeps(lavender.Sim("pendulum"), path, 4)
    log = lavender.Log(path)
    with pytest.raises(TypeError, match="not bool"):
        log[True]
    with pytest.raises(TypeError, match="not bool"):
        log.frame_at_substep(True)
    with pytest.raises(ValueError, match="time must be a number of seconds, got True"):
        log.frame_at_time(True)
    assert log.frame_at_time(0.01).substep == log.frame_at_time(np.float32(0.01)).substep
    with pytest.raises(ValueError, match=f"substep {10**30} is not in the log"):
        log.resume(10**30)
    with pytest.raises(ValueError, match="columns is a column .* or a list of them, got"):
        log.spikes(columns={3: 1})
    log.close()


def test_a_log_and_its_frames_pickle_as_the_path_and_index(tmp_path):
    # QA (2026-12-07): "cannot pickle 'lavender.Log' object", with no advice.
    import copy
    import pickle

    path = tmp_path / "run.lvlog"
    record_substeps(lavender.Sim("chain"), path, 6)
    log = lavender.Log(path)
    again = pickle.loads(pickle.dumps(log))
    assert again is not log and again.path == log.path and len(again) == len(log) == 6
    frame = pickle.loads(pickle.dumps(log[4]))
    assert frame.substep == log[4].substep
    np.testing.assert_array_equal(frame.diagnostics, log[4].diagnostics)
    assert copy.copy(log[2]).substep == log[2].substep
    log.close()


def test_one_corrupt_frame_is_passed_over_with_a_warning_where_asked(tmp_path):
    # QA (2026-12-05): one corrupt frame made every whole-log call fail, where `lavender
    # scrub` passes over it and says which.
    path = tmp_path / "whole.lvlog"
    record_substeps(lavender.Sim("pendulum"), path, 40)
    clean = lavender.Log(path)
    want_column, want_poses = clean.column(0, 3), clean.body_poses(1)
    want_spikes = clean.spikes(k=0.5, abs_threshold=0.0)
    # Damage one frame in the middle: its checksum fails, the others are intact.
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8] = b"\xff" * 8
    damaged = tmp_path / "damaged.lvlog"
    damaged.write_bytes(bytes(data))
    log = lavender.Log(damaged)
    with pytest.raises(OSError, match="skip_corrupt=True"):
        log.column(0, 3)
    with pytest.raises(OSError, match="skip_corrupt=True"):
        log.body_poses(1)
    with pytest.warns(RuntimeWarning, match=r"1 corrupt frame was passed over reading the column: (\d+) \(substep \1\)"):
        column = log.column(0, 3, skip_corrupt=True)
    bad = np.flatnonzero(np.isnan(column))
    assert len(bad) == 1
    ok = np.arange(len(column)) != bad[0]
    np.testing.assert_array_equal(column[ok], want_column[ok])
    with pytest.warns(RuntimeWarning, match="reading the poses"):
        poses = log.body_poses(1, skip_corrupt=True)
    assert np.isnan(poses[bad[0]]).all()
    np.testing.assert_array_equal(poses[ok], want_poses[ok])
    with pytest.warns(RuntimeWarning, match="reading the velocities"):
        log.body_velocities("bob", skip_corrupt=True)
    with pytest.raises(OSError, match="skip_corrupt=True"):
        log.joint_diagnostics(0)
    with pytest.warns(RuntimeWarning, match="reading the joint's diagnostics"):
        rows = log.joint_diagnostics(0, skip_corrupt=True)
    assert rows.shape == (len(column), 8) and np.isnan(rows[bad[0]]).all()
    np.testing.assert_array_equal(rows[ok, 3], want_column[ok])
    # Spikes and worst joints pass over it as scrub does.
    with pytest.warns(RuntimeWarning, match="judging spikes"):
        spikes = log.spikes(k=0.5, abs_threshold=0.0)
    assert all(s["substep"] != bad[0] for s in spikes)
    assert [s for s in spikes if s["substep"] < bad[0]] == [
        s for s in want_spikes if s["substep"] < bad[0]
    ]
    with pytest.warns(RuntimeWarning, match="finding the worst joints"):
        assert log.worst_joints(1)[0]["name"] == clean.worst_joints(1)[0]["name"]


def test_a_slice_of_a_log_is_the_list_of_its_frames(tmp_path):
    # QA 2026-12-07: `log[0:10:3]` was a TypeError; it picks frames as a list's slice does.
    path = tmp_path / "s.lvlog"
    record_substeps(lavender.Sim("pendulum"), path, 20)
    log = lavender.Log(path)
    positions = list(range(len(log)))
    for key in (slice(0, 10, 3), slice(-5, None), slice(None, None, -1), slice(5, 2),
                slice(-100, 100, 7), slice(None, None, -4)):
        frames = log[key]
        assert isinstance(frames, list)
        assert [f.substep for f in frames] == [log[i].substep for i in positions[key]], key
    assert log[2:3][0].substep == log[2].substep == log.frame(2).substep
    with pytest.raises(ValueError):
        log[::0]
    with pytest.raises(TypeError, match="an int .* or a slice, not float"):
        log[1.5]
