"""A V4L2 webcam through ``cv2.VideoCapture``, always handing out the newest frame.

USB webcams queue several frames in the driver; reading them in turn would show the pad as it
was a few hundred milliseconds ago. A grabber thread drains the device continuously and keeps
only the latest frame, so ``read`` returns what the camera sees now (CAP_PROP_BUFFERSIZE=1 is
also requested where the driver honours it). After a short warm-up the automatic exposure and
white balance are switched to manual at the values they settled on.

Once started, the grabber thread owns the capture's reads and its release: ``VideoCapture`` is
not thread-safe, so releasing it while a read is stuck in the driver could crash the process.
``close`` waits up to ``close_wait_s`` for the thread; if a read is still stuck, the thread
releases the device the moment that read returns (not whenever garbage collection gets to it),
so a reopen finds it free again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, cast

import cv2

from hardware.camera_settings import CameraSettings, load_settings, save_settings
from hardware.clock import REAL_CLOCK, Clock
from hardware.frames import (
    CameraFailedError,
    CameraUnavailableError,
    Frame,
    FrameSource,
    FrameTimeoutError,
    Image,
    make_frame,
)

log = logging.getLogger(__name__)

# V4L2 through OpenCV: CAP_PROP_AUTO_EXPOSURE takes 1 for manual and 3 for aperture priority
# (some older builds map these to 0.25 / 0.75); both are tried.
_MANUAL_EXPOSURE = (1.0, 0.25)

MAX_READ_FAILURES = 30
"""Consecutive failed grabs after which the device is declared broken (≈1 s at 30 fps)."""

CLOSE_WAIT_S = 2.0
"""How long ``close`` waits for a read in the driver to return before leaving the release of
the device to the grabber thread."""


class Capture(Protocol):
    """The part of ``cv2.VideoCapture`` this backend uses (tests hand in a stand-in)."""

    def isOpened(self) -> bool: ...  # noqa: N802 (OpenCV's names)

    def read(self) -> tuple[bool, Any]: ...

    def get(self, propId: int) -> float: ...  # noqa: N803

    def set(self, propId: int, value: float) -> bool: ...  # noqa: N803

    def release(self) -> None: ...


def open_capture(device: int | str, api: int) -> Capture:
    """A ``cv2.VideoCapture`` on ``device`` through ``api``."""
    return cv2.VideoCapture(device, api)


class OpenCVSource(FrameSource):
    """Camera ``device`` (an index or a ``/dev/videoN`` path) through V4L2.

    ``settings_file``: where locked exposure/white balance are read from and stored (None: warm
    up and lock every time, store nothing); ``relock`` ignores stored values. ``capture`` opens
    the device (a stand-in in tests).
    """

    kind = "opencv"
    hint = "check the USB cable and that no other program is using the webcam"
    live_sensor = True

    def __init__(
        self,
        device: int | str,
        *,
        width: int = 1280,
        height: int = 720,
        fps: float = 30.0,
        warmup_s: float = 1.5,
        lock_exposure: bool = True,
        settings_file: Path | None = None,
        relock: bool = False,
        clock: Clock = REAL_CLOCK,
        api: int = cv2.CAP_V4L2,
        max_read_failures: int = MAX_READ_FAILURES,
        close_wait_s: float = CLOSE_WAIT_S,
        capture: Callable[[int | str, int], Capture] = open_capture,
    ) -> None:
        self.device = device
        self._max_failures = max_read_failures
        self._close_wait_s = close_wait_s
        self._clock = clock
        cap = capture(device, api)
        if not cap.isOpened():
            cap.release()
            raise CameraUnavailableError(f"cannot open camera {device!r}")
        cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter.fourcc(*"MJPG"))  # 720p30 over USB 2
        cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        cap.set(cv2.CAP_PROP_FPS, fps)
        cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)
        self._cap = cap
        self._cond = threading.Condition()
        self._latest: tuple[Image, float] | None = None
        self._grabbed = 0  # frames grabbed so far
        self._delivered = 0  # value of _grabbed at the last read
        self._error: str | None = None
        self._stop = threading.Event()
        self._released = False  # the capture, by close() or by the grabber (see _release_capture)
        self._release_lock = threading.Lock()
        self._seq = 0
        self.settings: CameraSettings | None = None
        self._thread = threading.Thread(target=self._grab_loop, name=f"grab-{device}", daemon=True)
        self._thread.start()
        try:
            if lock_exposure:
                self.settings = self._lock(warmup_s, settings_file, relock)
                self._seq = 0  # warm-up frames are not the caller's
        except BaseException:
            self.close()
            raise

    def describe(self) -> str:
        w = int(self._cap.get(cv2.CAP_PROP_FRAME_WIDTH)) if not self.closed else 0
        h = int(self._cap.get(cv2.CAP_PROP_FRAME_HEIGHT)) if not self.closed else 0
        return f"opencv: {self.device} ({w}×{h})" if w else f"opencv: {self.device}"

    def _grab_loop(self) -> None:
        """The grabber thread: drain the device until closed, then release it (see above)."""
        try:
            self._grab_until_stopped()
        finally:
            if self._stop.is_set():
                self._release_capture()  # after the last read returned, stuck or not
            else:  # never leave read() waiting on a thread that has ended
                self._fail(f"the frame grabber of camera {self.device!r} stopped")

    def _grab_until_stopped(self) -> None:
        failures = 0
        last_error = ""
        while not self._stop.is_set():
            try:
                ok, image = self._cap.read()
            except Exception as exc:  # cv2.error, or whatever a driver wrapper raises
                ok, image = False, None
                if failures == 0:  # once per run of failures, not 30 times a second
                    unexpected = not isinstance(exc, cv2.error)
                    log.warning("grab failed on %s: %r", self.device, exc, exc_info=unexpected)
                last_error = f" (last error: {type(exc).__name__}: {exc})"
            if self._stop.is_set():
                return
            if not ok or image is None:
                failures += 1
                if failures >= self._max_failures:
                    self._fail(f"camera {self.device!r} stopped delivering frames{last_error}")
                    return
                self._stop.wait(0.03)
                continue
            failures = 0
            last_error = ""
            with self._cond:
                self._latest = (cast(Image, image), self._clock.now())
                self._grabbed += 1
                self._cond.notify_all()

    def _fail(self, error: str) -> None:
        """Make ``read`` raise ``error`` (the first reason given wins)."""
        with self._cond:
            if self._error is None:
                self._error = error
            self._cond.notify_all()

    def read(self, timeout: float) -> Frame:
        self._check_open()
        with self._cond:
            ready = self._cond.wait_for(
                lambda: self._grabbed > self._delivered or self._error is not None,
                timeout=max(0.0, timeout),
            )
            if self._error is not None:
                raise CameraFailedError(self._error)
            if not ready or self._latest is None:
                raise FrameTimeoutError(f"no frame from {self.device!r} within {timeout} s")
            image, stamp = self._latest
            self._delivered = self._grabbed
        frame = make_frame(image, timestamp=stamp, seq=self._seq)
        self._seq += 1
        return frame

    def _lock(self, warmup_s: float, settings_file: Path | None, relock: bool) -> CameraSettings:
        saved = None
        if settings_file is not None and not relock:
            saved = load_settings(settings_file, self.kind)
        if saved is None:
            deadline = self._clock.now() + warmup_s
            while True:  # let auto exposure settle: one frame at least, then until the deadline
                self.read(timeout=2.0)
                if self._clock.now() >= deadline:
                    break
            wb = self._cap.get(cv2.CAP_PROP_WB_TEMPERATURE)
            saved = CameraSettings(
                backend=self.kind,
                exposure=float(self._cap.get(cv2.CAP_PROP_EXPOSURE)),
                gain=float(self._cap.get(cv2.CAP_PROP_GAIN)),
                white_balance_k=float(wb) if wb > 0 else None,
            )
            if settings_file is not None:
                save_settings(settings_file, saved)
        self._apply(saved)
        log.info("camera %r locked: %s", self.device, saved)
        return saved

    def _apply(self, s: CameraSettings) -> None:
        cap = self._cap
        if not any(cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, v) for v in _MANUAL_EXPOSURE):
            log.warning("camera %r refuses manual exposure; leaving it automatic", self.device)
        cap.set(cv2.CAP_PROP_EXPOSURE, s.exposure)
        if s.gain is not None:
            cap.set(cv2.CAP_PROP_GAIN, s.gain)
        if s.white_balance_k is not None:
            cap.set(cv2.CAP_PROP_AUTO_WB, 0)
            cap.set(cv2.CAP_PROP_WB_TEMPERATURE, s.white_balance_k)

    def _release(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self._close_wait_s)
        if self._thread.is_alive():  # a read stuck in the driver: releasing now could crash
            log.warning(
                "a read from camera %r is stuck in the driver; the device is released when it"
                " returns",
                self.device,
            )
            return
        self._release_capture()  # the grabber has ended (it may have released it already)

    def _release_capture(self) -> None:
        with self._release_lock:
            if self._released:
                return
            self._released = True
        self._cap.release()
