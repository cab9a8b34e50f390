#!/usr/bin/env python3
"""Experiment 1 of the constraints chapter: keep a particle on a circle.

A 1 kg particle on the unit circle starts at x0 = (1, 0) m with v0 = (0, 1) m/s, no
gravity (exact motion: uniform circular motion), semi-implicit Euler with dt = 0.01 s for
10 s. Four treatments of the constraint C(x) = 1/2 (x.x - r^2) = 0:

* unconstrained: the particle leaves along the tangent, |C| = t^2 / 2 = 50 m^2 at 10 s;
* multiplier: lambda from (J M^-1 J^T) lambda = -Jdot qdot - J M^-1 f bends the path, but
  the position error accumulates (|C| ~ 0.05 m^2 at 10 s);
* Baumgarte: the multiplier with Cddot + 2 alpha Cdot + beta^2 C = 0 (alpha 7.5, beta 5 1/s)
  keeps |C| bounded at about alpha v.v dt / beta^2 = 0.003 m^2;
* projection: the multiplier step, then x <- r x/|x| and v <- v - x (x.v)/r^2: |C| stays at
  floating-point precision (< 3e-16 m^2).

A fifth run does the same with Lavender through the Python module: a point-like body on a
1 m massless arm, held by a spherical joint at the origin; its anchor error (column 3 of
``constraint_data``) stays at float32 precision because the engine projects every substep.

Writes particle_circle.png (paths and |C| over time) and particle_circle.json to --out.
--quick, in the chapter's command, runs the same 10 s (the whole script takes under a second,
so the chapter's numbers hold for it: before 2026-12-08 it ran 2 s, |C| = 2 m^2 unconstrained).
"""

import argparse
import json
import math
import pathlib
import sys

import numpy as np

import lavender

RADIUS, MASS, DT = 1.0, 1.0, 0.01
ALPHA, BETA = 7.5, 5.0
X0, V0 = np.array([1.0, 0.0]), np.array([0.0, 1.0])


def residual(x):
    return 0.5 * (x @ x - RADIUS**2)


def multiplier(x, v, bias=0.0):
    """lambda from the Schur complement with J = x^T, M^-1 = I/m, f = 0."""
    effective = (x @ x) / MASS
    if not effective > 1e-300:
        raise ValueError(f"cannot compute a multiplier at |x| = {math.sqrt(x @ x)} m")
    return (-(v @ v) - bias) / effective


def simulate(treatment, steps):
    x, v = X0.copy(), V0.copy()
    path, c = [x.copy()], [residual(x)]
    for _ in range(steps):
        if treatment == "unconstrained":
            lam = 0.0
        elif treatment == "baumgarte":
            lam = multiplier(x, v, 2 * ALPHA * (x @ v) + BETA**2 * residual(x))
        else:
            lam = multiplier(x, v)
        v = v + (lam * x / MASS) * DT
        x = x + v * DT
        if treatment == "projection":
            norm = math.sqrt(x @ x)
            if norm < 1e-9 * RADIUS:
                raise ValueError("cannot project a position at the centre")
            x = x * (RADIUS / norm)
            v = v - x * (x @ v) / RADIUS**2
        if not np.all(np.isfinite(x)):
            raise FloatingPointError(f"{treatment}: non-finite position")
        path.append(x.copy())
        c.append(residual(x))
    return np.array(path), np.abs(np.array(c))


def simulate_lavender(steps):
    """The same particle in the engine: a spherical joint at the origin, anchor 1 m away."""
    sim = (
        lavender.SceneBuilder("particle on a unit circle", gravity=[0, 0, 0])
        .body("pivot", kind="static")
        .body(
            "particle",
            position=[RADIUS, 0, 0],
            linear_velocity=[0, 1, 0],
            mass=MASS,
            inertia=[1e-6, 1e-6, 1e-6],
        )
        .spherical("rod", "pivot", "particle", anchor_b=[-RADIUS, 0, 0])
        .build(dt=DT)
    )
    anchor = sim.constraint_data(copy=False)  # zero-copy: follows every step
    path, c, anchor_error = [sim.positions()[1, :2].astype(float)], [0.0], [float(anchor[0, 3])]
    for _ in range(steps):
        sim.step()
        x = sim.positions()[1, :2].astype(float)
        path.append(x)
        c.append(abs(residual(x)))
        anchor_error.append(float(anchor[0, 3]))
    return np.array(path), np.array(c), np.array(anchor_error)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the same 10 s run (the chapter's command)")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("out/python/particle_circle"))
    parser.add_argument("--no-plot", action="store_true", help="skip the figure")
    args = parser.parse_args(argv)

    steps = 1000
    t = np.arange(steps + 1) * DT
    runs = {name: simulate(name, steps) for name in ("unconstrained", "multiplier", "baumgarte", "projection")}
    lav_path, lav_c, lav_anchor = simulate_lavender(steps)

    final = {name: float(c[-1]) for name, (_, c) in runs.items()}
    peak = {name: float(c.max()) for name, (_, c) in runs.items()}
    print(f"{'treatment':<15} {'final |C| (m^2)':>16} {'max |C| (m^2)':>15}")
    for name in runs:
        print(f"{name:<15} {final[name]:>16.3g} {peak[name]:>15.3g}")
    print(f"{'lavender':<15} {lav_c[-1]:>16.3g} {lav_c.max():>15.3g}   (max anchor error {lav_anchor.max():.2g} m)")

    # The chapter's figures: > 32, 0.003 and < 3e-16 m^2.
    duration = steps * DT
    assert abs(final["unconstrained"] - duration**2 / 2) < 1e-9, final
    assert final["multiplier"] > 10 * final["baumgarte"]
    assert final["unconstrained"] > 32 and abs(final["baumgarte"] - 0.003) < 5e-4, final
    assert peak["projection"] < 3e-16, peak
    assert peak["projection"] < peak["baumgarte"] < peak["unconstrained"]
    assert lav_anchor.max() < 1e-5 and lav_c.max() < 1e-5, (lav_anchor.max(), lav_c.max())

    args.out.mkdir(parents=True, exist_ok=True)
    report = {
        "setup": {"radius_m": RADIUS, "mass_kg": MASS, "dt_s": DT, "steps": steps, "alpha": ALPHA, "beta": BETA},
        "final_abs_c": final,
        "max_abs_c": peak,
        "lavender": {"final_abs_c": float(lav_c[-1]), "max_abs_c": float(lav_c.max()),
                     "max_anchor_error_m": float(lav_anchor.max())},
    }
    (args.out / "particle_circle.json").write_text(json.dumps(report, indent=2))
    if not args.no_plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (ax_path, ax_c) = plt.subplots(1, 2, figsize=(11, 4.5))
        theta = np.linspace(0, 2 * np.pi, 200)
        ax_path.plot(np.cos(theta), np.sin(theta), "k--", lw=0.8, label="circle r = 1 m")
        for name, (path, c) in runs.items():
            ax_path.plot(path[:, 0], path[:, 1], label=name)
            ax_c.semilogy(t, np.maximum(c, 1e-17), label=name)
        ax_path.plot(lav_path[:, 0], lav_path[:, 1], ":", label="lavender")
        ax_c.semilogy(t, np.maximum(lav_c, 1e-17), ":", label="lavender")
        ax_path.set(xlim=(-2, 2), ylim=(-1.5, 2.5), aspect="equal", xlabel="x (m)", ylabel="y (m)",
                    title="particle paths")
        ax_c.set(xlabel="t (s)", ylabel="|C| (m^2)", title="constraint residual")
        ax_path.legend(fontsize=8)
        ax_c.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.out / "particle_circle.png", dpi=100)
        plt.close(fig)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
