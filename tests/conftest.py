"""Shared fixtures: where ../shared is, and skipping dataset tests cleanly when absent; the
server tests' app on a temporary SQLite data directory (:mod:`server_app`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_app import FakeMonotonic, make_app

from server.services import dicepad

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DICEPAD_SHARED", REPO.parent / "shared"))
DATASETS = SHARED / "datasets"


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    if not (DATASETS / "README.md").exists():
        pytest.skip(f"real photo datasets not found at {DATASETS}")
    return DATASETS


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Flask]:
    """The app with the test PIN on ``tmp_path``; a module overrides it for other settings."""
    a = make_app(tmp_path)
    yield a
    dicepad(a).close()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def clock() -> FakeMonotonic:
    return FakeMonotonic()
