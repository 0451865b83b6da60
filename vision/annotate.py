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
    for die in reading.dice:
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
        x = int(min(p[0] for p in corners))
        y = int(min(p[1] for p in corners)) - 3 * thick
        org = (x, max(y, 12 * thick))
        font = cv2.FONT_HERSHEY_SIMPLEX
        # a dark halo under the coloured text keeps it legible on any table
        cv2.putText(out, text, org, font, scale, (0, 0, 0), thick + 2, cv2.LINE_AA)
        cv2.putText(out, text, org, font, scale, colour, thick, cv2.LINE_AA)
    return out


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
