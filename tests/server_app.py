"""What the server tests share: the app on a temporary data directory, the PIN, clocks.

The app gets a cheap PIN hash (the product uses 2**14; the tests need speed, not strength),
no camera and a wall clock that ticks once per reading, so event and record times are known
and ordered. The ``app`` and ``client`` fixtures of ``conftest.py`` use it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

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


class MovableClock:
    """A wall clock the test moves on by hand (``advance``: a night at the bar in no time)
    that also ticks one second at every reading, as :func:`ticking_clock` does."""

    def __init__(self, start: datetime = EVENING) -> None:
        self.now = start

    def __call__(self) -> datetime:
        now, self.now = self.now, self.now + timedelta(seconds=1)
        return now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


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


def sse_events(raw: bytes) -> list[tuple[str, str, Any]]:
    """(id, event, data) of every Server-Sent Event in ``raw`` (``""`` for no id)."""
    out = []
    for block in raw.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            out.append((fields.get("id", ""), fields["event"], json.loads(fields["data"])))
    return out


def read_events(response: Any, count: int) -> list[tuple[str, str, Any]]:
    """At least ``count`` events from a streaming test response, whole events only."""
    out: list[tuple[str, str, Any]] = []
    buffer = b""
    chunks = iter(response.response)
    while len(out) < count:
        buffer += next(chunks)
        cut = buffer.rfind(b"\n\n")
        if cut >= 0:
            out.extend(sse_events(buffer[: cut + 2]))
            buffer = buffer[cut + 2 :]
    return out


def csrf_token(client: FlaskClient) -> str:
    """The session's CSRF token, as a page that shows a form hands it out."""
    client.get("/login")
    with client.session_transaction() as s:
        found: str = s["csrf"]
    return found


def login(client: FlaskClient) -> str:
    """Log the phone in with the PIN; the session's fresh CSRF token (for the pages' calls)."""
    r = client.post("/login", data={"pin": PIN, "csrf": csrf_token(client), "next": "/"})
    assert r.status_code == 302
    with client.session_transaction() as s:
        fresh: str = s["csrf"]
    return fresh


def create_table(client: FlaskClient, body: Any, headers: Mapping[str, str] = AUTH) -> str:
    """``POST /api/tables`` that must succeed; the new table's id."""
    r = client.post("/api/tables", json=body, headers=dict(headers))
    assert r.status_code == 201, r.json
    return str(json_of(r)["table"])


def json_of(response: TestResponse) -> Any:
    """A test response's JSON body, which must be there (Flask types ``.json`` as
    ``Any | None``: None when the body is not JSON)."""
    body = response.json
    assert body is not None, (response.status_code, response.data[:300])
    return body
