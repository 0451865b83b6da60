"""The supervisor's back-off: its delays, and how it grows, caps and starts afresh."""

from __future__ import annotations

from pathlib import Path

import pytest
from hardware_faults_rig import pump, supervise
from hypothesis import given
from hypothesis import strategies as st

from hardware.clock import ManualClock
from hardware.frames import CameraUnavailableError, FrameSource
from hardware.supervisor import Backoff, CameraState, CameraSupervisor


def test_backoff_delays() -> None:
    b = Backoff(0.5, 2.0, 30.0)
    assert [b.delay(n) for n in range(9)] == [0, 0.5, 1, 2, 4, 8, 16, 30, 30]


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
