"""Keep a camera delivering frames for months: detect stalls, errors and garbage, reconnect.

:class:`CameraSupervisor` wraps whatever a :class:`~hardware.sources.SourceOpener` opens. Its
``read`` never raises and never blocks much past its timeout: it hands back a good frame, or
``None`` while the camera is away. Behind that it closes a source that stalls (no good frame
for ``stall_after`` seconds), freezes (a real sensor re-sending the very same image for
``freeze_after`` seconds: a driver that ran out of buffers, not a still pad, since sensor noise
always moves some pixels), raises, or keeps returning garbage, and reopens it with
exponential back-off. Every change is published as a frozen :class:`CameraStatus` (for the
scoreboard and the status LED), including the likely cause for that kind of camera. With no
camera at start the table runs on manual entry while the supervisor keeps trying.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from hardware.clock import REAL_CLOCK, Clock
from hardware.closing import Closing
from hardware.frames import (
    CameraError,
    CameraUnavailableError,
    EndOfStreamError,
    Frame,
    FrameSource,
    FrameTimeoutError,
    frame_fingerprint,
    frame_problem,
)

log = logging.getLogger(__name__)

GENERIC_HINT = "check the camera's cable and power"


class CameraState(StrEnum):
    STARTING = "starting"  # opening, or opened and waiting for the first good frame
    LIVE = "live"  # good frames are arriving
    OFFLINE = "offline"  # was live, lost it; reconnecting (manual entry meanwhile)
    MANUAL = "manual"  # no camera since start; manual entry, still retrying
    DISABLED = "disabled"  # no camera configured; manual entry only
    ENDED = "ended"  # a finite replay has finished
    CLOSED = "closed"


@dataclass(frozen=True)
class CameraStatus:
    """What the table shows about its camera. ``since`` and ``retry_at`` are clock times."""

    state: CameraState
    message: str
    since: float
    source: str
    failures: int = 0  # failed attempts in a row (open errors, stalls, crashes)
    retry_at: float | None = None

    @property
    def ok(self) -> bool:
        """Frames are flowing: rolls are read by the camera."""
        return self.state is CameraState.LIVE

    @property
    def manual_entry(self) -> bool:
        """Rolls must be entered on a phone meanwhile."""
        return self.state is not CameraState.LIVE and self.state is not CameraState.STARTING

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state.value,
            "ok": self.ok,
            "manual_entry": self.manual_entry,
            "message": self.message,
            "source": self.source,
            "failures": self.failures,
        }


@dataclass(frozen=True)
class Backoff:
    """Reconnect delays: ``initial``, then ×``factor`` per failure, capped at ``maximum``.

    A camera that comes back counts as back only once it has stayed live ``stable`` seconds:
    a failure before that goes on with the back-off where it was. Without it a flapping camera
    (a loose cable: one good frame, then an error) was retried every ``initial`` seconds, with
    a warning each time, all night."""

    initial: float = 0.5
    factor: float = 2.0
    maximum: float = 30.0
    stable: float = 60.0

    def delay(self, failures: int) -> float:
        """Seconds to wait after the ``failures``-th failure in a row (1-based)."""
        if failures <= 0:
            return 0.0
        try:
            grown = self.initial * self.factor ** (failures - 1)
        except OverflowError:  # ~1000 failures in a row: a camera away all night, still capped
            return float(self.maximum)
        return float(min(self.maximum, grown))


Opener = Callable[[], FrameSource]


class CameraSupervisor(Closing):
    """Reads frames from ``opener``'s sources and survives them failing.

    ``opener`` is a :class:`~hardware.sources.SourceOpener` (its ``hint`` and ``enabled`` are
    used) or any callable returning an open source; None means no camera (manual entry).
    ``stall_after`` seconds without a good frame count as a stall; ``garbage_limit`` unusable
    frames in a row count as a failure even if they arrive quickly. ``freeze_after`` seconds of
    the same image (or of a driver stamp that stops advancing) from a ``live_sensor`` source
    count as a stall too (None: never). ``on_status`` is called (from the reading thread) after
    every status change; its errors are logged, not raised.
    """

    def __init__(
        self,
        opener: Opener | None,
        *,
        clock: Clock = REAL_CLOCK,
        stall_after: float = 5.0,
        freeze_after: float | None = 10.0,
        garbage_limit: int = 150,
        backoff: Backoff = Backoff(),
        on_status: Callable[[CameraStatus], None] | None = None,
        hint: str | None = None,
    ) -> None:
        if stall_after <= 0:
            raise ValueError("stall_after must be positive")
        if freeze_after is not None and freeze_after <= 0:
            raise ValueError("freeze_after must be positive (or None)")
        self._opener = opener
        self._clock = clock
        self.stall_after = stall_after
        self.freeze_after = freeze_after
        self.garbage_limit = garbage_limit
        self.backoff = backoff
        self._on_status = on_status
        self.hint = hint or getattr(opener, "hint", None) or GENERIC_HINT
        self._name = str(getattr(opener, "spec", "") or "camera")
        self._source: FrameSource | None = None
        self._failures = 0
        self._retry_at = clock.now()
        self._last_good = clock.now()
        self._live_since: float | None = None  # when the camera last came live (None: not live)
        self._bad_frames = 0
        self._last_problem: str | None = None
        self._changed_at = clock.now()  # when the image last differed from the one before
        self._last_print: bytes | None = None  # the last good frame's frame_fingerprint
        self._last_stamp: int | None = None  # and its sensor_stamp
        self._ever_live = False
        self._seq = 0
        self._closed = False
        self._lock = threading.Lock()  # guards _source against close() from another thread
        enabled = opener is not None and bool(getattr(opener, "enabled", True))
        self._status = CameraStatus(
            CameraState.STARTING if enabled else CameraState.DISABLED,
            "connecting to the camera" if enabled else "no camera configured: manual entry",
            clock.now(),
            self._name,
        )

    # -- public API -------------------------------------------------------------------------

    @property
    def status(self) -> CameraStatus:
        return self._status

    @property
    def source(self) -> FrameSource | None:
        """The currently open source, if any (for ``describe()`` on admin pages)."""
        return self._source

    def read(self, timeout: float = 0.5) -> Frame | None:
        """The next good frame, or None if none within ``timeout`` (camera away, stalled,
        disabled, replay ended, supervisor closed). Frames are renumbered 0, 1, 2 … across
        reconnects."""
        clock = self._clock
        deadline = clock.now() + max(0.0, timeout)
        while not self._closed:
            now = clock.now()
            state = self._status.state
            if state in (CameraState.DISABLED, CameraState.ENDED):
                clock.sleep(deadline - now)
                return None
            source = self._source
            if source is None:
                if now >= self._retry_at:
                    self._open()
                    continue
                if now >= deadline:
                    return None
                clock.sleep(min(deadline, self._retry_at) - now)
                continue
            stall_left = self._last_good + self.stall_after - now
            if stall_left <= 0:
                self._fail(self._stall_reason(), source)
                continue
            if now >= deadline:
                return None
            frame = self._read_once(source, min(deadline - now, stall_left))
            if frame is not None:
                return frame
        return None

    def frames(self, stop: threading.Event | None = None, *, poll: float = 0.5) -> Iterator[Frame]:
        """Good frames until ``stop`` is set, the supervisor is closed or a replay ends."""
        while not self._closed and not (stop is not None and stop.is_set()):
            frame = self.read(poll)
            if frame is not None:
                yield frame
            elif self._status.state is CameraState.ENDED:
                return

    def reconnect(self, reason: str = "reconnect requested") -> None:
        """Close the current source and open it again at once (e.g. after calibration)."""
        with self._lock:
            source, self._source = self._source, None
        if source is not None:
            _close_quietly(source)
        self._retry_at = self._clock.now()
        if self._status.state is CameraState.ENDED:
            self._set(CameraState.STARTING, f"reopening: {reason}")

    def close(self) -> None:
        """Close the source; later reads return None at once. Safe from any thread."""
        self._closed = True
        with self._lock:
            source, self._source = self._source, None
        if source is not None:
            _close_quietly(source)
        self._set(CameraState.CLOSED, "camera closed")

    # -- internals --------------------------------------------------------------------------

    def _read_once(self, source: FrameSource, timeout: float) -> Frame | None:
        try:
            frame = source.read(timeout)
        except FrameTimeoutError:
            return None
        except EndOfStreamError:
            self._drop_source(source)
            self._set(CameraState.ENDED, "replay finished: manual entry")
            return None
        except Exception as exc:  # any failure of a backend is a camera fault, never a crash
            if self._closed:
                return None
            if not isinstance(exc, CameraError):
                log.warning("camera %s raised unexpectedly", self._name, exc_info=True)
            self._fail(f"camera error: {exc}", source)
            return None
        problem = frame_problem(frame)
        if problem is not None:
            self._bad_frames += 1
            self._last_problem = problem
            if self._bad_frames >= self.garbage_limit:
                self._fail(f"{self._bad_frames} unusable frames in a row ({problem})", source)
            return None
        now = self._clock.now()
        if self._frozen(source, frame, now):
            self._fail(f"the same image for {self.freeze_after:g} s (frozen camera)", source)
            return None
        self._last_good = now
        self._bad_frames = 0
        self._last_problem = None
        if self._status.state is not CameraState.LIVE:
            self._ever_live = True
            self._live_since = self._last_good
            self._set(CameraState.LIVE, f"camera ready: {source.describe()}")
        frame = dataclasses.replace(frame, seq=self._seq)
        self._seq += 1
        return frame

    def _frozen(self, source: FrameSource, frame: Frame, now: float) -> bool:
        """Whether a real sensor has been re-sending one image for ``freeze_after`` seconds.

        A stuck driver (picamera2 after hours without new buffers) can hand back its last
        frame for ever: frames keep coming, so the stall check alone would call it live.
        """
        if self.freeze_after is None or not source.live_sensor:
            return False
        fingerprint = frame_fingerprint(frame)
        stamp = frame.sensor_stamp
        repeat = fingerprint == self._last_print or (
            stamp is not None and self._last_stamp is not None and stamp <= self._last_stamp
        )
        self._last_print, self._last_stamp = fingerprint, stamp
        if not repeat:
            self._changed_at = now
            return False
        return now - self._changed_at >= self.freeze_after

    def _stall_reason(self) -> str:
        secs = f"{self.stall_after:g} s"
        if self._last_problem is not None:
            return f"only unusable frames for {secs} ({self._last_problem})"
        return f"no frames for {secs}"

    def _open(self) -> None:
        assert self._opener is not None
        try:
            source = self._opener()
        except Exception as exc:
            if not isinstance(exc, CameraUnavailableError | CameraError):
                log.warning("opening camera %s raised unexpectedly", self._name, exc_info=True)
            self._failures += 1
            self._schedule(str(exc) or type(exc).__name__)
            return
        with self._lock:
            if self._closed:
                _close_quietly(source)
                return
            self._source = source
        self._last_good = self._clock.now()  # the stall clock starts when the source is open
        self._bad_frames = 0
        self._last_problem = None  # the old source's garbage must not explain this one's silence
        self._changed_at = self._last_good  # nor its last image count against this one
        self._last_print = self._last_stamp = None
        log.info("camera opened: %s", source.describe())
        if self._status.state is CameraState.MANUAL or self._status.state is CameraState.STARTING:
            self._set(
                CameraState.STARTING, f"camera opened, waiting for frames: {source.describe()}"
            )

    def _fail(self, reason: str, source: FrameSource) -> None:
        self._drop_source(source)
        live_since, self._live_since = self._live_since, None
        if live_since is not None and self._clock.now() - live_since >= self.backoff.stable:
            self._failures = 0  # the last outage is long over: this one starts afresh
        self._failures += 1
        self._schedule(reason)

    def _schedule(self, reason: str) -> None:
        delay = self.backoff.delay(self._failures)
        self._retry_at = self._clock.now() + delay
        retry = f"retrying in {delay:.1f} s" if delay < 10 else f"retrying in {delay:.0f} s"
        if self._ever_live:
            state = CameraState.OFFLINE
            message = f"camera offline: {reason} — {self.hint}; {retry}"
        else:
            state = CameraState.MANUAL
            message = f"no camera ({reason}) — manual entry; {self.hint}; {retry}"
        log.warning("%s", message)
        self._set(state, message)

    def _drop_source(self, source: FrameSource) -> None:
        with self._lock:
            if self._source is source:
                self._source = None
        _close_quietly(source)

    def _set(self, state: CameraState, message: str) -> None:
        if self._closed and state is not CameraState.CLOSED:
            return  # a read racing close() must not resurrect the status
        old = self._status
        if old.state is state and old.message == message and old.failures == self._failures:
            return
        since = old.since if old.state is state else self._clock.now()
        retry_at = self._retry_at if state in (CameraState.OFFLINE, CameraState.MANUAL) else None
        self._status = CameraStatus(
            state, message, since, self._name, failures=self._failures, retry_at=retry_at
        )
        if self._on_status is not None:
            try:
                self._on_status(self._status)
            except Exception:
                log.exception("camera status callback failed")


def _close_quietly(source: FrameSource) -> None:
    try:
        source.close()
    except Exception:
        log.warning("closing %r failed", source, exc_info=True)
