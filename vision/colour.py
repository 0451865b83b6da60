"""The body colour of a die as a plain name (white, black, red, ...).

The die's face is mostly body with a few pips, so the body is the larger of the two brightness
classes (Otsu) in the middle of the face; its mean colour is then named by hue, saturation and
brightness.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.nets import U8

# Hue bounds on OpenCV's 0-180 scale: (upper bound, name), tried in order.
_HUES = ((8, "red"), (20, "orange"), (34, "yellow"), (85, "green"), (128, "blue"), (165, "purple"))


def body_colour(patch: U8) -> str:
    """Name of the body colour of the die centred in ``patch`` (BGR)."""
    h, w = patch.shape[:2]
    core = patch[h // 5 : h - h // 5, w // 5 : w - w // 5].reshape(-1, 3)
    grey = cv2.cvtColor(core.reshape(1, -1, 3), cv2.COLOR_BGR2GRAY).ravel()
    threshold, _ = cv2.threshold(grey.reshape(1, -1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    bright = grey > threshold
    body = bright if np.count_nonzero(bright) * 2 >= bright.size else ~bright
    count = int(np.count_nonzero(body))
    if count == 0:
        body, count = np.ones_like(bright), bright.size
    # the body's mean colour as one dot product of the mask with the pixels: sums of small
    # whole numbers are exact in float64, so this is np.mean's result, bit for bit, without
    # the copy a boolean index makes
    sums = body.astype(np.float64) @ core.astype(np.float64)
    mean = (sums / count).astype(np.uint8).reshape(1, 1, 3)
    hue, sat, val = (int(v) for v in cv2.cvtColor(mean, cv2.COLOR_BGR2HSV)[0, 0])
    return colour_name(hue, sat, val)


def colour_name(hue: int, sat: int, val: int) -> str:
    """Plain name of an OpenCV HSV colour (H 0-180, S and V 0-255)."""
    if val < 55:
        return "black"
    if sat < 45:
        if val > 150:
            return "white"
        return "grey" if val > 90 else "black"
    for bound, name in _HUES:
        if hue < bound:
            if name in ("red", "orange") and val < 110:
                return "brown" if name == "orange" else "red"
            return name
    return "red"
