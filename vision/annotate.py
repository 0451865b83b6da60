"""Draw a ``Reading`` onto a copy of its frame: each die outlined (top-face corners) and
labelled with its value and flags (a judged flag with its confidence, "cocked 93%"). Kept
apart from detection, which never draws."""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from vision.reading import DieFlag, DieReading, Reading

_OK = (60, 200, 60)  # BGR: scorable
_FLAGGED = (0, 140, 255)  # flagged but read
_UNREADABLE = (60, 60, 230)


def annotate(frame: np.ndarray, reading: Reading, *, label_all: bool = True) -> np.ndarray:
    """A BGR copy of ``frame`` with every die of ``reading`` outlined and labelled; with
    ``label_all`` False only the flagged dice are labelled (a photo players read the dice off
    themselves: fewer labels to hide a neighbour's pips; the outline's colour still says
    scored / flagged / unreadable)."""
    out = frame.copy() if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    if out.shape[2] == 4:
        out = np.ascontiguousarray(out[:, :, :3])
    thick = max(1, round(max(out.shape[:2]) / 640))
    scale = 0.45 * thick
    boxes = [_box(die.corners_xy or _square(die)) for die in reading.dice]
    taken: list[Box] = []  # labels placed so far: the next one keeps off them too
    for i, (die, box) in enumerate(zip(reading.dice, boxes, strict=True)):
        colour = _UNREADABLE if die.value is None else _FLAGGED if die.flags else _OK
        corners = die.corners_xy or _square(die)
        pts = np.round(np.array(corners)).astype(np.int32).reshape(-1, 1, 2)
        # a dark halo under the coloured outline keeps it visible on dice of its own colour
        cv2.polylines(out, [pts], True, (0, 0, 0), thick + 2, cv2.LINE_AA)
        cv2.polylines(out, [pts], True, colour, thick, cv2.LINE_AA)
        if not (label_all or die.flags):
            continue
        text = "?" if die.value is None else str(die.value)
        if die.flags:  # a judged flag with how sure it is: "cocked 93%"
            text += " " + ",".join(_flag_label(die, f) for f in sorted(die.flags))
        (w, h), base = cv2.getTextSize(text, _FONT, scale, thick + 2)
        others = [b for j, b in enumerate(boxes) if j != i] + taken
        placed = _label_place(
            box, (w, h + base), others, len(boxes) - 1, out.shape[:2], gap=3 * thick
        )
        org = (round(placed[0]), round(placed[1]) + h)  # putText wants the baseline's left end
        taken.append(placed)
        # a dark halo under the coloured text keeps it legible on any table
        cv2.putText(out, text, org, _FONT, scale, (0, 0, 0), thick + 2, cv2.LINE_AA)
        cv2.putText(out, text, org, _FONT, scale, colour, thick, cv2.LINE_AA)
    return out


Box = tuple[float, float, float, float]
"""x0, y0, x1, y1 (pixels)."""

_FONT = cv2.FONT_HERSHEY_SIMPLEX


def _box(corners: Sequence[tuple[float, float]]) -> Box:
    xs, ys = [p[0] for p in corners], [p[1] for p in corners]
    return min(xs), min(ys), max(xs), max(ys)


def _label_place(
    die: Box,
    size: tuple[int, int],
    others: Sequence[Box],
    n_dice: int,
    frame_hw: tuple[int, int],
    gap: int,
) -> Box:
    """Where a label of ``size`` (w, h incl. descent) goes beside ``die``: above it, else below
    (each flush with the die's left or right side), right or left -- the first spot inside the
    frame that comes no nearer than ``gap`` to another die or a label placed before; failing
    that, the one covering least of the dice, then of the labels. A label over a neighbour
    hides the pips the players read off the photo. ``others`` holds the other dice's boxes,
    then the labels' (``n_dice`` of them are dice). Returns the box the label covers."""
    w, h = size
    x0, y0, x1, y1 = die
    fh, fw = frame_hw
    spots = (
        (x0, y0 - gap - h),  # above, left-aligned (the usual place)
        (x1 - w, y0 - gap - h),
        (x0, y1 + gap),  # below
        (x1 - w, y1 + gap),
        (x1 + gap, (y0 + y1 - h) / 2),  # right
        (x0 - gap - w, (y0 + y1 - h) / 2),  # left
    )
    best: tuple[tuple[float, float, int], Box] | None = None
    for rank, (lx, ly) in enumerate(spots):
        # slid into the frame: a die at the edge still gets its label beside it
        lx, ly = min(max(lx, 0.0), max(fw - w, 0.0)), min(max(ly, 0.0), max(fh - h, 0.0))
        rect = (lx, ly, lx + w, ly + h)
        near = (lx - gap, ly - gap, lx + w + gap, ly + h + gap)
        dice = sum(_overlap(near, b) for b in others[:n_dice]) + _overlap(rect, die)
        cost = (dice, sum(_overlap(near, b) for b in others[n_dice:]), rank)
        if best is None or cost < best[0]:
            best = (cost, rect)
    assert best is not None
    return best[1]


def _overlap(a: Box, b: Box) -> float:
    """Area two boxes share."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, w) * max(0.0, h)


def _square(die: DieReading) -> tuple[tuple[float, float], ...]:
    """A die given without corners (a reading typed in, not seen): its size around its centre."""
    (x, y), h = die.center_xy, die.size_px / 2
    return ((x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h))


def _flag_label(die: DieReading, flag: DieFlag) -> str:
    sure = die.flag_sure(flag)
    if sure is None:
        return flag.value
    # 0.997 is not certain: floored, not rounded (after float error: 100 * 0.57 is 56.99...)
    percent = 100 if sure >= 1.0 else min(99, math.floor(round(100 * sure, 6)))
    return f"{flag.value} {percent}%"


def contact_sheet(tiles: Sequence[np.ndarray], cols: int = 8) -> np.ndarray:
    """Equal-sized tiles in rows of ``cols`` (the last row padded black): one image to look
    through a benchmark's misreads or flags at a glance."""
    if not tiles:
        raise ValueError("a contact sheet needs at least one tile")
    padded = list(tiles) + [np.zeros_like(tiles[0])] * (-len(tiles) % cols)
    return np.vstack([np.hstack(padded[i : i + cols]) for i in range(0, len(padded), cols)])
