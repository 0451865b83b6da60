"""Shared fixtures: where ../shared is, and skipping dataset tests cleanly when absent; the
server tests' app on a temporary SQLite data directory (:mod:`server_app`); a throwaway
PostgreSQL cluster for the house tests (:mod:`pg_cluster`), with two table servers shipping
to a house and the house's own app."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import settings
from pg_cluster import PgCluster, PgUnavailableError
from server_app import FakeMonotonic, make_app

from server.services import dicepad

# No deadline on any example: speed is the benchmarks' to measure, not a test's, and a busy CI
# machine (three suites in a row, one under emulation) made a 200 ms deadline fail at random
settings.register_profile("dicepad", deadline=None)
settings.load_profile("dicepad")

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


def _no_postgres(why: str) -> None:
    """Skip outside CI; in CI the house tests must run, so fail."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"the house tests need PostgreSQL in CI: {why}")
    pytest.skip(f"house tests skipped: {why}")


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """The session's throwaway PostgreSQL cluster (started once; never stopped by a test)."""
    try:
        import psycopg  # noqa: F401  (the house's driver: without it there is nothing to test)
    except ImportError:
        _no_postgres("psycopg is not installed (pip install -e '.[dev]')")
    try:
        cluster = PgCluster()
    except PgUnavailableError as exc:
        _no_postgres(str(exc))
    yield cluster
    cluster.close()


@pytest.fixture
def house_url(pg_cluster: PgCluster) -> str:
    """A fresh, empty database of the session's cluster, for one test."""
    return pg_cluster.new_database()


@pytest.fixture
def own_pg_cluster() -> Iterator[PgCluster]:
    """A cluster of this test's own, which it may stop and start (the fault tests)."""
    try:
        cluster = PgCluster()
    except PgUnavailableError as exc:
        _no_postgres(str(exc))
    yield cluster
    cluster.close()


@pytest.fixture
def pis(tmp_path: Path, house_url: str) -> Iterator[tuple[Flask, Flask]]:
    """Two table servers shipping to the house: the front bar and the back room."""
    from house_shipping import house_app

    front = house_app(tmp_path / "front", house_url, "front-bar")
    back = house_app(tmp_path / "back", house_url, "back-room")
    yield front, back
    dicepad(front).close()
    dicepad(back).close()


@pytest.fixture
def house_client(house_url: str) -> Iterator[tuple[Flask, FlaskClient]]:
    """The house's app on ``house_url`` and its test client."""
    from test_house_server import make_app as make_house_app

    from server.house.app import house

    app = make_house_app(house_url)
    yield app, app.test_client()
    house(app).close()
