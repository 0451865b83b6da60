"""Settle detection: one "settled" event per throw, once the dice have stopped and no hand is in
view, from a stream of frames.

A pure state machine: :func:`step` takes the previous :class:`SettleState`, one frame and the
:class:`SettleParams` and returns the next state and the event, if any (``SettleDetector`` wraps
it for callers that prefer an object). Each frame is reduced to a small grey image (the 160-px
preview the cameras already carry is ideal), compared with the previous one after removing the
global brightness change (slow lighting drift, auto exposure), and counted as *moving* when
enough pixels changed by more than the noise. After ``still_ms`` without motion the detector
compares the scene with the one before the motion began:

- a large change touching the frame border is an arm or hand resting in view: keep waiting;
- a change over most of the frame is a lighting change: re-baseline silently;
- new foreground (die-like content where the pad was bare) means dice landed: emit ``Settled``;
- otherwise something was only taken away (kept dice removed) or nothing changed: no event.

So a throw emits exactly once, and a hand taking kept dice off the pad emits nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import Enum

import cv2
import numpy as np
import numpy.typing as npt

Grey = npt.NDArray[np.uint8]
Work = npt.NDArray[np.float32]


@dataclass(frozen=True)
class SettleParams:
    """Tuning, in the units stated (working px are pixels of the frame reduced to
    ``work_width``)."""

    fps: float = 30.0  # frames per second the detector is fed
    still_ms: float = 200.0  # stillness needed before "settled", milliseconds
    work_width: int = 160  # px: frames are reduced to this width first
    change_level: float = 12.0  # grey levels (0-255) a working pixel must change to count
    min_moving_px: int = 3  # changed working px between two frames that mean motion
    foreground_level: float = 18.0  # grey levels from the local background that make content
    min_new_px: int = 8  # working px of new content that make a rest a throw
    hand_px: int = 120  # working px: a change this big touching the border is an arm
    relight_frac: float = 0.5  # a change over this fraction of the frame is a lighting change
    background_px: int = 31  # working px: median window estimating the bare pad (> a die)

    def __post_init__(self) -> None:
        if not self.fps > 0 or not self.still_ms > 0:
            raise ValueError("fps and still_ms must be positive")
        if self.work_width < 16:
            raise ValueError("work_width must be at least 16 px")
        if self.background_px < 3 or self.background_px % 2 == 0:
            raise ValueError("background_px must be an odd number >= 3")
        if not 0 < self.relight_frac <= 1:
            raise ValueError("relight_frac must be within (0, 1]")

    @property
    def still_frames(self) -> int:
        """Consecutive still frames that make a rest, at ``fps``."""
        return max(1, math.ceil(self.still_ms * self.fps / 1000 - 1e-9))


class Phase(Enum):
    IDLE = "idle"  # still, nothing pending
    MOVING = "moving"  # something moved since the last rest; waiting for stillness


@dataclass(frozen=True)
class Settled:
    """The dice of a throw have come to rest in frame ``index`` (0-based, frames fed so far)."""

    index: int
    still_frames: int


@dataclass(frozen=True)
class SettleState:
    """Everything the detector remembers; treat the arrays as read-only."""

    phase: Phase = Phase.IDLE
    index: int = -1  # index of the last frame fed
    still: int = 0  # consecutive still frames
    previous: Work | None = None
    reference: Work | None = None  # the still scene before the current motion


def reduce(frame: npt.NDArray[np.uint8], width: int) -> Work:
    """Grey, ``width`` px wide, lightly smoothed, as float32: the detector's working image."""
    if frame.ndim == 3:
        frame = np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), np.uint8)
    elif frame.ndim != 2:
        raise ValueError(f"expected a grey or BGR frame, got shape {frame.shape}")
    h, w = frame.shape
    if w != width:
        height = max(1, round(h * width / w))
        frame = np.asarray(cv2.resize(frame, (width, height), interpolation=cv2.INTER_AREA))
    small = np.asarray(frame, np.float32)
    return np.asarray(cv2.GaussianBlur(small, (3, 3), 0), np.float32)


def _change(a: Work, b: Work, level: float) -> npt.NDArray[np.bool_]:
    """Pixels of ``a`` that differ from ``b`` by more than ``level`` once the global gain
    between them (lighting drift, exposure) is divided out."""
    mb, ma = float(b.mean()), float(a.mean())
    gain = mb / ma if ma > 1e-3 else 1.0
    return np.asarray(np.abs(a * gain - b) > level)


def _foreground(img: Work, p: SettleParams) -> npt.NDArray[np.bool_]:
    """Content that is not bare pad: far from the local median (the pad around it)."""
    h, w = img.shape
    u8 = np.clip(img, 0, 255).astype(np.uint8)
    # the median of a quarter-size image, brought back up: the same bare-pad estimate for a
    # sixteenth of the work
    small = cv2.resize(u8, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
    k = max(3, (p.background_px // 4) | 1)
    bg = cv2.resize(cv2.medianBlur(small, k), (w, h), interpolation=cv2.INTER_LINEAR)
    return np.asarray(np.abs(img - bg.astype(np.float32)) > p.foreground_level)


def _verdict(cur: Work, ref: Work, p: SettleParams) -> str:
    """Classify a rest against the scene before the motion: hand, relight, throw or nothing."""
    changed = _change(cur, ref, p.change_level)
    total = int(changed.sum())
    if total >= p.relight_frac * changed.size:
        return "relight"
    if total == 0:
        return "nothing"
    mask = changed.astype(np.uint8)
    n, _labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    h, w = mask.shape
    for i in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        if area >= p.hand_px and (x == 0 or y == 0 or x + bw >= w or y + bh >= h):
            return "hand"
    kernel = np.ones((3, 3), np.uint8)
    before = cv2.dilate(_foreground(ref, p).astype(np.uint8), kernel) > 0
    near = cv2.dilate(mask, kernel) > 0
    new = _foreground(cur, p) & ~before & near
    return "throw" if int(new.sum()) >= p.min_new_px else "nothing"


def step(
    state: SettleState, frame: npt.NDArray[np.uint8], params: SettleParams = SettleParams()
) -> tuple[SettleState, Settled | None]:
    """Feed one frame (grey or BGR, any size); return the new state and a ``Settled`` event
    when this frame completes the rest of a throw."""
    cur = reduce(frame, params.work_width)
    index = state.index + 1
    if state.previous is None or state.previous.shape != cur.shape:
        return SettleState(Phase.IDLE, index, 0, cur, cur), None
    moving = int(_change(cur, state.previous, params.change_level).sum()) >= params.min_moving_px
    if moving:
        phase = Phase.MOVING
        return SettleState(phase, index, 0, cur, state.reference), None
    still = state.still + 1
    if state.phase is Phase.IDLE:
        return SettleState(Phase.IDLE, index, still, cur, cur), None
    if still < params.still_frames:
        return replace(state, index=index, still=still, previous=cur), None
    ref = state.reference if state.reference is not None else cur
    verdict = _verdict(cur, ref, params)
    if verdict == "hand":
        return replace(state, index=index, still=still, previous=cur), None
    event = Settled(index, still) if verdict == "throw" else None
    return SettleState(Phase.IDLE, index, still, cur, cur), event


class SettleDetector:
    """A stateful convenience around :func:`step` for a frame loop."""

    def __init__(self, params: SettleParams = SettleParams()) -> None:
        self.params = params
        self.state = SettleState()

    def feed(self, frame: npt.NDArray[np.uint8]) -> Settled | None:
        self.state, event = step(self.state, frame, self.params)
        return event

    @property
    def moving(self) -> bool:
        return self.state.phase is Phase.MOVING

    def reset(self) -> None:
        self.state = SettleState()
