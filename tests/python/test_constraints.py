"""The constraints chapter's checks, through the Python module."""

import math

import numpy as np
import pytest

import lavender
from conftest import F32_TOL, hinge_scene

OFFSET = np.array([0.02, 0.03, 0.0])


def perturb(sim):
    position, rotation = sim.body_pose("arm")
    sim.set_body_pose("arm", position + OFFSET, rotation)


def test_column_names_match_the_text():
    assert lavender.COLUMN_NAMES == (
        "anchor_error_x",
        "anchor_error_y",
        "anchor_error_z",
        "anchor_error_norm",
        "angular_error",
        "limit_violation",
        "anchor_relative_speed",
        "joint_coordinate",
    )
    assert len(lavender.COLUMN_UNITS) == lavender.COLUMN_COUNT == 8


@pytest.mark.parametrize("copy", [True, False])
def test_perturbation_reads_back_the_vector_and_its_norm(hinge, copy):
    assert hinge.constraint_data(copy=copy)[0, 3] == 0.0
    perturb(hinge)
    hinge.sync()
    data = hinge.constraint_data(copy=copy)
    assert data.shape == (1, 8) and data.dtype == np.float32
    np.testing.assert_allclose(data[0, :3], OFFSET, atol=F32_TOL)
    assert math.sqrt(0.02**2 + 0.03**2) == pytest.approx(0.0360555, abs=1e-7)
    assert data[0, 3] == pytest.approx(0.03606, abs=1e-5)
    assert data[0, 3] == pytest.approx(math.hypot(0.02, 0.03), abs=F32_TOL)
    # A pure translation: axes aligned, no limit, nothing moving, angle 0.
    np.testing.assert_allclose(data[0, 4:], 0.0, atol=F32_TOL)


def test_view_is_zero_copy_read_only_and_keeps_the_sim_alive():
    sim = hinge_scene().build()
    view = sim.constraint_data(copy=False)
    again = sim.constraint_data(copy=False)
    assert not view.flags.writeable and not view.flags.owndata
    # Both views read the engine's one buffer.
    assert view.__array_interface__["data"][0] == again.__array_interface__["data"][0]
    with pytest.raises(ValueError):
        view[0, 0] = 1.0
    with pytest.raises(ValueError):
        view.flags.writeable = True
    perturb(sim)
    del sim  # the view holds the Sim
    np.testing.assert_allclose(view[0, :3], OFFSET, atol=F32_TOL)


def test_view_changes_after_a_step_and_a_copy_does_not():
    sim = hinge_scene(gravity=(0.0, -9.81, 0.0)).build()
    view = sim.constraint_data(copy=False)
    copy = sim.constraint_data(copy=True)
    before = view.copy()
    sim.step(1 / 60)
    assert not np.array_equal(view, before), "the view shows the latest step"
    np.testing.assert_array_equal(copy, before)
    np.testing.assert_array_equal(view, sim.constraint_data())
    # The view follows a sync without a step too.
    perturb(sim)
    np.testing.assert_array_equal(view, sim.constraint_data())


def _limit_history(position_iterations):
    sim = lavender.Sim("limited-revolute", position_iterations=position_iterations)
    h = sim.settings["max_substep"]
    history = []
    for _ in range(int(round(sim.duration / h))):
        assert sim.step(h) == 1  # one substep per call: every substep is seen
        history.append(sim.constraint_data()[0])
    return np.array(history, dtype=np.float32)


def test_revolute_limit_shows_column_5_only_while_crossed():
    # Without projection (as the Rust test does) the impact overshoots the -0.6 rad stop.
    rows = _limit_history(position_iterations=0)
    lo, hi = np.float32(-0.6), np.float32(1.2)
    angle, violation = rows[:, 7], rows[:, 5]
    expected = np.maximum(np.maximum(lo - angle, angle - hi), np.float32(0.0))
    np.testing.assert_allclose(violation, expected, atol=1e-7)
    crossed = angle < lo
    assert crossed.any(), "the pendulum reaches the stop"
    assert np.all(violation[~crossed & (angle <= hi)] == 0.0), "zero inside the bounds"
    assert np.all(violation[crossed] > 0.0), "nonzero while crossed"
    first = int(np.argmax(crossed))
    assert violation[first : first + 40].max() > 1e-3
    # ... and the bias brings it back within 40 substeps.
    assert np.argmax(violation[first:] < 1e-4) < 40
    assert first > 0 and violation[:first].max() == 0.0


def test_revolute_limit_holds_with_default_projection():
    rows = _limit_history(position_iterations=2)
    assert rows[:, 5].max() < 1e-5
    assert rows[:, 7].min() == pytest.approx(-0.6, abs=1e-3)


@pytest.mark.parametrize("twist", [0.05, 0.3, 1.0, 2.5])
def test_spherical_has_no_angular_residual_fixed_reports_the_twist(twist):
    builder = lavender.SceneBuilder(gravity=[0, 0, 0])
    for kind in ("spherical", "fixed"):
        builder.body(f"{kind}-ground", kind="static").body(f"{kind}-body")
        builder.joint(f"{kind}-joint", kind, f"{kind}-ground", f"{kind}-body")
    sim = builder.build()
    q = [math.sin(twist / 2), 0.0, 0.0, math.cos(twist / 2)]  # about +x
    for kind in ("spherical", "fixed"):
        sim.set_body_pose(f"{kind}-body", [0, 0, 0], q)
    sim.sync()
    spherical, fixed = sim.constraint_data(copy=False)
    assert spherical[4] == 0.0
    assert fixed[4] == pytest.approx(twist, abs=1e-5)
    assert spherical[3] < 1e-6 and fixed[3] < 1e-6
    assert sim.joint_kinds == ["spherical", "fixed"]
