"""Replay a folder of images or a video file as if it were a live camera.

This is how a recorded evening is re-run through the pad service, how a bar tries a new camera
position from a phone video, and the backbone of the contract tests. Files that cannot be
decoded are logged, listed in :attr:`FilesSource.skipped` and passed over; they never crash
the replay.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import cast

import cv2
import numpy as np

from hardware.clock import REAL_CLOCK, Clock
from hardware.frames import (
    CameraFailedError,
    CameraUnavailableError,
    EndOfStreamError,
    Frame,
    FrameSource,
    Image,
    make_frame,
)
from hardware.pacing import Pacer

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = frozenset(
    {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp", ".pgm", ".ppm"}
)
VIDEO_SUFFIXES = frozenset(
    {".mp4", ".avi", ".mkv", ".mov", ".webm", ".m4v", ".mjpeg", ".mjpg", ".h264"}
)


def natural_key(path: Path) -> tuple[tuple[int, int | str], ...]:
    """Sort ``frame2.jpg`` before ``frame10.jpg``, as a person numbering files expects."""
    parts = re.split(r"(\d+)", path.name.lower())
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p)


def list_images(folder: Path) -> list[Path]:
    """The image files directly in ``folder``, in natural order (hidden files ignored)."""
    return sorted(
        (
            p
            for p in folder.iterdir()
            if p.suffix.lower() in IMAGE_SUFFIXES and not p.name.startswith(".") and p.is_file()
        ),
        key=natural_key,
    )


def decode_image(path: Path) -> Image:
    """Read one image file as BGR; raises ``ValueError`` with the reason when it cannot."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from exc
    if not data:
        raise ValueError("empty file")
    try:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except cv2.error as exc:
        raise ValueError(f"cannot decode: {exc}") from exc
    if image is None:
        raise ValueError("not a readable image")
    return cast(Image, image)


class FilesSource(FrameSource):
    """Images from a folder (natural sort order) or frames from a video file, at ``fps``.

    ``fps=None`` delivers frames as fast as they are asked for (benchmarks, batch re-runs).
    With ``loop=False`` the source raises :class:`EndOfStreamError` after the last frame.
    """

    kind = "files"
    hint = "check that the folder or video exists and holds readable images"

    def __init__(
        self,
        path: str | Path,
        *,
        fps: float | None = 30.0,
        loop: bool = True,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.path = Path(path).expanduser()
        self.loop = loop
        self._clock = clock
        self._pacer = Pacer(fps, clock)
        self._seq = 0
        self.skipped: list[tuple[Path, str]] = []
        """Files that could not be decoded, with the reason (each reported once per pass)."""
        self._images: list[Path] = []
        self._index = 0
        self._video: cv2.VideoCapture | None = None
        self._video_frames = 0  # frames decoded from the video since the last rewind
        if self.path.is_dir():
            self._images = list_images(self.path)
            if not self._images:
                raise CameraUnavailableError(f"no image files in {self.path}")
        elif self.path.is_file():
            if self.path.suffix.lower() in IMAGE_SUFFIXES:
                self._images = [self.path]
            else:
                self._video = cv2.VideoCapture(str(self.path))
                if not self._video.isOpened():
                    self._video.release()
                    raise CameraUnavailableError(f"cannot open video {self.path}")
        else:
            raise CameraUnavailableError(f"{self.path} does not exist")

    @property
    def count(self) -> int | None:
        """Number of images (None for a video, whose length is not trusted)."""
        return None if self._video is not None else len(self._images)

    def describe(self) -> str:
        if self._video is not None:
            return f"files: video {self.path}"
        return f"files: {self.path} ({len(self._images)} images)"

    def read(self, timeout: float) -> Frame:
        self._check_open()
        self._pacer.wait(timeout)
        image = self._next_video_image() if self._video is not None else self._next_file_image()
        frame = make_frame(image, timestamp=self._clock.now(), seq=self._seq)
        self._seq += 1
        return frame

    def _next_file_image(self) -> Image:
        tried = 0
        while True:
            if self._index >= len(self._images):
                if not self.loop:
                    raise EndOfStreamError(f"replay of {self.path} finished")
                self._index = 0
            if tried >= len(self._images):
                raise CameraFailedError(
                    f"none of the {len(self._images)} images in {self.path} is readable"
                )
            path = self._images[self._index]
            self._index += 1
            tried += 1
            try:
                return decode_image(path)
            except ValueError as exc:
                if not any(p == path for p, _ in self.skipped):
                    log.warning("skipping %s: %s", path, exc)
                    self.skipped.append((path, str(exc)))

    def _next_video_image(self) -> Image:
        assert self._video is not None
        ok, image = self._video.read()
        if ok and image is not None:
            self._video_frames += 1
            return self._as_bgr(cast(Image, image))
        if not self.loop:
            raise EndOfStreamError(f"replay of {self.path} finished")
        if self._video_frames == 0:
            raise CameraFailedError(f"no readable frames in {self.path}")
        self._video.set(cv2.CAP_PROP_POS_FRAMES, 0)
        self._video_frames = 0
        ok, image = self._video.read()
        if not ok or image is None:
            raise CameraFailedError(f"cannot rewind {self.path}")
        self._video_frames += 1
        return self._as_bgr(cast(Image, image))

    @staticmethod
    def _as_bgr(image: Image) -> Image:
        if image.ndim == 2:
            return cast(Image, cv2.cvtColor(image, cv2.COLOR_GRAY2BGR))
        return image

    def _release(self) -> None:
        if self._video is not None:
            self._video.release()
