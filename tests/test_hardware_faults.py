"""Camera faults: stalls, errors, garbage, a camera that vanishes and comes back, no camera.

Everything runs on the fake clock (minutes of trouble in milliseconds) through the first-class
fault injector, except one short real-time test that proves the same on the real clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hardware.clock import ManualClock, MonotonicClock
from hardware.faulty import GARBAGE_KINDS, Fault, FaultKind, FaultPlan, FaultySource, parse_faults
from hardware.files import FilesSource
from hardware.frames import (
    CameraFailedError,
    CameraUnavailableError,
    Frame,
    FrameSource,
    frame_problem,
)
from hardware.sources import SourceOpener
from hardware.supervisor import Backoff, CameraState, CameraStatus, CameraSupervisor


def images(folder: Path, n: int = 5) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        img = np.full((48, 64, 3), 60 + 20 * i, np.uint8)
        cv2.imwrite(str(folder / f"{i:03d}.png"), img)
    return folder


class Recorder:
    """Collects every status the supervisor publishes."""

    def __init__(self) -> None:
        self.seen: list[CameraStatus] = []

    def __call__(self, status: CameraStatus) -> None:
        self.seen.append(status)

    @property
    def main(self) -> list[CameraStatus]:
        """The statuses after start-up (STARTING, "opened, waiting for frames", left out)."""
        return [s for s in self.seen if s.state is not CameraState.STARTING]

    @property
    def states(self) -> list[CameraState]:
        return [s.state for s in self.main]


def supervise(
    tmp_path: Path, plan: str, clock: ManualClock, **kw: object
) -> tuple[CameraSupervisor, Recorder, SourceOpener]:
    folder = images(tmp_path / "imgs")
    opener = SourceOpener(f"faulty:{plan}:files:{folder}?fps=30", clock=clock)
    rec = Recorder()
    sup = CameraSupervisor(opener, clock=clock, on_status=rec, **kw)  # type: ignore[arg-type]
    return sup, rec, opener


def pump(sup: CameraSupervisor, seconds: float, clock: ManualClock) -> list[Frame]:
    """Read for ``seconds`` of (fake) time; every read must return close to its timeout."""
    frames = []
    end = clock.now() + seconds
    while clock.now() < end:
        before = clock.now()
        frame = sup.read(0.2)
        assert clock.now() - before <= 0.2 + 0.05
        if frame is not None:
            assert frame_problem(frame) is None
            frames.append(frame)
    return frames


# -- the fault plan -----------------------------------------------------------------------------


def test_fault_grammar() -> None:
    faults = parse_faults("stall@3s, stall@10+2s,raise@20,garbage@5+4,vanish@1.5s+3s")
    assert faults == (
        Fault(FaultKind.STALL, at_s=3.0),
        Fault(FaultKind.STALL, at_frame=10, duration_s=2.0),
        Fault(FaultKind.RAISE, at_frame=20),
        Fault(FaultKind.GARBAGE, at_frame=5, count=4),
        Fault(FaultKind.VANISH, at_s=1.5, duration_s=3.0),
    )
    assert str(FaultPlan(faults)) == "stall@3s,stall@10+2s,raise@20,garbage@5+4,vanish@1.5s+3s"


@pytest.mark.parametrize(
    "text",
    ["", "boom@3", "stall", "stall@x", "vanish@3", "raise@3+2s", "garbage@3+1s", "stall@2.5"],
)
def test_bad_fault_plans_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match=r"fault|vanish|empty"):
        parse_faults(text)


def test_garbage_cycles_through_every_kind(tmp_path: Path) -> None:
    clock = ManualClock()
    plan = FaultPlan("garbage@2+5", clock=clock)
    with FaultySource(FilesSource(images(tmp_path), fps=None, clock=clock), plan) as src:
        frames: list[object] = [src.read(1.0) for _ in range(8)]
    problems = [frame_problem(f) for f in frames]
    assert problems[:2] == [None, None]
    assert problems[7] is None
    bad = problems[2:7]
    assert all(p is not None for p in bad)
    assert "all black" in bad[0]  # type: ignore[operator]
    assert len(set(bad)) == len(GARBAGE_KINDS)


def test_faults_due_with_a_raise_are_not_lost(tmp_path: Path) -> None:
    """A raise due at the same time as other faults used to return before applying them, and
    ``due()`` had already marked them fired: ``raise@3,garbage@3+2`` gave no garbage."""
    clock = ManualClock()
    plan = FaultPlan("raise@3,garbage@3+2,vanish@3+4s", clock=clock)
    with FaultySource(FilesSource(images(tmp_path), fps=None, clock=clock), plan) as src:
        for _ in range(3):
            assert frame_problem(src.read(1.0)) is None
        with pytest.raises(CameraFailedError, match="raise@3"):
            src.read(1.0)
    assert plan.garbage_left == 2
    assert plan.vanished() == pytest.approx(4.0)


# -- the supervisor -----------------------------------------------------------------------------


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


def test_backoff_delays() -> None:
    b = Backoff(0.5, 2.0, 30.0)
    assert [b.delay(n) for n in range(9)] == [0, 0.5, 1, 2, 4, 8, 16, 30, 30]


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


faults = st.one_of(
    st.builds(
        Fault,
        st.sampled_from([FaultKind.STALL, FaultKind.RAISE, FaultKind.GARBAGE, FaultKind.FREEZE]),
        at_frame=st.integers(0, 10_000),
    ),
    st.builds(
        Fault,
        st.sampled_from([FaultKind.STALL, FaultKind.VANISH, FaultKind.FREEZE]),
        at_s=st.integers(0, 3600).map(float),
        duration_s=st.integers(1, 600).map(float),
    ),
    st.builds(
        Fault, st.just(FaultKind.GARBAGE), at_frame=st.integers(0, 99), count=st.integers(1, 500)
    ),
)


@given(st.lists(faults, min_size=1, max_size=6))
def test_fault_plans_round_trip_through_text(plan: list[Fault]) -> None:
    assert parse_faults(",".join(str(f) for f in plan)) == tuple(plan)


@given(st.floats(0.01, 5.0), st.floats(1.0, 4.0), st.floats(0.5, 120.0))
def test_backoff_grows_and_is_capped(initial: float, factor: float, maximum: float) -> None:
    b = Backoff(initial, factor, maximum)
    delays = [b.delay(n) for n in range(1, 40)]
    assert delays == sorted(delays)
    assert max(delays) <= max(maximum, initial)
    assert delays[0] == pytest.approx(min(initial, maximum))


# H4 -- supervisor.py: back-off starts again from its first step once the camera has stayed
# back (Backoff.stable); a camera that fails again before that goes on where it was


def test_a_second_outage_after_a_stable_spell_starts_the_back_off_afresh(tmp_path: Path) -> None:
    clock = ManualClock()
    backoff = Backoff(0.5, 2.0, 30.0, stable=2.0)
    sup, rec, _ = supervise(tmp_path, "raise@10,raise@100", clock, backoff=backoff)
    pump(sup, 6.0, clock)
    assert rec.states == [
        CameraState.LIVE,
        CameraState.OFFLINE,
        CameraState.LIVE,
        CameraState.OFFLINE,
        CameraState.LIVE,
    ]
    back, second = rec.main[2], rec.main[3]
    assert second.since - back.since > backoff.stable  # live ~3 s: the first outage is over
    assert second.failures == 1
    assert rec.main[4].since - second.since == pytest.approx(0.5, abs=0.1)


def test_a_flapping_camera_keeps_backing_off(tmp_path: Path) -> None:
    """A loose cable: the camera comes back for a moment and fails again. Each failure used to
    start the back-off afresh, so it was retried every 0.5 s, with a warning each time."""
    clock = ManualClock()
    sup, rec, _ = supervise(tmp_path, "raise@10,raise@100", clock)  # stable: 60 s
    pump(sup, 6.0, clock)
    assert rec.states[:4] == [
        CameraState.LIVE,
        CameraState.OFFLINE,
        CameraState.LIVE,
        CameraState.OFFLINE,
    ]
    first, second = rec.main[1], rec.main[3]
    assert (first.failures, second.failures) == (1, 2)
    assert first.retry_at is not None
    assert second.retry_at is not None
    assert first.retry_at - first.since == pytest.approx(0.5)
    assert second.retry_at - second.since == pytest.approx(1.0)


def test_a_camera_away_all_night_keeps_its_back_off() -> None:
    """``factor ** failures`` overflowed a float after ~1024 failures (8.5 h of 30 s retries):
    every read then raised and the camera was reopened on every loop turn, without back-off."""
    assert Backoff(0.5, 2.0, 30.0).delay(5000) == 30.0
    clock = ManualClock()
    opened: list[float] = []

    def gone() -> FrameSource:
        opened.append(clock.now())
        raise CameraUnavailableError("no Raspberry Pi camera 0: Camera(s) not found")

    sup = CameraSupervisor(gone, clock=clock)
    while len(opened) < 1100:  # a night of attempts (fake time)
        assert sup.read(30.0) is None
    start = len(opened)
    for _ in range(200):  # 100 s more of the pad loop's reads
        assert sup.read(0.5) is None
    assert len(opened) - start <= 4  # still one attempt per 30 s
    assert sup.status.failures >= 1100
    assert sup.status.retry_at == pytest.approx(opened[-1] + 30.0)
