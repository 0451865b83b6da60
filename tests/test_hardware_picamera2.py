"""The picamera2 backend's own logic, against a stand-in for the picamera2 library.

Real Pi cameras join the contract suite in test_hardware_sources.py when present; here, with
no Pi, a small stand-in with picamera2's documented call shapes (``create_video_configuration``,
``capture_arrays(names, wait=False)`` + ``wait(job, timeout)``, ``set_controls``) checks what
this backend does with them: the stream set-up, warm-up then lock, persistence, timeouts,
errors, and one camera per process.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from hardware.camera_settings import load_settings
from hardware.clock import ManualClock
from hardware.frames import (
    CameraFailedError,
    CameraUnavailableError,
    FrameTimeoutError,
    frame_problem,
)
from hardware.picamera2_source import Picamera2Source


class StandInCamera:
    """Just enough of ``picamera2.Picamera2`` for the backend; records what it was told."""

    instances: ClassVar[list[StandInCamera]] = []
    fail_next: ClassVar[BaseException | None] = None

    def __init__(self, camera_num: int) -> None:
        self.camera_num = camera_num
        self.camera_controls = {"AeFlickerMode": (0, 2, 0), "ExposureTime": (1, 10**6, 10000)}
        self.config: dict[str, Any] = {}
        self.controls: list[dict[str, Any]] = []
        self.started = self.closed = False
        self.captures = 0
        StandInCamera.instances.append(self)

    def create_video_configuration(self, **kw: Any) -> dict[str, Any]:
        return kw

    def configure(self, config: dict[str, Any]) -> None:
        self.config = config

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.started = False

    def close(self) -> None:
        self.closed = True

    def set_controls(self, controls: dict[str, Any]) -> None:
        self.controls.append(controls)

    def capture_arrays(self, names: list[str], wait: Any = None) -> tuple[str, list[str]]:
        assert wait is False  # the backend always waits itself, with a timeout
        return ("job", names)

    def wait(self, job: tuple[str, list[str]], timeout: float | None = None) -> Any:
        assert timeout is not None
        if StandInCamera.fail_next is not None:
            exc, StandInCamera.fail_next = StandInCamera.fail_next, None
            raise exc
        self.captures += 1
        w, h = self.config["main"]["size"]
        lw, lh = self.config["lores"]["size"]
        main = np.full((h, w, 3), 90, np.uint8)
        yuv = np.full((lh * 3 // 2, lw + 32), 70, np.uint8)  # YUV420 with row padding
        meta = {
            "ExposureTime": 23_000,
            "AnalogueGain": 1.5,
            "ColourGains": (1.9, 1.6),
            "SensorTimestamp": 5_000_000_000 + 33_333_333 * self.captures,  # ns, 30 fps
        }
        return [main, yuv], meta


@pytest.fixture
def picamera2(monkeypatch: pytest.MonkeyPatch) -> type[StandInCamera]:
    module = types.ModuleType("picamera2")
    module.Picamera2 = StandInCamera  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "picamera2", module)
    StandInCamera.instances = []
    StandInCamera.fail_next = None
    return StandInCamera


def test_streams_warm_up_lock_and_persist(picamera2: type[StandInCamera], tmp_path: Path) -> None:
    clock = ManualClock()
    settings = tmp_path / "camera.json"
    with Picamera2Source(
        size=(320, 240), fps=25, warmup_s=0.0, settings_file=settings, clock=clock
    ) as src:
        cam = picamera2.instances[0]
        assert cam.config["main"] == {"size": (320, 240), "format": "RGB888"}
        assert cam.config["lores"]["format"] == "YUV420"
        assert cam.config["controls"]["FrameDurationLimits"] == (40_000, 40_000)
        assert cam.config["controls"]["AeFlickerPeriod"] == 10_000
        locked = cam.controls[-1]
        assert locked["AeEnable"] is False
        assert locked["AwbEnable"] is False
        assert locked["ExposureTime"] == 20_000  # 23 ms rounded to whole 10 ms flicker periods
        assert load_settings(settings, "picamera2") == src.settings
        frame = src.read(timeout=1.0)
        assert frame_problem(frame) is None
        assert frame.size == (320, 240)
        assert frame.lores is not None
        assert frame.lores.shape == (90, 160)  # the Y plane, padding cut off
        assert frame.seq == 0
    assert cam.closed
    assert not cam.started


def test_stored_settings_skip_the_warm_up(picamera2: type[StandInCamera], tmp_path: Path) -> None:
    settings = tmp_path / "camera.json"
    with Picamera2Source(warmup_s=0.0, settings_file=settings):
        pass
    with Picamera2Source(warmup_s=0.0, settings_file=settings) as src:
        cam = picamera2.instances[-1]
        assert cam.captures == 0  # locked straight from camera.json
        assert cam.controls[-1]["ExposureTime"] == 20_000
        assert src.settings is not None
    with Picamera2Source(warmup_s=0.0, settings_file=settings, relock=True):
        assert picamera2.instances[-1].captures >= 1  # calibration warms up again


def test_settings_locked_for_other_mains_are_locked_again(
    picamera2: type[StandInCamera], tmp_path: Path
) -> None:
    """Calibrated for 50 Hz lights (the default), run where the lights are on 60 Hz mains:
    a 20 ms exposure beats with 8.3 ms flicker, so the camera warms up and locks again."""
    settings = tmp_path / "camera.json"
    with Picamera2Source(warmup_s=0.0, settings_file=settings):
        pass
    with Picamera2Source(warmup_s=0.0, settings_file=settings, mains_hz=60) as src:
        assert picamera2.instances[-1].captures >= 1  # not locked from camera.json
        assert src.settings is not None
        assert src.settings.flicker_period_us == 8_333
    again = load_settings(settings, "picamera2")
    assert again is not None
    assert again.flicker_period_us == 8_333  # stored for the next start
    with Picamera2Source(warmup_s=0.0, settings_file=settings, mains_hz=60):
        assert picamera2.instances[-1].captures == 0


def test_frames_carry_the_sensor_timestamp(picamera2: type[StandInCamera]) -> None:
    """A driver re-sending an old buffer re-sends its SensorTimestamp: the supervisor's sign of
    a frozen camera that a still pad never gives."""
    with Picamera2Source(warmup_s=0.0) as src:
        stamps = [src.read(timeout=0.1).sensor_stamp for _ in range(3)]
        captures = picamera2.instances[0].captures
    assert stamps == [5_000_000_000 + 33_333_333 * n for n in range(captures - 2, captures + 1)]
    assert src.live_sensor


def test_one_camera_per_process(picamera2: type[StandInCamera]) -> None:
    with (
        Picamera2Source(warmup_s=0.0),
        pytest.raises(CameraUnavailableError, match="already open"),
    ):
        Picamera2Source(warmup_s=0.0)
    with Picamera2Source(warmup_s=0.0):  # free again once closed
        pass


def test_timeouts_and_errors_map_to_the_contract(picamera2: type[StandInCamera]) -> None:
    with Picamera2Source(warmup_s=0.0) as src:
        picamera2.fail_next = TimeoutError()
        with pytest.raises(FrameTimeoutError):
            src.read(timeout=0.1)
        picamera2.fail_next = RuntimeError("Device or resource busy")
        with pytest.raises(CameraFailedError, match="busy"):
            src.read(timeout=0.1)
        src.read(timeout=0.1)


def test_a_missing_camera_is_unavailable_and_frees_the_slot(
    picamera2: type[StandInCamera], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_camera(num: int) -> StandInCamera:
        raise RuntimeError("Camera __init__ sequence did not complete.")

    monkeypatch.setattr(sys.modules["picamera2"], "Picamera2", no_camera)
    with pytest.raises(CameraUnavailableError, match="no Raspberry Pi camera 0"):
        Picamera2Source()
    monkeypatch.setattr(sys.modules["picamera2"], "Picamera2", StandInCamera)
    with Picamera2Source(warmup_s=0.0):
        pass
