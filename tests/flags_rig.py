"""Shared helpers of the flag tests (``test_flags*.py``): the alarm flags, a true die's view."""

from __future__ import annotations

import math

from vision.flags import DieView
from vision.reading import DieFlag
from vision.synth import DieTruth

ALARMS = {DieFlag.COCKED, DieFlag.STACKED}


def view_of(d: DieTruth) -> DieView:
    (x0, y0), (x1, y1) = d.corners_xy[0], d.corners_xy[1]
    angle = (math.degrees(math.atan2(y1 - y0, x1 - x0)) + 45.0) % 90.0 - 45.0
    return DieView(d.center_xy, d.size_px, angle)
