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
    x0, y0, dx, dy, joint = data["frames"][0]["arrows"][0][0]
    assert (x0, y0, joint) == (0.0, 0.0, 0)
    assert dx == pytest.approx(0.2, rel=1e-6) and dy == pytest.approx(0.3, rel=1e-6)
    # The xz plane draws the x and z coordinates.
    side = Overlay(sim, [anchor_errors(scale=10.0)], plane="xz")
    side.capture()
    assert side.to_json()["frames"][0]["arrows"][0][0][3] == pytest.approx(0.0)


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


def test_joint_indices_follow_the_api_s_rules_and_bad_layers_say_which():
    # QA (2026-12-06): -7 of one joint drew joint 0, 5 raised NumPy's IndexError, a name a
    # TypeError about '<', and a layer returning None a bare "not iterable".
    sim = moved_arm()
    last = Overlay(sim, [anchor_errors(joints=[-1])]).capture()["arrows"]["anchor error"]
    assert [a.joint for a in last] == [0]
    for bad in ([-7], [5]):
        with pytest.raises(ValueError, match=r"joint -?\d+ is out of range for 1 joints"):
            Overlay(sim, [anchor_errors(joints=bad)]).capture()
    with pytest.raises(TypeError, match="'hinge' is not a joint index"):
        anchor_errors(joints=["hinge"])
    with pytest.raises(TypeError, match="layer 'none' at t = 0 s returned None"):
        Overlay(sim, [Layer("none", lambda f: None)]).capture()


def test_names_from_a_scene_or_a_layer_cannot_break_the_page(tmp_path):
    # A joint named `<!--<script>` once left the page's script unterminated; a layer named
    # `__proto__` blanked the drawing; layer text went into the legend as HTML.
    text = ARM.replace('name = "hinge"', 'name = "<!--<script>"')
    sim = lavender.Sim.from_toml(text)
    sim.set_body_pose("arm", [1.02, 0.03, 0.0])
    layers = [
        anchor_errors(scale=10.0),
        Layer("__proto__", lambda f: [], colour='red"><b>', description="<img src=x onerror=alert(1)>"),
    ]
    overlay = Overlay(sim, layers)
    overlay.capture()
    page = open(overlay.write_html(tmp_path / "names.html"), encoding="utf-8").read()
    script = page.split("<script>", 1)[1].rsplit("</script>", 1)[0]
    assert "<" not in script.split("const data = ", 1)[1].split(";\n", 1)[0]
    data = json.loads(re.search(r"const data = (\{.*?\});\n", page).group(1))
    assert data["joint_names"] == ["<!--<script>"]
    assert data["layers"][1]["name"] == "__proto__" and data["frames"][0]["arrows"][1] == []
    assert "insertAdjacentHTML" not in page and "innerHTML" not in page


def test_arrows_of_numpy_values_are_taken_and_bad_ones_refused_at_capture(tmp_path):
    sim = moved_arm()

    def numpy_arrow(frame):
        return [Arrow(frame["anchors_a"][0], frame["diagnostics"][0, :3] * np.float32(2.0), np.int64(0))]

    overlay = Overlay(sim, [Layer("numpy", numpy_arrow)])
    (arrow,) = overlay.capture()["arrows"]["numpy"]
    assert all(type(v) is float for v in arrow.start + arrow.vector) and type(arrow.joint) is int
    overlay.write_html(tmp_path / "numpy.html")
    for bad, match in [
        (Arrow((0.0, 0.0), (1.0, 0.0, 0.0, 0.0), 0), "not two finite 3-vectors"),
        (Arrow((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), 99), "joint 99 is out of range"),
        (Arrow((0.0, 0.0, 0.0), ("a", 0.0, 0.0), 0), "not two 3-vectors of numbers"),
    ]:
        with pytest.raises(ValueError, match=match):
            Overlay(sim, [Layer("bad", lambda f, bad=bad: [bad])]).capture()
    # -1 counts from the end, as in Python, and keeps the joint's index.
    (arrow,) = Overlay(sim, [anchor_errors(joints=[-1])]).capture()["arrows"]["anchor error"]
    assert arrow.joint == 0
    with pytest.raises(TypeError, match="title must be a string"):
        overlay.write_html(tmp_path / "t.html", title=None)
    assert overlay.write_html(bytes(tmp_path / "b.html")).endswith("b.html")


def test_a_scene_without_bodies_still_writes_a_page(tmp_path):
    sim = lavender.Sim.from_toml("[world]\n")
    overlay = Overlay(sim, [anchor_errors()])
    overlay.capture()
    page = open(overlay.write_html(tmp_path / "empty.html"), encoding="utf-8").read()
    assert "a unit view around the origin" in page
