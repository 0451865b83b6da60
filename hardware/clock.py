"""Time as an injectable edge: a real monotonic clock and a manual fake that ships as a feature.

Pacing (replay at 30 fps), capture timeouts, stall detection and reconnect back-off all ask a
:class:`Clock` instead of :mod:`time`, so tests drive minutes of camera trouble in microseconds
by handing in a :class:`ManualClock`.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """Monotonic seconds and a way to wait for them to pass."""

    def now(self) -> float:
        """Monotonic seconds (arbitrary origin); never goes backwards."""
        ...

    def sleep(self, seconds: float) -> None:
        """Let ``seconds`` pass (a no-op for zero or negative values)."""
        ...


class MonotonicClock:
    """The real clock: :func:`time.monotonic` and :func:`time.sleep`."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def __repr__(self) -> str:
        return "MonotonicClock()"


class ManualClock:
    """A fake clock whose time only moves when someone sleeps on it or calls :meth:`advance`.

    Sleeping advances time instantly, so code that paces itself or waits out a timeout runs at
    full speed yet sees exactly the times it would have seen in real life. Thread-safe.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()
        self.slept = 0.0  # total seconds asked to sleep, for assertions about pacing

    def now(self) -> float:
        with self._lock:
            return self._now

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            with self._lock:
                self._now += seconds
                self.slept += seconds

    def advance(self, seconds: float) -> None:
        """Move time forward without counting it as sleep (something else took that long)."""
        if seconds < 0:
            raise ValueError("a monotonic clock cannot go backwards")
        with self._lock:
            self._now += seconds

    def __repr__(self) -> str:
        return f"ManualClock(now={self.now():.3f})"


REAL_CLOCK: Clock = MonotonicClock()
"""The process-wide real clock (stateless, so sharing it is safe)."""
