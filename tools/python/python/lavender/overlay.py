"""Browser overlays of joint diagnostics, defined in Python.

The chapter's last paw-check: publish anchor-error vectors as overlays a browser draws. An
:class:`Overlay` captures a :class:`lavender.Sim` frame by frame (bodies, joint anchors, the
eight diagnostic columns) and evaluates its layers in Python at each capture: a layer is a
name, a colour and a function from one captured frame to arrows (start point and vector, in
metres, and the joint they belong to). :meth:`Overlay.write_html` writes one self-contained
HTML page (no server, no network, no dependencies) that draws the bodies, the joints and every
layer's arrows in SVG, with a frame slider and a play button.

>>> import lavender
>>> from lavender.overlay import Overlay, anchor_errors
>>> sim = lavender.Sim("pendulum")
>>> overlay = Overlay(sim, [anchor_errors(scale=1e4)])
>>> for _ in range(3):
...     _ = sim.step()
...     _ = overlay.capture()
>>> len(overlay.frames)
3
"""

import html
import json
import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

__all__ = ["Arrow", "Layer", "Overlay", "anchor_errors", "PLANES"]

#: The drawing planes: which two world axes go right and up on the page.
PLANES = {"xy": (0, 1), "xz": (0, 2), "zy": (2, 1)}


@dataclass(frozen=True)
class Arrow:
    """One arrow of a layer: from ``start`` (m, world) along ``vector`` (m, already scaled),
    for joint ``joint`` (index, or -1 for none)."""

    start: Tuple[float, float, float]
    vector: Tuple[float, float, float]
    joint: int = -1


@dataclass(frozen=True)
class Layer:
    """A named set of arrows, drawn in ``colour`` (any CSS colour). ``arrows`` maps one captured
    frame (a dict: ``time``, ``positions`` (bodies, 3), ``anchors_a`` and ``anchors_b``
    (joints, 3), ``diagnostics`` (joints, 8), ``joint_names``) to the arrows to draw."""

    name: str
    arrows: Callable[[Dict[str, Any]], Sequence[Arrow]]
    colour: str = "crimson"
    description: str = ""


def anchor_errors(
    scale: float = 10.0,
    joints: Optional[Sequence[int]] = None,
    min_norm: float = 0.0,
    colour: str = "crimson",
) -> Layer:
    """The anchor-error vectors (columns 0 to 2) as arrows from each joint's anchor on body A,
    ``scale`` times their length, for ``joints`` (default: all) whose anchor error norm
    (column 3) is at least ``min_norm`` m."""
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale = {scale}: must be a finite number > 0")
    if not (math.isfinite(min_norm) and min_norm >= 0):
        raise ValueError(f"min_norm = {min_norm}: must be a finite number >= 0")
    if joints is not None:
        joints = list(joints)
        for j in joints:
            # bool is an int subclass, and never meant as an index.
            if isinstance(j, bool) or not isinstance(j, (int, np.integer)):
                raise TypeError(
                    f"joints: {j!r} is not a joint index (an int; -1 is the last joint); "
                    "sim.joint_names lists the joints in index order"
                )

    def arrows(frame: Dict[str, Any]) -> List[Arrow]:
        diagnostics, starts = frame["diagnostics"], frame["anchors_a"]
        count = len(diagnostics)
        if joints is None:
            chosen = range(count)
        else:
            # As the rest of the API: a negative index counts from the end (QA, 2026-12-06:
            # -7 of one joint drew joint 0, 5 raised NumPy's IndexError).
            chosen = []
            for j in joints:
                if not -count <= j < count:
                    raise ValueError(
                        f"joints: joint {int(j)} is out of range for {count} joints "
                        f"(0 to {count - 1}, or -{count} to -1 from the end)"
                    )
                chosen.append(int(j) % count)
        out = []
        for j in chosen:
            if diagnostics[j, 3] >= min_norm:
                error = diagnostics[j, 0:3].astype(np.float64) * scale
                out.append(Arrow(tuple(map(float, starts[j])), tuple(map(float, error)), int(j)))
        return out

    return Layer(
        name="anchor error",
        arrows=arrows,
        colour=colour,
        description=f"anchor error x {scale:g} (columns 0 to 2, from the anchor on body A)",
    )


def _checked(layer: str, time: float, arrow: Any, joints: int) -> Arrow:
    """``arrow`` with plain floats and int (NumPy scalars and arrays are taken), or an error
    naming the layer, the time and what is wrong."""
    where = f"layer {layer!r} at t = {time:.6g} s"
    if not isinstance(arrow, Arrow):
        raise TypeError(f"{where} returned {arrow!r}, not an Arrow")
    try:
        start = tuple(float(x) for x in arrow.start)
        vector = tuple(float(x) for x in arrow.vector)
        joint = int(arrow.joint)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: {arrow} is not two 3-vectors of numbers and a joint index ({error})") from None
    if len(start) != 3 or len(vector) != 3 or not all(math.isfinite(v) for v in start + vector):
        raise ValueError(f"{where}: arrow of joint {joint} is not two finite 3-vectors: {arrow}")
    if not -1 <= joint < joints:
        raise ValueError(f"{where}: joint {joint} is out of range (0 to {joints - 1}, or -1 for none)")
    return Arrow(start, vector, joint)


class Overlay:
    """Frames of a run with the arrows of ``layers``, for a browser page.

    Each capture keeps copies of the Sim's positions, anchors and diagnostics (about 100
    bytes per joint): for a long run of a large scene, capture every n-th frame.

    ``plane`` is the page's plane (``"xy"``, ``"xz"`` or ``"zy"``). Call :meth:`capture` after
    the steps to show (each capture evaluates every layer on the Sim's current state), then
    :meth:`write_html`."""

    def __init__(self, sim, layers: Sequence[Layer], plane: str = "xy"):
        if plane not in PLANES:
            raise ValueError(f"plane = {plane!r}: one of {', '.join(PLANES)}")
        if not layers:
            raise ValueError("an overlay needs at least one layer")
        names = [layer.name for layer in layers]
        if len(set(names)) != len(names):
            raise ValueError(f"layer names must differ: {names}")
        self.sim = sim
        self.layers = list(layers)
        self.plane = plane
        self.frames: List[Dict[str, Any]] = []

    def capture(self) -> Dict[str, Any]:
        """Captures the Sim's current state and evaluates every layer on it; returns the
        captured frame (with ``arrows``: layer name -> list of :class:`Arrow`)."""
        sim = self.sim
        anchors_a, anchors_b = sim.joint_anchors()
        frame = {
            "time": sim.time,
            "substep": sim.substeps_done,
            "positions": sim.positions(),
            "anchors_a": anchors_a,
            "anchors_b": anchors_b,
            "diagnostics": sim.constraint_data(),
            "joint_names": sim.joint_names,
        }
        joints = sim.joint_count
        arrows = {}
        for layer in self.layers:
            drawn = layer.arrows(frame)
            try:
                drawn = list(drawn)
            except TypeError:
                # QA (2026-12-06): a layer returning None failed with a bare "'NoneType'
                # object is not iterable".
                raise TypeError(
                    f"layer {layer.name!r} at t = {frame['time']:.6g} s returned {drawn!r}, "
                    "not a list of Arrow"
                ) from None
            arrows[layer.name] = [
                _checked(layer.name, frame["time"], arrow, joints) for arrow in drawn
            ]
        frame["arrows"] = arrows
        self.frames.append(frame)
        return frame

    def to_json(self) -> Dict[str, Any]:
        """What the page draws: the plane's two coordinates of every point, per frame; each
        frame's ``arrows`` is one list per layer, in the order of ``layers``, of
        ``[x, y, dx, dy, joint]``."""
        if not self.frames:
            raise ValueError("nothing captured: call capture() after the steps to show")
        u, v = PLANES[self.plane]

        def xy(p):
            return [round(float(p[u]), 7), round(float(p[v]), 7)]

        return {
            "plane": self.plane,
            "joint_names": list(self.sim.joint_names),
            "joint_bodies": [list(pair) for pair in self.sim.joint_bodies],
            "layers": [
                {"name": l.name, "colour": l.colour, "description": l.description}
                for l in self.layers
            ],
            "frames": [
                {
                    "time": f["time"],
                    "substep": f["substep"],
                    "bodies": [xy(p) for p in f["positions"]],
                    "anchors": [xy(p) for p in f["anchors_a"]],
                    # One list per layer, in the order of `layers` (not keyed by name: a layer
                    # named `__proto__` would not survive as a JavaScript object key).
                    "arrows": [
                        [
                            [*xy(a.start), round(a.vector[u], 9), round(a.vector[v], 9), a.joint]
                            for a in f["arrows"][layer.name]
                        ]
                        for layer in self.layers
                    ],
                }
                for f in self.frames
            ],
        }

    def write_html(self, path: Union[str, "os.PathLike[str]"], title: str = "Lavender overlay") -> str:
        """Writes the page to ``path`` (``.html``); returns the path written."""
        path = os.fsdecode(os.fspath(path))
        if not isinstance(title, str):
            raise TypeError(f"title must be a string, got {title!r}")
        if not path.lower().endswith((".html", ".htm")):
            raise ValueError(f"{path}: an overlay page is written to a .html file")
        data = json.dumps(self.to_json(), separators=(",", ":"))
        # No `<` at all inside the script element: `</script` would end it and `<!--` with
        # `<script` would put the parser in a state where the real `</script>` does not.
        data = data.replace("<", "\\u003c")
        page = _PAGE.replace("{{TITLE}}", html.escape(title)).replace("{{DATA}}", data)
        with open(path, "w", encoding="utf-8") as out:
            out.write(page)
        return path


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{TITLE}}</title>
<style>
body{font:14px sans-serif;margin:1em}svg{border:1px solid #ccc;background:#fff}
#legend span{display:inline-block;width:1.5em;height:.3em;margin:0 .3em .2em 1em;vertical-align:middle}
</style></head><body>
<h3>{{TITLE}}</h3>
<div><button id="play">play</button> <input id="frame" type="range" min="0" value="0" style="width:60%">
<span id="label"></span></div>
<div id="legend"></div>
<svg id="view" width="900" height="600"></svg>
<script>
const data = {{DATA}};
const svg = document.getElementById("view"), slider = document.getElementById("frame");
const NS = "http://www.w3.org/2000/svg";
slider.max = data.frames.length - 1;
// One view box for the whole run: every body and arrow end of every frame fits.
let lo = [Infinity, Infinity], hi = [-Infinity, -Infinity];
const grow = (x, y) => { lo = [Math.min(lo[0], x), Math.min(lo[1], y)]; hi = [Math.max(hi[0], x), Math.max(hi[1], y)]; };
for (const f of data.frames) {
  for (const p of f.bodies) grow(p[0], p[1]);
  for (const drawn of f.arrows) for (const a of drawn) { grow(a[0], a[1]); grow(a[0] + a[2], a[1] + a[3]); }
}
// Nothing to draw (no bodies, no arrows): a unit view around the origin.
if (!(lo[0] <= hi[0])) { lo = [-1, -1]; hi = [1, 1]; }
const pad = 0.05 * Math.max(hi[0] - lo[0], hi[1] - lo[1], 1e-3);
const w = hi[0] - lo[0] + 2 * pad, h = hi[1] - lo[1] + 2 * pad;
// World y (or the plane's second axis) up: flip it.
svg.setAttribute("viewBox", `${lo[0] - pad} ${-hi[1] - pad} ${w} ${h}`);
const stroke = 0.004 * Math.max(w, h);
const legend = document.getElementById("legend");
for (const l of data.layers) {
  // Text and style set as data, never parsed as HTML.
  const swatch = document.createElement("span");
  swatch.style.background = l.colour;
  legend.appendChild(swatch);
  legend.appendChild(document.createTextNode(`${l.name}: ${l.description}`));
}
function el(tag, attrs) { const e = document.createElementNS(NS, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); return e; }
function draw(i) {
  const f = data.frames[i];
  svg.replaceChildren();
  data.joint_bodies.forEach(([a, b], j) => {
    const p = f.anchors[j];
    for (const body of [a, b]) {
      const q = f.bodies[body];
      svg.appendChild(el("line", {x1: q[0], y1: -q[1], x2: p[0], y2: -p[1], stroke: "#999", "stroke-width": stroke}));
    }
  });
  for (const q of f.bodies) svg.appendChild(el("circle", {cx: q[0], cy: -q[1], r: 1.5 * stroke, fill: "#333"}));
  data.layers.forEach((l, k) => {
    for (const a of f.arrows[k]) {
      const line = el("line", {x1: a[0], y1: -a[1], x2: a[0] + a[2], y2: -(a[1] + a[3]), stroke: l.colour, "stroke-width": stroke});
      const name = a[4] >= 0 ? data.joint_names[a[4]] : "";
      line.appendChild(el("title", {})).textContent = `${l.name} ${name}: (${a[2].toExponential(3)}, ${a[3].toExponential(3)})`;
      svg.appendChild(line);
    }
  });
  document.getElementById("label").textContent = `frame ${i + 1} of ${data.frames.length}, t = ${f.time.toFixed(4)} s, substep ${f.substep}`;
}
slider.oninput = () => draw(+slider.value);
let timer = null;
document.getElementById("play").onclick = () => {
  if (timer) { clearInterval(timer); timer = null; return; }
  timer = setInterval(() => { slider.value = (+slider.value + 1) % data.frames.length; draw(+slider.value); }, 1000 / 30);
};
draw(0);
</script></body></html>
"""
