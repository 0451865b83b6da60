"""Idle tables: a game nobody has touched for ``idle_hours`` (the players went home without
ending it) costs a start, the pad service and the coach nothing, and is taken up again by its
next action.

Real SQLite in ``tmp_path``, the real rules engines, and a wall clock the test moves on by
hand (:class:`server_app.MovableClock`), kept across restarts as a real one would be. That a
table is not replayed is read from :attr:`TableService.replays`: a dormant table's first use
is one more replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flask.testing import FlaskClient
from server_app import AUTH, MovableClock, create_table, make_app

from hardware.clock import ManualClock
from hardware.frames import Frame
from scoring.actions import Keep, Roll, Undo
from scoring.coach.farkle import spec_for
from scoring.coach.solver import FarkleSpec, Policy
from scoring.farkle import bolo
from scoring.rules import parse_rules
from server.cli import main
from server.coach_warm import start_coach_warmup
from server.config import IDLE_HOURS, Config
from server.feed.hub import Feed
from server.pad.service import PadService
from server.rows import TableHead
from server.services import dicepad
from server.store import Store
from server.tables import TableService
from vision.reading import DieReading, Pad, Reading

IDLE = timedelta(hours=12)
TEAMS = {"A": ["Ann"], "B": ["Bob"]}
THREE_ONES = Roll((1, 1, 1, 5, 2, 3))


class House:
    """One dicepad's data directory and wall clock, started (``start``) like the service."""

    def __init__(self, data: Path, clock: MovableClock) -> None:
        self.data = data
        self.clock = clock
        self.store: Store | None = None

    def start(self, idle_after: timedelta = IDLE, keep_awake: int = 32) -> TableService:
        self.stop()
        self.store = Store(self.data / "dicepad.sqlite3")
        feed = Feed(max_clients=4, queue_size=1000)
        self.tables = TableService(
            self.store, feed, clock=self.clock, idle_after=idle_after, keep_awake=keep_awake
        )
        assert self.tables.load() == []
        return self.tables

    def stop(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def line(self, table: str) -> dict[str, Any]:
        """The table's line in the table list."""
        return next(s for s in self.tables.summaries() if s["table"] == table)

    def heads(self) -> dict[str, TableHead]:
        assert self.store is not None
        return {h.row.id: h for h in self.store.heads()}


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock()


@pytest.fixture
def house(tmp_path: Path, clock: MovableClock) -> Iterator[House]:
    h = House(tmp_path, clock)
    yield h
    h.stop()


def test_an_abandoned_game_waits_dormant_and_its_next_action_takes_it_up_again(
    house: House, clock: MovableClock
) -> None:
    tables = house.start()
    left = tables.create("you-blew-it", teams=TEAMS)["table"]
    tables.apply(left, THREE_ONES, source="camera")
    tables.apply(left, Keep((1, 1, 1, 5)), source="phone")  # ... and the players go home
    last = tables.log(left)[-1]["at"]
    before = house.line(left)
    assert (before["idle"], before["last"]) == (False, last)

    clock.advance(hours=13)
    tables = house.start()  # the first start since: it has no digest yet, so it is replayed
    assert tables.replays == 1
    digest = house.heads()[left].digest
    assert digest is not None
    assert (digest.seq, digest.summary["over"], digest.summary["last"]) == (2, False, last)

    clock.advance(hours=1)
    tables = house.start()  # from then on it waits, dormant
    assert tables.replays == 0
    assert house.line(left) == before | {"idle": True}
    assert tables.in_play() == []
    assert tables.replays == 0

    # Idle is not over: anyone may act on it, undo included.
    applied = tables.apply(left, Undo(), source="phone")
    assert tables.replays == 1  # woken by the action, on the one path
    assert applied.table["expecting"]["action"] == "keep"
    tables.apply(left, Keep((1, 1, 1)), source="phone")
    now = tables.log(left)[-1]["at"]
    line = house.line(left)
    assert (line["idle"], line["last"], line["seq"]) == (False, now, 4)
    assert tables.in_play() == [line]
    assert house.heads()[left].digest.seq == 2  # type: ignore[union-attr]  # stale now

    clock.advance(hours=1)
    tables = house.start()  # in play again: replayed, as every table in play is
    assert tables.replays == 1
    assert house.heads()[left].digest is None  # the stale digest is dropped
    assert house.line(left) == line

    clock.advance(hours=13)  # left again: its next start replays it once more, then not
    assert house.start().replays == 1
    assert house.line(left)["idle"] is True
    assert house.start().replays == 0


def test_a_game_played_within_idle_hours_is_in_play_and_idle_is_judged_when_served(
    house: House, clock: MovableClock
) -> None:
    tables = house.start()
    played = tables.create("bolo", players=["Ann", "Bob"])["table"]
    tables.apply(played, Roll((2, 2, 2, 3, 4)), source="phone")
    untouched = tables.create("bolo", players=["Cy", "Di"])["table"]
    finished = tables.create("bolo", players=["Ed", "Flo"])["table"]
    tables.end(finished)

    clock.advance(hours=11)
    tables = house.start()
    assert tables.replays == 2  # both games not over (the finished one waits, dormant)
    assert house.heads()[played].digest is None  # nothing to keep for a game in play
    lines = {t: house.line(t) for t in (played, untouched, finished)}
    assert not any(line["idle"] for line in lines.values())
    assert lines[untouched]["last"] == lines[untouched]["created"]  # no action: its creation
    assert tables.in_play() == [lines[untouched], lines[played]]  # most recent first

    # An hour later the same process sees both go idle; nothing is written for it.
    clock.advance(hours=1, minutes=1)
    assert [house.line(t)["idle"] for t in (played, untouched, finished)] == [True, True, False]
    assert tables.in_play() == []
    assert len(tables.log(played)) == 1
    assert house.heads()[played].digest is None


def test_a_digest_stands_for_a_game_not_over_only_while_it_is_idle(
    house: House, clock: MovableClock
) -> None:
    tables = house.start()
    table = tables.create("you-blew-it", teams=TEAMS)["table"]
    tables.apply(table, THREE_ONES, source="camera")
    clock.advance(hours=13)
    house.start()  # idle: digested
    assert house.heads()[table].digest is not None

    tables = house.start(idle_after=timedelta(hours=48))  # the house now waits two days
    assert tables.replays == 1  # not idle by the new measure: in play, replayed
    assert house.heads()[table].digest is None
    assert [s["table"] for s in tables.in_play()] == [table]


# -- the pad service ------------------------------------------------------------------------


def _reading(*values: int) -> Reading:
    dice = tuple(
        DieReading(v, (40.0 * i, 100.0), (), 20.0, "white", 0.9, frozenset())
        for i, v in enumerate(values)
    )
    return Reading(dice, (320, 240))


def test_the_pad_takes_the_table_in_play_and_leaves_idle_ones_alone(
    house: House, clock: MovableClock
) -> None:
    tables = house.start()
    gone = tables.create("bolo", players=["Ann"])["table"]
    tables.apply(gone, Roll((2, 3, 4, 6, 6)), source="phone")
    clock.advance(hours=13)
    house.start()  # digested
    tables = house.start()
    assert tables.replays == 0  # ``gone`` is dormant

    def reader(image: np.ndarray, pad: Pad | None) -> Reading:
        return _reading(1, 1, 5, 2, 3)

    svc = PadService(tables, None, clock=ManualClock(), reader=reader, truth_fallback=False)
    try:
        # Only an idle game: a throw on the pad is not scored for it.
        assert svc.table_on_pad() is None
        throw = svc.settled(Frame(np.full((240, 320, 3), 90, np.uint8), 1.0, 1))
        assert throw.table is None
        assert len(tables.log(gone)) == 1

        early = tables.create("bolo", players=["Bob"])["table"]
        later = tables.create("bolo", players=["Cy"])["table"]
        tables.apply(later, Roll((2, 3, 4, 6, 6)), source="phone")
        svc.assign(None)  # (re)shows the camera's status to the tables
        assert tables.view(later)["pad"]["on_pad"] is True
        assert tables.view(early)["pad"]["on_pad"] is False
        clock.advance(hours=13)  # both left; then ``early``, the older table, is played again
        tables.apply(early, Roll((2, 3, 4, 6, 6)), source="phone")
        assert svc.table_on_pad() == early  # not ``later``, created later but idle

        svc.assign(None)
        assert tables.replays == 0  # the dormant idle table was not touched (nor woken)
        assert tables.view(early)["pad"]["on_pad"] is True
        assert tables.view(early)["pad"]["camera"] == svc.status_json()["camera"]
        assert tables.view(later)["pad"]["on_pad"] is False  # told once: it left the pad
        assert tables.view(gone)["pad"] == {}  # (this view woke it)

        svc.assign(gone)  # the PIN holder's pick takes an idle game up again at the pad
        assert svc.table_on_pad() == gone
        assert tables.view(gone)["pad"]["on_pad"] is True
    finally:
        svc.stop()


# -- the coach warm-up -----------------------------------------------------------------------


def test_the_coach_warm_up_does_not_wake_an_idle_table(tmp_path: Path) -> None:
    clock = MovableClock()

    def bolo_rules(entry: int) -> dict[str, object]:
        return {"bolo.entry_min": entry}

    def played(entry: int) -> None:
        app = make_app(tmp_path, clock=clock)
        try:
            tables = dicepad(app).tables
            table = tables.create("bolo", players=["Ann", "Bob"], rules=bolo_rules(entry))
            tables.apply(table["table"], Roll((2, 2, 2, 3, 4)), source="phone")
        finally:
            dicepad(app).close()

    played(500)  # the game that will be idle
    clock.advance(hours=13)
    played(300)  # a start that digests the idle one, and a game in play
    clock.advance(hours=1)

    app = make_app(tmp_path, clock=clock)
    asked: list[FarkleSpec] = []

    def solve(directory: Path, specs: Iterable[FarkleSpec]) -> list[Policy]:
        asked.extend(specs)  # the solver is the edge: what matters is what it is asked
        return []

    try:
        tables = dicepad(app).tables
        assert tables.replays == 1  # the game in play
        warmer = start_coach_warmup(app, warm_specs=solve)
        try:
            assert warmer.wait(60)
        finally:
            warmer.stop()
        assert tables.replays == 1  # the idle game stayed dormant

        def spec(entry: int) -> FarkleSpec:
            rules = parse_rules(bolo.HouseRules, bolo_rules(entry), "bolo")
            return spec_for("bolo", rules, minimum=entry)

        assert spec(300) in asked
        assert spec(500) not in asked
    finally:
        dicepad(app).close()


# -- the table list and the setting ----------------------------------------------------------


def _listed(client: FlaskClient) -> list[dict[str, Any]]:
    r = client.get("/api/tables")
    assert r.status_code == 200
    lines: list[dict[str, Any]] = r.json  # type: ignore[assignment]
    return lines


def test_the_table_list_tells_an_idle_table_from_one_in_play(tmp_path: Path) -> None:
    clock = MovableClock()
    app = make_app(tmp_path, clock=clock)
    try:
        client = app.test_client()
        table = create_table(client, {"game": "bolo", "players": ["Ann", "Bob"]})
        roll = {"type": "roll", "dice": [2, 2, 2, 3, 4]}
        r = client.post(f"/api/tables/{table}/actions", json=roll, headers=AUTH)
        assert r.status_code == 201
        at = r.json["at"]  # type: ignore[index]
        (line,) = _listed(client)
        assert (line["idle"], line["last"]) == (False, at)
        assert "<h2>Idle</h2>" not in client.get("/tables.part").get_data(as_text=True)

        clock.advance(hours=13)
        (line,) = _listed(client)
        assert (line["idle"], line["last"], line["over"]) == (True, at, False)
        for path in ("/", "/tables.part"):
            page = client.get(path).get_data(as_text=True)
            assert "<h2>Idle</h2>" in page
            assert f'idle since <time datetime="{at}">{at[:10]}</time>' in page

        keep = {"type": "keep", "dice": [2, 2, 2]}
        r = client.post(f"/api/tables/{table}/actions", json=keep, headers=AUTH)
        assert r.status_code == 201
        (line,) = _listed(client)
        assert line["idle"] is False
        assert "idle since" not in client.get("/tables.part").get_data(as_text=True)
    finally:
        dicepad(app).close()


def test_idle_hours_come_from_the_environment_and_a_bad_value_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"DICEPAD_DATA": str(tmp_path)}
    default = Config.from_environ(environ=env)
    assert default.idle_hours == IDLE_HOURS == 12
    assert default.idle_after == IDLE
    assert Config.from_environ(environ={**env, "DICEPAD_IDLE_HOURS": ""}).idle_hours == 12
    config = Config.from_environ(environ={**env, "DICEPAD_IDLE_HOURS": " 1.5 "})
    assert config.idle_after == timedelta(minutes=90)
    for bad in ("soon", "0", "-3", "nan", "inf", "1e9"):
        with pytest.raises(ValueError, match="DICEPAD_IDLE_HOURS must be a positive number"):
            Config.from_environ(environ={**env, "DICEPAD_IDLE_HOURS": bad})
    with pytest.raises(ValueError, match="idle_hours must be a positive number"):
        Config(data_dir=tmp_path, idle_hours=0)
    store = Store(tmp_path / "x.sqlite3")
    try:
        with pytest.raises(ValueError, match="idle_after must be positive"):
            TableService(store, Feed(), clock=MovableClock(), idle_after=-IDLE)
    finally:
        store.close()

    # The commands say so in one line, without a traceback.
    monkeypatch.setenv("DICEPAD_IDLE_HOURS", "soon")
    for command in (["serve", "--camera", "none"], ["pin"]):
        assert main([*command, "--data", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert "DICEPAD_IDLE_HOURS must be a positive number of hours" in err
        assert "Traceback" not in err


def test_tables_created_in_the_same_millisecond_put_the_newer_in_play_first(tmp_path: Path) -> None:
    """The pad takes the table in play acted on last; two new tables stamped the same instant
    (a real clock's millisecond) are told apart by which was created later, not by their ids."""
    instant = datetime(2026, 11, 24, 21, 0, tzinfo=UTC)
    store = Store(tmp_path / "dicepad.sqlite3")
    try:
        tables = TableService(
            store, Feed(max_clients=4, queue_size=100), clock=lambda: instant, idle_after=IDLE
        )
        made = [tables.create("bolo", players=["Ann", "Bob"])["table"] for _ in range(6)]
        assert len(set(made)) == 6
        assert [s["table"] for s in tables.in_play()] == made[::-1]
    finally:
        store.close()


def test_games_left_idle_go_to_sleep_when_a_new_game_starts(
    house: House, clock: MovableClock
) -> None:
    """Games the players walked away from stay replayed until something tidies up; a new
    game is such a moment. Past ``keep_awake`` the least recently used go dormant, and their
    lines and logs are unchanged."""
    tables = house.start(keep_awake=1)
    left = [tables.create("you-blew-it", teams=TEAMS)["table"] for _ in range(3)]
    for t in left:
        tables.apply(t, THREE_ONES, source="camera")
    clock.advance(hours=13)
    before = {t: house.line(t) for t in left}
    logs = {t: tables.log(t) for t in left}
    assert tables.awake == 3
    fresh = tables.create("bolo", players=["Ann", "Bob"])["table"]
    assert tables.awake == 1 + 1  # the most recently used idle game, and the new one
    assert {t: house.line(t) for t in left} == before
    replays = tables.replays
    assert {t: tables.log(t) for t in left} == logs
    assert tables.view(left[0])["expecting"]["action"] == "keep"
    assert tables.replays == replays + 1  # the oldest was asleep: woken by the look
    assert house.line(fresh)["idle"] is False
