"""One contract suite run against every frame-source backend, plus backend-specific checks.

Like gpiozero's tests over its pin factories: each backend fixture yields an open source and
the clock it runs on; the contract tests know nothing else about it. Backends that need
hardware (picamera2, a real /dev/video*) join the suite only when present.
"""

from __future__ import annotations

import contextlib
import glob
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hardware.camera_settings import (
    CameraSettings,
    flicker_period_us,
    flicker_safe_exposure_us,
    load_settings,
    save_settings,
)
from hardware.clock import REAL_CLOCK, Clock, ManualClock
from hardware.demo import DemoSource
from hardware.faulty import FaultPlan, FaultySource
from hardware.files import FilesSource, natural_key
from hardware.frames import (
    LORES_WIDTH,
    CameraFailedError,
    CameraUnavailableError,
    EndOfStreamError,
    Frame,
    FrameSource,
    FrameTimeoutError,
    SourceClosedError,
    frame_problem,
    make_frame,
)
from hardware.opencv_source import OpenCVSource
from hardware.pacing import Pacer
from hardware.picamera2_source import locked_controls, settings_from_metadata
from hardware.sources import SourceOpener, SpecError, open_source, parse_spec

W, H = 96, 64


def scene(i: int) -> np.ndarray:
    """A small BGR test image that differs from frame to frame (never all black)."""
    img = np.full((H, W, 3), (40, 90, 30), np.uint8)
    x = 8 + 7 * (i % 10)
    cv2.rectangle(img, (x, 20), (x + 14, 34), (250, 250, 250), -1)
    return img


def write_images(folder: Path, n: int = 6) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = folder / f"frame{i}.png"
        assert cv2.imwrite(str(p), scene(i))
        paths.append(p)
    return paths


def write_video(path: Path, n: int = 8) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 30, (W, H))
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG video headless")
    for i in range(n):
        writer.write(scene(i))
    writer.release()
    return path


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


# -- files backend ----------------------------------------------------------------------------


def test_images_replay_in_natural_order_and_loop(tmp_path: Path) -> None:
    folder = tmp_path / "imgs"
    folder.mkdir()
    for i in (10, 2, 1):
        cv2.imwrite(str(folder / f"f{i}.png"), scene(i))
    clock = ManualClock()
    with FilesSource(folder, fps=None, clock=clock) as src:
        frames = [src.read(1.0) for _ in range(4)]
    expected = [scene(1), scene(2), scene(10), scene(1)]
    for frame, want in zip(frames, expected, strict=True):
        assert np.array_equal(frame.image, want)
    assert clock.slept == 0  # fps=None: as fast as asked


def test_natural_key_orders_numbers_as_numbers() -> None:
    names = ["f10.png", "f2.png", "F1.png", "g.png"]
    assert sorted(names, key=lambda n: natural_key(Path(n))) == [
        "F1.png",
        "f2.png",
        "f10.png",
        "g.png",
    ]


def test_unreadable_files_are_reported_and_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_images(tmp_path, 2)
    (tmp_path / "frame0b.jpg").write_bytes(b"this is not a jpeg")
    (tmp_path / "frame1b.png").write_bytes(b"")
    with FilesSource(tmp_path, fps=None, loop=False) as src:
        frames = [src.read(1.0), src.read(1.0)]
        with pytest.raises(EndOfStreamError):
            src.read(1.0)
    assert len(frames) == 2
    assert sorted(p.name for p, _ in src.skipped) == ["frame0b.jpg", "frame1b.png"]
    assert "skipping" in caplog.text


def test_a_folder_of_only_broken_images_fails_instead_of_spinning(tmp_path: Path) -> None:
    (tmp_path / "a.jpg").write_bytes(b"junk")
    (tmp_path / "b.png").write_bytes(b"junk")
    with FilesSource(tmp_path, fps=None) as src, pytest.raises(CameraFailedError, match="readable"):
        src.read(1.0)


def test_video_replays_and_loops(tmp_path: Path) -> None:
    video = write_video(tmp_path / "v.avi", n=4)
    with FilesSource(video, fps=None, loop=True) as src:
        frames = [src.read(1.0) for _ in range(9)]
    assert [f.seq for f in frames] == list(range(9))
    # frame 4 is frame 0 again (lossy codec: compare loosely)
    assert np.abs(frames[4].image.astype(int) - frames[0].image.astype(int)).mean() < 3
    with FilesSource(video, fps=None, loop=False) as src:
        for _ in range(4):
            src.read(1.0)
        with pytest.raises(EndOfStreamError):
            src.read(1.0)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda p: p / "missing", "does not exist"),
        (lambda p: p, "no image files"),
        (
            lambda p: (p / "x.avi", (p / "x.avi").write_bytes(b"not a video"))[0],
            "cannot open video",
        ),
    ],
)
def test_nothing_to_replay_is_unavailable(
    tmp_path: Path, make: Callable[[Path], Path], match: str
) -> None:
    with pytest.raises(CameraUnavailableError, match=match):
        FilesSource(make(tmp_path))


def test_pacer_re_anchors_instead_of_bursting() -> None:
    clock = ManualClock(0.0)
    pacer = Pacer(10, clock)
    assert pacer.wait(1.0) == 0.0
    assert pacer.wait(1.0) == pytest.approx(0.1)
    clock.advance(1.0)  # the consumer was busy for a second
    t = pacer.wait(1.0)
    assert t == pytest.approx(1.1)  # no backlog of ten frames
    assert pacer.wait(1.0) == pytest.approx(1.2)
    with pytest.raises(ValueError, match="positive"):
        Pacer(0, clock)


# -- specs ------------------------------------------------------------------------------------


def test_parse_spec_forms(tmp_path: Path) -> None:
    assert parse_spec("demo").kind == "demo"
    assert parse_spec("demo?seed=4&fps=15").options == {"seed": "4", "fps": "15"}
    assert parse_spec("picamera2").target == ""
    assert parse_spec("picamera2:1?mains=60").target == "1"
    assert (parse_spec("opencv:0").kind, parse_spec("opencv:0").target) == ("opencv", "0")
    assert parse_spec("/dev/video2").kind == "opencv"
    assert parse_spec(f"files:{tmp_path}?loop=no").kind == "files"
    assert parse_spec(str(tmp_path)).kind == "files"
    assert parse_spec("recorded.mp4").kind == "files"
    spec = parse_spec(f"faulty:stall@3s,garbage@10+5:files:{tmp_path}?fps=10")
    assert spec.kind == "faulty"
    assert spec.target == "stall@3s,garbage@10+5"
    assert spec.inner is not None
    assert spec.inner.kind == "files"
    assert spec.inner.options == {"fps": "10"}
    assert "ribbon" in parse_spec("picamera2").hint
    assert "rehearsal" in spec.hint
    assert "folder" in spec.hint


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty"),
        ("webcam", "neither a camera kind"),
        ("files:", "needs a folder"),
        ("opencv", "needs a device"),
        ("demo?sede=3", "unknown option"),
        ("demo?seed", "key=value"),
        ("demo:3", "takes no argument"),
        ("picamera2:front", "camera number"),
        ("faulty:stall@3s", "faulty:PLAN:SPEC"),
        ("faulty:explode@3:demo", "bad fault"),
        ("faulty:stall@3:faulty:raise@1:demo", "wrap a real source"),
    ],
)
def test_bad_specs_say_what_is_wrong(text: str, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        parse_spec(text)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("demo?fps=fast", "number"),
        ("demo?seed=1.5", "whole"),
        ("picamera2?mains=55", "50 or 60"),
        ("demo?markers=5", "10-35 mm"),
        ("demo?markers=45", "10-35 mm"),
        ("opencv:0?markers=30", "unknown option"),
        # float() accepts these: warmup=inf never finished opening, fps=nan failed every open
        ("picamera2?warmup=inf", "finite"),
        ("opencv:0?fps=nan", "finite"),
        ("demo?fps=-inf", "finite"),
        ("picamera2?width=0", "16-8192 px"),
        ("opencv:0?height=9000", "16-8192 px"),
    ],
)
def test_bad_option_values_fail_at_start_up(text: str, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        SourceOpener(text)


def test_open_source_reads_dicepad_camera(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_images(tmp_path, 2)
    monkeypatch.setenv("DICEPAD_CAMERA", f"files:{tmp_path}?fps=0&loop=no")
    with open_source() as src:
        assert isinstance(src, FilesSource)
        assert src.loop is False
        src.read(1.0)


def test_the_none_camera_cannot_be_opened() -> None:
    opener = SourceOpener("none")
    assert not opener.enabled
    with pytest.raises(CameraUnavailableError, match="no camera configured"):
        opener()


def test_missing_picamera2_is_a_clear_unavailable_error() -> None:
    try:
        import picamera2  # noqa: F401
    except ImportError:
        with pytest.raises(CameraUnavailableError, match="python3-picamera2"):
            open_source("picamera2")
    else:
        pytest.skip("picamera2 is installed here")


# -- locked camera settings -------------------------------------------------------------------


def test_flicker_safe_exposure() -> None:
    assert flicker_period_us(50) == 10_000
    assert flicker_period_us(60) == 8_333
    assert flicker_safe_exposure_us(23_000, 10_000) == 20_000
    assert flicker_safe_exposure_us(26_000, 10_000) == 30_000
    assert flicker_safe_exposure_us(4_000, 10_000) == 4_000  # too short to be flicker-free
    with pytest.raises(ValueError, match="50 or 60"):
        flicker_period_us(55)


def test_picamera2_lock_keeps_brightness_and_freezes_auto_modes() -> None:
    meta = {"ExposureTime": 26_000, "AnalogueGain": 2.0, "ColourGains": (1.8, 1.5)}
    s = settings_from_metadata(meta, mains_hz=50)
    assert s.exposure == 30_000
    assert s.exposure * (s.gain or 0) == pytest.approx(26_000 * 2.0, rel=1e-3)
    controls = locked_controls(s)
    assert controls["AeEnable"] is False
    assert controls["AwbEnable"] is False
    assert controls["ExposureTime"] == 30_000
    assert controls["ColourGains"] == (1.8, 1.5)


def test_camera_settings_round_trip_and_damage(tmp_path: Path) -> None:
    path = tmp_path / "data" / "camera.json"
    s = CameraSettings("picamera2", 20_000.0, 1.5, (1.8, 1.4), None, 10_000)
    save_settings(path, s)
    assert load_settings(path, "picamera2") == s
    assert load_settings(path, "opencv") is None  # another camera's values are not used
    assert json.loads(path.read_text())["colour_gains"] == [1.8, 1.4]
    path.write_text("{not json")
    assert load_settings(path, "picamera2") is None
    path.write_text('{"backend": "picamera2"}')
    assert load_settings(path, "picamera2") is None
    assert load_settings(tmp_path / "absent.json", "picamera2") is None


def test_make_frame_computes_the_preview() -> None:
    frame = make_frame(np.full((480, 640, 3), 99, np.uint8), timestamp=1.0, seq=0)
    assert frame.lores is not None
    assert frame.lores.shape == (120, LORES_WIDTH)
    assert int(frame.lores[0, 0]) == 99


@given(
    fps=st.floats(1.0, 120.0),
    delays=st.lists(st.floats(0.0, 0.5), min_size=1, max_size=40),
)
def test_pacer_never_bursts_and_never_drifts(fps: float, delays: list[float]) -> None:
    """Whatever the consumer does between reads, no window of time holds more than its share
    of ticks (plus one catching up); a consumer that keeps up gets the exact schedule."""
    clock = ManualClock(0.0)
    pacer = Pacer(fps, clock)
    ticks = [pacer.wait(10.0)]
    for delay in delays:
        clock.advance(delay)
        ticks.append(pacer.wait(10.0))
    assert ticks == sorted(ticks)
    for i in range(len(ticks)):
        for j in range(i + 1, len(ticks)):
            assert j - i <= (ticks[j] - ticks[i]) * fps + 1 + 1e-6
    steady = Pacer(fps, ManualClock(0.0))
    assert [steady.wait(10.0) for _ in range(len(delays))] == pytest.approx(
        [k / fps for k in range(len(delays))]
    )


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
