"""Clutter props (keypads, tags, cables): drawn where their outline says and nowhere else, with
the look that makes them hard negatives (die-sized keys, each with a glyph), or training learns
nothing from them and a shadow falls where no prop is."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.synth import clutter
from vision.synth.geometry import _fix
from vision.synth.props import Prop, draw_prop, footprint_mm, random_prop
from vision.synth.view import View, _ViewProjector

SIZE = (640, 480)
CLUTTER = ("keypad", "tag", "cable")


def _proj(tilt: float = 0.0) -> _ViewProjector:
    return _ViewProjector(View(distance_mm=400.0, tilt_deg=tilt), SIZE)


def _clutter_props(kind: str, n: int) -> list[Prop]:
    rng = np.random.default_rng(5)
    out: list[Prop] = []
    while len(out) < n:
        p = random_prop(rng, (0.0, 0.0), 16.0)
        if p.kind == kind:
            out.append(p)
    return out


@pytest.mark.parametrize("kind", CLUTTER)
@pytest.mark.parametrize("tilt", [0.0, 40.0])
def test_clutter_is_drawn_inside_its_footprint_only(kind: str, tilt: float) -> None:
    """What the shadows and the scene's spacing know of a prop (its footprint) is where it is."""
    proj = _proj(tilt)
    for p in _clutter_props(kind, 4):
        img = np.full((SIZE[1], SIZE[0], 3), 128, np.uint8)
        draw_prop(img, p, proj)
        changed = np.any(img != 128, axis=2)
        assert changed.sum() > 200  # something was drawn
        foot = footprint_mm(p)
        pix = proj(np.column_stack([foot, np.zeros(len(foot))]))
        mask = np.zeros(changed.shape, np.uint8)
        cv2.fillPoly(mask, [_fix(pix)], 255, cv2.LINE_8, 4)
        if kind == "cable":  # and its plug
            line, _, width = clutter.cable_outline(p.xy_mm, p.radius_mm, p.angle_deg, p.seed)
            plug = clutter.cable_plug(line, width, p.radius_mm, p.seed)
            if plug is not None:
                box = proj(np.column_stack([plug, np.zeros(4)]))
                cv2.fillPoly(mask, [_fix(box)], 255, cv2.LINE_8, 4)
        mask = cv2.dilate(mask, np.ones((7, 7), np.uint8))  # edges, and a cable's height
        assert not np.any(changed & (mask == 0))


def test_keypad_keys_are_die_sized_squares_each_with_a_glyph() -> None:
    rows, cols = clutter.keypad_grid(11)
    key, ink = (40, 40, 45), (230, 230, 230)
    tex = clutter.keypad_texture(11, key, ink)
    pitch = tex.shape[1] // cols
    assert tex.shape[:2] == (rows * pitch, cols * pitch)
    inked = 0
    for r in range(rows):
        for c in range(cols):
            cell = tex[r * pitch : (r + 1) * pitch, c * pitch : (c + 1) * pitch]
            inked += bool(np.any(np.all(cell > 150, axis=2)))
    assert inked >= 0.6 * rows * cols  # light glyphs on the dark keys


def test_a_keypad_is_as_big_as_its_keys_are_dice() -> None:
    for p in _clutter_props("keypad", 20):
        rows, cols = clutter.keypad_grid(p.seed)
        pitch = 2 * p.radius_mm / max(rows, cols)
        assert 0.8 * 16 <= pitch <= 1.3 * 16


def test_a_tag_carries_ink_on_paper() -> None:
    tex = clutter.tag_texture(3, (240, 240, 240), (20, 20, 20), 0.4)
    dark = np.all(tex < 100, axis=2).mean()
    assert 0.005 < dark < 0.5


@settings(max_examples=40, deadline=None)
@given(
    half=st.floats(20.0, 120.0),
    angle=st.floats(0.0, 360.0),
    seed=st.integers(0, 1 << 30),
)
def test_a_cable_stays_within_its_radius(half: float, angle: float, seed: int) -> None:
    """The scene keeps dice a radius (and a die) from a prop's centre: a cable that wandered
    further would lie under a die."""
    line, band, width = clutter.cable_outline((10.0, -5.0), half, angle, seed)
    assert 3.0 <= width <= 7.0
    assert max(math.dist(q, (10.0, -5.0)) for q in line) <= 0.75 * half + 1e-6
    assert max(math.dist(q, (10.0, -5.0)) for q in band) <= 0.75 * half + width
    plug = clutter.cable_plug(line, width, half, seed)
    if plug is not None:
        assert max(math.dist(q, (10.0, -5.0)) for q in plug) <= half + 2 * width


def test_clutter_is_light_on_dark_or_dark_on_light() -> None:
    for kind in CLUTTER:
        for p in _clutter_props(kind, 10):
            assert abs(sum(p.colour) - sum(p.colour2)) > 3 * 100
