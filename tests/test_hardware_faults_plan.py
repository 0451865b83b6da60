"""The fault plan: its grammar, garbage of every kind, and faults due together."""

from __future__ import annotations

from pathlib import Path

import pytest
from hardware_faults_rig import images
from hypothesis import given
from hypothesis import strategies as st

from hardware.clock import ManualClock
from hardware.faulty import GARBAGE_KINDS, Fault, FaultKind, FaultPlan, FaultySource, parse_faults
from hardware.files import FilesSource
from hardware.frames import CameraFailedError, frame_problem


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
