"""Issue 35: a table server ships its event logs to the house database, in order and exactly
once, namespaced by its house name, and a second server claiming that name is refused.

Real PostgreSQL (``tests/pg_cluster.py``), the real app (``make_app`` with ``house_url``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from flask import Flask
from house_shipping import (
    BLOW,
    arrived,
    blow,
    house_app,
    house_log,
    house_status,
    house_table,
    local_log,
    new_table,
)
from pg_cluster import wait_until
from server_app import AUTH, json_of, make_app

from scoring.actions import Keep, Roll
from server.cli import main as dicepad_main
from server.config import Config
from server.house import ship
from server.house.migrate import connect
from server.house.schema import CHANNEL
from server.rows import EventRow, TableRow
from server.services import dicepad

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def shipping(tmp_path: Path, house_url: str) -> Iterator[Flask]:
    app = house_app(tmp_path / "front", house_url, "front-bar")
    yield app
    dicepad(app).close()


def test_every_event_arrives_in_order_exactly_once_with_line_records_and_notify(
    shipping: Flask, house_url: str
) -> None:
    listener = psycopg.connect(house_url, autocommit=True)
    listener.execute(f"LISTEN {CHANNEL}")
    client = shipping.test_client()
    t1, t2 = new_table(client), new_table(client)
    blow(client, t1, 25)
    parts = dicepad(shipping)
    parts.tables.apply(t2, Roll((1,) * 6), source="camera")  # a record: six aces
    parts.tables.apply(t2, Keep((1,) * 6), source="button")
    assert wait_until(lambda: arrived(shipping, house_url, "front-bar", t1))
    assert wait_until(lambda: arrived(shipping, house_url, "front-bar", t2))
    assert [r[0] for r in house_log(house_url, "front-bar", t1)] == list(range(1, 26))
    head = house_table(house_url, "front-bar", t2)
    assert head is not None
    line = parts.tables.summary(t2)
    assert head[2] == json.loads(json.dumps(line))  # the table server's own line
    with psycopg.connect(house_url) as conn:
        records = conn.execute(
            "SELECT id, table_id, seq, kind, player, points, hidden_at_table FROM records"
        ).fetchall()
        member = conn.execute("SELECT house_name, instance, url FROM members").fetchall()
    mine = parts.store.records(table_id=t2, include_hidden=True)
    assert mine
    assert [r[0] for r in records] == [r.id for r in mine]
    assert member == [
        ("front-bar", parts.store.setting("house.instance"), "http://front-bar.local:8080/")
    ]
    payloads = [json.loads(n.payload) for n in listener.notifies(timeout=0.5, stop_after=100)]
    listener.close()
    assert {"house_name": "front-bar", "table": t1, "seq": 25} in payloads
    assert {"house_name": "front-bar", "table": t2, "seq": 2} in payloads
    health = json_of(client.get("/api/health"))
    assert health["components"]["house"]["ok"] is True
    assert health["components"]["house"]["critical"] is False
    assert health["house"] | {"shipped": 0} == {
        "house_name": "front-bar", "online": True, "offline_since": None, "waiting": 0,
        "last_error": None, "refused": None, "shipped": 0,
    }  # fmt: skip
    assert b"house-banner" not in client.get(f"/t/{t1}").data  # nothing to say while online


def test_a_record_hidden_at_the_table_ships_as_hidden(shipping: Flask, house_url: str) -> None:
    client = shipping.test_client()
    t = new_table(client)
    dicepad(shipping).tables.apply(t, Roll((1,) * 6), source="camera")
    dicepad(shipping).tables.apply(t, Keep((1,) * 6), source="button")
    (rec,) = json_of(client.get("/api/records"))
    assert wait_until(lambda: arrived(shipping, house_url, "front-bar", t))

    def hidden() -> list[bool]:
        with psycopg.connect(house_url) as conn:
            rows = conn.execute("SELECT hidden_at_table FROM records").fetchall()
        return [bool(r[0]) for r in rows]

    assert wait_until(lambda: hidden() == [False])
    assert client.post(f"/api/records/{rec['id']}/hide", headers=AUTH).status_code == 200
    assert wait_until(lambda: hidden() == [True])  # no event was logged for it


def test_a_duplicate_delivery_is_harmless(house_url: str) -> None:
    """The batch whose commit was lost on the way back comes again: nothing is added twice;
    one that disagrees with the house, or skips an event, is refused."""
    conn = connect(house_url, autocommit=True)
    ship.claim(conn, "front-bar", "me", "")
    row = TableRow("abc234", "you-blew-it", {"teams": {"A": ["Ann"]}}, {}, "2026-11-27T21:00")
    events = tuple(
        EventRow("abc234", n, f"2026-11-27T21:{n:02}", "phone", "roll", BLOW) for n in range(1, 8)
    )
    assert ship.ship(conn, "front-bar", "me", ship.Batch(row, events[:5])).last_seq == 5
    again = ship.ship(conn, "front-bar", "me", ship.Batch(row, events[:5]))
    assert again.last_seq == 5
    assert ship.ship(conn, "front-bar", "me", ship.Batch(row, events[2:7])).last_seq == 7
    assert [r[0] for r in house_log(house_url, "front-bar", "abc234")] == list(range(1, 8))
    other = EventRow("abc234", 3, events[2].at, "phone", "roll", {"type": "roll", "dice": [5]})
    with pytest.raises(ship.LogConflictError, match="event 3 at the house differs"):
        ship.ship(conn, "front-bar", "me", ship.Batch(row, (other,)))
    gap = EventRow("abc234", 9, "2026-11-27T22:00", "phone", "roll", BLOW)
    with pytest.raises(ship.LogConflictError, match="up to 7, this batch skips to 9"):
        ship.ship(conn, "front-bar", "me", ship.Batch(row, (gap,)))
    with pytest.raises(ValueError, match="line at seq 8"):
        ship.ship(conn, "front-bar", "me", ship.Batch(row, (), summary={"seq": 8}))
    with pytest.raises(ship.ClaimLostError):
        ship.ship(conn, "front-bar", "not-me", ship.Batch(row, ()))
    assert [r[0] for r in house_log(house_url, "front-bar", "abc234")] == list(range(1, 8))
    conn.close()


def test_a_shipper_that_forgot_what_the_house_holds_sends_again_harmlessly(
    tmp_path: Path, house_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = house_app(tmp_path / "a", house_url, "front-bar")
    client = app.test_client()
    t = new_table(client)
    blow(client, t, 6)
    assert wait_until(lambda: arrived(app, house_url, "front-bar", t))
    dicepad(app).close()
    # as after a lost acknowledgement: the restarted server believes the house holds nothing
    monkeypatch.setattr(ship, "heads", lambda conn, name: {})
    again = house_app(tmp_path / "a", house_url, "front-bar")
    blow(again.test_client(), t, 2)
    assert wait_until(lambda: arrived(again, house_url, "front-bar", t))
    assert wait_until(lambda: house_status(again).shipped == 8)  # all sent once more...
    assert [r[0] for r in house_log(house_url, "front-bar", t)] == list(range(1, 9))  # ...once
    assert house_status(again).last_error is None
    dicepad(again).close()


def test_the_same_table_id_under_two_house_names_is_kept_apart(
    tmp_path: Path, house_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("server.tables.secrets.choice", lambda alphabet: alphabet[0])
    front = house_app(tmp_path / "front", house_url, "front-bar")
    back = house_app(tmp_path / "back", house_url, "back-bar")
    t = new_table(front.test_client())
    assert new_table(back.test_client()) == t == "222222"
    blow(front.test_client(), t, 3)
    blow(back.test_client(), t, 5)
    assert wait_until(lambda: arrived(front, house_url, "front-bar", t))
    assert wait_until(lambda: arrived(back, house_url, "back-bar", t))
    assert len(house_log(house_url, "front-bar", t)) == 3
    assert len(house_log(house_url, "back-bar", t)) == 5
    dicepad(front).close()
    dicepad(back).close()


def test_a_second_server_claiming_a_name_in_use_is_refused_and_plays_on(
    tmp_path: Path, house_url: str
) -> None:
    first = house_app(tmp_path / "first", house_url, "back-bar")
    assert wait_until(lambda: house_status(first).online)
    second = house_app(tmp_path / "second", house_url, "back-bar")
    assert wait_until(lambda: house_status(second).refused is not None)
    refused = house_status(second).refused
    assert re.fullmatch(
        r"house name 'back-bar' is already used by another table server "
        r"\(claimed \d{4}-\d\d-\d\d \d\d:\d\d\); pick another --house-name \(or, if that "
        r"table server is gone for good, free the name on the house machine: "
        r"dicepad house --release back-bar\)",
        refused,
    ), refused
    client = second.test_client()
    t = new_table(client)  # the tables play on, locally
    blow(client, t, 2)
    health = client.get("/api/health")
    assert health.status_code == 200  # the house is never critical
    part = json_of(health)["components"]["house"]
    assert part["ok"] is False
    assert part["detail"] == refused
    assert json_of(health)["house"]["refused"] == refused
    page = client.get(f"/t/{t}").data.decode()
    assert "not shipping to the house: house name &#39;back-bar&#39; is already used" in page
    with psycopg.connect(house_url) as conn:
        assert conn.execute("SELECT count(*) FROM tables").fetchone() == (0,)
    dicepad(first).close()
    dicepad(second).close()
    again = house_app(tmp_path / "first", house_url, "back-bar")  # its own name, after a restart
    assert wait_until(lambda: house_status(again).online)
    dicepad(again).close()
    # the first Pi is gone for good: the house frees its name and the new Pi takes it over
    assert dicepad_main(["house", "--db", house_url, "--release", "back-bar"]) == 0
    replaced = house_app(tmp_path / "second", house_url, "back-bar")
    assert wait_until(lambda: house_status(replaced).online)
    assert house_status(replaced).refused is None
    dicepad(replaced).close()
    assert dicepad_main(["house", "--db", house_url, "--release", "no-such-pi"]) == 1


def test_no_house_no_driver(tmp_path: Path) -> None:
    """A lone Pi never imports the PostgreSQL driver, and has no house status."""
    code = (
        "import sys; sys.path.insert(0, 'tests'); from server_app import make_app;"
        "from pathlib import Path; from server.services import dicepad;"
        f"app = make_app(Path({str(tmp_path)!r}));"
        "assert dicepad(app).house is None; assert 'house' not in dicepad(app).health.to_json();"
        "mods = [m for m in sys.modules if m.startswith(('psycopg', 'server.house'))];"
        "assert not mods, mods"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DICEPAD_")}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()


def test_the_house_settings_come_from_flags_then_the_environment(tmp_path: Path) -> None:
    env = {"DICEPAD_HOUSE": "postgresql://h/db", "DICEPAD_HOUSE_NAME": "back-bar",
           "DICEPAD_PUBLIC_URL": "http://back.local:8080/"}  # fmt: skip
    c = Config.from_environ(data_dir=tmp_path, environ=env)
    assert (c.house_url, c.house_member, c.public_url) == (
        "postgresql://h/db",
        "back-bar",
        "http://back.local:8080/",
    )
    c = Config.from_environ(data_dir=tmp_path, house="postgres://x/db", house_name="x", environ=env)
    assert (c.house_url, c.house_member) == ("postgres://x/db", "x")
    bare = Config.from_environ(data_dir=tmp_path, environ={})
    assert bare.house_url is None
    import socket

    assert bare.house_member == socket.gethostname()
    with pytest.raises(ValueError, match="house name"):
        Config(data_dir=tmp_path, house_name=" ")


def test_shipping_never_holds_up_a_table(shipping: Flask, house_url: str) -> None:
    """Actions land while the shipper is busy: its listener only marks the table."""
    client = shipping.test_client()
    t = new_table(client)
    errors: list[BaseException] = []

    def play() -> None:
        try:
            blow(shipping.test_client(), t, 30)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    players = [threading.Thread(target=play) for _ in range(2)]
    for p in players:
        p.start()
    for p in players:
        p.join()
    assert not errors
    assert len(local_log(shipping, t)) == 60
    assert wait_until(lambda: arrived(shipping, house_url, "front-bar", t))


def test_a_lone_app_has_no_banner(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    client = app.test_client()
    t = new_table(client)
    assert b"house-banner" not in client.get(f"/t/{t}").data
    dicepad(app).close()


def test_a_house_that_is_no_postgresql_url_stops_the_start_with_a_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in the house URL is said at start, not shipped at forever as "offline"."""
    args = ["serve", "--camera", "none", "--data", str(tmp_path), "--house", "http://house"]
    assert dicepad_main(args) == 2
    err = capsys.readouterr().err
    assert "the house must be a postgresql://USER:PASSWORD@HOST/DB URL" in err
    with pytest.raises(ValueError, match="postgresql://"):
        Config(data_dir=tmp_path, house_url="house.local:5432")
