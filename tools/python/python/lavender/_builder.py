"""``SceneBuilder``: a scene assembled in Python, with the scene file's fields."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from ._lavender import Sim

Vector = Sequence[float]


def _real(value: Any, what: str) -> float:
    """A number; ``True``, ``"1"`` and arrays are not (``float()`` would take them)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what} must be a number, got {value!r}")
    return float(value)


def _vec(value: Optional[Any], n: int, what: str) -> Optional[List[float]]:
    if value is None:
        return None
    # A string, a set or a mapping iterates, but is not a vector ("123" read as [1, 2, 3]).
    if isinstance(value, (str, bytes, set, frozenset, dict)):
        raise ValueError(f"{what} must be a sequence of {n} numbers, got {value!r}")
    try:
        items = list(value)
    except TypeError:
        raise ValueError(f"{what} must be a sequence of {n} numbers, got {value!r}") from None
    values = [_real(v, f"each component of {what}") for v in items]
    if len(values) != n:
        raise ValueError(f"{what} must have {n} components, got {len(values)}")
    return values


def _clean(table: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in table.items() if v is not None}


def _count(name: str, value: Any, least: int = 1) -> int:
    """A whole number of links, rows or columns (``int(2.5)`` would silently drop a half).

    Any integer type counts (NumPy's too: QA 2026-12-07, ``np.int64(3)`` was refused), and a
    float only when whole; infinity and NaN are named as such.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} = {value!r} must be a whole number, not a bool")
    if isinstance(value, numbers.Integral):
        whole = int(value)
    elif isinstance(value, numbers.Real):
        real = float(value)
        if not math.isfinite(real) or real != int(real):
            raise ValueError(f"{name} = {value!r} must be a whole number")
        whole = int(real)
    else:
        raise ValueError(f"{name} = {value!r} must be a whole number")
    if whole < least:
        raise ValueError(f"{name} = {value!r} must be at least {least}")
    return whole


class SceneBuilder:
    """Builds a scene in code; the same fields as a scene TOML file.

    Every method returns the builder, so calls chain::

        sim = (lavender.SceneBuilder(gravity=[0, 0, 0])
               .body("ground", kind="static")
               .body("arm", position=[1, 0, 0], mass=1.0)
               .revolute("hinge", "ground", "arm", anchor_b=[-1, 0, 0], axis=[0, 0, 1])
               .build(position_iterations=0))

    ``to_dict()`` gives the scene dict that ``lavender.Sim`` also accepts directly;
    bodies and joints are checked by the engine when the Sim is built (``ValueError``).
    """

    def __init__(self, description: str = "", **world: Any) -> None:
        """Starts an empty scene; keyword arguments are ``[world]`` settings (``dt``,
        ``duration``, ``gravity``, ``max_substep``, ``velocity_iterations``,
        ``bias_iterations``, ``position_iterations``, ``chain_solve``, ``error_reduction``,
        ``projection_factor``,
        ``warm_starting``, ``gyroscopic``, ``curvature``, ``speculative_limits``, ``sleeping``, ``sleep_linear_speed``, ``sleep_angular_speed``,
        ``time_to_sleep``)."""
        self._description = description
        self._world: Dict[str, Any] = {}
        self._bodies: List[Dict[str, Any]] = []
        self._joints: List[Dict[str, Any]] = []
        self._chains: List[Dict[str, Any]] = []
        self._grids: List[Dict[str, Any]] = []
        self.world(**world)

    def world(self, **settings: Any) -> "SceneBuilder":
        """Sets ``[world]`` settings (see the constructor)."""
        for key, value in settings.items():
            if key == "gravity":
                value = _vec(value, 3, "gravity")
            self._world[key] = value
        return self

    def body(
        self,
        name: str,
        *,
        kind: str = "dynamic",
        position: Optional[Vector] = None,
        rotation: Optional[Vector] = None,
        linear_velocity: Optional[Vector] = None,
        angular_velocity: Optional[Vector] = None,
        mass: Optional[float] = None,
        inertia: Optional[Vector] = None,
        box: Optional[Vector] = None,
    ) -> "SceneBuilder":
        """Adds a body. ``kind`` is ``"dynamic"`` (default), ``"static"`` or
        ``"kinematic"``; ``position`` (m), ``rotation`` (unit quaternion ``[x, y, z, w]``),
        velocities (m/s, rad/s), ``mass`` (kg, default 1), and either ``inertia``
        (principal moments, kg m^2) or ``box`` (half extents of a solid box, m)."""
        self._bodies.append(
            _clean(
                {
                    "name": name,
                    "kind": kind,
                    "position": _vec(position, 3, "position"),
                    "rotation": _vec(rotation, 4, "rotation"),
                    "linear_velocity": _vec(linear_velocity, 3, "linear_velocity"),
                    "angular_velocity": _vec(angular_velocity, 3, "angular_velocity"),
                    "mass": None if mass is None else _real(mass, "mass"),
                    "inertia": _vec(inertia, 3, "inertia"),
                    "box": _vec(box, 3, "box"),
                }
            )
        )
        return self

    def joint(
        self,
        name: str,
        kind: str,
        body_a: str,
        body_b: str,
        *,
        anchor_a: Optional[Vector] = None,
        anchor_b: Optional[Vector] = None,
        axis: Optional[Vector] = None,
        axis_a: Optional[Vector] = None,
        axis_b: Optional[Vector] = None,
        limit: Optional[Vector] = None,
        reference_rotation: Optional[Vector] = None,
    ) -> "SceneBuilder":
        """Adds a joint of ``kind`` (``"revolute"``, ``"spherical"``, ``"fixed"``,
        ``"prismatic"``) between two bodies named earlier. Anchors are in each body's
        frame (m); ``axis`` sets both axes (revolute default z, prismatic default x);
        ``limit`` is ``[lo, hi]`` in rad or m; ``reference_rotation`` the rest relative
        orientation (default: the initial poses)."""
        self._joints.append(
            _clean(
                {
                    "name": name,
                    "kind": kind,
                    "body_a": body_a,
                    "body_b": body_b,
                    "anchor_a": _vec(anchor_a, 3, "anchor_a"),
                    "anchor_b": _vec(anchor_b, 3, "anchor_b"),
                    "axis": _vec(axis, 3, "axis"),
                    "axis_a": _vec(axis_a, 3, "axis_a"),
                    "axis_b": _vec(axis_b, 3, "axis_b"),
                    "limit": _vec(limit, 2, "limit"),
                    "reference_rotation": _vec(reference_rotation, 4, "reference_rotation"),
                }
            )
        )
        return self

    def revolute(self, name: str, body_a: str, body_b: str, **fields: Any) -> "SceneBuilder":
        """A revolute joint (see ``joint``)."""
        return self.joint(name, "revolute", body_a, body_b, **fields)

    def spherical(self, name: str, body_a: str, body_b: str, **fields: Any) -> "SceneBuilder":
        """A spherical joint (see ``joint``)."""
        return self.joint(name, "spherical", body_a, body_b, **fields)

    def fixed(self, name: str, body_a: str, body_b: str, **fields: Any) -> "SceneBuilder":
        """A fixed joint (see ``joint``)."""
        return self.joint(name, "fixed", body_a, body_b, **fields)

    def prismatic(self, name: str, body_a: str, body_b: str, **fields: Any) -> "SceneBuilder":
        """A prismatic joint (see ``joint``)."""
        return self.joint(name, "prismatic", body_a, body_b, **fields)

    def chain(self, name: str, links: int, **fields: Any) -> "SceneBuilder":
        """A ``[[chain]]`` generator: ``links`` boxes hinged in a row to a static anchor
        (fields: ``joint``, ``origin``, ``direction``, ``axis``, ``link_length``,
        ``link_half_width``, ``link_mass``, ``limit``)."""
        self._chains.append(_clean({"name": name, "links": _count("links", links), **fields}))
        return self

    def grid(self, name: str, rows: int, cols: int, **fields: Any) -> "SceneBuilder":
        """A ``[[grid]]`` generator: ``rows x cols`` bodies linked right and down (fields:
        ``spacing``, ``origin``, ``mass``, ``joint``)."""
        self._grids.append(
            _clean(
                {
                    "name": name,
                    # As the scene file checks it: a grid of one row has no links down.
                    "rows": _count("rows", rows, least=2),
                    "cols": _count("cols", cols),
                    **fields,
                }
            )
        )
        return self

    def to_dict(self) -> Dict[str, Any]:
        """The scene as a dict with the scene file's structure (``world``, ``body``,
        ``joint``, ``chain``, ``grid``)."""
        scene: Dict[str, Any] = {"description": self._description}
        if self._world:
            scene["world"] = _clean(dict(self._world))
        for key, items in (
            ("body", self._bodies),
            ("joint", self._joints),
            ("chain", self._chains),
            ("grid", self._grids),
        ):
            if items:
                scene[key] = [dict(item) for item in items]
        return scene

    def build(self, **settings: Any) -> "Sim":
        """A ``lavender.Sim`` of this scene; keyword arguments override settings as in the
        ``Sim`` constructor."""
        from ._lavender import Sim

        # The build's warnings (joints that disagree, a lock, substeps too long, ...) are
        # raised again at the caller's line, not this one.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sim = Sim(self.to_dict(), **settings)
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
        return sim

    def __repr__(self) -> str:
        return (
            f"<lavender.SceneBuilder: {len(self._bodies)} bodies, {len(self._joints)} joints,"
            f" {len(self._chains)} chains, {len(self._grids)} grids>"
        )
