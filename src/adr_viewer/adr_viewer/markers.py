"""The sampler's particles as rviz2 markers: a cube of side ``size`` metres stands for the normalized space [0, 1]^k
(the first k <= 3 dimensions), each particle a sphere in it, axes labelled with the dimension names."""
from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

NAMESPACE = "adr_particles"
PARTICLES, BOX, TITLE, FIRST_LABEL = 0, 1, 2, 3


def embed(points: np.ndarray) -> np.ndarray:
    """``(n, d)`` normalized points -> ``(n, 3)``: the first three dimensions, missing ones at 0."""
    out = np.zeros((len(points), 3))
    k = min(points.shape[1], 3) if points.ndim == 2 else 0
    out[:, :k] = points[:, :k]
    return out


def box_segments(k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Edges of the unit cube [0, 1]^k drawn in 3-D (a segment, a square or a cube)."""
    corners = [np.array(c + (0,) * (3 - k), float) for c in itertools.product((0, 1), repeat=k)]
    return [(a, b) for a, b in itertools.combinations(corners, 2) if np.abs(a - b).sum() == 1]


def particle_markers(names: Sequence[str], points: np.ndarray, *, method: str, iteration: int, spread: float,
                     frame_id: str, origin: Sequence[float], size: float, stamp: Time) -> MarkerArray:
    base = np.asarray(origin, float)
    k = min(len(names), 3)

    def marker(marker_id: int, kind: int, scale: float, color: tuple[float, float, float, float]) -> Marker:
        m = Marker(ns=NAMESPACE, id=marker_id, type=kind, action=Marker.ADD, frame_locked=False)
        m.header.frame_id, m.header.stamp = frame_id, stamp
        m.pose.orientation.w = 1.0
        m.scale.x = m.scale.y = m.scale.z = scale
        m.color = ColorRGBA(r=color[0], g=color[1], b=color[2], a=color[3])
        return m

    def point(xyz: np.ndarray) -> Point:
        x, y, z = (base + size * xyz).tolist()
        return Point(x=x, y=y, z=z)

    particles = marker(PARTICLES, Marker.SPHERE_LIST, 0.06 * size, (0.85, 0.15, 0.15, 0.9))
    particles.points = [point(p) for p in embed(np.asarray(points, float).reshape(-1, len(names)))]
    box = marker(BOX, Marker.LINE_LIST, 0.005 * size, (0.8, 0.8, 0.8, 1.0))
    box.points = [point(p) for segment in box_segments(k) for p in segment]
    title = marker(TITLE, Marker.TEXT_VIEW_FACING, 0.08 * size, (1.0, 1.0, 1.0, 1.0))
    title.pose.position = point(np.array([0.5, 0.5 if k > 1 else 0.0, 1.15 if k > 2 else 0.25]))
    title.text = f"{method} iteration {iteration}: {len(particles.points)} particles, spread {spread:.3f}"
    if len(names) > 3:
        title.text += f" (showing {', '.join(names[:3])} of {len(names)} dimensions)"
    labels = []
    for d in range(k):
        label = marker(FIRST_LABEL + d, Marker.TEXT_VIEW_FACING, 0.06 * size, (0.9, 0.9, 0.5, 1.0))
        end = np.zeros(3)
        end[d] = 1.12
        label.pose.position = point(end)
        label.text = names[d]
        labels.append(label)
    return MarkerArray(markers=[particles, box, title, *labels])
