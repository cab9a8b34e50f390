"""Lavender from Python: the constraint-dynamics engine and its recorded runs.

* ``Sim`` builds a world from a scene (file path, shipped scene name, dict or
  ``SceneBuilder``), steps it, and exposes the per-joint diagnostics as a ``(joints, 8)``
  float32 array, copied or as a read-only zero-copy view (``constraint_data(copy=False)``).
* ``Log`` opens a run recorded with ``Sim.record`` or ``lavender run --record``: frames by index,
  substep or time, a joint's column over time, per-frame summaries, ``spikes`` and ``diff``
  with the command line's semantics.
* ``COLUMN_NAMES`` / ``COLUMN_UNITS`` name the eight diagnostic columns.
* ``overlay`` draws Python-defined layers (anchor-error arrows by default) over captured
  frames into one self-contained HTML page.

Errors are Python exceptions carrying the engine's message: ``ValueError`` for bad input
(``NonFiniteError``, a subclass, when a step went non-finite), ``OSError`` for files.

>>> import lavender
>>> sim = lavender.Sim("pendulum")
>>> sim.step(1 / 60)
4
>>> float(sim.constraint_data()[0, 3]) < 1e-3   # anchor error norm, m
True
"""

from ._lavender import (
    COLUMN_COUNT,
    COLUMN_NAMES,
    COLUMN_UNITS,
    ENGINE_VERSION,
    SIMD_LANES,
    TARGET_FEATURES,
    Frame,
    Log,
    NonFiniteError,
    Sim,
    shipped_scenes,
)
from ._builder import SceneBuilder
from . import overlay  # noqa: F401  (``lavender.overlay`` without a second import)

__version__ = ENGINE_VERSION

__all__ = [
    "COLUMN_COUNT",
    "COLUMN_NAMES",
    "COLUMN_UNITS",
    "ENGINE_VERSION",
    "SIMD_LANES",
    "TARGET_FEATURES",
    "Frame",
    "Log",
    "NonFiniteError",
    "SceneBuilder",
    "Sim",
    "overlay",
    "shipped_scenes",
]
