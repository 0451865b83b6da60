"""The V4L2 backend's grabber, driven by a video file or a stand-in capture."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import pytest
from hardware_sources_rig import scene, write_video

from hardware.camera_settings import load_settings
from hardware.frames import CameraFailedError, Frame, frame_problem
from hardware.opencv_source import OpenCVSource

# -- the V4L2 backend's machinery, driven by a video file instead of a webcam -------------------


def test_opencv_grabber_hands_out_only_the_newest_frame_and_notices_the_end(tmp_path: Path) -> None:
    video = write_video(tmp_path / "cam.avi", n=40)
    settings = tmp_path / "camera.json"
    src = OpenCVSource(
        str(video),
        api=cv2.CAP_ANY,
        warmup_s=0.0,
        settings_file=settings,
        relock=True,
        max_read_failures=3,
    )
    with src:
        assert src.settings is not None
        assert load_settings(settings, "opencv") == src.settings  # locked values persisted
        time.sleep(0.2)  # the grabber races through the file meanwhile
        got: list[Frame] = []
        error = None
        while error is None and len(got) < 100:
            try:
                got.append(src.read(timeout=2.0))
            except CameraFailedError as exc:
                error = exc
    assert "stopped delivering" in str(error)
    assert len(got) < 40  # stale frames were dropped, not queued
    assert [f.seq for f in got] == list(range(len(got)))
    assert src.closed


class StandInCapture:
    """Just enough of ``cv2.VideoCapture`` for the grabber; ``grab(n)`` plays the ``n``-th read
    (return ``(ok, image)`` or raise, as a driver or its wrapper would). Records misuse."""

    def __init__(self, grab: Callable[[int], tuple[bool, Any]]) -> None:
        self._grab = grab
        self.reads = 0
        self.reading = threading.Event()  # a read is in the driver
        self.released = 0
        self.misused: list[str] = []

    def isOpened(self) -> bool:  # noqa: N802 (OpenCV's name)
        return True

    def read(self) -> tuple[bool, Any]:
        if self.released:
            self.misused.append("read after release")
        self.reading.set()
        try:
            return self._grab(self.reads)
        finally:
            self.reads += 1
            self.reading.clear()

    def get(self, prop: int) -> float:
        return 0.0

    def set(self, prop: int, value: float) -> bool:
        return True

    def release(self) -> None:
        if self.reading.is_set():
            self.misused.append("released during a read")  # may crash a real driver
        self.released += 1


def stand_in(cam: StandInCapture, **kw: Any) -> OpenCVSource:
    return OpenCVSource(0, lock_exposure=False, capture=lambda device, api: cam, **kw)


def test_opencv_grabber_survives_an_exception_that_is_not_an_opencv_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A driver wrapper's RuntimeError killed the grabber thread: no frame ever again, nothing
    said, until the stall check gave up on the camera."""

    def grab(n: int) -> tuple[bool, Any]:
        if n < 2:
            raise RuntimeError("driver wrapper exploded")
        return True, scene(n)

    cam = StandInCapture(grab)
    with stand_in(cam) as src:
        frame = src.read(timeout=1.0)
    assert frame_problem(frame) is None
    assert "driver wrapper exploded" in caplog.text  # reported, once for the run of failures
    assert caplog.text.count("grab failed") == 1
    assert (cam.released, cam.misused) == (1, [])


def test_opencv_grabber_that_keeps_raising_fails_the_camera_with_the_reason() -> None:
    def grab(n: int) -> tuple[bool, Any]:
        raise RuntimeError("driver wrapper exploded")

    cam = StandInCapture(grab)
    with stand_in(cam, max_read_failures=3) as src:
        with pytest.raises(CameraFailedError, match="RuntimeError: driver wrapper exploded"):
            src.read(timeout=1.0)  # at once, not after the timeout: the supervisor reopens it
        # the grabber tells read() first and returns just after: give it that moment (a CI
        # run caught it still alive between the two)
        src._thread.join(timeout=1.0)
        assert not src._thread.is_alive()
    assert (cam.released, cam.misused) == (1, [])


def test_opencv_close_during_a_stuck_read_releases_the_device_when_it_returns() -> None:
    """A read stuck in the driver past the close wait left the device open until garbage
    collection, so the camera could not be reopened meanwhile."""
    unstick = threading.Event()

    def grab(n: int) -> tuple[bool, Any]:
        if n == 1:
            unstick.wait(5.0)
        return True, scene(n)

    cam = StandInCapture(grab)
    src = stand_in(cam, close_wait_s=0.05)
    src.read(timeout=1.0)
    assert cam.reading.wait(1.0)  # the second read is in the driver
    start = time.monotonic()
    src.close()
    assert time.monotonic() - start < 1.0  # close does not hang with the driver
    assert cam.released == 0  # not from under the stuck read
    unstick.set()
    src._thread.join(1.0)
    assert not src._thread.is_alive()
    assert (cam.released, cam.reads, cam.misused) == (1, 2, [])
