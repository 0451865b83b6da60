"""What the pad service reads a frame with and what it keeps of a throw: the real dice
reader (:func:`vision_reader`, and :data:`Reader`, the shape of any reader), the reader of a
synthetic camera's truth when the models are missing (:func:`truth_reader`), a frame's JPEG
for a roll's snapshot (:func:`encode_snapshot`) and what the service did with one settled
frame (:class:`Throw`).

Apart from the loop (:mod:`server.pad.service`) because none of it holds the loop's state:
the pad's blueprint, the benchmarks and the tests build readers and read throws with these
alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from server.pad.decide import Decision
from server.pad.truth import reading_from_truth, source_truth
from vision.reading import Pad, Reading

if TYPE_CHECKING:
    from server.pad.service import PadService
    from vision.house import HouseModel

Reader = Callable[[np.ndarray, Pad | None], Reading]
"""Reads the dice of a BGR frame (``vision.detect.read_roll``'s shape)."""

SNAPSHOT_QUALITY = 85  #: JPEG quality of roll snapshots
SNAPSHOT_BYTES = 1024 * 1024  #: the table service's default snapshot limit


def vision_reader(
    models_dir: str | None = None,
    view: str = "overhead",
    house: Callable[[], HouseModel | None] | None = None,
) -> Reader:
    """The real dice reader with the networks in ``models_dir`` (None: the shipped ones) and
    the flags' operating points for a camera ``view`` (``vision.params.CAMERA_VIEWS``);
    imported and loaded on first use (an unknown view is a ValueError at once). ``house``
    gives the house model to read each throw with (``PadHouse.model``: the newest fit)."""
    from vision.locate import DieSizeMemory
    from vision.params import DetectorParams, flags_for_view

    params = DetectorParams(models_dir=models_dir, flags=flags_for_view(view))
    sizes = DieSizeMemory()  # the camera is fixed: its dice's size is learnt, not re-measured

    def read(image: np.ndarray, pad: Pad | None) -> Reading:
        from vision.detect import read_roll

        given = sizes.die_px(image.shape)
        reading = read_roll(
            image,
            pad=pad,
            params=params,
            house=None if house is None else house(),
            die_px=given,
        )
        sizes.learn(given, reading.located_die_px)
        return reading

    return read


def encode_snapshot(image: np.ndarray, *, limit: int = SNAPSHOT_BYTES) -> bytes:
    """The frame as a JPEG under ``limit`` bytes (smaller quality, then half size, if need be)."""
    quality = SNAPSHOT_QUALITY
    while True:
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            raise ValueError("the frame could not be encoded as a JPEG")
        data = bytes(buf)
        if len(data) <= limit:
            return data
        if quality > 50:
            quality -= 20
        else:
            h, w = image.shape[:2]
            size = (max(1, w // 2), max(1, h // 2))
            image = np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_AREA), np.uint8)


@dataclass(frozen=True)
class Throw:
    """What the pad service did with one settled frame (kept for ``/api/pad`` and tests)."""

    frame_seq: int
    frame_at: float  #: the frame's capture time (the service's clock)
    done_at: float  #: when the decision had been applied
    table: str | None
    reading: Reading | None
    decision: Decision | None
    applied: tuple[int, ...] = ()  #: log seqs of the actions that landed
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "frame": self.frame_seq,
            "table": self.table,
            "dice": [] if self.reading is None else [d.to_json() for d in self.reading.dice],
            "actions": []
            if self.decision is None
            else [a.to_json() for a in self.decision.actions],
            "notice": None
            if self.decision is None or self.decision.notice is None
            else self.decision.notice.to_json(),
            "applied": list(self.applied),
            "error": self.error,
            "seconds": round(self.done_at - self.frame_at, 3),
        }


def truth_reader(service: PadService) -> Reader:
    def read(image: np.ndarray, pad: Pad | None) -> Reading:
        truth = source_truth(service.supervisor.source)
        if truth is None:
            raise FileNotFoundError("vision models missing and the camera is not synthetic")
        return reading_from_truth(truth)

    return read
