#!/usr/bin/env python3
"""Paw-check 6 of the constraints chapter: publish anchor-error vectors as browser overlays.

Runs the shipped 100-link chain released horizontally and captures every frame into a
``lavender.overlay.Overlay`` with two layers defined here in Python:

* ``anchor error``: every joint's anchor-error vector (columns 0 to 2 of
  ``constraint_data()``), 100 times its length, from its anchor on body A;
* ``worst five``: a layer of our own, the five joints with the largest anchor error in the
  frame, 100 times their error, drawn over the first in another colour.

Writes anchor_overlay.html (open it in any browser: a frame slider, play, hover an arrow for
its joint and value) and anchor_overlay.json (what was checked) to --out. The example checks
itself: every arrow is the diagnostics' vector times the scale, starting at the anchor
``joint_anchors()`` reports, and that anchor plus the error is the anchor on body B.
--quick captures 0.25 s instead of 2 s.
"""

import argparse
import json
import pathlib
import sys

import numpy as np

import lavender
from lavender.overlay import Arrow, Layer, Overlay, anchor_errors

SCALE = 100.0


def worst_five(frame):
    """A Python-defined layer: the five largest anchor errors of the frame."""
    diagnostics, starts = frame["diagnostics"], frame["anchors_a"]
    worst = np.argsort(diagnostics[:, 3])[-5:][::-1]
    return [
        Arrow(tuple(map(float, starts[j])), tuple(map(float, diagnostics[j, :3] * SCALE)), int(j))
        for j in worst
    ]


def check(overlay):
    """Every anchor-error arrow is the diagnostics' vector times SCALE from anchor A, and
    anchor A plus the error is anchor B (to float32 rounding)."""
    worst_gap, largest = 0.0, 0.0
    for frame in overlay.frames:
        arrows = frame["arrows"]["anchor error"]
        assert len(arrows) == len(frame["diagnostics"]), "one arrow per joint"
        for arrow in arrows:
            j = arrow.joint
            error = frame["diagnostics"][j, :3].astype(np.float64)
            np.testing.assert_allclose(arrow.vector, error * SCALE, rtol=1e-6, atol=1e-12)
            np.testing.assert_allclose(arrow.start, frame["anchors_a"][j], rtol=0, atol=1e-6)
            gap = frame["anchors_b"][j] - frame["anchors_a"][j] - error
            worst_gap = max(worst_gap, float(np.abs(gap).max()))
            largest = max(largest, float(np.linalg.norm(error)))
        assert len(frame["arrows"]["worst five"]) == 5
    # Both anchors are computed from the same f32 poses the diagnostics read; they agree to
    # the rounding of positions of about 10 m.
    assert worst_gap < 1e-5, worst_gap
    return worst_gap, largest


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.25 s instead of 2 s")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("out/anchor_overlay"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    sim = lavender.Sim("chain")
    overlay = Overlay(
        sim,
        [
            anchor_errors(scale=SCALE),
            Layer(
                "worst five",
                worst_five,
                colour="darkorange",
                description=f"the five largest anchor errors x {SCALE:g}",
            ),
        ],
    )
    overlay.capture()
    frames = round((0.25 if args.quick else 2.0) / sim.frame_dt)
    for _ in range(frames):
        sim.step()
        overlay.capture()
    gap, largest = check(overlay)
    page = overlay.write_html(args.out / "anchor_overlay.html", title="100-link chain: anchor errors x 100")
    report = {
        "scene": "chain",
        "frames": len(overlay.frames),
        "joints": sim.joint_count,
        "scale": SCALE,
        "largest_anchor_error_m": largest,
        "anchor_b_minus_a_minus_error_max_m": gap,
        "page": str(page),
    }
    (args.out / "anchor_overlay.json").write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"{len(overlay.frames)} frames of {sim.joint_count} joints; largest anchor error "
        f"{largest:.3e} m; |(anchor B - anchor A) - columns 0-2| at most {gap:.1e} m "
        f"(the overlay's vectors are the diagnostics)\nwrote {page}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
