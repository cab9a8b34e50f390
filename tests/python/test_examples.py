"""The Python examples next to the module run at their quick setting and check themselves."""

import json
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "tools" / "python" / "examples"


@pytest.mark.parametrize(
    "script, outputs",
    [
        ("particle_circle.py", ["particle_circle.png", "particle_circle.json"]),
        ("lavendersim_constraint_sweep.py", ["sweep.png", "sweep.json"]),
        ("anchor_overlay.py", ["anchor_overlay.html", "anchor_overlay.json"]),
    ],
)
def test_example_runs_quick(tmp_path, script, outputs):
    pytest.importorskip("matplotlib")
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for name in outputs:
        assert (tmp_path / name).stat().st_size > 0, name
    report = json.loads((tmp_path / outputs[1]).read_text())
    assert report


def test_particle_circle_quick_prints_the_chapters_figures(tmp_path):
    # The chapter's own command, `particle_circle.py --quick`, quotes > 32, 0.003 and < 3e-16
    # m^2 (QA 2026-12-08: --quick ran 2 s and printed 2 m^2 unconstrained).
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "particle_circle.py"), "--quick", "--no-plot", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "particle_circle.json").read_text())
    final, peak = report["final_abs_c"], report["max_abs_c"]
    assert report["setup"]["steps"] == 1000
    assert abs(final["unconstrained"] - 50.0) < 1e-9
    assert abs(final["multiplier"] - 0.0474) < 5e-4
    assert abs(final["baumgarte"] - 0.00302) < 5e-5
    assert peak["projection"] < 3e-16


def test_readme_session_runs(tmp_path, monkeypatch):
    text = (EXAMPLES.parent / "README-section.md").read_text()
    session = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(session.strip().splitlines()) == 5
    monkeypatch.chdir(tmp_path)
    exec(compile(session, "README-section.md", "exec"), {})
    assert (tmp_path / "run.lvlog").stat().st_size > 0


def test_module_docstring_example():
    import doctest

    import lavender

    import lavender.overlay

    assert doctest.testmod(lavender).failed == 0
    assert doctest.testmod(lavender.overlay).failed == 0
