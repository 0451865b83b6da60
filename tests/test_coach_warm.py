"""The coach warm-up: Farkle policies loaded or solved in the background at server start and
for new rule sets, saved under ``<data dir>/coach``; a second start reads them back."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from flask import Flask

from scoring.coach.farkle import spec_for, standard_specs
from scoring.coach.solver import FarkleSpec, Policy, forget
from scoring.coach.solver_cache import path_for, warm
from scoring.farkle import bolo
from scoring.rules import parse_rules
from server.app import create_app
from server.coach_warm import COACH_DIR, NICE, CoachWarmer, start_coach_warmup
from server.config import Config
from server.services import dicepad

PIN = "2468"
AUTH = {"X-Dicepad-Pin": PIN}
WAIT = 120.0  #: generous: two shared cores, solving takes about a second of CPU


def _app(data: Path) -> Flask:
    return create_app(Config(data_dir=data, pin=PIN, camera="none", pin_scrypt_n=2**4))


@pytest.fixture
def apps() -> Iterator[list[tuple[Flask, CoachWarmer | None]]]:
    """Apps (and their warmers) opened by a test; all stopped and closed after it."""
    opened: list[tuple[Flask, CoachWarmer | None]] = []
    yield opened
    for app, warmer in opened:
        if warmer is not None:
            warmer.stop()
        dicepad(app).close()


def _files(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in directory.glob("coach-*")}


def _bolo_rules(**changes: object) -> bolo.HouseRules:
    return parse_rules(bolo.HouseRules, {f"bolo.{k}": v for k, v in changes.items()}, "bolo")


def test_a_second_start_loads_every_policy_from_disk(
    tmp_path: Path, apps: list[tuple[Flask, CoachWarmer | None]]
) -> None:
    first = _app(tmp_path)
    table = first.test_client().post(
        "/api/tables",
        json={"game": "bolo", "players": ["Ann", "Bob"], "rules": {"bolo.entry_min": 500}},
        headers=AUTH,
    )
    assert table.status_code == 201
    warmer = start_coach_warmup(first)
    apps.append((first, warmer))
    assert warmer.wait(WAIT)
    coach_dir = tmp_path / COACH_DIR
    files = _files(coach_dir)
    # the open table's rules (entry 500) besides both games' defaults
    assert (
        path_for(coach_dir, spec_for("bolo", _bolo_rules(entry_min=500), minimum=500)).name in files
    )
    assert warmer.stats.saved == len(files) > 0
    assert warmer.stats.loaded == 0
    health = first.test_client().get("/api/health").json
    assert health is not None
    assert health["components"]["coach"]["ok"] is True
    assert "solved and saved" in health["components"]["coach"]["detail"]

    warmer.stop()
    forget()  # a new process: nothing solved in memory
    second = _app(tmp_path)
    again = start_coach_warmup(second)
    apps.append((second, again))
    assert again.wait(WAIT)
    assert again.stats.saved == 0
    assert again.stats.loaded == len(files)
    assert _files(coach_dir) == files  # not one file written again
    detail = second.test_client().get("/api/health").json["components"]["coach"]["detail"]  # type: ignore[index]
    assert f"{len(files)} loaded from disk, 0 solved" in detail


def test_a_damaged_policy_file_is_solved_again(
    tmp_path: Path, apps: list[tuple[Flask, CoachWarmer | None]]
) -> None:
    coach_dir = tmp_path / COACH_DIR
    app = _app(tmp_path)
    warmer = start_coach_warmup(app)
    apps.append((app, warmer))
    assert warmer.wait(WAIT)
    total = warmer.stats.saved
    damaged = path_for(coach_dir, standard_specs(bolo.HouseRules())[0])
    damaged.write_text('{"spec": "not this one"')
    warmer.stop()
    app2 = _app(tmp_path)
    again = start_coach_warmup(app2)
    apps.append((app2, again))
    assert again.wait(WAIT)
    assert (again.stats.loaded, again.stats.saved) == (total - 1, 1)
    assert len(damaged.read_text()) > 1000  # a whole policy again


def test_a_new_rule_set_is_warmed_and_no_request_waits_for_it(
    tmp_path: Path, apps: list[tuple[Flask, CoachWarmer | None]]
) -> None:
    gate, entered = threading.Event(), threading.Event()

    def slow_warm(directory: Path, specs: Iterable[FarkleSpec]) -> list[Policy]:
        entered.set()
        assert gate.wait(WAIT)  # the warm-up is stuck until the test opens the gate
        return warm(directory, specs)

    app = _app(tmp_path)
    warmer = start_coach_warmup(app, warm_specs=slow_warm)
    apps.append((app, warmer))
    client = app.test_client()
    body = {"game": "bolo", "players": ["Ann", "Bob"], "rules": {"bolo.entry_min": 400}}
    r = client.post("/api/tables", json=body, headers=AUTH)
    assert r.status_code == 201  # answered while the warm-up is stuck
    assert client.get(f"/t/{r.json['table']}").status_code == 200  # type: ignore[index]
    assert warmer.stats.pending == 3  # both games' defaults, then the new rules
    assert entered.wait(WAIT)
    if hasattr(os, "setpriority") and warmer.native_id is not None:  # Linux: below the server
        assert os.getpriority(os.PRIO_PROCESS, warmer.native_id) == min(
            19, os.getpriority(os.PRIO_PROCESS, 0) + NICE
        )
    assert client.post("/api/tables", json=body, headers=AUTH).status_code == 201
    assert warmer.stats.pending == 3  # the same rules again: nothing more to warm
    r = client.post("/api/tables", json={"game": "gords", "players": ["A", "B"]}, headers=AUTH)
    assert r.status_code == 201
    assert warmer.stats.pending == 3  # Gords has no policies to solve
    gate.set()
    assert warmer.wait(WAIT)
    spec = spec_for("bolo", _bolo_rules(entry_min=400), minimum=400)
    assert path_for(tmp_path / COACH_DIR, spec).exists()
    assert warmer.stats.failed == 0


def test_a_failing_warm_up_is_reported_and_harms_nothing(
    tmp_path: Path, apps: list[tuple[Flask, CoachWarmer | None]]
) -> None:
    def broken(directory: Path, specs: Iterable[FarkleSpec]) -> list[Policy]:
        raise OSError("disk full")

    app = _app(tmp_path)
    warmer = start_coach_warmup(app, warm_specs=broken)
    apps.append((app, warmer))
    assert warmer.wait(WAIT)
    assert warmer.stats.failed == 2
    health = app.test_client().get("/api/health").json
    assert health is not None
    assert health["ok"] is True  # the coach is not critical
    assert health["components"]["coach"]["ok"] is False
    assert "2 rule sets failed" in health["components"]["coach"]["detail"]


def test_only_farkle_rule_sets_that_parse_are_queued(tmp_path: Path) -> None:
    warmer = CoachWarmer(tmp_path)  # not started: request only queues
    assert warmer.request("bar-dice") is False
    assert warmer.request("gords", {}) is False
    assert warmer.request("bolo", {"bolo.entry_min": "lots"}) is False
    assert warmer.request("you-blew-it", {}) is True
    assert warmer.request("you-blew-it", None) is False  # the same (default) rules
    assert warmer.stats.pending == 1
    assert warmer.wait(0.01) is False
