"""The frame-source contract every camera backend keeps, and the checks the supervisor applies.

A backend is a context manager with ``read(timeout) -> Frame``, ``close()`` and ``describe()``.
``read`` never blocks longer than ``timeout`` (it raises :class:`FrameTimeoutError` instead), so the
code above it can always notice a dead camera. Backends do not judge their own frames:
:func:`frame_problem` does, once, for all of them.
"""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import cv2
import numpy as np
import numpy.typing as npt

from hardware.closing import Closing

Image = npt.NDArray[np.uint8]

LORES_WIDTH = 160
"""Width in pixels of the grey preview each frame carries for cheap motion/settle detection."""

BLACK_LEVEL = 8
"""A frame whose brightest sampled pixel is at or below this is treated as "all black"."""

SAMPLE_STEP = 8
"""The cheap checks look at every 8th pixel of every 8th row (14 400 of a 1280×720 frame)."""


class CameraError(Exception):
    """Base of every frame-source failure."""


class CameraUnavailableError(CameraError):
    """The source cannot be opened: no device, no library, nothing to replay."""


class CameraFailedError(CameraError):
    """An open source broke while reading (cable pulled, driver error)."""


class FrameTimeoutError(CameraError, TimeoutError):
    """No frame arrived within the timeout given to ``read``."""


class EndOfStreamError(CameraError):
    """A finite replay (``loop=False``) has delivered its last frame."""


class SourceClosedError(CameraError):
    """``read`` was called on a closed source."""


@dataclass(frozen=True, eq=False)
class Frame:
    """One camera frame.

    ``image`` is BGR ``uint8`` H×W×3 (OpenCV's layout), read-only; ``timestamp`` is the source
    clock's monotonic seconds at capture; ``seq`` counts frames from 0 per source (the supervisor
    renumbers across reconnects); ``lores`` is an optional small grey copy for settle detection.
    ``sensor_stamp`` is the driver's own stamp of the exposure (picamera2's ``SensorTimestamp``,
    ns), where it gives one: a stamp that stops advancing means old frames are being re-sent.
    """

    image: Image
    timestamp: float
    seq: int
    lores: Image | None = None
    sensor_stamp: int | None = None

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return int(self.image.shape[1]), int(self.image.shape[0])


def make_lores(image: Image, *, width: int = LORES_WIDTH) -> Image:
    """A small grey copy of a BGR image, ``width`` px wide (aspect kept)."""
    h, w = image.shape[:2]
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    if w <= width:
        return np.ascontiguousarray(grey, dtype=np.uint8)
    height = max(1, round(h * width / w))
    return cast(Image, cv2.resize(grey, (width, height), interpolation=cv2.INTER_AREA))


def make_frame(
    image: Image,
    *,
    timestamp: float,
    seq: int,
    lores: Image | None = None,
    sensor_stamp: int | None = None,
) -> Frame:
    """Wrap a freshly captured image (computing ``lores`` if absent), frozen against edits."""
    if lores is None:
        lores = make_lores(image)
    image.flags.writeable = False
    lores.flags.writeable = False
    return Frame(image=image, timestamp=timestamp, seq=seq, lores=lores, sensor_stamp=sensor_stamp)


def frame_problem(frame: object, *, black_level: int = BLACK_LEVEL) -> str | None:
    """Why ``frame`` is unusable ("all black", "wrong shape …"), or None when it is fine.

    Cheap (samples every :data:`SAMPLE_STEP`-th pixel for the black check) so it runs on every
    frame.
    """
    if not isinstance(frame, Frame):
        return f"no frame (got {type(frame).__name__})"
    image: Any = frame.image
    if not isinstance(image, np.ndarray):
        return f"no image (got {type(image).__name__})"
    if image.dtype != np.uint8:
        return f"wrong pixel type {image.dtype} (want uint8)"
    if image.ndim != 3 or image.shape[2] != 3:
        return f"wrong shape {tuple(image.shape)} (want H×W×3 BGR)"
    if image.shape[0] < 16 or image.shape[1] < 16:
        return f"image too small ({image.shape[1]}×{image.shape[0]})"
    if int(image[::SAMPLE_STEP, ::SAMPLE_STEP].max()) <= black_level:
        return "all black"
    lores: Any = frame.lores
    if lores is not None and (
        not isinstance(lores, np.ndarray) or lores.dtype != np.uint8 or lores.ndim != 2
    ):
        return "bad low-resolution image"
    return None


def frame_fingerprint(frame: Frame) -> bytes:
    """A digest of the sampled pixels of a good ``frame`` (see :func:`frame_problem`).

    Equal for a frame re-sent by a stuck driver; different for any two exposures of a real
    sensor, whose noise moves some of the sampled pixels even on a still pad. Costs a strided
    copy and a hash of 1/64 of the image, so it runs on every frame.
    """
    sample = np.ascontiguousarray(frame.image[::SAMPLE_STEP, ::SAMPLE_STEP])
    return hashlib.blake2b(sample.data, digest_size=16).digest()


class FrameSource(Closing):
    """A camera, a replay or a renderer that hands out frames. Use it as a context manager."""

    kind: ClassVar[str]
    """Short backend name, as in the spec string (``files``, ``opencv`` …)."""
    hint: ClassVar[str]
    """The likely cause to show people when this kind of source stops delivering."""

    live_sensor: bool = False
    """True for a real image sensor: its noise changes every frame, so the same image over and
    over means the driver is re-sending an old one, which the supervisor treats as a stall.
    Synthetic and replayed sources repeat images legitimately (a still pad, a photo on loop)."""

    _closed: bool = False

    @abstractmethod
    def read(self, timeout: float) -> Frame:
        """The next frame, within ``timeout`` seconds.

        Raises :class:`FrameTimeoutError` if none came in time, :class:`CameraFailedError` if
        the source broke, :class:`EndOfStreamError` when a finite replay has ended.
        """

    def close(self) -> None:
        """Release the device; idempotent. Reading afterwards raises :class:`SourceClosedError`."""
        if not self._closed:
            self._closed = True
            self._release()

    @abstractmethod
    def _release(self) -> None:
        """Backend-specific cleanup, run once by :meth:`close`."""

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise SourceClosedError(f"{self.describe()} is closed")

    @abstractmethod
    def describe(self) -> str:
        """One line for logs and the status page, e.g. ``files: /data/evening (412 images)``."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()}{' closed' if self._closed else ''}>"
