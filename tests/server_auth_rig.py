"""Shared helpers of the PIN tests (``test_server_auth*.py``): the app with a quick lock-out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_app import FakeMonotonic, make_app
from test_server_api import TEAMS

from server.services import dicepad


@pytest.fixture(name="app")  # imported by the tests that use it
def fixture_app(tmp_path: Path, clock: FakeMonotonic) -> Iterator[Flask]:
    a = make_app(tmp_path, monotonic=clock, pin_max_failures=3, pin_lockout_seconds=60)
    yield a
    dicepad(a).close()


def _create(client: FlaskClient, headers: dict[str, str] | None = None, **kw: Any) -> Any:
    body = {"game": "you-blew-it", "teams": TEAMS}
    return client.post("/api/tables", json=body, headers=headers or {}, **kw)
