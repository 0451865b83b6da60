"""One contract suite run against every frame-source backend.

Like gpiozero's tests over its pin factories: each backend fixture yields an open source and
the clock it runs on; the contract tests know nothing else about it. Backends that need
hardware (picamera2, a real /dev/video*) join the suite only when present. The backend-specific
checks are in ``test_hardware_sources_files.py``, ``_specs.py``, ``_settings.py`` and
``_opencv.py``; the test images in :mod:`hardware_sources_rig`.
"""

from __future__ import annotations

import contextlib
import glob
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from hardware_sources_rig import write_images, write_video

from hardware.clock import REAL_CLOCK, Clock, ManualClock
from hardware.demo import DemoSource
from hardware.faulty import FaultPlan, FaultySource
from hardware.files import FilesSource
from hardware.frames import (
    LORES_WIDTH,
    CameraUnavailableError,
    Frame,
    FrameSource,
    FrameTimeoutError,
    SourceClosedError,
    frame_problem,
    make_frame,
)
from hardware.sources import open_source

# -- backends ---------------------------------------------------------------------------------

Factory = Callable[[Path], tuple[FrameSource, Clock]]


def _files(tmp: Path) -> tuple[FrameSource, Clock]:
    clock = ManualClock()
    write_images(tmp / "imgs")
    return FilesSource(tmp / "imgs", fps=30, clock=clock), clock


def _video(tmp: Path) -> tuple[FrameSource, Clock]:
    clock = ManualClock()
    return FilesSource(write_video(tmp / "evening.avi"), fps=30, clock=clock), clock


def _faulty(tmp: Path) -> tuple[FrameSource, Clock]:
    clock = ManualClock()
    write_images(tmp / "imgs")
    plan = FaultPlan("raise@100000", clock=clock)  # armed, never due within a test
    return FaultySource(FilesSource(tmp / "imgs", fps=30, clock=clock), plan), clock


def _demo(tmp: Path) -> tuple[FrameSource, Clock]:
    clock = ManualClock()
    return open_source("demo?seed=3&width=320&height=240", clock=clock), clock


def _picamera2(tmp: Path) -> tuple[FrameSource, Clock]:
    pytest.importorskip("picamera2", reason="picamera2 not installed (not a Raspberry Pi)")
    try:
        return open_source("picamera2?warmup=0.5", data_dir=tmp), REAL_CLOCK
    except CameraUnavailableError as exc:
        pytest.skip(f"no Pi camera: {exc}")


def _opencv(tmp: Path) -> tuple[FrameSource, Clock]:
    devices = sorted(glob.glob("/dev/video*"))
    if not devices:
        pytest.skip("no /dev/video* device")
    try:
        return open_source(f"{devices[0]}?warmup=0.3", data_dir=tmp), REAL_CLOCK
    except CameraUnavailableError as exc:
        pytest.skip(f"{devices[0]} cannot be opened: {exc}")


BACKENDS: dict[str, Factory] = {
    "files": _files,
    "video": _video,
    "faulty": _faulty,
    "demo": _demo,
    "picamera2": _picamera2,
    "opencv": _opencv,
}
PACED = {"files", "video", "faulty", "demo"}  # run on the fake clock at a set fps


@pytest.fixture(params=list(BACKENDS))
def backend(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[str, FrameSource, Clock]]:
    name: str = request.param
    source, clock = BACKENDS[name](tmp_path)
    with source:
        yield name, source, clock


# -- the contract -----------------------------------------------------------------------------


def test_frames_are_bgr_uint8_with_a_grey_preview(backend: tuple[str, FrameSource, Clock]) -> None:
    _, source, _ = backend
    frame = source.read(timeout=3.0)
    assert isinstance(frame, Frame)
    assert frame_problem(frame) is None
    h, w = frame.image.shape[:2]
    assert frame.image.shape == (h, w, 3)
    assert frame.image.dtype == np.uint8
    assert frame.size == (w, h)
    assert frame.lores is not None
    assert frame.lores.ndim == 2
    assert frame.lores.dtype == np.uint8
    assert frame.lores.shape[1] <= max(LORES_WIDTH, w)
    # the grey preview has the frame's aspect ratio (within rounding)
    assert abs(frame.lores.shape[0] / frame.lores.shape[1] - h / w) < 0.05


def test_frames_are_read_only(backend: tuple[str, FrameSource, Clock]) -> None:
    _, source, _ = backend
    frame = source.read(timeout=3.0)
    with pytest.raises(ValueError, match="read-only"):
        frame.image[0, 0, 0] = 1


def test_sequence_numbers_count_up_and_time_moves_forward(
    backend: tuple[str, FrameSource, Clock],
) -> None:
    _, source, _ = backend
    frames = [source.read(timeout=3.0) for _ in range(8)]
    assert [f.seq for f in frames] == list(range(8))
    stamps = [f.timestamp for f in frames]
    assert stamps == sorted(stamps)


def test_paced_sources_deliver_at_their_frame_rate(backend: tuple[str, FrameSource, Clock]) -> None:
    name, source, _ = backend
    if name not in PACED:
        pytest.skip("a live camera sets its own pace")
    first = source.read(timeout=1.0)
    last = first
    for _ in range(30):
        last = source.read(timeout=1.0)
    assert last.timestamp - first.timestamp == pytest.approx(1.0, abs=1e-6)  # 30 frames @ 30 fps


def test_read_honours_its_timeout(backend: tuple[str, FrameSource, Clock]) -> None:
    _, source, clock = backend
    source.read(timeout=3.0)
    for _ in range(5):
        start = clock.now()
        with contextlib.suppress(FrameTimeoutError):
            source.read(timeout=0.01)
        assert clock.now() - start < 0.01 + 0.25  # returns (frame or timeout) promptly


def test_a_paced_source_times_out_before_its_next_frame(
    backend: tuple[str, FrameSource, Clock],
) -> None:
    name, source, clock = backend
    if name not in PACED:
        pytest.skip("a live camera sets its own pace")
    source.read(timeout=1.0)
    start = clock.now()
    with pytest.raises(FrameTimeoutError):
        source.read(timeout=0.01)  # the next frame is due 1/30 s later
    assert clock.now() - start == pytest.approx(0.01)
    source.read(timeout=1.0)  # and the stream carries on


def test_close_is_idempotent_and_final(backend: tuple[str, FrameSource, Clock]) -> None:
    _, source, _ = backend
    source.read(timeout=3.0)
    source.close()
    source.close()
    assert source.closed
    with pytest.raises(SourceClosedError):
        source.read(timeout=0.1)


def test_describe_and_hint_say_what_it_is(backend: tuple[str, FrameSource, Clock]) -> None:
    _, source, _ = backend
    text = source.describe()
    assert text
    assert text.startswith(source.kind)
    assert source.kind in repr(source)
    assert len(source.hint) > 20


def test_make_frame_computes_the_preview() -> None:
    frame = make_frame(np.full((480, 640, 3), 99, np.uint8), timestamp=1.0, seq=0)
    assert frame.lores is not None
    assert frame.lores.shape == (120, LORES_WIDTH)
    assert int(frame.lores[0, 0]) == 99


def test_a_failing_dice_wanted_hint_does_not_fail_the_demo_camera(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The pad service tells the demo camera how many dice the table waits for; when asking
    fails (the table ended meanwhile) the camera throws what it has, and goes on: failing the
    read made the supervisor reopen it, starting the demo evening over."""
    src, _ = _demo(tmp_path)
    assert isinstance(src, DemoSource)
    asked: list[int] = []

    def wanted() -> int | None:
        asked.append(1)
        raise LookupError("no table 'abc234'")

    src.wanted = wanted
    with src:
        for _ in range(400):  # several throws
            src.read(1.0)
    assert src.throws >= 2
    assert len(asked) == src.throws - 1  # asked at every new throw after the first
    assert "the dice wanted could not be asked" in caplog.text
