"""The top face's size from its pips: precise enough to tell a die on a die (4-8 % larger)
from the flat dice beside it, from the reader's rough centre and size. The size cue that
compares dice is in ``test_pipsize_size_cue.py``, the pad's learnt flat size in
``test_pipsize_learnt.py``."""

from __future__ import annotations

import math
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from vision_drawing import draw_die, table

from vision.pipsize import face_size, size_ratio, square_on, symmetry_centre
from vision.reading import FaceSize, Pad


def drawn(value: int, side: float, angle: float, **colours: tuple[int, int, int]) -> np.ndarray:
    img = table(200, 200)
    draw_die(img, (100.0, 100.0), side, value, angle_deg=angle, **colours)
    return img


@pytest.mark.parametrize("value", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("angle", [0.0, 17.0, 38.0])
def test_two_sizes_of_a_face_compare_to_a_percent(value: int, angle: float) -> None:
    """The same face drawn 5 % larger measures 5 % larger (+-1 %), from a located centre off by
    a tenth of a side and a located size 20 % out -- what the reader gives."""
    sizes = []
    for side, wrong in ((40.0, 1.2), (42.0, 0.85)):
        img = drawn(value, side, angle)
        m = face_size(img, (100.0 + 0.1 * side, 100.0 - 0.07 * side), side * wrong, value)
        assert m is not None
        assert m.consistent
        assert math.dist(m.center_xy, (100.0, 100.0)) < 0.03 * side
        sizes.append(m.side_px)
    assert sizes[1] / sizes[0] == pytest.approx(42.0 / 40.0, abs=0.01)
    # drawn pips sit 0.27 sides out, the standard layout's 0.26: the absolute size is ~4 % over
    assert sizes[0] == pytest.approx(40.0, rel=0.06)


def test_light_pips_on_a_dark_die_measure_alike() -> None:
    dark = drawn(5, 40.0, 10.0, body=(30, 30, 30), pip=(240, 240, 240))
    light = drawn(5, 40.0, 10.0)
    a = face_size(dark, (103.0, 98.0), 46.0, 5)
    b = face_size(light, (103.0, 98.0), 46.0, 5)
    assert a is not None
    assert b is not None
    assert a.side_px == pytest.approx(b.side_px, rel=0.015)


def test_a_one_an_unread_die_and_an_empty_patch_have_no_size() -> None:
    img = drawn(1, 40.0, 0.0)
    assert face_size(img, (100.0, 100.0), 40.0, 1) is None
    assert face_size(drawn(4, 40.0, 0.0), (100.0, 100.0), 40.0, None) is None
    assert face_size(np.full((200, 200, 3), 128, np.uint8), (100.0, 100.0), 40.0, 4) is None


def test_the_centre_of_symmetry_is_the_face_centre() -> None:
    img = drawn(6, 44.0, 25.0)
    cx, cy = symmetry_centre(img, (112.0, 95.0), 50.0)
    assert math.dist((cx, cy), (100.0, 100.0)) < 1.0


def test_a_foreshortened_face_is_not_consistent() -> None:
    """A tilted die's face is squeezed one way: measured, but not to be compared."""
    img = drawn(4, 40.0, 0.0)
    squeezed = cv2.resize(img, (200, 170), interpolation=cv2.INTER_AREA)  # 15 % shorter
    squeezed = cv2.copyMakeBorder(squeezed, 15, 15, 0, 0, cv2.BORDER_REPLICATE)
    m = face_size(cast(npt.NDArray[np.uint8], squeezed), (100.0, 100.0), 40.0, 4)
    assert m is not None
    assert not m.consistent
    flat = face_size(img, (100.0, 100.0), 40.0, 4)
    assert flat is not None
    assert flat.consistent


def test_size_ratio_compares_with_consistent_references_that_agree() -> None:
    def fs(side: float, ok: bool = True) -> FaceSize:
        return FaceSize(side, (0.0, 0.0), 0.0, ok)

    assert size_ratio(fs(42.0), [fs(40.0), fs(40.4), fs(40.8)], agree=0.03) == 42 / 40.4
    assert size_ratio(fs(42.0), [fs(40.0), fs(50.0, ok=False), None], agree=0.03) == 42 / 40
    assert size_ratio(fs(42.0), [fs(40.0), fs(41.6)], agree=0.03) is None  # a slant, or not flat
    assert size_ratio(fs(42.0), [fs(40.0)], agree=0.03, at_least=2) is None
    assert size_ratio(fs(42.0, ok=False), [fs(40.0)], agree=0.03) is None
    assert size_ratio(None, [fs(40.0)], agree=0.03) is None
    assert size_ratio(fs(42.0), [None, fs(40.0, ok=False)], agree=0.03) is None


def test_a_pad_seen_square_on_is_a_parallelogram() -> None:
    """From above, a rectangular pad stays a rectangle (turned or not); from a slant its far
    edge is shorter, and a die there looks smaller."""
    assert square_on(Pad(((100.0, 80.0), (540.0, 80.0), (540.0, 400.0), (100.0, 400.0))))
    turned = [
        (320 + 200 * math.cos(a) - 150 * math.sin(a), 240 + 200 * math.sin(a) + 150 * math.cos(a))
        for a in (0.3, 0.3 + math.pi / 2, 0.3 + math.pi, 0.3 + 3 * math.pi / 2)
    ]
    assert square_on(Pad(tuple(turned)))
    assert not square_on(Pad(((160.0, 80.0), (480.0, 80.0), (560.0, 400.0), (80.0, 400.0))))
    assert not square_on(None)
    assert not square_on(Pad(((0.0, 0.0), (10.0, 0.0), (5.0, 9.0))))  # not a quadrilateral


def test_a_slight_slant_is_not_square_on() -> None:
    """A far edge about 5 % shorter than the near one makes a die at a far corner look 7 %
    smaller than at a near one -- as much as a die on a die -- so the pad is not square on; an
    outline a pixel off a rectangle is."""
    assert not square_on(Pad(((110.0, 80.0), (530.0, 80.0), (540.0, 400.0), (100.0, 400.0))))
    assert square_on(Pad(((101.0, 80.0), (539.0, 80.0), (540.0, 400.0), (100.0, 400.0))))
