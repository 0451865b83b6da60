"""Live ``state`` messages stay small in long games; the full history stays one GET away.

Real games through the real :class:`TableService` (with the Flask app for the HTTP side): a
long You Blew It / Bolo game of blown rolls, and random Bar Dice / Gords games to the end.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_app import read_events, sse_events

from scoring import games
from scoring.actions import Action, Reveal, Roll
from server.feed.messages import HISTORY, live_view
from server.feed.subscription import Subscription
from server.services import dicepad
from server.tables import TableService

TEAMS = {"A": ["Ann"], "B": ["Bob"]}
YBI_BLOW = Roll((2, 3, 4, 6, 2, 3))  # no scoring die: the turn passes, the history grows
BOLO_BLOW = Roll((2, 3, 4, 6, 2))


def _state_message(sub: Subscription) -> tuple[int, dict[str, Any]]:
    """The one message waiting in ``sub``: its size in bytes and its ``state`` event."""
    raw = sub.get(1.0)
    assert raw, "no message on the feed"
    assert sub.get(0) is None  # exactly one message per action
    ((_, kind, _), (_, kind2, state)) = sse_events(raw)
    assert (kind, kind2) == ("entry", "state")
    return len(raw), state


def _long_game(
    tables: TableService, sub: Subscription, table: str, blow: Roll, actions: int
) -> dict[int, tuple[int, dict[str, Any]]]:
    """``actions`` blown rolls; the live message after each, by seq."""
    out = {}
    for _ in range(actions):
        seq = tables.apply(table, blow, source="phone").entry["seq"]
        out[seq] = _state_message(sub)
    return out


# -- long games -------------------------------------------------------------------------------


def test_a_long_game_sends_bounded_messages_and_get_keeps_the_history(
    app: Flask, client: FlaskClient
) -> None:
    tables = dicepad(app).tables
    table = tables.create("you-blew-it", teams=TEAMS)["table"]
    sub = dicepad(app).feed.subscribe(table)
    sent = _long_game(tables, sub, table, YBI_BLOW, 400)
    (size_20, at_20), (size_400, at_400) = sent[20], sent[400]
    assert size_400 <= size_20 + 16  # a few more digits in seq and scores, nothing more
    assert at_20["history_truncated"] is at_400["history_truncated"] is True
    assert len(at_20["state"]["rounds"]) == len(at_400["state"]["rounds"]) == 1
    full = client.get(f"/api/tables/{table}").json
    assert full is not None
    assert full["seq"] == at_400["seq"] == 400
    assert len(full["state"]["rounds"]) == 200  # one round is a blow by each team
    assert "history_truncated" not in full
    assert full["state"]["rounds"][-1] == at_400["state"]["rounds"][0]
    assert len(json.dumps(full)) > 20 * size_400  # what every phone was sent before
    # apart from the cut history, the message is the table as GET shows it
    assert {k: v for k, v in at_400.items() if k not in ("state", "history_truncated")} == {
        k: v for k, v in full.items() if k != "state"
    }
    assert _without_rounds(at_400["state"]) == _without_rounds(full["state"])
    dicepad(app).feed.unsubscribe(sub)


def _without_rounds(state: dict[str, Any]) -> dict[str, Any]:
    """A You Blew It state without its round history (nor the pending state's)."""
    out = {k: v for k, v in state.items() if k != "rounds"}
    if "pending" in out:
        out["pending"] = _without_rounds(out["pending"])
    return out


def test_bolo_keeps_one_round_of_turns(app: Flask, client: FlaskClient) -> None:
    tables = dicepad(app).tables
    players = ["Ann", "Bob", "Cy"]
    table = tables.create("bolo", players=players)["table"]
    sub = dicepad(app).feed.subscribe(table)
    sent = _long_game(tables, sub, table, BOLO_BLOW, 300)
    assert sent[300][0] <= sent[20][0] + 16
    turns = sent[300][1]["state"]["turns"]
    full = client.get(f"/api/tables/{table}").json
    assert full is not None
    assert len(full["state"]["turns"]) > 100
    assert turns == full["state"]["turns"][-len(players) :]  # the last round: every seat once
    dicepad(app).feed.unsubscribe(sub)


def test_a_reconnect_starts_with_the_full_table(app: Flask, client: FlaskClient) -> None:
    tables = dicepad(app).tables
    table = tables.create("you-blew-it", teams=TEAMS)["table"]
    for _ in range(60):
        tables.apply(table, YBI_BLOW, source="phone")
    for missed in (None, 2):  # a first connection, then a phone that missed two actions
        full = client.get(f"/api/tables/{table}").json
        assert full is not None
        seq = full["seq"]
        headers = {} if missed is None else {"Last-Event-ID": str(seq - missed)}
        r = client.get(f"/api/tables/{table}/events", headers=headers, buffered=False)
        got = read_events(r, 1 + (missed or 0))
        assert [(i, k) for i, k, _ in got] == [
            *((str(n), "entry") for n in range(seq - (missed or 0) + 1, seq + 1)),
            (str(seq), "state"),
        ]
        assert got[-1][2] == full  # every round, no marker: the snapshot is the whole table
        assert len(full["state"]["rounds"]) >= 30
        tables.apply(table, YBI_BLOW, source="phone")  # then live, cut to the last round
        ((_, entry, _), (sid, kind, live)) = read_events(r, 2)
        assert (entry, sid, kind) == ("entry", str(seq + 1), "state")
        assert live["history_truncated"] is True
        assert len(live["state"]["rounds"]) == 1
        r.close()
    assert dicepad(app).feed.stats().clients == 0


def test_the_snapshot_is_encoded_once_per_change_and_messages_are_shared(app: Flask) -> None:
    d = dicepad(app)
    table = d.tables.create("you-blew-it", teams=TEAMS)["table"]
    d.tables.apply(table, YBI_BLOW, source="phone")
    first, second = d.tables.watch(table), d.tables.watch(table)
    snapshots = [list(itertools.islice(s, 2))[1] for s in (first, second)]
    assert snapshots[0] is snapshots[1]  # one encoding for every phone that connects
    d.tables.apply(table, YBI_BLOW, source="phone")
    live = [next(s) for s in (first, second)]
    assert live[0] is live[1]  # one encoding per action, the same bytes to every phone
    third = d.tables.watch(table)
    fresh = list(itertools.islice(third, 2))[1]
    assert fresh is not snapshots[0]
    assert sse_events(fresh)[0][2]["seq"] == 2
    for s in (first, second, third):
        s.close()


def test_a_pad_change_is_sent_cut_too(app: Flask) -> None:
    d = dicepad(app)
    table = d.tables.create("you-blew-it", teams=TEAMS)["table"]
    for _ in range(40):
        d.tables.apply(table, YBI_BLOW, source="phone")
    sub = d.feed.subscribe(table)
    d.tables.set_pad(table, "on_pad", True)
    raw = sub.get(1.0)
    assert raw
    ((sid, kind, view),) = sse_events(raw)
    assert (sid, kind, view["pad"], view["history_truncated"]) == (
        "40",
        "state",
        {"on_pad": True},
        True,
    )
    assert len(view["state"]["rounds"]) == 1
    d.feed.unsubscribe(sub)


def test_polling_phones_get_the_cut_table_and_see_pad_changes(
    app: Flask, client: FlaskClient
) -> None:
    d = dicepad(app)
    table = d.tables.create("you-blew-it", teams=TEAMS)["table"]
    for _ in range(100):
        d.tables.apply(table, YBI_BLOW, source="phone")
    url = f"/api/tables/{table}"
    full, cut = client.get(url), client.get(f"{url}?history=last")
    assert full.json is not None
    assert cut.json is not None
    assert cut.json == live_view(full.json)
    assert len(cut.json["state"]["rounds"]) == 1
    assert len(cut.data) * 5 < len(full.data)
    assert full.headers["ETag"] != cut.headers["ETag"]
    for r in (full, cut):  # 304 while nothing changes...
        assert (
            client.get(r.request.url, headers={"If-None-Match": r.headers["ETag"]}).status_code
            == 304
        )
    d.tables.set_pad(table, "on_pad", True)  # ...and not once the pad changed (same seq)
    for r in (full, cut):
        again = client.get(r.request.url, headers={"If-None-Match": r.headers["ETag"]})
        assert again.status_code == 200
        assert again.json is not None
        assert again.json["pad"] == {"on_pad": True}
    since = client.get(f"{url}?history=last&since=98").json
    assert since is not None
    assert [e["seq"] for e in since["events"]] == [99, 100]
    assert len(since["state"]["rounds"]) == 1
    bad = client.get(f"{url}?history=some")
    assert bad.status_code == 400
    assert "history" in bad.json["message"]  # type: ignore[index]
    assert d.tables.view(table)["seq"] == 100


# -- every game -------------------------------------------------------------------------------


def test_every_game_names_its_growing_lists() -> None:
    assert set(HISTORY) == set(games.NAMES)


def _random_action(rng: random.Random, view: dict[str, Any], legal: list[Action]) -> Action:
    wanted = view["expecting"]
    if wanted["action"] in ("roll", "reveal") and wanted["dice"]:
        dice = tuple(rng.randint(1, 6) for _ in range(wanted["dice"]))
        return Reveal(dice) if wanted["action"] == "reveal" else Roll(dice)
    if wanted["action"].startswith("roll") and wanted["dice"] and rng.random() < 0.5:
        return Roll(tuple(rng.randint(1, 6) for _ in range(wanted["dice"])))
    return rng.choice(legal)


def _lists(obj: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], int]]:
    """Every list reachable through dicts: its path and length."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _lists(v, (*path, k))
    elif isinstance(obj, list):
        yield path, len(obj)


@pytest.mark.parametrize("name", ["bar-dice", "gords"])
def test_games_that_end_send_only_their_last_round(app: Flask, name: str) -> None:
    """Random real games to the end: every live message has each growing list cut to its
    last round, and everything else exactly as the full view."""
    d = dicepad(app)
    game = games.find(name)
    cut_seen = 0
    for seed in range(4):
        rng = random.Random(seed)
        table = d.tables.create(name, players=["Ann", "Bob", "Cy"])["table"]
        sub = d.feed.subscribe(table)
        for _ in range(400):
            view = d.tables.view(table)
            if view["over"]:
                break
            legal = game.legal_actions(game.state_from_json(view["state"]))
            try:
                d.tables.apply(table, _random_action(rng, view, legal), source="phone")
            except ValueError:
                continue  # refused by the rules: nothing changed, nothing sent
            _, message = _state_message(sub)
            full = d.tables.view(table)
            assert message == live_view(full)
            cut = {k: v for k, v in message.items() if k != "history_truncated"}
            assert {k: v for k, v in cut.items() if k != "state"} == {
                k: v for k, v in full.items() if k != "state"
            }
            for history in HISTORY[name]:
                kept = _at(message["state"], history.path)
                whole = _at(full["state"], history.path)
                if whole is not None:
                    assert kept == whole[-1:] if whole else kept == []
            cut_seen += message["history_truncated"]
            assert max((n for _, n in _lists(message["state"])), default=0) <= 30
        d.feed.unsubscribe(sub)
    assert cut_seen > 0  # the games were long enough to have history to cut


def _at(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


# -- live_view as a pure function -------------------------------------------------------------


def test_live_view_copies_what_it_cuts_and_leaves_the_view_alone() -> None:
    state = {"players": ["A", "B"], "turns": [1, 2, 3, 4, 5], "pending": {"turns": [1, 2, 3]}}
    view = {"game": "bolo", "seq": 9, "pad": {}, "state": state}
    before = json.dumps(view)
    out = live_view(view)
    assert out["state"]["turns"] == [4, 5]  # one per seat
    assert out["state"]["pending"]["turns"] == [2, 3]
    assert out["history_truncated"] is True
    assert json.dumps(view) == before  # the cached view is shared: never changed


def test_live_view_of_a_short_game_is_the_view() -> None:
    view = {"game": "gords", "seq": 1, "state": {"results": [{"r": 1}], "players": ["A"]}}
    out = live_view(view)
    assert out == view | {"history_truncated": False}
    assert out["state"] is view["state"]
    unknown = {"game": "tiddlywinks", "state": {"turns": [1, 2, 3]}}
    assert live_view(unknown)["state"]["turns"] == [1, 2, 3]
