"""Shared helpers of the Python tests (the module is installed with
``python3 -m pip install ./tools/python``)."""

import numpy as np
import pytest

import lavender

# float32 arithmetic on coordinates of order 1 m.
F32_TOL = 1e-6


def hinge_scene(gravity=(0.0, 0.0, 0.0)):
    """The text's Experiment 2 scene: a static ground and a 1 kg arm at (1, 0, 0) m joined
    by a revolute joint about +z with coincident anchors."""
    return (
        lavender.SceneBuilder(gravity=list(gravity))
        .body("ground", kind="static")
        .body("arm", position=[1.0, 0.0, 0.0], mass=1.0)
        .revolute("hinge", "ground", "arm", anchor_b=[-1.0, 0.0, 0.0], axis=[0.0, 0.0, 1.0])
    )


@pytest.fixture
def hinge():
    return hinge_scene().build()


def substep_history(sim, frames, dt=None):
    """Steps ``frames`` frames of one substep each and returns the diagnostics after each."""
    dt = sim.settings["max_substep"] if dt is None else dt
    out = []
    for _ in range(frames):
        assert sim.step(dt) == 1
        out.append(sim.constraint_data())
    return np.stack(out)
