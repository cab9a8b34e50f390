"""HDF5 written by `lavender export` and `lavender run --record run.h5`, read back with h5py
and checked against the run log (read through lavender.Log) and with `h5dump -H`."""

import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
import lavender  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
COLUMNS = [
    "anchor_error_x",
    "anchor_error_y",
    "anchor_error_z",
    "anchor_error_norm",
    "angular_error",
    "limit_violation",
    "anchor_relative_speed",
    "joint_coordinate",
]


def cli(*args):
    """Runs the `lavender` binary (built by `cargo test --workspace --release`)."""
    exe = os.environ.get("LAVENDER_BIN")
    cmd = [exe] if exe else ["cargo", "run", "--release", "-q", "-p", "lavender-cli", "--"]
    return subprocess.run(cmd + [str(a) for a in args], cwd=ROOT, check=True,
                          capture_output=True, text=True)


def strings(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A 0.5 s recording of the limited revolute pendulum: 120 substeps."""
    d = tmp_path_factory.mktemp("h5")
    log = d / "run.lvlog"
    cli("run", "limited-revolute", "--duration", "0.5", "--record", log)
    return d, log


def test_export_matches_the_log_value_for_value(run):
    d, log_path = run
    out = d / "run.h5"
    cli("export", log_path, out)
    log = lavender.Log(log_path)
    n, bodies, joints = len(log), log.body_count, log.joint_count
    assert n == 120
    with h5py.File(out, "r") as f:
        assert f["time"].shape == (n,) and f["substep"].shape == (n,)
        assert f["bodies/pose"].shape == (n, bodies, 7)
        assert f["bodies/velocity"].shape == (n, bodies, 6)
        assert f["joints/diagnostics"].shape == (n, joints, 8)
        assert f["bodies/pose"].dtype == np.float32 and f["time"].dtype == np.float64
        for name in ["total_energy", "state_hash", "max_anchor_error", "max_angular_error",
                     "max_limit_violation", "max_anchor_error_joint", "non_finite"]:
            assert f["summary/" + name].shape == (n,), name
        assert strings(f.attrs["columns"]) == COLUMNS
        assert len(f.attrs["units"]) == 8
        assert strings(f["bodies"].attrs["names"]) == log.body_names
        assert strings(f["joints"].attrs["names"]) == log.joint_names
        # Per joint: its type and the unit of columns 5 and 7 (rad for hinges, m for sliders).
        kinds = strings(f["joints"].attrs["kinds"])
        units = strings(f["joints"].attrs["coordinate_units"])
        assert len(kinds) == len(units) == joints
        unit_of = {"revolute": "rad", "prismatic": "m", "spherical": "-", "fixed": "-"}
        assert units == [unit_of[k] for k in kinds]
        assert kinds == ["revolute"], "the limited revolute pendulum's one hinge"
        assert strings([f["summary/total_energy"].attrs["units"]]) == ["J"]
        assert strings([f["summary/max_anchor_error"].attrs["units"]]) == ["m"]
        assert f.attrs["scene_hash"] == log.header["scene_hash"]
        assert f.attrs["engine_version"] == log.header["engine_version"]
        assert f.attrs["velocity_iterations"] == log.header["world"]["velocity_iterations"]
        # One bias pass per velocity pass unless the scene says otherwise.
        assert f.attrs["bias_iterations"] == log.header["world"]["velocity_iterations"]
        assert f.attrs["chain_solve"] == 0, "chains solved row by row unless the scene says"
        assert f.attrs["dt"] == log.header["world"]["dt"]
        # Chunked by blocks of frames, shuffle + deflate, unlimited along time.
        d = f["joints/diagnostics"]
        assert d.chunks is not None and d.maxshape[0] is None
        assert d.shuffle and d.compression == "gzip"
        pose, vel, diag = f["bodies/pose"][()], f["bodies/velocity"][()], d[()]
        time, substep = f["time"][()], f["substep"][()]
        energy, hashes = f["summary/total_energy"][()], f["summary/state_hash"][()]
    for i in range(n):
        frame = log[i]
        assert substep[i] == frame.substep and time[i] == frame.time
        assert energy[i] == frame.total_energy and hashes[i] == frame.state_hash
        # Bit for bit: the export copies the recorded float32 values.
        np.testing.assert_array_equal(pose[i], frame.poses)
        np.testing.assert_array_equal(vel[i], frame.velocities)
        np.testing.assert_array_equal(diag[i], frame.diagnostics)


def test_export_range_and_every(run):
    d, log_path = run
    out = d / "part.h5"
    cli("export", log_path, out, "--from", 10, "--to", 50, "--every", 4)
    log = lavender.Log(log_path)
    with h5py.File(out, "r") as f:
        substeps = f["substep"][()]
        np.testing.assert_array_equal(substeps, np.arange(10, 51, 4))
        for k, s in enumerate(substeps):
            np.testing.assert_array_equal(f["joints/diagnostics"][k],
                                          log.frame_at_substep(int(s)).diagnostics)


def test_recording_straight_to_hdf5_equals_the_export(run, tmp_path):
    d, log_path = run
    direct = tmp_path / "direct.h5"
    cli("run", "limited-revolute", "--duration", "0.5", "--record", direct)
    exported = d / "again.h5"
    cli("export", log_path, exported)
    with h5py.File(direct, "r") as a, h5py.File(exported, "r") as b:
        for name in ["time", "substep", "bodies/pose", "bodies/velocity",
                     "joints/diagnostics", "summary/state_hash", "summary/total_energy"]:
            np.testing.assert_array_equal(a[name][()], b[name][()], err_msg=name)


@pytest.mark.skipif(shutil.which("h5dump") is None, reason="h5dump (hdf5-tools) not installed")
def test_h5dump_lists_the_layout(run):
    d, log_path = run
    out = d / "dump.h5"
    cli("export", log_path, out)
    header = subprocess.run(["h5dump", "-H", str(out)], check=True, capture_output=True,
                            text=True).stdout
    for needle in ['DATASET "time"', 'GROUP "bodies"', 'DATASET "pose"', 'DATASET "velocity"',
                   'GROUP "joints"', 'DATASET "diagnostics"', 'GROUP "summary"',
                   'ATTRIBUTE "columns"', 'ATTRIBUTE "scene_hash"', "H5S_UNLIMITED"]:
        assert needle in header, needle


def test_every_setting_of_the_run_is_in_the_header_and_the_hdf5_attributes(tmp_path):
    # QA (2026-12-05): Log.header and the HDF5 attributes held dt, iterations and gravity
    # only; the other settings were only in the scene text.
    log_path = tmp_path / "run.lvlog"
    sim = lavender.Sim("pendulum", gyroscopic=False, error_reduction=0.3, sleeping=True,
                       bias_iterations=2, curvature=False, speculative_limits=True)
    sim.record(log_path)
    sim.step()
    sim.stop_recording()
    log = lavender.Log(log_path)
    settings = log.header["settings"]
    assert settings["gyroscopic"] is False and settings["sleeping"] is True
    assert settings["curvature"] is False and settings["speculative_limits"] is True
    assert settings["warm_starting"] is True and settings["chain_solve"] is False
    assert settings["error_reduction"] == pytest.approx(0.3)
    assert settings["projection_factor"] == 1.0
    assert (settings["velocity_iterations"], settings["bias_iterations"]) == (8, 2)
    assert settings["position_iterations"] == 2
    assert settings["substep_length"] == pytest.approx(1 / 240)
    assert settings["gravity"] == pytest.approx([0.0, -9.81, 0.0])
    assert "threads" not in settings and "solver_path" not in settings
    out = tmp_path / "run.h5"
    log.export_hdf5(out)
    with h5py.File(out, "r") as f:
        assert (f.attrs["gyroscopic"], f.attrs["sleeping"], f.attrs["warm_starting"]) == (0, 1, 1)
        assert f.attrs["curvature"] == 0 and f.attrs["speculative_limits"] == 1
        assert f.attrs["error_reduction"] == pytest.approx(0.3)
        assert f.attrs["bias_iterations"] == 2
        assert f.attrs["substep_length"] == pytest.approx(1 / 240)
        assert f.attrs["time_to_sleep"] == pytest.approx(settings["time_to_sleep"])
