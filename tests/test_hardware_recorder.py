"""Recording frames and replaying them with the files source: a recorded evening re-runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hardware.clock import ManualClock
from hardware.files import FilesSource, decode_image, list_images
from hardware.frames import Frame, make_frame
from hardware.recorder import FrameRecorder
from hardware.sources import open_source


def test_a_recording_replays_frame_for_frame(tmp_path: Path) -> None:
    clock = ManualClock()
    originals = []
    with (
        open_source("demo?seed=5&fps=30", clock=clock) as camera,
        FrameRecorder(tmp_path / "evening", every=2) as rec,
    ):
        for _ in range(20):
            frame = camera.read(1.0)
            if rec.write(frame):
                originals.append(frame.image)
    assert rec.written == 10
    with FilesSource(tmp_path / "evening", fps=30, loop=False, clock=clock) as replay:
        replayed = [replay.read(1.0).image for _ in range(10)]
    for a, b in zip(originals, replayed, strict=True):
        assert np.abs(a.astype(int) - b.astype(int)).mean() < 2.5  # JPEG, quality 90


def test_recording_stops_quietly_when_it_cannot_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = ManualClock()
    folder = tmp_path / "rec"
    with open_source("demo?fps=0", clock=clock) as camera:
        rec = FrameRecorder(folder, max_frames=2)
        assert [rec.write(camera.read(1.0)) for _ in range(3)] == [True, True, False]
        assert rec.stopped == "reached 2 frames"
        rec = FrameRecorder(folder / "gone")
        (folder / "gone").rmdir()  # the USB stick was pulled
        assert rec.write(camera.read(1.0)) is False
        assert rec.stopped is not None
        assert rec.write(camera.read(1.0)) is False  # stays stopped, no crash
    assert "recording to" in caplog.text


def test_bad_recorder_settings() -> None:
    with pytest.raises(ValueError, match="every"):
        FrameRecorder("/tmp/x", every=0)
    with pytest.raises(ValueError, match="quality"):
        FrameRecorder("/tmp/x", quality=101)


def test_a_restarted_recording_adds_to_the_folder_instead_of_overwriting(tmp_path: Path) -> None:
    """Numbering restarted at 000000.jpg, so a recorder reopened after a restart overwrote the
    evening so far and the replay mixed the two."""
    folder = tmp_path / "evening"

    def frame(value: int, i: int) -> Frame:
        return make_frame(np.full((48, 64, 3), value, np.uint8), timestamp=float(i), seq=i)

    with FrameRecorder(folder) as rec:
        assert all(rec.write(frame(50, i)) for i in range(3))
    with FrameRecorder(folder) as rec:  # the service restarted
        assert all(rec.write(frame(200, i)) for i in range(2))
    assert [p.name for p in list_images(folder)] == [f"{i:06d}.jpg" for i in range(5)]
    means = [round(float(decode_image(p).mean()), -1) for p in list_images(folder)]
    assert means == [50, 50, 50, 200, 200]
