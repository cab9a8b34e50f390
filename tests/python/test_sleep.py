"""Island sleeping from Python: the four sleep settings as keywords, the sleep queries, the
rest timers and ``wake_all``."""

import math

import numpy as np
import pytest

import lavender

SUBSTEP = 1 / 240  # the default max_substep: one substep per frame below


def resting_pendulum(angle=0.0, **settings):
    """A 1 kg cube (0.1 m side) 1 m below a static pivot on a revolute hinge about +z,
    released from rest ``angle`` rad off vertical. At ``angle=0`` it hangs straight down and
    nothing moves, so its rest timer grows from the first substep; at 1e-3 rad it swings with
    peak speeds of about 3 mm/s and 3 mrad/s, below the default thresholds. (The shipped
    ``pendulum`` is released from 0.1 rad and keeps swinging.)"""
    return (
        lavender.SceneBuilder(gravity=[0.0, -9.81, 0.0])
        .body("pivot", kind="static")
        .body(
            "bob",
            position=[math.sin(angle), -math.cos(angle), 0.0],
            rotation=[0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)],
            mass=1.0,
            box=[0.05, 0.05, 0.05],
        )
        .revolute(
            "hinge",
            "pivot",
            "bob",
            anchor_b=[0.0, 1.0, 0.0],
            axis=[0.0, 0.0, 1.0],
            reference_rotation=[0.0, 0.0, 0.0, 1.0],
        )
        .build(**settings)
    )


def step_until_asleep(sim, limit=1.0):
    """Steps single substeps until the bob sleeps or ``limit`` seconds pass; returns the
    simulation time at which it was first seen asleep (None if it never slept)."""
    while sim.time < limit - 1e-9:
        sim.step(SUBSTEP)
        if sim.is_body_sleeping("bob"):
            return sim.time
    return None


def test_default_settings_do_not_sleep():
    sim = resting_pendulum()
    s = sim.settings
    assert s["sleeping"] is False
    assert (s["sleep_linear_speed"], s["sleep_angular_speed"], s["time_to_sleep"]) == pytest.approx(
        (0.05, 0.05, 0.5)
    )
    assert step_until_asleep(sim) is None
    assert sim.sleeping_body_count == 0 and sim.sleeping_island_count == 0
    timers = sim.sleep_timers()
    assert timers.dtype == np.float32 and timers.shape == (2,)
    assert not timers.any(), "no timers with sleeping off"


def test_resting_pendulum_falls_asleep_after_time_to_sleep():
    sim = resting_pendulum(sleeping=True)
    assert sim.settings["sleeping"] is True
    assert not sim.is_body_sleeping("bob") and sim.sleeping_body_count == 0
    asleep_at = step_until_asleep(sim)
    print(f"resting pendulum asleep at t = {asleep_at!r} s")
    assert asleep_at is not None, "asleep within 1 s"
    assert 0.45 <= asleep_at <= 0.55
    # Finish the first second: still asleep, one body, one island.
    while sim.time < 1.0 - 1e-9:
        sim.step(SUBSTEP)
    assert sim.is_body_sleeping("bob") and sim.is_body_sleeping(1)
    assert not sim.is_body_sleeping("pivot"), "static bodies never sleep"
    assert (sim.sleeping_body_count, sim.sleeping_island_count) == (1, 1)
    timers = sim.sleep_timers()
    assert timers[0] == 0.0 and timers[1] >= 0.5
    v, w = sim.body_velocity("bob")
    assert not v.any() and not w.any(), "a sleeping body's velocities are zeroed"


def test_sleeping_pose_is_bit_identical_and_wake_all_wakes():
    # 1 mrad off vertical: awake, the bob keeps swinging (slowly enough to count as resting).
    awake = resting_pendulum(angle=1e-3, dt=1 / 60)
    awake.run(1.0)
    poses = awake.poses().tobytes()
    awake.run(0.25)
    assert awake.poses().tobytes() != poses, "with sleeping off the bob still moves"
    sim = resting_pendulum(angle=1e-3, sleeping=True, dt=1 / 60)
    sim.run(1.0)
    assert sim.sleeping_body_count == 1
    poses = sim.poses().tobytes()
    timers = sim.sleep_timers().tobytes()
    for _ in range(60):
        sim.step()
        assert sim.poses().tobytes() == poses
    assert sim.sleep_timers().tobytes() == timers, "timers freeze while asleep"
    sim.wake_all()
    assert not sim.is_body_sleeping("bob")
    assert (sim.sleeping_body_count, sim.sleeping_island_count) == (0, 0)
    assert not sim.sleep_timers().any(), "waking resets the timers"
    sim.step()
    assert not sim.is_body_sleeping("bob"), "awake again for at least time_to_sleep"
    assert 0 < sim.sleep_timers()[1] < 0.5
    assert sim.poses().tobytes() != poses, "awake, it swings again"
    sim.run(1.0)
    assert sim.is_body_sleeping("bob"), "and back asleep"


def test_turning_gravity_wakes_a_sleeping_island():
    # QA (2026-12-06): a sleeping pendulum stayed hanging straight down when gravity turned
    # sideways; it now wakes and swings toward +x.
    sim = resting_pendulum(sleeping=True, dt=1 / 60)
    sim.run(1.0)
    assert sim.sleeping_body_count == 1
    sim.set_settings(gravity=[5.0, 0.0, 0.0])
    assert sim.sleeping_body_count == 0
    sim.run(0.5)
    x = float(sim.poses()[1, 0])
    assert x > 0.3, x


def test_sleep_settings_are_keywords_everywhere():
    sim = resting_pendulum(sleeping=True, time_to_sleep=0.25, sleep_linear_speed=0.1)
    s = sim.settings
    assert (s["sleeping"], s["time_to_sleep"], s["sleep_linear_speed"]) == (
        True,
        pytest.approx(0.25),
        pytest.approx(0.1),
    )
    asleep_at = step_until_asleep(sim)
    assert asleep_at is not None and 0.2 <= asleep_at <= 0.3
    sim.set_settings(sleeping=False, sleep_angular_speed=0.02)
    assert sim.settings["sleeping"] is False
    assert sim.settings["sleep_angular_speed"] == pytest.approx(0.02)
    toml = lavender.Sim.from_toml(sim.scene_toml(), sleeping=True, time_to_sleep=2.0)
    assert toml.settings["sleeping"] is True and toml.settings["time_to_sleep"] == 2.0
    # The scene's [world] table sets them too (SceneBuilder(world=...) passes them through).
    built = lavender.SceneBuilder(sleeping=True, time_to_sleep=0.75).body("a").build()
    assert built.settings["sleeping"] is True and built.settings["time_to_sleep"] == 0.75


@pytest.mark.parametrize(
    "settings, match",
    [
        ({"time_to_sleep": 0}, "time_to_sleep.*greater than zero"),
        ({"time_to_sleep": float("inf")}, "time_to_sleep"),
        ({"sleep_linear_speed": -1}, "sleep_linear_speed.*m/s"),
        ({"sleep_angular_speed": float("nan")}, "sleep_angular_speed.*rad/s"),
        ({"sleeping": "yes"}, "sleeping.*'yes'.*True or False"),
        ({"sleeping": 1}, "sleeping.*True or False"),
        ({"time_to_sleep": "1s"}, "time_to_sleep.*must be a number"),
    ],
)
def test_bad_sleep_settings_name_the_setting(settings, match):
    with pytest.raises(ValueError, match=match):
        resting_pendulum(**settings)
    sim = resting_pendulum(sleeping=True)
    with pytest.raises(ValueError, match=match):
        sim.set_settings(**settings)
    assert sim.settings["sleeping"] is True and sim.settings["time_to_sleep"] == 0.5, (
        "unchanged on error"
    )


def test_is_body_sleeping_rejects_unknown_bodies():
    sim = resting_pendulum(sleeping=True)
    with pytest.raises(ValueError, match="nobody"):
        sim.is_body_sleeping("nobody")
    with pytest.raises(ValueError, match="out of range"):
        sim.is_body_sleeping(2)
    with pytest.raises(TypeError, match="time_to_slep"):
        lavender.Sim("pendulum", time_to_slep=1.0)


def test_readme_sleeping_example_runs():
    import pathlib
    import textwrap

    section = pathlib.Path(__file__).resolve().parents[2] / "tools" / "python" / "README-section.md"
    text = section.read_text().split("Island sleeping", 1)[1]
    example = textwrap.dedent(text.split("```python\n", 1)[1].split("```", 1)[0])
    exec(compile(example, "README-section.md", "exec"), {"lavender": lavender})
