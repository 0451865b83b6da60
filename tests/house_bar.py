"""A bar with a pad service and a house worker whose camera a test works (Vision IV tests:
every fix teaches, the teaching page). A real app on a temporary data directory, a real pad
service and house worker; the camera's settled frames are rendered scenes handed to the
service as the settle detector would (``PadService.settled``), read from the renderer's truth
(one die made unsure where a test needs the pad to ask)."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from flask import Flask
from server_app import make_app

from hardware.clock import ManualClock
from hardware.frames import make_frame
from server.pad.api import attach
from server.pad.house import HOUSE_DIR, PadHouse
from server.pad.reading import Throw
from server.pad.service import PadService
from server.pad.truth import reading_from_truth
from server.services import dicepad
from vision import synth
from vision.house import HouseSet, load_set
from vision.house.views import die_view
from vision.params import DetectorParams
from vision.reading import DieFlag, Pad, Reading

MODELS = Path(__file__).resolve().parent.parent / "vision" / "models"
LOOK: dict[str, Any] = {
    "pad": synth.PadStyle(size_mm=(280.0, 200.0), texture=0.5),
    "camera": synth.Camera(height_mm=320.0),
    "lighting": synth.Lighting(),
}
SPOTS = ((-80, -40, 10), (0, -50, 30), (70, -30, 50), (-60, 40, 70), (50, 50, 20))
"""x and y (mm from the pad's centre) and turn (degrees) of each die of a throw."""


def render(values: tuple[int, ...]) -> synth.SceneImage:
    """White dice showing ``values`` at :data:`SPOTS` on a green pad, from above."""
    style = synth.STYLES["white"]
    dice = tuple(
        synth.DieSpec(v, (float(x), float(y)), float(yaw), 0.0, 0.0, 0.0, 16.0, style)
        for v, (x, y, yaw) in zip(values, SPOTS, strict=True)
    )
    return synth.render(synth.Scene(dice, **LOOK))


class Bar:
    """The app (``--camera none``) with a pad service attached whose camera the test works:
    :meth:`throw` hands it a settled frame, read from its truth. No table is made."""

    def __init__(self, data: Path, *, limit: int | None = None) -> None:
        self.data = data
        self.app: Flask = make_app(data)
        self.parts = dicepad(self.app)
        self.client = self.app.test_client()
        self.house = PadHouse(data / HOUSE_DIR, health=self.parts.health, limit=limit)
        self.reading: Reading | None = None
        self.service = PadService(
            self.parts.tables, None, clock=ManualClock(), reader=self._read, house=self.house
        )
        attach(self.app, self.service)
        self.house.start()
        self._seq = itertools.count()

    def _read(self, image: np.ndarray, pad: Pad | None) -> Reading:
        assert self.reading is not None
        return self.reading

    def throw(self, values: tuple[int, ...], *, unsure: int | None = None) -> Throw:
        """The camera sees ``values`` come to rest; the die showing ``unsure`` is one the
        reader asks about."""
        shot = render(values)
        reading = reading_from_truth(shot.truth)
        self.truth = reading
        if unsure is not None:
            i = self.index(unsure)
            asked = replace(
                reading.dice[i],
                value=None,
                flags=frozenset({DieFlag.UNREADABLE}),
                candidates=((unsure, 0.6), (7 - unsure, 0.3)),
            )
            reading = replace(reading, dice=(*reading.dice[:i], asked, *reading.dice[i + 1 :]))
        self.reading = reading
        self.image = shot.image
        frame = make_frame(shot.image.copy(), timestamp=0.0, seq=next(self._seq))
        return self.service.settled(frame)

    def index(self, value: int) -> int:
        """Where the (one) die showing ``value`` lies in the reading of the last throw."""
        (i,) = [i for i, d in enumerate(self.truth.dice) if d.value == value]
        return i

    def view_of(self, value: int) -> np.ndarray:
        """The (one) die showing ``value`` as the value network saw it in the raw frame."""
        return die_view(self.image, self.truth.dice[self.index(value)], DetectorParams())

    def kept(self) -> HouseSet:
        """The house set on disk once the worker has kept every change."""
        assert self.house.wait()
        return load_set(self.data / HOUSE_DIR)

    def close(self) -> None:
        self.service.stop()
        self.parts.close()
