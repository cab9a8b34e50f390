#!/usr/bin/env python3
"""Experiment 3 of the constraints chapter: sweep the frame timestep and the iterations.

Scene (as the Rust tutorial's ``sweep`` experiment): a chain of 8 boxes, each 0.2 m long,
1 kg except a 10 kg tip, hinged about +z from a static ground and falling under gravity.
Before the first step every link is twisted about +y by alternately +0.2 and -0.2 rad:
neighbouring hinge axes disagree by 0.4 rad and the anchors separate. This deliberately
inconsistent start is what the solver must repair.

Grid: frame dt in {1/30, 1/60, 1/120, 1/240} s by velocity iterations in {4, 8, 16, 32}.
Every cell runs the same simulated time and reads the diagnostics after *every substep*
through a zero-copy view (``constraint_data(copy=False)``), stepping one substep at a time
(a step of dt/n runs exactly one of the n substeps of a dt frame), and keeps the worst anchor
error (column 3) and angular error (column 4) over the run and the final values.

What it shows: the engine caps substeps at 1/240 s, so every frame dt of the grid runs the
very same 1/240 s substeps and the rows agree exactly: comparing frame dts without knowing
the substeps would misread this. More iterations reduce both residual maxima. The maxima
come in the first substeps (the repair of the twist) while the final errors are much
smaller: measuring only the final error would miss the early spike.

Writes sweep.png (two heatmaps) and sweep.json to --out. --quick runs 1 s per cell
instead of 4 s.
"""

import argparse
import json
import math
import pathlib
import sys

import numpy as np

import lavender

DTS = [("1/30", 1 / 30), ("1/60", 1 / 60), ("1/120", 1 / 120), ("1/240", 1 / 240)]
ITERATIONS = [4, 8, 16, 32]
LINKS, LINK_LENGTH, LINK_MASS, TIP_MASS, TWIST = 8, 0.2, 1.0, 10.0, 0.2


def build(iterations):
    builder = lavender.SceneBuilder("twisted 8-link chain").body("ground", kind="static")
    previous = "ground"
    for i in range(LINKS):
        builder.body(
            f"link{i}",
            position=[LINK_LENGTH * (i + 0.5), 0, 0],
            mass=TIP_MASS if i == LINKS - 1 else LINK_MASS,
            box=[LINK_LENGTH / 2, 0.02, 0.02],
        )
        builder.revolute(
            f"hinge{i}",
            previous,
            f"link{i}",
            anchor_a=[0, 0, 0] if i == 0 else [LINK_LENGTH / 2, 0, 0],
            anchor_b=[-LINK_LENGTH / 2, 0, 0],
            axis=[0, 0, 1],
        )
        previous = f"link{i}"
    sim = builder.build(velocity_iterations=iterations)
    for i in range(LINKS):
        angle = TWIST if i % 2 == 0 else -TWIST
        sim.set_body_pose(f"link{i}", rotation=[0, math.sin(angle / 2), 0, math.cos(angle / 2)])
    return sim


def run_cell(dt, iterations, duration):
    sim = build(iterations)
    n = sim.substeps_for(dt)
    h = dt / n
    view = sim.constraint_data(copy=False)  # zero-copy: always the latest substep
    initial = view.max(axis=0)
    frames = round(duration / dt)
    anchor, angular = [], []
    for _ in range(frames * n):
        sim.step(h)  # exactly one substep of the dt frame
        if not np.isfinite(view).all():
            raise FloatingPointError(f"dt {dt}, {iterations} iterations: non-finite diagnostics")
        anchor.append(view[:, 3].max())
        angular.append(view[:, 4].max())
    anchor, angular = np.array(anchor), np.array(angular)
    return {
        "dt": dt,
        "iterations": iterations,
        "substeps_per_frame": n,
        "initial_anchor_error": float(initial[3]),
        "initial_angular_error": float(initial[4]),
        "max_anchor_error": float(anchor.max()),
        "max_anchor_substep": int(anchor.argmax()),
        "max_angular_error": float(angular.max()),
        "max_angular_substep": int(angular.argmax()),
        "final_anchor_error": float(anchor[-1]),
        "final_angular_error": float(angular[-1]),
        "total_substeps": int(anchor.size),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 s per cell instead of 4 s")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("out/python/sweep"))
    parser.add_argument("--no-plot", action="store_true", help="skip the figure")
    args = parser.parse_args(argv)

    duration = 1.0 if args.quick else 4.0
    cells = [[run_cell(dt, it, duration) for it in ITERATIONS] for _, dt in DTS]
    anchor = np.array([[c["max_anchor_error"] for c in row] for row in cells])
    angular = np.array([[c["max_angular_error"] for c in row] for row in cells])

    print(f"max anchor error (m) / max angular error (rad) over {duration} s, per substep")
    print("dt \\ iterations " + "".join(f"{it:>22}" for it in ITERATIONS))
    for (label, _), row in zip(DTS, cells):
        print(f"{label:>6} ({row[0]['substeps_per_frame']} sub)   "
              + "".join(f"{c['max_anchor_error']:>11.3e}/{c['max_angular_error']:<10.3e}" for c in row))

    # Every dt runs 1/240 s substeps, so the rows are the same run.
    for row in anchor[1:]:
        np.testing.assert_array_equal(row, anchor[0])
    for row in angular[1:]:
        np.testing.assert_array_equal(row, angular[0])
    # More iterations, smaller maxima.
    assert np.all(np.diff(anchor[0]) <= 0) and anchor[0, -1] < anchor[0, 0], anchor[0]
    assert np.all(np.diff(angular[0]) <= 0) and angular[0, -1] < angular[0, 0], angular[0]
    # The maxima are early spikes: a final-only measurement would miss them.
    for c in (c for row in cells for c in row):
        assert c["max_anchor_substep"] < 0.1 * c["total_substeps"]
        assert c["final_anchor_error"] < 0.1 * c["max_anchor_error"]

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sweep.json").write_text(json.dumps({"duration_s": duration, "cells": cells}, indent=2))
    if not args.no_plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import LogNorm
        from matplotlib.ticker import FormatStrFormatter

        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, data, title, unit in (
            (axes[0], anchor, "max anchor error", "m"),
            (axes[1], angular, "max angular error", "rad"),
        ):
            image = ax.imshow(data, cmap="viridis", norm=LogNorm(), origin="upper")
            ax.set_xticks(range(len(ITERATIONS)), [str(i) for i in ITERATIONS])
            ax.set_yticks(range(len(DTS)), [label for label, _ in DTS])
            ax.set(xlabel="velocity iterations", ylabel="frame dt (s)", title=f"{title} ({unit})")
            for (i, j), value in np.ndenumerate(data):
                # Black on the light cells, white on the dark (WCAG relative luminance).
                rgb = np.array(image.cmap(image.norm(value))[:3])
                linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
                color = "k" if linear @ [0.2126, 0.7152, 0.0722] > 0.179 else "w"
                ax.text(j, i, f"{value:.2e}", ha="center", va="center", color=color, fontsize=9)
            bar = fig.colorbar(image, ax=ax, shrink=0.85)
            # One format for every tick (a narrow range is labelled at minor ticks).
            for axis_ticks in (bar.ax.yaxis.set_major_formatter, bar.ax.yaxis.set_minor_formatter):
                axis_ticks(FormatStrFormatter("%.2e"))
        fig.suptitle("twisted 8-link chain: worst residual over every substep (darker is smaller)")
        fig.tight_layout()
        fig.savefig(args.out / "sweep.png", dpi=100)
        plt.close(fig)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
