"""Browser overlays of anchor-error vectors (the chapter's sixth paw-check)."""

import json
import re

import numpy as np
import pytest

import lavender
from lavender.overlay import Arrow, Layer, Overlay, anchor_errors

ARM = """
[world]
gravity = [0.0, 0.0, 0.0]

[[body]]
name = "ground"
kind = "static"

[[body]]
name = "arm"
position = [1.0, 0.0, 0.0]
mass = 1.0
box = [0.05, 0.05, 0.05]

[[joint]]
name = "hinge"
kind = "revolute"
body_a = "ground"
body_b = "arm"
anchor_b = [-1.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
"""


def moved_arm():
    """The diagnostics experiment: the arm translated by [0.02, 0.03, 0] m, no time passed."""
    sim = lavender.Sim.from_toml(ARM)
    sim.set_body_pose("arm", [1.02, 0.03, 0.0])
    return sim


def test_joint_anchors_and_bodies_are_where_the_anchor_error_says():
    sim = moved_arm()
    on_a, on_b = sim.joint_anchors()
    assert on_a.shape == on_b.shape == (1, 3)
    np.testing.assert_allclose(on_a[0], [0.0, 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(on_b[0], [0.02, 0.03, 0.0], atol=1e-6)
    np.testing.assert_allclose(on_b - on_a, sim.constraint_data()[:, :3], atol=1e-6)
    assert sim.joint_bodies == [(0, 1)]


def test_the_anchor_error_layer_draws_the_hand_calculated_vector(tmp_path):
    sim = moved_arm()
    overlay = Overlay(sim, [anchor_errors(scale=10.0)])
    frame = overlay.capture()
    (arrow,) = frame["arrows"]["anchor error"]
    assert arrow.joint == 0
    np.testing.assert_allclose(arrow.start, [0.0, 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(arrow.vector, [0.2, 0.3, 0.0], rtol=1e-6)
    page = overlay.write_html(tmp_path / "arm.html", title="arm <moved>")
    text = open(page, encoding="utf-8").read()
    assert "arm &lt;moved&gt;" in text
    data = json.loads(re.search(r"const data = (\{.*?\});\n", text).group(1))
    assert data["joint_names"] == ["hinge"] and data["joint_bodies"] == [[0, 1]]
    x0, y0, dx, dy, joint = data["frames"][0]["arrows"]["anchor error"][0]
    assert (x0, y0, joint) == (0.0, 0.0, 0)
    assert dx == pytest.approx(0.2, rel=1e-6) and dy == pytest.approx(0.3, rel=1e-6)
    # The xz plane draws the x and z coordinates.
    side = Overlay(sim, [anchor_errors(scale=10.0)], plane="xz")
    side.capture()
    assert side.to_json()["frames"][0]["arrows"]["anchor error"][0][3] == pytest.approx(0.0)


def test_a_python_layer_sees_each_frame_and_bad_arrows_are_refused():
    sim = lavender.Sim("pendulum")
    seen = []

    def speeds(frame):
        seen.append(frame["time"])
        j = 0
        return [Arrow(tuple(frame["anchors_a"][j]), (float(frame["diagnostics"][j, 6]), 0.0, 0.0), j)]

    overlay = Overlay(sim, [Layer("speed", speeds, colour="navy")])
    for _ in range(3):
        sim.step()
        overlay.capture()
    assert seen == pytest.approx([1 / 60, 2 / 60, 3 / 60], rel=1e-6)
    nan = Overlay(sim, [Layer("nan", lambda f: [Arrow((0.0, 0.0, 0.0), (float("nan"), 0.0, 0.0), 0)])])
    with pytest.raises(ValueError, match="nan.*not two finite 3-vectors"):
        nan.capture()
    with pytest.raises(TypeError, match="not an Arrow"):
        Overlay(sim, [Layer("bad", lambda f: [(0, 0, 0)])]).capture()
    with pytest.raises(ValueError, match="plane"):
        Overlay(sim, [anchor_errors()], plane="yx")
    with pytest.raises(ValueError, match="scale"):
        anchor_errors(scale=0.0)
    with pytest.raises(ValueError, match="nothing captured"):
        Overlay(sim, [anchor_errors()]).to_json()
    with pytest.raises(ValueError, match=r"\.html"):
        overlay.write_html("page.png")
