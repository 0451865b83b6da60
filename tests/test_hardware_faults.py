"""Camera faults: stalls, errors, garbage, a camera that vanishes and comes back, no camera.

Everything runs on the fake clock (minutes of trouble in milliseconds) through the first-class
fault injector, except short real-time tests that prove the same on the real clock. The rig
is :mod:`hardware_faults_rig`; the fault plan is in ``test_hardware_faults_plan.py``, the
back-off in ``test_hardware_faults_backoff.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hardware_faults_rig import Recorder, images, pump, supervise

from hardware.clock import ManualClock, MonotonicClock
from hardware.faulty import FaultPlan, FaultySource
from hardware.files import FilesSource
from hardware.frames import CameraUnavailableError, Frame, FrameSource
from hardware.sources import SourceOpener
from hardware.supervisor import Backoff, CameraState, CameraStatus, CameraSupervisor


def test_healthy_camera_goes_live_and_numbers_frames(tmp_path: Path) -> None:
    clock = ManualClock()
    sup, rec, _ = supervise(tmp_path, "raise@100000", clock)
    frames = pump(sup, 1.0, clock)
    assert len(frames) == pytest.approx(30, abs=2)
    assert [f.seq for f in frames] == list(range(len(frames)))
    assert rec.states == [CameraState.LIVE]
    assert rec.seen[0].state is CameraState.STARTING
    assert rec.seen[0].message.startswith("camera opened, waiting for frames")
    assert sup.status.ok
    assert not sup.status.manual_entry
    assert sup.status.to_json()["state"] == "live"


def test_a_hung_camera_is_reopened_and_recovers(tmp_path: Path) -> None:
    clock = ManualClock()
    sup, rec, _ = supervise(tmp_path, "stall@30", clock, stall_after=5.0)
    frames = pump(sup, 12.0, clock)
    assert rec.states == [CameraState.LIVE, CameraState.OFFLINE, CameraState.LIVE]
    offline = rec.main[1]
    assert offline.message.startswith("camera offline: no frames for 5 s")
    assert "rehearsal" in offline.message  # the likely cause for this kind of camera
    assert offline.manual_entry
    # down from the stall (after 1 s of frames) for 5 s, then back after 0.5 s of back-off
    back = rec.main[2].since
    assert back - offline.since == pytest.approx(0.5, abs=0.1)
    assert offline.since == pytest.approx(rec.main[0].since + 1.0 + 5.0, abs=0.1)
    assert [f.seq for f in frames] == list(range(len(frames)))  # numbering continues


def test_a_short_hiccup_is_ridden_out_without_reconnecting(tmp_path: Path) -> None:
    clock = ManualClock()
    sup, rec, _ = supervise(tmp_path, "stall@30+2s", clock, stall_after=5.0)
    frames = pump(sup, 6.0, clock)
    assert rec.states == [CameraState.LIVE]
    gaps = np.diff([f.timestamp for f in frames])
    assert gaps.max() == pytest.approx(2.0, abs=0.05)


def test_a_camera_that_raises_is_reopened(tmp_path: Path) -> None:
    clock = ManualClock()
    sup, rec, _ = supervise(tmp_path, "raise@10", clock)
    pump(sup, 2.0, clock)
    assert rec.states == [CameraState.LIVE, CameraState.OFFLINE, CameraState.LIVE]
    assert "camera error: injected fault raise@10" in rec.main[1].message


def test_a_few_garbage_frames_are_dropped_silently(tmp_path: Path) -> None:
    clock = ManualClock()
    sup, rec, _ = supervise(tmp_path, "garbage@10+5", clock)
    frames = pump(sup, 2.0, clock)
    assert rec.states == [CameraState.LIVE]
    assert len(frames) == pytest.approx(60 - 5, abs=2)


def test_endless_garbage_counts_as_a_failure(tmp_path: Path) -> None:
    clock = ManualClock()
    sup, rec, _ = supervise(tmp_path, "garbage@10+100000", clock, stall_after=3.0)
    pump(sup, 5.0, clock)
    assert rec.states[:2] == [CameraState.LIVE, CameraState.OFFLINE]
    assert "only unusable frames for 3 s" in rec.main[1].message
    assert sup.status.state in (CameraState.OFFLINE, CameraState.STARTING)


def test_garbage_limit_catches_fast_garbage(tmp_path: Path) -> None:
    clock = ManualClock()
    sup, rec, _ = supervise(tmp_path, "garbage@10+50", clock, garbage_limit=20)
    frames = pump(sup, 8.0, clock)
    assert CameraState.OFFLINE in rec.states
    assert "20 unusable frames in a row" in rec.main[rec.states.index(CameraState.OFFLINE)].message
    assert rec.states[-1] is CameraState.LIVE  # once the garbage is over
    assert frames


def test_a_vanished_camera_comes_back_without_a_restart(tmp_path: Path) -> None:
    clock = ManualClock()
    sup, rec, opener = supervise(tmp_path, "vanish@1s+4s", clock, backoff=Backoff(0.5, 2, 2))
    frames = pump(sup, 10.0, clock)
    states = rec.states
    assert states[0] is CameraState.LIVE
    assert states[-1] is CameraState.LIVE
    offline = [s for s in rec.main if s.state is CameraState.OFFLINE]
    # the read failed, then reopening failed with growing back-off until it came back
    assert "vanished" in offline[0].message
    assert [s.failures for s in offline] == list(range(1, len(offline) + 1))
    assert len(offline) >= 3
    # gone for 4 s; found again by the next attempt (0.5, 1, 2, 2 s apart)
    assert rec.main[-1].since - offline[0].since == pytest.approx(5.5, abs=0.1)
    assert opener.plan is not None
    assert opener.plan.vanished() == 0
    assert len(frames) > (1 + 3.5) * 30 - 10  # before the fault and after the return


def test_no_camera_at_start_means_manual_entry_and_retries(tmp_path: Path) -> None:
    clock = ManualClock()
    folder = tmp_path / "later"
    opener = SourceOpener(f"files:{folder}?fps=30", clock=clock)
    rec = Recorder()
    sup = CameraSupervisor(opener, clock=clock, on_status=rec, backoff=Backoff(0.5, 2.0, 4.0))
    assert sup.read(0.1) is None
    status = sup.status
    assert status.state is CameraState.MANUAL
    assert status.manual_entry
    assert status.message.startswith("no camera (")
    assert "manual entry" in status.message
    assert "does not exist" in status.message
    pump(sup, 10.0, clock)
    assert {s.state for s in rec.seen} == {CameraState.MANUAL}  # manual entry all along
    assert len({s.since for s in rec.seen}) == 1  # one state, its failure count updated
    assert sup.status.failures >= 4  # 0.5 + 1 + 2 + 4 (capped) + 4 …
    assert sup.status.retry_at is not None
    images(folder)  # the camera is plugged in
    frames = pump(sup, 5.0, clock)
    assert sup.status.state is CameraState.LIVE
    assert frames


def test_no_camera_configured_is_manual_entry_without_retries() -> None:
    clock = ManualClock()
    calls = []

    def opener() -> FrameSource:  # pragma: no cover (must never be called)
        calls.append(1)
        raise AssertionError

    for sup in (
        CameraSupervisor(None, clock=clock),
        CameraSupervisor(SourceOpener("none"), clock=clock),
    ):
        start = clock.now()
        assert sup.read(0.3) is None
        assert clock.now() - start == pytest.approx(0.3)
        assert sup.status.state is CameraState.DISABLED
        assert sup.status.manual_entry
    assert not calls


def test_a_finished_replay_ends_the_frame_stream(tmp_path: Path) -> None:
    clock = ManualClock()
    opener = SourceOpener(f"files:{images(tmp_path, 4)}?fps=30&loop=no", clock=clock)
    with CameraSupervisor(opener, clock=clock) as sup:
        assert len(list(sup.frames())) == 4
        assert sup.status.state is CameraState.ENDED
        assert sup.read(0.1) is None
        sup.reconnect("replay again")
        assert sup.read(0.5) is not None
    closed = sup.status  # (afresh: mypy keeps the ENDED narrowed above)
    assert closed.state is CameraState.CLOSED
    assert sup.read(0.1) is None


def test_unexpected_exceptions_and_a_broken_status_callback_never_escape(tmp_path: Path) -> None:
    clock = ManualClock()
    attempts = []

    def flaky() -> FrameSource:
        attempts.append(clock.now())
        if len(attempts) < 3:
            raise RuntimeError("driver exploded")
        return FilesSource(images(tmp_path), fps=30, clock=clock)

    def angry(status: CameraStatus) -> None:
        raise ValueError("status page is down")

    sup = CameraSupervisor(flaky, clock=clock, on_status=angry)
    frames = pump(sup, 3.0, clock)
    assert frames
    assert len(attempts) == 3
    assert np.diff(attempts).tolist() == pytest.approx([0.5, 1.0])  # exponential back-off


class Broken(FrameSource):
    """A backend whose reads fail in ways a real driver wrapper might."""

    kind = "broken"
    hint = "n/a"

    def __init__(self, clock: ManualClock, fail: Callable[[], Frame]) -> None:
        self._clock = clock
        self._fail = fail

    def read(self, timeout: float) -> Frame:
        self._clock.sleep(0.01)
        return self._fail()

    def describe(self) -> str:
        return "broken"

    def _release(self) -> None:
        pass


def test_a_backend_raising_a_non_camera_error_is_a_fault_not_a_crash() -> None:
    clock = ManualClock()

    def boom() -> Frame:
        raise ZeroDivisionError("bug in a driver")

    sup = CameraSupervisor(lambda: Broken(clock, boom), clock=clock)
    assert sup.read(1.0) is None
    assert sup.status.state is CameraState.MANUAL
    assert "bug in a driver" in sup.status.message


def test_a_silent_camera_after_a_garbage_one_is_reported_as_silent(tmp_path: Path) -> None:
    """The stall message used the previous source's last bad frame: a reopened camera that sent
    nothing at all was reported as sending only unusable frames."""
    clock = ManualClock()
    folder = images(tmp_path)
    plans = iter(["garbage@0+1000", "stall@0"])  # black frames, then (reopened) none at all

    def opener() -> FrameSource:
        plan = FaultPlan(next(plans, "stall@0"), clock=clock)
        return FaultySource(FilesSource(folder, fps=30, clock=clock), plan)

    rec = Recorder()
    sup = CameraSupervisor(opener, clock=clock, garbage_limit=20, on_status=rec)
    pump(sup, 7.0, clock)
    failures = [s.message for s in rec.main]
    assert "20 unusable frames in a row" in failures[0]
    assert "no camera (no frames for 5 s)" in failures[1]


def test_unavailable_opener_error_is_reported_verbatim() -> None:
    clock = ManualClock()

    def gone() -> FrameSource:
        raise CameraUnavailableError("no Raspberry Pi camera 0: Camera(s) not found")

    sup = CameraSupervisor(gone, clock=clock, hint="check the ribbon cable")
    sup.read(0.1)
    assert "Camera(s) not found" in sup.status.message
    assert "check the ribbon cable" in sup.status.message


def test_recovers_on_the_real_clock(tmp_path: Path) -> None:
    """The same machinery in real time: stall, detect, reconnect, frames again — in < 1 s."""
    clock = MonotonicClock()
    opener = SourceOpener(f"faulty:stall@5:files:{images(tmp_path)}?fps=100", clock=clock)
    rec = Recorder()
    sup = CameraSupervisor(
        opener, clock=clock, stall_after=0.15, backoff=Backoff(0.05, 2.0, 1.0), on_status=rec
    )
    start = time.monotonic()
    got = 0
    while time.monotonic() - start < 0.9 and rec.states.count(CameraState.LIVE) < 2:
        if sup.read(0.05) is not None:
            got += 1
    sup.close()
    assert rec.states[:3] == [CameraState.LIVE, CameraState.OFFLINE, CameraState.LIVE]
    assert got > 5


def test_close_from_another_thread_ends_a_blocked_read(tmp_path: Path) -> None:
    """Shutdown: the server closes the supervisor while the pad service waits for a frame."""
    import threading

    clock = MonotonicClock()
    opener = SourceOpener(f"faulty:stall@1:files:{images(tmp_path)}?fps=100", clock=clock)
    sup = CameraSupervisor(opener, clock=clock, stall_after=10.0)
    assert sup.read(0.5) is not None
    result: list[object] = []
    reader = threading.Thread(target=lambda: result.append(sup.read(0.4)))
    reader.start()
    time.sleep(0.05)
    sup.close()
    reader.join(1.0)
    assert not reader.is_alive()
    assert result == [None]
    assert sup.status.state is CameraState.CLOSED
