"""Top-face geometry on dice drawn with a known turn."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from vision_drawing import draw_die, table

from vision.face import face_angle, face_side, square_corners


def _angle_error(a: float, b: float) -> float:
    d = (a - b) % 90.0
    return min(d, 90.0 - d)


@pytest.mark.parametrize("angle", [-40.0, -25.0, -10.0, 0.0, 7.0, 22.0, 33.0, 44.0])
@pytest.mark.parametrize("value", [1, 5, 6])
def test_face_angle_recovers_the_turn(angle: float, value: int) -> None:
    patch = table(48, 48, (120, 110, 100))
    draw_die(patch, (23.5, 23.5), 30, value, angle_deg=angle)
    assert _angle_error(face_angle(patch), angle) < 4.0


def test_face_angle_of_dark_die_on_light_table() -> None:
    patch = table(40, 40, (220, 220, 220))
    draw_die(patch, (19.5, 19.5), 24, 3, angle_deg=30, body=(30, 30, 30), pip=(240, 240, 240))
    assert _angle_error(face_angle(patch), 30) < 4.0


def test_face_angle_of_a_blank_patch_is_zero() -> None:
    assert face_angle(np.full((32, 32, 3), 128, np.uint8)) == 0.0


@given(
    st.floats(-45, 44.99),
    st.floats(1, 200),
    st.tuples(st.floats(-500, 500), st.floats(-500, 500)),
)
def test_square_corners_are_a_square_of_that_side(
    angle: float, side: float, center: tuple[float, float]
) -> None:
    corners = square_corners(center, side, angle)
    assert len(corners) == 4
    cx = sum(p[0] for p in corners) / 4
    cy = sum(p[1] for p in corners) / 4
    assert cx == pytest.approx(center[0], abs=1e-6)
    assert cy == pytest.approx(center[1], abs=1e-6)
    for i in range(4):
        (x1, y1), (x2, y2) = corners[i], corners[(i + 1) % 4]
        assert math.hypot(x2 - x1, y2 - y1) == pytest.approx(side, rel=1e-9)


@given(st.floats(-45, 45), st.floats(1, 200))
def test_face_side_inverts_the_extent_of_a_turned_square(angle: float, side: float) -> None:
    corners = square_corners((0.0, 0.0), side, angle)
    extent = max(p[0] for p in corners) - min(p[0] for p in corners)
    assert face_side(extent, angle) == pytest.approx(side, rel=1e-9)
