"""Hostile input: Hypothesis throws random requests at EVERY route of the app.

Routes come from the app's own URL map, so a route added later is fuzzed too. Each request
has a random method, path arguments (real table and record ids, or junk), query string,
headers (right, wrong or no PIN; from a handful of addresses, so lock-outs happen) and body
(nothing, random JSON with huge numbers and deep nesting, action-shaped objects, forms, raw
bytes, oversized). After each one:

- no 5xx, and an API error is JSON with a message;
- the tables are not corrupted: a log only ever grows, by one entry and only on a 2xx; every
  changed table's state equals the rules engine's own replay of its log;
- a well-formed action with the right PIN is 201 exactly when the rules engine accepts it,
  otherwise 409 with the rule's message;
- a body over the limit is 413.

CI runs a few hundred examples; ``bench/fuzz_api.py`` raises ``DICEPAD_FUZZ_EXAMPLES`` to
thousands and prints the figures. The strategies and the oracle are in :mod:`fuzz_api_rig`.
"""

from __future__ import annotations

import collections
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from flask import Flask
from fuzz_api_rig import (
    MAX_BODY,
    PIN,
    SETUPS,
    _engine_accepts,
    _locked,
    _logs,
    _replay_matches,
    _rules,
    _send,
    attacks,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_app import ticking_clock

from server.app import create_app
from server.config import Config
from server.services import dicepad

EXAMPLES = int(os.environ.get("DICEPAD_FUZZ_EXAMPLES", "200"))
REPORT = os.environ.get("DICEPAD_FUZZ_REPORT")  #: where bench/fuzz_api.py reads the figures


CLOCK_START = datetime(2026, 11, 22, 21, 0, tzinfo=UTC)


@dataclass
class Stats:
    """What was thrown and what came back (for the benchmark's report)."""

    requests: int = 0
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    routes: collections.Counter[str] = field(default_factory=collections.Counter)
    accepted_actions: int = 0
    refused_actions: int = 0

    def dump(self, path: str) -> None:
        Path(path).write_text(
            json.dumps(
                {
                    "requests": self.requests,
                    "statuses": dict(sorted(self.statuses.items())),
                    "routes": dict(sorted(self.routes.items())),
                    "accepted_actions": self.accepted_actions,
                    "refused_actions": self.refused_actions,
                }
            )
        )


STATS = Stats()


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """One app for every example: tables accumulate state (and damage, if any) across them."""
    app = create_app(
        Config(
            data_dir=tmp_path_factory.mktemp("fuzz"),
            pin=PIN,
            camera="none",
            pin_scrypt_n=2**4,  # the product uses 2**14; fuzzing needs speed
            max_content_length=MAX_BODY,
            pin_max_failures=3,
            pin_window_seconds=60,
            pin_lockout_seconds=3,  # long enough to be hit, short enough to expire in a run
            keepalive_seconds=0.05,
            clock=ticking_clock(CLOCK_START, timedelta(milliseconds=1)),
        )
    )
    client = app.test_client()
    for setup in SETUPS:
        r = client.post("/api/tables", json=setup, headers={"X-Dicepad-Pin": PIN})
        assert r.status_code == 201, r.json
    yield app
    if REPORT:
        STATS.dump(REPORT)
    dicepad(app).close()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_no_request_breaks_the_server_or_a_table(fuzz_app: Flask, data: st.DataObject) -> None:
    app = fuzz_app
    attack = attacks(app, data)
    before = _logs(app)
    rule = _rules(app)[attack.rule_index]
    is_action = (
        attack.junk_path is None
        and rule.endpoint == "api.post_action"
        and attack.method == "POST"
        and attack.body.kind == "json"
        and attack.content_type == "application/json"
        and attack.pin == PIN
        and not attack.headers.get("X-CSRF-Token")
        and not _locked(app, attack.address)
    )
    table_id = str(attack.path_values.get("table_id", ""))
    expected = _engine_accepts(app, table_id, attack.body.value) if is_action else None

    status, payload, path = _send(app, attack)
    if status == -1:
        return
    STATS.requests += 1
    STATS.statuses[status] += 1
    STATS.routes[rule.rule if attack.junk_path is None else "(junk path)"] += 1

    assert status < 500, (attack, status, payload)
    if path.startswith("/api") and status >= 400 and attack.method != "HEAD":
        assert isinstance(payload, dict), (attack, status, payload)
        assert payload["status"] == status, payload
        assert payload["message"], payload
    if attack.body.kind == "huge" and attack.method == "POST":
        assert status >= 400, (attack, status)  # refused, never acted on
    if status == 409:
        assert payload["error"] in ("illegal_action", "conflict"), payload
    if expected is not None:
        assert status == (201 if expected else 409), (attack, status, payload)
        if expected:
            STATS.accepted_actions += 1
        else:
            STATS.refused_actions += 1

    assert dicepad(app).feed.stats().clients == 0, "a live-feed slot leaked"
    after = _logs(app)
    assert set(before) <= set(after), "a table vanished"
    changed = [t for t in after if after[t] != before.get(t, [])]
    for t in changed:
        old = before.get(t, [])
        assert after[t][: len(old)] == old, f"table {t}: the log was rewritten"
        assert len(after[t]) == len(old) + 1, f"table {t}: {len(after[t]) - len(old)} new"
    new_tables = set(after) - set(before)
    if not 200 <= status < 300:
        assert not changed, (attack, status, changed)
        assert not new_tables, (attack, status, new_tables)
    else:
        assert len(changed) + len(new_tables - set(changed)) <= 1, (attack, changed)
    for t in {*changed, *new_tables}:
        _replay_matches(app, t)


def test_every_route_is_fuzzed(fuzz_app: Flask) -> None:
    """The strategy reaches every route of the app (the URL map is the list)."""
    endpoints = {r.endpoint for r in fuzz_app.url_map.iter_rules()}
    assert {
        "api.post_action",
        "api.create_table",
        "api.login",
        "api.events",
        "pad.assign",
        "pages.new_game_post",
        "pages.hide_record",
        "static",
    } <= endpoints
    for table in dicepad(fuzz_app).tables.summaries():  # and no table is left broken
        _replay_matches(fuzz_app, table["table"])
