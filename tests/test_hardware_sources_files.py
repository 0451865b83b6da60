"""The files backend: images and video replayed in order, broken input, and the pacer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest
from hardware_sources_rig import scene, write_images, write_video
from hypothesis import given
from hypothesis import strategies as st

from hardware.clock import ManualClock
from hardware.files import FilesSource, natural_key
from hardware.frames import CameraFailedError, CameraUnavailableError, EndOfStreamError
from hardware.pacing import Pacer

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
