"""Shared helpers of the pad page tests (``test_pages_pad*.py``): an app with a pad service
whose dice reader is faked, and the ``rig`` and ``client`` fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_app import PIN, create_table

from hardware.frames import Frame
from hardware.supervisor import CameraState, CameraStatus
from server.app import create_app
from server.config import Config
from server.pad.api import attach
from server.pad.service import PadService
from server.services import dicepad
from vision.reading import DieFlag, DieReading, Pad, Reading


class Dice:
    """The dice reader the pad service calls on a settled frame: it answers ``next``."""

    def __init__(self) -> None:
        self.next = Reading((), (320, 240))

    def __call__(self, image: np.ndarray, pad: Pad | None) -> Reading:
        return self.next


def reading(*values: int | None, cocked: tuple[int, ...] = ()) -> Reading:
    dice = []
    for i, v in enumerate(values):
        flags = {DieFlag.UNREADABLE} if v is None else set()
        if i in cocked:
            flags.add(DieFlag.COCKED)
        dice.append(DieReading(v, (40.0 * i + 20, 100.0), (), 20.0, "white", 0.9, frozenset(flags)))
    return Reading(tuple(dice), (320, 240))


class Rig:
    """An app with a pad service attached, as ``dicepad serve`` builds it."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.tables = dicepad(app).tables
        self.dice = Dice()
        self.service = PadService(self.tables, None, reader=self.dice, truth_fallback=False)
        attach(app, self.service)
        self.frames = 0

    def throw(self, read: Reading) -> Any:
        """The dice of a throw came to rest and were read as ``read``."""
        self.dice.next = read
        self.frames += 1
        image = np.full((240, 320, 3), 90, np.uint8)
        return self.service.settled(Frame(image, float(self.frames), self.frames))

    def camera(self, state: CameraState, message: str) -> None:
        """The camera's status as the supervisor reports it, shown on every open table."""
        status = CameraStatus(state, message, 0.0, "opencv:0")
        for s in self.tables.summaries():
            self.tables.set_pad(s["table"], "camera", status.to_json())


def _app(tmp_path: Path, camera: str) -> Flask:
    return create_app(Config(data_dir=tmp_path, pin=PIN, camera=camera, pin_scrypt_n=2**4))


@pytest.fixture(name="rig")  # imported by the tests that use it
def fixture_rig(tmp_path: Path) -> Iterator[Rig]:
    app = _app(tmp_path, "demo")
    yield Rig(app)
    dicepad(app).close()


@pytest.fixture(name="client")  # imported by the tests that use it
def fixture_client(rig: Rig) -> FlaskClient:
    return rig.app.test_client()


def new_table(client: FlaskClient, game: str, **lineup: Any) -> str:
    return create_table(client, {"game": game, **lineup})


def html(r: Any, status: int = 200) -> str:
    assert r.status_code == status, (r.status_code, r.data[:300])
    text: str = r.get_data(as_text=True)
    return text
