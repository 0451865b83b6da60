"""A frozen camera: frames keep coming, but they are the same image over and over.

picamera2 can stop getting new buffers after 10-20 hours (raspberrypi/picamera2 #1090,
#1392); a driver that then re-sends its last frame looks like a live camera watching a still
pad. A real sensor's noise moves some pixels in every frame, so the supervisor treats the same
image (or a driver stamp that stops advancing) for ``freeze_after`` seconds as a stall, and
reopens the camera. Sources that repeat images legitimately (the demo, replays) are exempt.
Everything runs on the fake clock through the first-class ``freeze`` fault.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from hardware.clock import ManualClock
from hardware.demo import DemoSource
from hardware.faulty import Fault, FaultKind, FaultPlan, FaultySource, parse_faults
from hardware.files import FilesSource
from hardware.frames import Frame, FrameSource, frame_fingerprint, frame_problem, make_frame
from hardware.opencv_source import OpenCVSource
from hardware.pacing import Pacer
from hardware.picamera2_source import Picamera2Source
from hardware.sources import SourceOpener
from hardware.supervisor import CameraState, CameraStatus, CameraSupervisor
from server.pad.script import ScriptedSource


def images(folder: Path, n: int = 5) -> Path:
    """``n`` different flat images: consecutive frames of their replay always differ."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        cv2.imwrite(str(folder / f"{i:03d}.png"), np.full((48, 64, 3), 60 + 20 * i, np.uint8))
    return folder


class Sensor(FrameSource):
    """A real camera's sensor at ``fps``: a still pad plus noise in every frame.

    ``stamp(n)`` is the driver's stamp of the ``n``-th frame (None: the driver gives none).
    """

    kind = "sensor"
    hint = "check the sensor"
    live_sensor = True

    def __init__(
        self, clock: ManualClock, stamp: Callable[[int], int | None] = lambda n: None
    ) -> None:
        self._pacer = Pacer(30.0, clock)
        self._rng = np.random.default_rng(7)
        self._stamp = stamp
        self.n = 0

    def read(self, timeout: float) -> Frame:
        self._check_open()
        when = self._pacer.wait(timeout)
        noise = self._rng.integers(0, 3, (48, 64, 3), dtype=np.uint8)  # ±1 grey level
        frame = make_frame(
            noise + 100, timestamp=when, seq=self.n, sensor_stamp=self._stamp(self.n)
        )
        self.n += 1
        return frame

    def describe(self) -> str:
        return "sensor"

    def _release(self) -> None:
        pass


class Recorder:
    """Collects every status the supervisor publishes after start-up."""

    def __init__(self) -> None:
        self.seen: list[CameraStatus] = []

    def __call__(self, status: CameraStatus) -> None:
        if status.state is not CameraState.STARTING:
            self.seen.append(status)

    @property
    def states(self) -> list[CameraState]:
        return [s.state for s in self.seen]


def pump(sup: CameraSupervisor, seconds: float, clock: ManualClock) -> list[Frame]:
    """Read for ``seconds`` of fake time."""
    frames = []
    end = clock.now() + seconds
    while clock.now() < end:
        frame = sup.read(0.2)
        if frame is not None:
            assert frame_problem(frame) is None
            frames.append(frame)
    return frames


def supervise(
    tmp_path: Path, plan: str, clock: ManualClock, freeze_after: float | None = 10.0
) -> tuple[CameraSupervisor, Recorder]:
    opener = SourceOpener(f"faulty:{plan}:files:{images(tmp_path / 'imgs')}?fps=30", clock=clock)
    rec = Recorder()
    sup = CameraSupervisor(opener, clock=clock, on_status=rec, freeze_after=freeze_after)
    return sup, rec


# -- the freeze fault ---------------------------------------------------------------------------


def test_freeze_faults_parse_and_print() -> None:
    assert parse_faults("freeze@30,freeze@2s+5s") == (
        Fault(FaultKind.FREEZE, at_frame=30),
        Fault(FaultKind.FREEZE, at_s=2.0, duration_s=5.0),
    )
    assert str(FaultPlan("freeze@30, freeze@2s+5s")) == "freeze@30,freeze@2s+5s"


def test_a_frozen_source_sends_its_last_frame_for_ever(tmp_path: Path) -> None:
    clock = ManualClock()
    plan = FaultPlan("freeze@3", clock=clock)
    inner = FilesSource(images(tmp_path), fps=30, clock=clock)
    assert not inner.live_sensor
    with FaultySource(inner, plan) as src:
        assert src.live_sensor  # a rehearsed freeze is judged as a real camera's would be
        frames = [src.read(1.0) for _ in range(300)]  # 10 s
    prints = [frame_fingerprint(f) for f in frames]
    assert len(set(prints[:3])) == 3  # live: each frame differs from the one before
    assert set(prints[2:]) == {prints[2]}  # then the third frame, over and over
    assert all(f.image is frames[2].image for f in frames[3:])
    assert np.diff([f.timestamp for f in frames]) == pytest.approx(1 / 30)  # still paced
    assert [f.seq for f in frames] == list(range(300))
    with FaultySource(FilesSource(images(tmp_path), fps=30, clock=clock), plan) as reopened:
        again = [frame_fingerprint(reopened.read(1.0)) for _ in range(3)]
    assert len(set(again)) == 3  # closing and reopening ends an open-ended freeze


# -- the supervisor -----------------------------------------------------------------------------


def test_a_frozen_camera_is_a_stall_and_is_reopened(tmp_path: Path) -> None:
    clock = ManualClock()
    sup, rec = supervise(tmp_path, "freeze@30", clock)
    frames = pump(sup, 15.0, clock)
    assert rec.states == [CameraState.LIVE, CameraState.OFFLINE, CameraState.LIVE]
    live, offline, back = rec.seen
    assert offline.message.startswith("camera offline: the same image for 10 s (frozen camera)")
    assert "rehearsal" in offline.message  # the likely cause, as for any stall
    assert offline.failures == 1
    # 1 s of live frames, then the same image for 10 s; reopened after 0.5 s of back-off
    assert offline.since - live.since == pytest.approx(1.0 + 10.0, abs=0.1)
    assert back.since - offline.since == pytest.approx(0.5, abs=0.1)
    assert len({frame_fingerprint(f) for f in frames[-30:]}) == 5  # live again: five images
    assert [f.seq for f in frames] == list(range(len(frames)))


def test_a_short_freeze_is_ridden_out(tmp_path: Path) -> None:
    clock = ManualClock()
    sup, rec = supervise(tmp_path, "freeze@30+8s", clock)
    frames = pump(sup, 15.0, clock)
    assert rec.states == [CameraState.LIVE]
    assert len(frames) == pytest.approx(15 * 30, abs=3)


def test_the_freeze_bound_is_a_parameter(tmp_path: Path) -> None:
    clock = ManualClock()
    sup, rec = supervise(tmp_path, "freeze@30", clock, freeze_after=3.0)
    pump(sup, 5.0, clock)
    assert rec.states[:2] == [CameraState.LIVE, CameraState.OFFLINE]
    assert "the same image for 3 s" in rec.seen[1].message
    unchecked, rec = supervise(tmp_path, "freeze@30", clock, freeze_after=None)
    pump(unchecked, 30.0, clock)
    assert rec.states == [CameraState.LIVE]
    with pytest.raises(ValueError, match="freeze_after"):
        CameraSupervisor(None, freeze_after=0.0)


def test_a_still_pad_on_a_real_sensor_is_not_frozen() -> None:
    """Sensor noise changes some pixels in every frame, however still the pad."""
    clock = ManualClock()
    rec = Recorder()
    sup = CameraSupervisor(lambda: Sensor(clock), clock=clock, on_status=rec)
    frames = pump(sup, 60.0, clock)
    assert rec.states == [CameraState.LIVE]
    assert len(frames) == pytest.approx(60 * 30, abs=3)


def test_a_driver_stamp_that_stops_advancing_is_frozen() -> None:
    """picamera2's SensorTimestamp: a driver re-sending a buffer re-sends its stamp too, even
    if something (a wrapper's copy, a recycled buffer) makes the pixels differ."""
    clock = ManualClock()
    opened: list[Sensor] = []

    def opener() -> Sensor:
        first = not opened
        opened.append(Sensor(clock, lambda n: min(n, 60) * 33_333_333 if first else n))
        return opened[-1]

    rec = Recorder()
    sup = CameraSupervisor(opener, clock=clock, on_status=rec)
    pump(sup, 15.0, clock)
    assert rec.states == [CameraState.LIVE, CameraState.OFFLINE, CameraState.LIVE]
    assert "the same image for 10 s (frozen camera)" in rec.seen[1].message
    assert rec.seen[1].since - rec.seen[0].since == pytest.approx(2.0 + 10.0, abs=0.1)
    assert len(opened) == 2


def test_a_still_photo_on_loop_is_not_frozen(tmp_path: Path) -> None:
    """Replays and synthetic cameras repeat images on purpose: a looped photo of a pad, the
    demo's and the script's still pad (rendered without noise, identical frame to frame)."""
    clock = ManualClock()
    rec = Recorder()
    photo = images(tmp_path, 1) / "000.png"
    sup = CameraSupervisor(
        SourceOpener(f"files:{photo}?fps=30", clock=clock), clock=clock, on_status=rec
    )
    frames = pump(sup, 30.0, clock)
    assert rec.states == [CameraState.LIVE]
    assert len({frame_fingerprint(f) for f in frames}) == 1
    for synthetic in (FilesSource, DemoSource, ScriptedSource):
        assert not synthetic.live_sensor
    for camera in (OpenCVSource, Picamera2Source):
        assert camera.live_sensor
