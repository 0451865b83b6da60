"""Real-time pacing for sources that are not cameras (replays, the demo): frames at a set rate.

Ticks follow an absolute schedule (no drift). A consumer that falls more than one period
behind re-anchors the schedule instead of receiving a burst of catch-up frames, as a live
camera would behave.
"""

from __future__ import annotations

from hardware.clock import Clock
from hardware.frames import FrameTimeoutError


class Pacer:
    """Waits for the next tick of an ``fps`` schedule; ``fps=None`` means as fast as asked."""

    def __init__(self, fps: float | None, clock: Clock) -> None:
        if fps is not None and not fps > 0:
            raise ValueError(f"fps must be positive (got {fps})")
        self.fps = fps
        self._clock = clock
        self._period = 0.0 if fps is None else 1.0 / fps
        self._next: float | None = None  # due time of the next tick; None = now

    def wait(self, timeout: float) -> float:
        """Sleep until the next tick and return its time; :class:`FrameTimeoutError` (after sleeping
        ``timeout``) when the tick is further away than that."""
        now = self._clock.now()
        if self._period == 0.0:
            return now
        due = now if self._next is None else self._next
        if due - now > timeout:
            self._clock.sleep(max(0.0, timeout))
            raise FrameTimeoutError(
                f"next frame due in {due - now:.3f} s, beyond the {timeout} s timeout"
            )
        if now - due > self._period:  # consumer fell behind: re-anchor, no catch-up burst
            due = now
        self._clock.sleep(due - now)
        self._next = due + self._period
        return max(due, now)
