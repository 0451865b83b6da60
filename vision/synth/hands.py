"""Where a hand seen from above, and its soft shadow, fall in the frame.

Shared by the renderer (which draws them) and the throw planner (which must know when a hand
has left the view: the rest frame of a throw).
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from vision.synth.geometry import _fix
from vision.synth.model import Hand


def _hand_polys(hand: Hand, w: int, h: int) -> tuple[list[npt.NDArray[np.int32]], float]:
    """Arm, palm and four fingers as polygons (px); also the palm radius."""
    x, y = hand.xy_px
    s = hand.size_px
    a = math.radians(hand.arm_deg)
    ax, ay = math.cos(a), math.sin(a)
    px_, py_ = -ay, ax  # across the hand
    far = 2 * (w + h)
    arm_w = 0.32 * s
    arm = np.array(
        [
            (x + px_ * arm_w, y + py_ * arm_w),
            (x + ax * far + px_ * arm_w, y + ay * far + py_ * arm_w),
            (x + ax * far - px_ * arm_w, y + ay * far - py_ * arm_w),
            (x - px_ * arm_w, y - py_ * arm_w),
        ]
    )
    polys = [_fix(arm)]
    ang = math.degrees(a)
    palm = cv2.ellipse2Poly(
        (int(x * 16), int(y * 16)), (int(0.42 * s * 16), int(0.36 * s * 16)), int(ang), 0, 360, 15
    )
    polys.append(np.asarray(palm, np.int32))
    for k, off in enumerate((-0.27, -0.09, 0.09, 0.27)):
        length = s * (0.42 if k in (1, 2) else 0.36)
        fx = x - ax * (0.36 * s + length / 2) + px_ * off * s
        fy = y - ay * (0.36 * s + length / 2) + py_ * off * s
        finger = cv2.ellipse2Poly(
            (int(fx * 16), int(fy * 16)),
            (int(length / 2 * 16), int(0.075 * s * 16)),
            int(ang),
            0,
            360,
            20,
        )
        polys.append(np.asarray(finger, np.int32))
    return polys, 0.42 * s


_HAND_SHADOW_SIGMA = 6.0  # blur of a hand's shadow, px at 640 wide


def _hand_shadow_shift(hand: Hand) -> npt.NDArray[np.int32]:
    """Offset of a hand's shadow (1/16 px, as the polygons), cast by a light above and behind."""
    k = hand.size_px / 120 * 16
    return np.array([[int(14 * k), int(10 * k)]], np.int32)


def _hand_in_frame(hand: Hand, w: int, h: int) -> bool:
    """Whether ``hand`` or its soft shadow touches a ``w`` x ``h`` frame (at 1/8 scale; the
    frame is grown by the shadow's blur, which darkens pixels that far inside)."""
    polys, _ = _hand_polys(hand, w, h)
    shift = _hand_shadow_shift(hand)
    margin = int(3 * _HAND_SHADOW_SIGMA * w / 640) + 2
    mask = np.zeros(((h + 2 * margin) // 8 + 1, (w + 2 * margin) // 8 + 1), np.uint8)
    off = np.array([[margin * 16, margin * 16]], np.int32)
    for p in [*polys, *(p + shift for p in polys)]:  # one call each: overlaps would cancel
        cv2.fillPoly(mask, [(p + off) // 8], 1, cv2.LINE_8, 4)
    return bool(mask.any())
