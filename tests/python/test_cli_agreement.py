"""Log.spikes and Log.diff give the same results as ``lavender scrub --spikes`` and
``lavender diff`` (skipped when the command-line binary has not been built:
``cargo build --release -p lavender-cli``)."""

import json
import math
import os
import pathlib
import shutil
import subprocess

import pytest

import lavender
from conftest import hinge_scene

REPO = pathlib.Path(__file__).resolve().parents[2]


def cli():
    for candidate in (
        os.environ.get("LAVENDER_BIN"),
        REPO / "target" / "release" / "lavender",
        REPO / "target" / "debug" / "lavender",
        shutil.which("lavender"),
    ):
        if candidate and pathlib.Path(candidate).is_file():
            return str(candidate)
    pytest.skip("the lavender binary is not built (cargo build --release -p lavender-cli)")


def run_json(*args):
    done = subprocess.run([cli(), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def kicked_log(path, at, velocity=0.0):
    sim = hinge_scene(gravity=(0, -9.81, 0)).build(position_iterations=0)
    h = sim.settings["max_substep"]
    sim.record(path)
    for k in range(100):
        if k == at:
            p, q = sim.body_pose("arm")
            sim.set_body_pose("arm", p + [0.0, 0.04, 0.0], q)
            if velocity:
                sim.set_body_velocity("arm", angular=[0, 0, velocity])
        sim.step(h)
    sim.stop_recording()
    return lavender.Log(path)


def same_number(a, b):
    return (a is None and (b is None or math.isnan(b))) or a == pytest.approx(b, rel=1e-6)


def test_spikes_match_lavender_scrub(tmp_path):
    log = kicked_log(tmp_path / "k.lvlog", at=40)
    for options, kwargs in (([], {}), (["--k", "4", "--threshold", "1e-4", "--window", "8"],
                                       dict(k=4, abs_threshold=1e-4, window=8))):
        expected = run_json("scrub", log.path, "--spikes", "--json", *options)
        got = log.spikes(**kwargs)
        assert expected["frames"] == len(log)
        assert len(got) == len(expected["spikes"]) > 0
        for g, e in zip(got, expected["spikes"]):
            assert (g["substep"], g["joint"], g["column"]) == (e["substep"], e["joint"], e["column"])
            assert (g["joint_name"], g["column_name"]) == (e["joint_name"], e["column_name"])
            assert same_number(e["value"], g["value"]) and same_number(e["baseline"], g["baseline"])


def test_energy_matches_lavender_scrub(tmp_path):
    log = kicked_log(tmp_path / "a.lvlog", at=40)
    expected = run_json("scrub", log.path, "--json")["energy"]
    got = log.energy()
    assert got == expected
    # The regain after a dip, beside the rise above the first (a regain from the first's
    # level is that rise, so it is never less in a finite run).
    assert {"max_regain", "max_regain_from_substep", "max_regain_substep"} <= got.keys()
    assert got["max_regain"] >= got["max_rise"]
    assert got["first"] == log[0].total_energy and got["last"] == log[-1].total_energy


def test_diff_matches_lavender_diff(tmp_path):
    a = kicked_log(tmp_path / "a.lvlog", at=40)
    b = kicked_log(tmp_path / "b.lvlog", at=40, velocity=1e-3)
    for options, kwargs in (([], {}), (["--atol", "1e-4"], dict(atol=1e-4))):
        expected = run_json("diff", a.path, b.path, "--json", *options)
        got = a.diff(b, **kwargs)
        for key in ("identical", "first_divergent_substep", "where", "frames_compared",
                    "frames_a", "frames_b", "scene_hash_mismatch", "substep_lengths",
                    "substep_lengths_differ", "first_common_substep", "last_common_substep",
                    "reason"):
            assert got[key] == expected[key], key
        assert got["max_deviation"]["value"] == pytest.approx(expected["max_deviation"]["value"])
        assert got["max_deviation"]["substep"] == expected["max_deviation"]["substep"]


def test_a_change_by_hand_while_recording_is_a_keyframe_and_resume_says_where_it_departs(
    tmp_path,
):
    # QA (2026-12-05): a velocity set while recording is not in the log, and a resume from
    # before it diverged there without a word.
    log = tmp_path / "kick.lvlog"
    sim = lavender.Sim("chain")
    sim.record(log)
    sim.run(1.0)  # 60 frames: substeps 0..239
    sim.set_body_velocity("chain.link50", linear=[0.0, 5.0, 0.0])
    sim.run(0.5)
    sim.stop_recording()
    kicked = lavender.Log(log).frame_at_substep(240)
    assert kicked.has_solver_state  # a keyframe right after the change (16 frames apart else)
    out = run_json("resume", log, "--from", 200, "--steps", 20, "--json")
    assert out["departed_at_substep"] == 240
    # From the keyframe after the change on, a resume reproduces the log bit for bit.
    again = tmp_path / "again.lvlog"
    out = run_json("resume", log, "--from", 240, "--record", again, "--json")
    assert out["departed_at_substep"] is None
    report = lavender.Log(log).diff(lavender.Log(again))
    assert report["identical"], report


def test_a_departure_at_a_non_finite_keyframe_does_not_recommend_resuming_from_it(tmp_path):
    # QA (2026-12-06): a change by hand that made the next substep non-finite left a keyframe
    # there, and the resume note recommended `--from` it, which fails.
    log = tmp_path / "nf.lvlog"
    sim = lavender.Sim("chain")
    sim.record(log)
    sim.run(0.5)  # substeps 0..119
    sim.set_body_velocity(50, [1e38, 1e38, 0], [0, 0, 1e38])
    with pytest.raises(lavender.NonFiniteError):
        sim.step()
    sim.stop_recording()
    last = lavender.Log(log)[-1]
    assert last.substep == 120 and last.has_solver_state
    done = subprocess.run(
        [cli(), "resume", str(log), "--from", "100", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["departed_at_substep"] == 120
    assert "departs from the log at substep 120" in done.stderr
    assert "--from 120" not in done.stderr, done.stderr
