"""The Raspberry Pi camera through picamera2 (libcamera).

picamera2 is imported here, lazily, and nowhere else: it only exists on a Pi (from apt,
``python3-picamera2``), and everything else must import, test and type-check without it.

One video configuration delivers a BGR main stream for OpenCV (libcamera's ``RGB888`` is laid
out B, G, R in memory) and a small YUV420 ``lores`` stream whose Y plane is the grey preview for
settle detection. Every capture waits with a timeout. After a short warm-up on the empty pad,
automatic exposure and white balance are switched off at the values they reached, with the
exposure rounded to whole flicker periods of the bar's lights; the values are persisted.
Each frame carries libcamera's ``SensorTimestamp``, so the supervisor can tell a driver that
re-sends an old buffer (known after hours of running) from a camera looking at a still pad.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hardware.camera_settings import (
    CameraSettings,
    flicker_period_us,
    flicker_safe_exposure_us,
    load_settings,
    save_settings,
)
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

_AE_FLICKER_MANUAL = 1  # libcamera.controls.AeFlickerModeEnum.Manual, without importing libcamera

_guard = threading.Lock()
_open_camera: Picamera2Source | None = None  # libcamera allows one owner of the camera


def settings_from_metadata(metadata: Mapping[str, Any], *, mains_hz: int) -> CameraSettings:
    """What auto exposure / white balance settled on, with the exposure made flicker-safe and
    the gain raised or lowered to keep the same brightness."""
    try:
        exposure = float(metadata["ExposureTime"])
        gain = float(metadata["AnalogueGain"])
        red, blue = metadata["ColourGains"]
    except (KeyError, TypeError, ValueError) as exc:
        raise CameraFailedError(f"camera metadata lacks exposure/white balance: {exc!r}") from exc
    period = flicker_period_us(mains_hz)
    safe = flicker_safe_exposure_us(exposure, period)
    return CameraSettings(
        backend=Picamera2Source.kind,
        exposure=float(safe),
        gain=round(gain * exposure / safe, 3),
        colour_gains=(float(red), float(blue)),
        flicker_period_us=period,
    )


def locked_controls(settings: CameraSettings) -> dict[str, Any]:
    """The picamera2 ``set_controls`` dict that freezes exposure and white balance."""
    controls: dict[str, Any] = {
        "AeEnable": False,
        "AwbEnable": False,
        "ExposureTime": round(settings.exposure),
    }
    if settings.gain is not None:
        controls["AnalogueGain"] = settings.gain
    if settings.colour_gains is not None:
        controls["ColourGains"] = settings.colour_gains
    return controls


def _picamera2_class() -> Callable[[int], Any]:
    try:
        from picamera2 import Picamera2
    except ImportError as exc:
        raise CameraUnavailableError(
            "picamera2 is not installed (on a Pi: sudo apt install python3-picamera2 and make "
            "the venv with --system-site-packages)"
        ) from exc
    factory: Callable[[int], Any] = Picamera2
    return factory


class Picamera2Source(FrameSource):
    """Raspberry Pi camera ``camera_num`` at ``size`` and ``fps``.

    ``settings_file``: where locked settings are read from and stored (None: warm up and lock
    every time, store nothing); ``relock`` ignores stored values; ``mains_hz`` picks the
    anti-flicker period (50 Hz in Europe, 60 Hz in North America).
    """

    kind = "picamera2"
    hint = (
        "check the camera ribbon cable (both ends seated, contacts the right way round) and "
        "that no other program is using the camera"
    )
    live_sensor = True

    def __init__(
        self,
        *,
        camera_num: int = 0,
        size: tuple[int, int] = (1280, 720),
        lores_size: tuple[int, int] = (160, 90),
        fps: float = 30.0,
        mains_hz: int = 50,
        warmup_s: float = 1.0,
        lock_exposure: bool = True,
        settings_file: Path | None = None,
        relock: bool = False,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        global _open_camera
        factory = _picamera2_class()
        with _guard:
            if _open_camera is not None:
                raise CameraUnavailableError("the camera is already open in this process")
            _open_camera = self
        self.camera_num = camera_num
        self.size = size
        self._lores_size = lores_size
        self._clock = clock
        self._seq = 0
        self._cam: Any = None
        self.settings: CameraSettings | None = None
        try:
            try:
                self._cam = factory(camera_num)
            except (RuntimeError, IndexError, OSError) as exc:
                raise CameraUnavailableError(f"no Raspberry Pi camera {camera_num}: {exc}") from exc
            frame_us = round(1_000_000 / fps)
            controls: dict[str, Any] = {"FrameDurationLimits": (frame_us, frame_us)}
            if "AeFlickerMode" in self._cam.camera_controls:
                controls["AeFlickerMode"] = _AE_FLICKER_MANUAL
                controls["AeFlickerPeriod"] = flicker_period_us(mains_hz)
            config = self._cam.create_video_configuration(
                main={"size": size, "format": "RGB888"},
                lores={"size": lores_size, "format": "YUV420"},
                controls=controls,
                buffer_count=4,
            )
            self._cam.configure(config)
            self._cam.start()
            if lock_exposure:
                self.settings = self._lock(warmup_s, mains_hz, settings_file, relock)
        except BaseException:
            self.close()
            raise

    def describe(self) -> str:
        return f"picamera2: camera {self.camera_num} ({self.size[0]}×{self.size[1]})"

    def _capture(self, timeout: float) -> tuple[Image, Image, dict[str, Any]]:
        try:
            job = self._cam.capture_arrays(["main", "lores"], wait=False)
            (main, lores), metadata = self._cam.wait(job, timeout=max(0.001, timeout))
        except TimeoutError as exc:
            raise FrameTimeoutError(f"no frame from the Pi camera within {timeout} s") from exc
        except Exception as exc:  # libcamera reports a lost sensor as assorted errors
            raise CameraFailedError(f"Pi camera capture failed: {exc}") from exc
        w, h = self._lores_size
        return main, lores[:h, :w], metadata

    def read(self, timeout: float) -> Frame:
        self._check_open()
        main, grey, metadata = self._capture(timeout)
        stamp = metadata.get("SensorTimestamp")
        frame = make_frame(
            main,
            timestamp=self._clock.now(),
            seq=self._seq,
            lores=grey.copy(),
            sensor_stamp=stamp if isinstance(stamp, int) else None,
        )
        self._seq += 1
        return frame

    def _lock(
        self, warmup_s: float, mains_hz: int, settings_file: Path | None, relock: bool
    ) -> CameraSettings:
        saved = None
        if settings_file is not None and not relock:
            saved = load_settings(settings_file, self.kind)
        period = flicker_period_us(mains_hz)
        if saved is not None and saved.flicker_period_us not in (None, period):
            # calibrated under the other mains frequency (calibrate ran without the service's
            # ?mains=60): its exposure would beat with these lights, so lock again
            log.warning(
                "%s was locked for %s us lamp flicker, the lights here flicker every %s us:"
                " locking the exposure again",
                settings_file,
                saved.flicker_period_us,
                period,
            )
            saved = None
        if saved is None:
            deadline = self._clock.now() + warmup_s
            metadata: dict[str, Any] = {}
            while True:  # at least one frame, then until the warm-up time is over
                _, _, metadata = self._capture(timeout=2.0)
                if self._clock.now() >= deadline:
                    break
            saved = settings_from_metadata(metadata, mains_hz=mains_hz)
            if settings_file is not None:
                save_settings(settings_file, saved)
        self._cam.set_controls(locked_controls(saved))
        log.info("Pi camera locked: %s", saved)
        return saved

    def _release(self) -> None:
        global _open_camera
        try:
            if self._cam is not None:
                try:
                    self._cam.stop()
                finally:
                    self._cam.close()
        except Exception as exc:  # a camera that vanished may fail to stop; nothing to keep
            log.warning("closing the Pi camera: %s", exc)
        finally:
            with _guard:
                if _open_camera is self:
                    _open_camera = None
