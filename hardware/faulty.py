"""Inject camera faults on purpose: for the fault tests, and for bar owners to rehearse.

A :class:`FaultPlan` is a timeline of faults parsed from text such as
``stall@3s,garbage@10+5,raise@40,vanish@20s+4s,freeze@60s`` and shared by every source opened
from the same spec, so a camera that "vanishes" stays gone across reconnect attempts until its
time is up. :class:`FaultySource` wraps any real source and applies the plan.

Fault grammar (comma separated), where WHEN is a frame count (``10``: after 10 frames have been
delivered, counted across reconnects) or seconds since the first open (``3s``):

- ``stall@WHEN`` — frames stop until the source is closed and reopened (a hung driver);
  ``stall@WHEN+Ds`` — frames stop for D seconds, then resume by themselves;
- ``freeze@WHEN`` — the last frame is sent again and again (new timestamps, same image and
  sensor stamp) until the source is closed and reopened: a driver re-sending an old buffer;
  ``freeze@WHEN+Ds`` — for D seconds, then live frames again;
- ``raise@WHEN`` — one read fails with :class:`~hardware.frames.CameraFailedError`;
- ``garbage@WHEN[+N]`` — the next N frames (default 1) are garbage, cycling through
  all-black, wrong shape, wrong dtype, a tiny image and no frame at all;
- ``vanish@WHEN+Ds`` — the camera disappears: reads fail and reopening fails for D seconds.

A plan with a freeze makes its source a ``live_sensor`` (see :class:`~hardware.frames.FrameSource`)
whatever it wraps, so the supervisor judges a rehearsed freeze as it would a real camera's.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import cast

import numpy as np

from hardware.clock import REAL_CLOCK, Clock
from hardware.frames import (
    CameraFailedError,
    CameraUnavailableError,
    Frame,
    FrameSource,
    FrameTimeoutError,
)


class FaultKind(StrEnum):
    STALL = "stall"
    RAISE = "raise"
    GARBAGE = "garbage"
    VANISH = "vanish"
    FREEZE = "freeze"


GARBAGE_KINDS = ("black", "shape", "dtype", "tiny", "none")
"""What successive garbage frames look like, in turn."""


@dataclass(frozen=True)
class Fault:
    """One planned fault: triggered ``at_frame`` frames or ``at_s`` seconds into the plan."""

    kind: FaultKind
    at_frame: int | None = None
    at_s: float | None = None
    duration_s: float | None = None  # stall / vanish / freeze
    count: int = 1  # garbage frames

    def __post_init__(self) -> None:
        if (self.at_frame is None) == (self.at_s is None):
            raise ValueError("a fault needs exactly one trigger: a frame count or seconds")
        if self.kind is FaultKind.VANISH and self.duration_s is None:
            raise ValueError("vanish needs a duration, e.g. vanish@5s+3s")
        if self.count < 1:
            raise ValueError("garbage needs at least one frame")

    def __str__(self) -> str:
        when = f"{self.at_frame}" if self.at_frame is not None else f"{self.at_s:g}s"
        extra = ""
        if self.duration_s is not None:
            extra = f"+{self.duration_s:g}s"
        elif self.kind is FaultKind.GARBAGE and self.count != 1:
            extra = f"+{self.count}"
        return f"{self.kind}@{when}{extra}"


_FAULT_RE = re.compile(
    r"^(?P<kind>[a-z]+)@(?P<when>\d+(?:\.\d+)?)(?P<unit>s?)(?:\+(?P<extra>\d+(?:\.\d+)?)(?P<xunit>s?))?$"
)


def parse_faults(text: str) -> tuple[Fault, ...]:
    """Parse ``stall@3s,garbage@10+5`` (see the module docstring); ``ValueError`` names the bad
    item and the grammar."""
    faults = []
    for raw in text.split(","):
        item = raw.strip().lower()
        if not item:
            continue
        m = _FAULT_RE.match(item)
        if m is None or m["kind"] not in FaultKind.__members__.values():
            raise ValueError(
                f"bad fault {raw.strip()!r}: expected KIND@WHEN[+EXTRA] with KIND one of "
                f"{', '.join(k.value for k in FaultKind)} (e.g. stall@3s, garbage@10+5, "
                "vanish@5s+3s, freeze@30s)"
            )
        kind = FaultKind(m["kind"])
        when = float(m["when"])
        timed = m["unit"] == "s"
        if not timed and not when.is_integer():
            raise ValueError(f"bad fault {item!r}: a frame count must be a whole number")
        duration: float | None = None
        count = 1
        if m["extra"] is not None:
            extra = float(m["extra"])
            if kind is FaultKind.GARBAGE:
                if m["xunit"] or not extra.is_integer():
                    raise ValueError(f"bad fault {item!r}: garbage takes a frame count (+5)")
                count = int(extra)
            elif kind is FaultKind.RAISE:
                raise ValueError(f"bad fault {item!r}: raise takes no duration")
            else:
                duration = extra
        faults.append(
            Fault(
                kind,
                at_frame=None if timed else int(when),
                at_s=when if timed else None,
                duration_s=duration,
                count=count,
            )
        )
    if not faults:
        raise ValueError("empty fault plan")
    return tuple(faults)


class FaultPlan:
    """The fault timeline and its progress, shared by every source opened from one spec."""

    def __init__(self, faults: tuple[Fault, ...] | str, *, clock: Clock = REAL_CLOCK) -> None:
        self.faults = parse_faults(faults) if isinstance(faults, str) else tuple(faults)
        self.clock = clock
        self._lock = threading.Lock()
        self._start: float | None = None
        self._pending = list(self.faults)
        self.frames = 0  # good frames delivered through the plan, across reconnects
        self.fired: list[Fault] = []
        self.stall_until = 0.0
        self.freeze_until = 0.0
        self.vanished_until = 0.0
        self.garbage_left = 0
        self._garbage_n = 0

    def __str__(self) -> str:
        return ",".join(str(f) for f in self.faults)

    def start(self) -> None:
        """Start the clock of timed faults (on the first open; later calls do nothing)."""
        with self._lock:
            if self._start is None:
                self._start = self.clock.now()

    def due(self) -> list[Fault]:
        """Faults whose trigger has been reached, each returned once (in plan order)."""
        now = self.clock.now()
        with self._lock:
            start = now if self._start is None else self._start
            ready = [
                f
                for f in self._pending
                if (f.at_frame is not None and self.frames >= f.at_frame)
                or (f.at_s is not None and now - start >= f.at_s)
            ]
            for f in ready:
                self._pending.remove(f)
                self.fired.append(f)
            return ready

    def vanished(self) -> float:
        """Seconds until a vanished camera returns (0 when it is present)."""
        return max(0.0, self.vanished_until - self.clock.now())

    def next_garbage(self) -> str:
        kind = GARBAGE_KINDS[self._garbage_n % len(GARBAGE_KINDS)]
        self._garbage_n += 1
        return kind


def garbage_frame(kind: str, like: Frame) -> Frame:
    """A broken frame of the given kind, shaped after a real one."""
    h, w = like.image.shape[:2]
    if kind == "black":
        return Frame(np.zeros_like(like.image), like.timestamp, like.seq, like.lores)
    if kind == "shape":
        return Frame(np.full((h, w), 128, np.uint8), like.timestamp, like.seq, like.lores)
    if kind == "dtype":
        return Frame(like.image.astype(np.float32), like.timestamp, like.seq, like.lores)
    if kind == "tiny":
        return Frame(np.full((4, 4, 3), 128, np.uint8), like.timestamp, like.seq, None)
    if kind == "none":
        return cast(Frame, None)  # what a buggy driver wrapper hands back
    raise ValueError(f"unknown garbage kind {kind!r}")


class FaultySource(FrameSource):
    """Wraps ``inner`` and makes it misbehave according to ``plan``."""

    kind = "faulty"
    hint = "an injected fault (a rehearsal, not a real camera problem)"

    def __init__(self, inner: FrameSource, plan: FaultPlan) -> None:
        gone = plan.vanished()
        if gone > 0:
            inner.close()
            raise CameraUnavailableError(f"camera vanished (injected fault), back in {gone:.1f} s")
        plan.start()
        self.inner = inner
        self.plan = plan
        self.live_sensor = inner.live_sensor or any(f.kind is FaultKind.FREEZE for f in plan.faults)
        self._clock = plan.clock
        self._hung = False  # an open-ended stall: only closing this source ends it
        self._stuck = False  # an open-ended freeze: likewise
        self._dead = False  # this source saw its camera vanish
        self._last: Frame | None = None  # the last good frame sent: what a freeze repeats

    def describe(self) -> str:
        return f"faulty [{self.plan}]: {self.inner.describe()}"

    def read(self, timeout: float) -> Frame:
        self._check_open()
        plan = self.plan
        failed: Fault | None = None
        for fault in plan.due():  # apply every due fault before raising: due() hands each once
            if fault.kind is FaultKind.RAISE:
                failed = failed or fault
            elif fault.kind is FaultKind.VANISH:
                assert fault.duration_s is not None
                plan.vanished_until = self._clock.now() + fault.duration_s
                self._dead = True
            elif fault.kind is FaultKind.STALL:
                if fault.duration_s is None:
                    self._hung = True
                else:
                    plan.stall_until = self._clock.now() + fault.duration_s
            elif fault.kind is FaultKind.FREEZE:
                if fault.duration_s is None:
                    self._stuck = True
                else:
                    plan.freeze_until = self._clock.now() + fault.duration_s
            else:
                plan.garbage_left += fault.count
        if failed is not None:
            raise CameraFailedError(f"injected fault {failed}: camera read failed")
        if self._dead:
            raise CameraFailedError("camera vanished (injected fault)")
        if self._hung:
            self._clock.sleep(timeout)
            raise FrameTimeoutError(f"no frame within {timeout} s (injected stall)")
        wait = plan.stall_until - self._clock.now()
        if wait > 0:
            if wait > timeout:
                self._clock.sleep(timeout)
                raise FrameTimeoutError(f"no frame within {timeout} s (injected stall)")
            self._clock.sleep(wait)
            timeout -= wait
        frame = self.inner.read(max(0.0, timeout))
        if plan.garbage_left > 0:
            plan.garbage_left -= 1
            return garbage_frame(plan.next_garbage(), frame)
        if self._last is not None and (self._stuck or plan.freeze_until > self._clock.now()):
            # paced by the live frame it replaces, stamped as a driver re-sending a buffer is
            frame = replace(self._last, timestamp=frame.timestamp, seq=frame.seq)
        self._last = frame
        plan.frames += 1
        return frame

    def _release(self) -> None:
        self.inner.close()
