"""The type stubs (``lavender/_lavender.pyi``) agree with the built module, and code using
the documented API type-checks against them."""

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("mypy")


def test_stubs_match_the_native_module():
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "lavender._lavender"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_documented_usage_type_checks(tmp_path):
    usage = tmp_path / "usage.py"
    usage.write_text(
        textwrap.dedent(
            """
            import numpy as np
            import lavender

            sim = lavender.Sim("pendulum", velocity_iterations=4, threads=1)
            substeps: int = sim.step(1 / 60)
            view: np.ndarray = sim.constraint_data(copy=False)
            position, rotation = sim.body_pose("bob")
            sim.set_body_pose("bob", position + 0.01, rotation)
            sim.set_settings(sleeping=True, time_to_sleep=0.5)
            asleep: bool = sim.is_body_sleeping("bob") and sim.sleeping_body_count == 1
            timers: np.ndarray = sim.sleep_timers()
            log = lavender.Log("run.lvlog")
            diagnostics = log[0].diagnostics
            report = log.diff(log, atol=1e-6)
            first = report["first_divergent_substep"]
            spikes = log.spikes(columns=["anchor_error_norm"], k=4.0)
            built = lavender.SceneBuilder().body("a").build(dt=0.01)
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(usage)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
