"""The pip finder (``vision.pipfind``): the pips of a face the ink thresholds cannot count."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from vision_drawing import draw_die, table

from vision.nets import MODELS_DIR
from vision.pipcount import FACE_PX, FACE_SPAN, PipCount, count_all, cut_faces
from vision.pipfind import MODEL_FILE, STRIDE, load_finder, pips_of, with_found

FACE = ((80.0, 80.0), 40.0, 0.0)


def _shadowed(value: int, pip: tuple[int, int, int] = (120, 120, 120)) -> np.ndarray:
    """A white die with grey pips, a shadow's edge across the middle of its face halving the
    light: the shaded half of the face is as dark as the lit pips, so no ink level separates
    pips from body over the whole face."""
    img = table(160, 160, (70, 110, 60))
    draw_die(img, (80.0, 80.0), 40.0, value, body=(235, 235, 235), pip=pip)
    x = np.linspace(0.0, 1.0, 160)[None, :, None]
    light = 1.0 - 0.5 * np.clip((x - 0.4) / 0.2, 0.0, 1.0)
    out: np.ndarray = np.clip(img * light, 0, 255).astype(np.uint8)
    return out


@pytest.mark.parametrize("value", [3, 4, 5, 6])
def test_a_face_in_a_shadow_the_ink_thresholds_miss_is_counted_by_the_finder(value: int) -> None:
    img = _shadowed(value)
    counts = count_all(img, [FACE])
    assert counts[0] is not None
    assert counts[0].value is None
    found = with_found(load_finder(), cut_faces(img, [FACE]), counts, [True])[0]
    assert found is not None
    assert (found.value, found.found) == (value, True)


def test_only_faces_wanted_and_uncounted_are_looked_at() -> None:
    """A clean count stands, an engulfed pip stays asked about (``vision.trust``), a die the
    reader does not want counted (the network too unsure for a count to matter) is left."""
    img = _shadowed(5)
    none = PipCount(None, 3, 90.0)
    clean = PipCount(4, 4, 90.0)
    engulfed = PipCount(None, 1, 90.0, engulfed=True)
    faces = [FACE] * 4
    got = with_found(
        load_finder(),
        cut_faces(img, faces),
        [none, clean, engulfed, none],
        [True, True, True, False],
    )
    assert got[0] == PipCount(5, 5, 90.0, found=True)
    assert got[1:] == [clean, engulfed, none]


def test_a_blank_face_has_no_pips_found() -> None:
    img = table(160, 160, (70, 110, 60))
    draw_die(img, (80.0, 80.0), 40.0, 1, body=(200, 200, 200), pip=(200, 200, 200))
    counts = count_all(img, [FACE])
    assert with_found(load_finder(), cut_faces(img, [FACE]), counts, [True])[0] == counts[0]


def test_a_peak_neither_clearly_a_pip_nor_clearly_not_leaves_the_face_uncounted() -> None:
    grid = FACE_PX // STRIDE
    heat = np.zeros((grid, grid), np.float32)
    centre = grid // 2
    heat[centre, centre] = 0.9
    pips = pips_of(heat)
    assert pips is not None
    assert len(pips) == 1
    (u, v), cell = pips[0], STRIDE / (FACE_PX / FACE_SPAN)  # a cell in located sides
    assert abs(u) <= cell
    assert abs(v) <= cell
    heat[centre - 4, centre + 4] = 0.3  # a doubtful peak on the face
    assert pips_of(heat) is None
    heat[centre - 4, centre + 4] = 0.0
    heat[0, 0] = 0.3  # ... the same past the face's edge: no matter
    assert pips_of(heat) == pips


def test_networks_without_a_finder_of_their_own_share_the_shipped_one(tmp_path: Path) -> None:
    """The finder learnt renders alone: the networks held out of a photo source
    (``bench/loso_vision.py``) use the shipped one."""
    assert load_finder(str(tmp_path)).path == MODELS_DIR / MODEL_FILE
