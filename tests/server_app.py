"""What the server tests share: the app on a temporary data directory, the PIN, clocks.

The app gets a cheap PIN hash (the product uses 2**14; the tests need speed, not strength),
no camera and a wall clock that ticks once per reading, so event and record times are known
and ordered. The ``app`` and ``client`` fixtures of ``conftest.py`` use it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from server.app import create_app
from server.config import Config

PIN = "2468"
AUTH = {"X-Dicepad-Pin": PIN}
EVENING = datetime(2026, 11, 21, 21, 0, tzinfo=UTC)


def ticking_clock(
    start: datetime = EVENING, step: timedelta = timedelta(seconds=1)
) -> Callable[[], datetime]:
    """A wall clock that moves on by ``step`` at every reading (distinct, ordered times)."""
    n = itertools.count()
    return lambda: start + step * next(n)


class FakeMonotonic:
    """A monotonic clock the test moves by hand (``now``): PIN lock-outs and their windows."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_app(data: Path, **overrides: Any) -> Flask:
    """The app on ``data``; ``overrides`` are :class:`~server.config.Config` fields."""
    settings: dict[str, Any] = {
        "data_dir": data,
        "pin": PIN,
        "camera": "none",
        "pin_scrypt_n": 2**4,
        "clock": ticking_clock(),
        "keepalive_seconds": 0.2,
    }
    return create_app(Config(**(settings | overrides)))


def create_table(client: FlaskClient, body: Any, headers: Mapping[str, str] = AUTH) -> str:
    """``POST /api/tables`` that must succeed; the new table's id."""
    r = client.post("/api/tables", json=body, headers=dict(headers))
    assert r.status_code == 201, r.json
    return str(r.json["table"])  # type: ignore[index]
