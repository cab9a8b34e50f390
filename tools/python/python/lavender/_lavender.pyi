"""Type stubs of the native module ``lavender._lavender`` (re-exported by ``lavender``)."""

import os
from typing import Any, Dict, List, Literal, NoReturn, Optional, Sequence, Tuple, TypedDict, Union, final

import numpy as np
import numpy.typing as npt

from ._builder import SceneBuilder

_F32Array = npt.NDArray[np.float32]
_Vector = Union[Sequence[float], npt.NDArray[Any]]
_Selector = Union[int, str]
_SceneArg = Union[str, "os.PathLike[str]", Dict[str, Any], SceneBuilder, None]

__all__ = [
    "Sim",
    "Log",
    "Frame",
    "shipped_scenes",
    "NonFiniteError",
    "COLUMN_NAMES",
    "COLUMN_UNITS",
    "COLUMN_COUNT",
    "ENGINE_VERSION",
    "TARGET_FEATURES",
    "SIMD_LANES",
]

COLUMN_NAMES: Tuple[str, str, str, str, str, str, str, str]
"""Names of the eight diagnostic columns, in order: ``anchor_error_x``, ``anchor_error_y``,
``anchor_error_z``, ``anchor_error_norm``, ``angular_error``, ``limit_violation``,
``anchor_relative_speed``, ``joint_coordinate``."""
COLUMN_UNITS: Tuple[str, str, str, str, str, str, str, str]
"""Units of the columns (``"rad|m"``: radians for revolute joints, metres for prismatic)."""
COLUMN_COUNT: int
"""8."""
ENGINE_VERSION: str
"""The engine's version."""
TARGET_FEATURES: str
"""CPU features the module was compiled with (they change floating-point results)."""
SIMD_LANES: int
"""Lanes of the wide solver path: 8, or 16 on an AVX-512 build with the ``lanes16`` feature
(the width changes no result)."""

class NonFiniteError(ValueError):
    """A step produced a non-finite state; the world was rolled back to before the step."""

def shipped_scenes() -> Dict[str, str]:
    """The shipped scenes, ``{name: description}``; pass a name to ``Sim``."""

class _SettingsDict(TypedDict):
    dt: float
    gravity: List[float]
    max_substep: float
    velocity_iterations: int
    bias_iterations: Optional[int]
    position_iterations: int
    chain_solve: bool
    error_reduction: float
    projection_factor: float
    warm_starting: bool
    gyroscopic: bool
    curvature: bool
    speculative_limits: bool
    threads: int
    solver_path: Literal["wide", "scalar"]
    sleeping: bool
    sleep_linear_speed: float
    sleep_angular_speed: float
    time_to_sleep: float

class _JointForces(TypedDict):
    force_on_b: _F32Array
    force_on_a: _F32Array
    torque_on_b: _F32Array
    torque_on_a: _F32Array

class _RecordingSummary(TypedDict):
    path: str
    frames: int
    bytes: int

@final
class Sim:
    """A simulation: a world built from a scene, stepped from Python.

    ``scene`` is a scene file path, a shipped scene name, a scene dict with the scene
    file's structure, a ``SceneBuilder``, or None (an empty world). Keyword arguments
    override the scene's ``[world]`` settings; ``dt`` is the default frame step.
    ``sleeping=True`` lets islands at rest sleep (``sleep_linear_speed`` m/s,
    ``sleep_angular_speed`` rad/s, ``time_to_sleep`` s). ``bias_iterations=N`` runs the
    split-impulse bias pass with only the first ``N`` velocity passes (default, or
    ``"all"`` over a scene file's number: one per velocity pass).
    ``chain_solve=True`` solves chains of joints (a long chain, a hanging net's columns)
    exactly in every velocity pass (default off).
    """

    def __new__(
        cls,
        scene: _SceneArg = None,
        *,
        dt: Optional[float] = None,
        gravity: Optional[_Vector] = None,
        max_substep: Optional[float] = None,
        velocity_iterations: Optional[int] = None,
        bias_iterations: Optional[Union[int, Literal["all"]]] = None,
        position_iterations: Optional[int] = None,
        chain_solve: Optional[bool] = None,
        error_reduction: Optional[float] = None,
        projection_factor: Optional[float] = None,
        warm_starting: Optional[bool] = None,
        gyroscopic: Optional[bool] = None,
        curvature: Optional[bool] = None,
        speculative_limits: Optional[bool] = None,
        threads: Optional[int] = None,
        solver_path: Optional[Literal["wide", "scalar"]] = None,
        sleeping: Optional[bool] = None,
        sleep_linear_speed: Optional[float] = None,
        sleep_angular_speed: Optional[float] = None,
        time_to_sleep: Optional[float] = None,
    ) -> "Sim": ...
    def __copy__(self) -> NoReturn:
        """Refused (TypeError): build another with ``Sim.from_toml(sim.scene_toml(current=True))``."""
    def __deepcopy__(self, memo: Any) -> NoReturn:
        """Refused (TypeError), as ``__copy__``."""
    @staticmethod
    def from_toml(
        text: str,
        *,
        dt: Optional[float] = None,
        gravity: Optional[_Vector] = None,
        max_substep: Optional[float] = None,
        velocity_iterations: Optional[int] = None,
        bias_iterations: Optional[Union[int, Literal["all"]]] = None,
        position_iterations: Optional[int] = None,
        chain_solve: Optional[bool] = None,
        error_reduction: Optional[float] = None,
        projection_factor: Optional[float] = None,
        warm_starting: Optional[bool] = None,
        gyroscopic: Optional[bool] = None,
        curvature: Optional[bool] = None,
        speculative_limits: Optional[bool] = None,
        threads: Optional[int] = None,
        solver_path: Optional[Literal["wide", "scalar"]] = None,
        sleeping: Optional[bool] = None,
        sleep_linear_speed: Optional[float] = None,
        sleep_angular_speed: Optional[float] = None,
        time_to_sleep: Optional[float] = None,
    ) -> "Sim":
        """A Sim from scene TOML text."""
    def step(self, dt: Optional[float] = None) -> int:
        """Advances by ``dt`` s (default: the frame dt); returns the substeps run. GIL released;
        Ctrl-C in a long frame ends it between two substeps (the world keeps them)."""
    def run(self, duration: Optional[float] = None, dt: Optional[float] = None) -> int:
        """Steps ``round(duration / dt)`` frames; returns the substeps run. GIL released."""
    def sync(self) -> None:
        """Refreshes the diagnostics without advancing time."""
    def constraint_data(self, copy: bool = True) -> _F32Array:
        """``(joints, 8)`` float32 diagnostics: a copy, or with ``copy=False`` a read-only
        zero-copy view that keeps the Sim alive and shows the latest step."""
    def joint_forces(self) -> _JointForces:
        """Constraint forces and torques over the last substep, ``(joints, 3)`` each."""
    def positions(self) -> _F32Array:
        """``(bodies, 3)`` positions, m."""
    def joint_anchors(self) -> Tuple[_F32Array, _F32Array]:
        """``(on_a, on_b)``: each joint's anchor on body A and on body B in world coordinates,
        ``(joints, 3)`` each, m; ``on_b - on_a`` is the anchor error (for a prismatic joint
        plus the slide along its axis)."""
    def rotations(self) -> _F32Array:
        """``(bodies, 4)`` quaternions ``[x, y, z, w]``."""
    def linear_velocities(self) -> _F32Array:
        """``(bodies, 3)`` linear velocities, m/s."""
    def angular_velocities(self) -> _F32Array:
        """``(bodies, 3)`` angular velocities, rad/s."""
    def poses(self) -> _F32Array:
        """``(bodies, 7)`` poses ``[x, y, z, qx, qy, qz, qw]`` (the log's layout)."""
    def velocities(self) -> _F32Array:
        """``(bodies, 6)`` velocities ``[vx, vy, vz, wx, wy, wz]`` (the log's layout)."""
    def body_pose(self, body: _Selector) -> Tuple[_F32Array, _F32Array]:
        """``(position, rotation)`` of a body by name or index."""
    def body_velocity(self, body: _Selector) -> Tuple[_F32Array, _F32Array]:
        """``(linear, angular)`` velocity of a body by name or index."""
    def set_body_pose(
        self, body: _Selector, position: Optional[_Vector] = None, rotation: Optional[_Vector] = None
    ) -> None:
        """Moves a body without advancing time and refreshes the diagnostics."""
    def set_body_velocity(
        self, body: _Selector, linear: Optional[_Vector] = None, angular: Optional[_Vector] = None
    ) -> None:
        """Sets a body's velocity without advancing time and refreshes the diagnostics."""
    def set_settings(
        self,
        *,
        dt: Optional[float] = None,
        gravity: Optional[_Vector] = None,
        max_substep: Optional[float] = None,
        velocity_iterations: Optional[int] = None,
        bias_iterations: Optional[Union[int, Literal["all"]]] = None,
        position_iterations: Optional[int] = None,
        chain_solve: Optional[bool] = None,
        error_reduction: Optional[float] = None,
        projection_factor: Optional[float] = None,
        warm_starting: Optional[bool] = None,
        gyroscopic: Optional[bool] = None,
        curvature: Optional[bool] = None,
        speculative_limits: Optional[bool] = None,
        threads: Optional[int] = None,
        solver_path: Optional[Literal["wide", "scalar"]] = None,
        sleeping: Optional[bool] = None,
        sleep_linear_speed: Optional[float] = None,
        sleep_angular_speed: Optional[float] = None,
        time_to_sleep: Optional[float] = None,
    ) -> None:
        """Changes settings (validated; refused while recording)."""
    @property
    def settings(self) -> _SettingsDict:
        """The solver settings and the default frame dt."""
    def substeps_for(self, dt: float) -> int:
        """Substeps a frame of ``dt`` runs: ``ceil(dt / max_substep)``."""
    def record(self, path: Union[str, "os.PathLike[str]"], keyframe_every: int = 16) -> None:
        """Records every following substep to a log (``.lvlog``) or HDF5 (``.h5``)."""
    def stop_recording(self) -> Optional[_RecordingSummary]:
        """Ends the recording (writes the footer); None when not recording (a step that
        raised has already ended it)."""
    @property
    def recording(self) -> Optional[str]:
        """The path being recorded to, or None."""
    @property
    def time(self) -> float:
        """Simulation time, s."""
    @property
    def substeps_done(self) -> int:
        """Substeps completed."""
    @property
    def frame_dt(self) -> float:
        """Default frame dt, s."""
    @property
    def duration(self) -> float:
        """The scene's run length, s."""
    @property
    def description(self) -> str:
        """The scene's description."""
    @property
    def body_names(self) -> List[str]:
        """Body names in index order."""
    @property
    def joint_names(self) -> List[str]:
        """Joint names in index order."""
    @property
    def joint_kinds(self) -> List[str]:
        """Joint kinds in index order."""
    @property
    def joint_bodies(self) -> List[Tuple[int, int]]:
        """Each joint's ``(a, b)`` body indices, in joint order."""
    @property
    def body_count(self) -> int:
        """Number of bodies."""
    @property
    def joint_count(self) -> int:
        """Number of joints."""
    @property
    def sleeping_body_count(self) -> int:
        """Number of sleeping bodies (0 unless ``sleeping`` is on)."""
    @property
    def sleeping_island_count(self) -> int:
        """Number of sleeping islands."""
    def is_body_sleeping(self, body: _Selector) -> bool:
        """Whether a body (by name or index) sleeps."""
    def sleep_timers(self) -> _F32Array:
        """``(bodies,)`` float32 rest timers (copy), s."""
    def wake_all(self) -> None:
        """Wakes every island and resets every rest timer."""
    def total_energy(self) -> float:
        """Kinetic plus gravitational potential energy, J."""
    def solver_state(self) -> _F32Array:
        """Warm-start impulses (6 per joint; a limit's signed by its stop), then with
        sleeping on the rest timers (copy)."""
    def state_hash(self) -> int:
        """Hash of the full state (as stored in log frames)."""
    def scene_toml(self, current: bool = False) -> str:
        """The scene as TOML; with current=True, the world as it is now (every body's pose
        and velocity, the settings in force), which `Sim.from_toml` rebuilds with the same
        bits, without warm-start impulses, sleep state or clock (a run continued from it
        departs from the original; `Log.resume` continues a recorded run bit for bit)."""

class _Location(TypedDict):
    kind: Literal["body", "joint"]
    index: int
    name: str
    field: str

class _Deviation(TypedDict):
    value: float
    substep: Optional[int]
    location: Optional[_Location]

class _DiffSeries(TypedDict):
    substep: npt.NDArray[np.uint64]
    time: npt.NDArray[np.float64]
    position: npt.NDArray[np.float64]
    rotation: npt.NDArray[np.float64]
    velocity: npt.NDArray[np.float64]
    diagnostics: npt.NDArray[np.float64]

_DiffReport = TypedDict(
    "_DiffReport",
    {
        "identical": bool,
        "first_divergent_substep": Optional[int],
        "reason": Optional[str],
        "where": Optional[_Location],
        "max_deviation": _Deviation,
        "frames_compared": int,
        "first_common_substep": Optional[int],
        "last_common_substep": Optional[int],
        "frames_a": int,
        "frames_b": int,
        "scene_hash_mismatch": bool,
    },
)

class _DiffReportWithSeries(_DiffReport, total=False):
    series: _DiffSeries

class _Spike(TypedDict):
    substep: int
    time: float
    joint: int
    joint_name: str
    column: int
    column_name: str
    value: float
    baseline: float

class _WorstJoint(TypedDict):
    joint: int
    name: str
    peak_anchor_error: float
    anchor_error_substep: Optional[int]
    peak_angular_error: float
    angular_error_substep: Optional[int]
    peak_limit_violation: float
    limit_violation_substep: Optional[int]
    first_non_finite_substep: Optional[int]

class _SkippedRecord(TypedDict):
    offset: int
    bytes: int
    detail: str
    after_substep: Optional[int]
    before_substep: int

class _Recovery(TypedDict):
    dropped_bytes: int
    reason: str
    kind: Literal["no_footer", "torn_tail", "corrupt", "unusable_footer"]
    offset: Optional[int]
    skipped: List[_SkippedRecord]

@final
class Frame:
    """One substep of a recorded run; arrays are read in place from the log."""

    @property
    def index(self) -> int: ...
    @property
    def substep(self) -> int: ...
    @property
    def time(self) -> float: ...
    @property
    def total_energy(self) -> float: ...
    @property
    def state_hash(self) -> int: ...
    @property
    def has_solver_state(self) -> bool: ...
    @property
    def diagnostics(self) -> _F32Array:
        """``(joints, 8)`` diagnostics, read-only, in place."""
    @property
    def poses(self) -> _F32Array:
        """``(bodies, 7)`` poses, read-only, in place."""
    @property
    def velocities(self) -> _F32Array:
        """``(bodies, 6)`` velocities, read-only, in place."""
    @property
    def solver_state(self) -> Optional[_F32Array]:
        """Warm-start impulses of a keyframe, or None."""
    @property
    def summary(self) -> Dict[str, Any]:
        """The writer's summary of the frame."""

@final
class Log:
    """A recorded run, memory-mapped read-only. The file must not be modified or
    truncated by another program while the Log or an array from it exists."""

    def __new__(cls, path: Union[str, "os.PathLike[str]"]) -> "Log": ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> Frame: ...
    def __enter__(self) -> "Log": ...
    def __exit__(self, *exc: object) -> bool: ...
    def close(self) -> None:
        """Releases the memory map (arrays read in place keep theirs); later calls raise ValueError."""
    def refresh(self) -> int:
        """Picks up frames appended since opening or the last refresh; returns how many."""
    def frame(self, index: int) -> Frame:
        """Frame by position (negative from the end); IndexError when out of range."""
    def frame_at_substep(self, substep: int) -> Frame:
        """The frame of a global substep; ValueError if absent."""
    def frame_at_time(self, time: float) -> Frame:
        """The frame nearest ``time`` (a tie the earlier, after the end the last); ValueError if NaN or before the first."""
    def diagnostics(self, index: int) -> _F32Array:
        """``(joints, 8)`` diagnostics of a frame, read-only, in place."""
    def column(self, joint: _Selector, column: _Selector, *, skip_corrupt: bool = False) -> _F32Array:
        """One joint's diagnostic column over the run, one float32 per frame (NaN for corrupt frames with ``skip_corrupt``)."""
    def joint_diagnostics(self, joint: _Selector, *, skip_corrupt: bool = False) -> _F32Array:
        """One joint's ``(frames, 8)`` diagnostic columns over the run (one pass over the log)."""
    def body_poses(self, body: _Selector, *, skip_corrupt: bool = False) -> _F32Array:
        """One body's ``(frames, 7)`` poses over the run."""
    def body_velocities(self, body: _Selector, *, skip_corrupt: bool = False) -> _F32Array:
        """One body's ``(frames, 6)`` velocities over the run."""
    def substeps(self) -> npt.NDArray[np.uint64]:
        """Substep of every frame."""
    def times(self) -> npt.NDArray[np.float64]:
        """Time of every frame, s."""
    def summaries(self) -> Dict[str, npt.NDArray[Any]]:
        """Per-frame summaries as a dict of arrays."""
    def spikes(
        self,
        columns: Union[_Selector, Sequence[_Selector], None] = None,
        window: int = 32,
        min_history: int = 2,
        k: float = 8.0,
        abs_threshold: float = 1e-3,
        rel_floor: float = 0.05,
        abs_floor: float = 1e-6,
    ) -> List[_Spike]:
        """Onsets of residual spikes (``lavender scrub``'s finder and defaults; from the
        log's spike index when the parameters are the defaults)."""
    def energy(self) -> Optional[Dict[str, Any]]:
        """``first``, ``last``, ``max_rise`` (J), ``max_rise_substep`` and ``non_finite_substep``, as ``lavender scrub`` prints them."""
    def worst_joints(self, n: int = 10) -> List[_WorstJoint]:
        """The joints with the largest peak anchor error."""
    def diff(
        self,
        other: "Log | str | os.PathLike[str]",
        atol: float = 0.0,
        rtol: float = 0.0,
        force: bool = False,
        overlap: bool = False,
        series: bool = False,
    ) -> _DiffReportWithSeries:
        """Compares two runs frame by frame (``lavender diff``'s semantics; ``overlap=True``
        compares only the substeps both logs record; ``series=True`` adds ``series``, every
        compared substep's largest deviation by kind)."""
    def export_hdf5(
        self,
        path: Union[str, "os.PathLike[str]"],
        from_substep: Optional[int] = None,
        to_substep: Optional[int] = None,
        every: int = 1,
    ) -> _RecordingSummary:
        """Copies frames to a new HDF5 file (``lavender export``'s layout)."""
    def resume(self, substep: int) -> Sim:
        """A Sim restored to the state after ``substep`` (checked against the log's hash)."""
    @property
    def path(self) -> str: ...
    @property
    def header(self) -> Dict[str, Any]: ...
    @property
    def body_names(self) -> List[str]: ...
    @property
    def joint_names(self) -> List[str]: ...
    @property
    def body_count(self) -> int: ...
    @property
    def joint_count(self) -> int: ...
    @property
    def finished(self) -> bool: ...
    @property
    def recovery(self) -> Optional[_Recovery]: ...
    @property
    def version(self) -> Tuple[int, int]: ...
