"""Record frames to a folder so an evening can be re-run later with ``files:DIR``.

Frames are written as numbered JPEGs (``000000.jpg``, ``000001.jpg`` …, which the files source
replays in order); a recorder opened on a folder that already holds some (a restart after a power
cut) numbers on after them instead of overwriting them. Recording is a side job: when the disk
fills or the folder disappears it logs once and stops, and the camera carries on.
"""

from __future__ import annotations

import logging
from pathlib import Path

import cv2

from hardware.closing import Closing
from hardware.frames import Frame

log = logging.getLogger(__name__)


class FrameRecorder(Closing):
    """Writes every ``every``-th frame into ``folder`` (created if needed), at most
    ``max_frames`` of them. ``quality`` is the JPEG quality (0-100)."""

    def __init__(
        self,
        folder: str | Path,
        *,
        every: int = 1,
        max_frames: int | None = None,
        quality: int = 90,
    ) -> None:
        if every < 1:
            raise ValueError("every must be at least 1")
        if not 0 <= quality <= 100:
            raise ValueError("quality is 0-100")
        self.folder = Path(folder).expanduser()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.every = every
        self.max_frames = max_frames
        self._params = [cv2.IMWRITE_JPEG_QUALITY, quality]
        self._seen = 0
        self.written = 0
        self._first = _next_number(self.folder)  # frames already there are kept
        self.stopped: str | None = None
        """Why recording stopped (None while it runs)."""

    def write(self, frame: Frame) -> bool:
        """Record ``frame`` if it is due; True when it was written."""
        if self.stopped is not None:
            return False
        due = self._seen % self.every == 0
        self._seen += 1
        if not due:
            return False
        if self.max_frames is not None and self.written >= self.max_frames:
            self._stop(f"reached {self.max_frames} frames")
            return False
        path = self.folder / f"{self._first + self.written:06d}.jpg"
        try:
            ok, data = cv2.imencode(".jpg", frame.image, self._params)
            if not ok:
                raise OSError("JPEG encoding failed")
            path.write_bytes(data.tobytes())
        except (OSError, cv2.error) as exc:
            self._stop(f"cannot write {path}: {exc}")
            return False
        self.written += 1
        return True

    def _stop(self, reason: str) -> None:
        self.stopped = reason
        log.warning("recording to %s stopped: %s", self.folder, reason)

    def close(self) -> None:
        if self.stopped is None:
            self.stopped = "closed"


def _next_number(folder: Path) -> int:
    """One past the highest ``NNNNNN.jpg`` already in ``folder`` (0 when there is none)."""
    numbers = [int(p.stem) for p in folder.glob("*.jpg") if p.stem.isdigit()]
    return max(numbers, default=-1) + 1
