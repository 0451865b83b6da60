"""``vision.annotate``: outlines and labels, and labels that keep off the other dice's faces
(the players read a roll's pips off this photo on their phones)."""

from __future__ import annotations

import numpy as np

from vision.annotate import annotate
from vision.reading import DieFlag, DieReading, Reading


def die(x: float, y: float, *, side: float = 30.0, cocked: float | None = None) -> DieReading:
    h = side / 2
    corners = ((x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h))
    flags = frozenset({DieFlag.COCKED}) if cocked is not None else frozenset()
    sure = ((DieFlag.COCKED, cocked),) if cocked is not None else ()
    return DieReading(6, (x, y), corners, side, "white", 0.99, flags, flag_confidence=sure)


def face(image: np.ndarray, d: DieReading, inset: int = 4) -> np.ndarray:
    """The inside of a die's outline (the outline itself and its halo left out)."""
    (x0, y0), (x1, y1) = d.corners_xy[0], d.corners_xy[2]
    return image[int(y0) + inset : int(y1) - inset, int(x0) + inset : int(x1) - inset]


def drawn(frame: np.ndarray, out: np.ndarray) -> np.ndarray:
    return np.asarray(np.abs(out.astype(int) - frame.astype(int)).max(axis=2) > 40)


def test_a_label_keeps_off_the_die_where_it_would_usually_go() -> None:
    """A cocked die's label goes above it; a neighbour right above it gets the label below
    instead, and the neighbour's pips stay as the camera saw them."""
    frame = np.full((240, 320, 3), 90, np.uint8)
    cocked, above = die(150, 130, cocked=0.97), die(150, 90)
    out = annotate(frame, Reading((cocked, above), (320, 240)), label_all=False)
    assert np.array_equal(face(out, above), face(frame, above))
    ink = drawn(frame, out)
    below = ink[int(cocked.corners_xy[2][1]) + 3 :, 100:260]
    assert below.any(), "the label is below the cocked die"
    # alone, the same die is labelled above, where labels go
    alone = annotate(frame, Reading((cocked,), (320, 240)), label_all=False)
    top = int(cocked.corners_xy[0][1])
    assert drawn(frame, alone)[top - 20 : top - 2, 100:260].any()
    assert not drawn(frame, alone)[int(cocked.corners_xy[2][1]) + 3 :].any()


def test_labels_keep_off_each_other() -> None:
    """Two cocked dice side by side: the first label above spans the space above both, so the
    second goes below rather than on top of it."""
    frame = np.full((240, 320, 3), 90, np.uint8)
    left, right = die(120, 120, cocked=0.95), die(180, 120, cocked=0.95)
    out = annotate(frame, Reading((left, right), (320, 240)))
    ink = drawn(frame, out)
    top, bottom = int(left.corners_xy[0][1]), int(left.corners_xy[2][1])
    assert ink[top - 20 : top - 2].any(), "one label above"
    assert ink[bottom + 3 : bottom + 22].any(), "the other below"


def test_a_die_at_the_frame_edge_keeps_its_label_off_its_own_face() -> None:
    """A die in the frame's top-left corner has no room above: its label goes below it, whole,
    not over its pips."""
    frame = np.full((240, 320, 3), 90, np.uint8)
    corner = die(18, 18, cocked=0.9)
    out = annotate(frame, Reading((corner,), (320, 240)))
    assert np.array_equal(face(out, corner), face(frame, corner))
    assert drawn(frame, out)[int(corner.corners_xy[2][1]) + 3 :].any()
