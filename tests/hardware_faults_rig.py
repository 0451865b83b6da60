"""Shared helpers of the camera fault tests (``test_hardware_faults*.py``): a folder of
images to replay, a recorder of the statuses published, and a supervised faulty camera."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from hardware.clock import ManualClock
from hardware.frames import Frame, frame_problem
from hardware.sources import SourceOpener
from hardware.supervisor import CameraState, CameraStatus, CameraSupervisor


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
