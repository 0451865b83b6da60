"""Access control, verified: anyone may watch, only the PIN holder may change anything.

Reading is public; every change needs the PIN (hashed at rest, compared in constant time);
wrong PINs are rate-limited per address and the lock-out never locks the table; sessions are
signed with a per-install secret; the pages' forms carry a CSRF token; the admin rotates the
PIN with ``dicepad pin``; no debug mode is reachable; every response carries the browser
hardening headers; markup typed anywhere comes back escaped.
"""

from __future__ import annotations

import hmac
import io
import re
import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import server_app
from flask import Flask
from flask.sessions import SecureCookieSessionInterface
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import escape
from server_app import FakeMonotonic, create_table, ticking_clock
from werkzeug.routing import Rule

import server.auth
from scoring.actions import action_from_json
from server.app import SECRET_FILE
from server.cli import main as dicepad_main
from server.players.api import players
from server.services import dicepad

REPO = Path(__file__).resolve().parent.parent
PIN = "Zebra-7391"  # distinctive, so it can be searched for in the files
AUTH = {"X-Dicepad-Pin": PIN}
JPEG = b"\xff\xd8\xff\xe0a-roll"
MARKUP = '<script>alert("x")</script>'


def make_app(data: Path, **overrides: Any) -> Flask:
    """The test app with this file's PIN and a short keep-alive."""
    settings: dict[str, Any] = {
        "pin": PIN,
        "clock": ticking_clock(datetime(2026, 11, 22, 21, 0, tzinfo=UTC)),
        "keepalive_seconds": 0.05,
    }
    return server_app.make_app(data, **(settings | overrides))


@pytest.fixture
def app(tmp_path: Path, clock: FakeMonotonic) -> Iterator[Flask]:
    a = make_app(tmp_path / "data", monotonic=clock)
    yield a
    dicepad(a).close()


def new_table(client: FlaskClient, **body: Any) -> str:
    return create_table(client, {"game": "bolo", "players": ["Ann", "Bob"]} | body, AUTH)


def page_token(client: FlaskClient, path: str = "/login") -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get(path).get_data(as_text=True))
    assert found, path
    return found.group(1)


def log_in(client: FlaskClient, pin: str = PIN) -> str:
    r = client.post("/login", data={"pin": pin, "csrf": page_token(client), "next": "/"})
    assert r.status_code == 302, r.data[:300]
    with client.session_transaction() as s:
        return str(s["csrf"])


def everything(app: Flask) -> dict[str, Any]:
    """What a change would touch: every table's log, the records, hidden records, settings."""
    d = dicepad(app)
    tables = d.tables.summaries()
    return {
        "logs": {t["table"]: d.tables.log(t["table"]) for t in tables},
        "records": [r.to_json() for r in d.records.wall(include_hidden=True, limit=500)],
        "pin_version": d.store.setting(server.auth.PIN_VERSION),
    }


@pytest.fixture
def furnished(app: Flask, client: FlaskClient) -> dict[str, str]:
    """A table with a roll snapshot and a record on the wall, for every route's arguments."""
    table = new_table(client)
    tables = dicepad(app).tables
    tables.apply(table, _action("roll", [2, 2, 2, 2, 2]), source="camera", snapshot=JPEG)
    tables.apply(table, _action("keep", [2, 2, 2, 2, 2]), source="phone")  # a high roll
    record = dicepad(app).records.wall(limit=1)[0].id
    assert players(app).wait(20)  # the players' rows are derived in the background
    return {
        "table_id": table,
        "seq": "1",
        "record_id": record,
        "filename": "dicepad.css",
        "number": "1",  # the teaching page's throw, its die and an example
        "die": "0",
        "example_id": "0123456789ab",
        "name": "Ann",  # a player's pages (issue 36)
    }


PIN_HOLDERS_PICTURES = {"pages.teach_crop", "pages.teach_latest", "pages.example_view"}
"""The teaching page's pictures of the house dice and its poll: the PIN holder's only."""


def _action(kind: str, dice: list[int]) -> Any:
    return action_from_json({"type": kind, "dice": dice})


def _path(app: Flask, rule: Rule, values: dict[str, str]) -> str:
    args = {k: (int(v) if k == "seq" else v) for k, v in values.items() if k in rule.arguments}
    return app.url_map.bind("localhost").build(rule.endpoint, args)


def _rules(app: Flask, method: str) -> list[Rule]:
    return [r for r in app.url_map.iter_rules() if method in (r.methods or ())]


# -- reading is public, changing is not ----------------------------------------------------


def test_reading_is_public(app: Flask, client: FlaskClient, furnished: dict[str, str]) -> None:
    not_found_without_a_pending_throw = {"pad.snapshot"}
    for rule in _rules(app, "GET"):
        r = client.get(_path(app, rule, furnished), buffered=False)
        r.close()
        if rule.endpoint == "api.get_snapshot":
            assert r.mimetype == "image/jpeg"
        if rule.endpoint in not_found_without_a_pending_throw:
            assert r.status_code == 404, rule.rule
        elif rule.endpoint in ("pages.new_game", "pages.teach"):
            assert r.status_code == 302  # the PIN holder's forms
            assert "/login" in r.headers["Location"]
        elif rule.endpoint in PIN_HOLDERS_PICTURES:
            assert r.status_code == 401, rule.rule  # the teaching page's, no log-in page
        else:
            assert r.status_code == 200, (rule.rule, r.status_code)
    # the hidden records are not for everyone
    assert client.get("/api/records?hidden=1").status_code == 401


def test_every_change_needs_the_pin(
    app: Flask, client: FlaskClient, furnished: dict[str, str]
) -> None:
    ways_in = {"api.login", "api.logout", "pages.login_post", "pages.logout"}
    before = everything(app)
    body = {"type": "roll", "dice": [1, 1, 1, 1, 1]}
    writes = [r for r in _rules(app, "POST") if r.endpoint not in ways_in]
    assert len(writes) >= 7
    for i, rule in enumerate(writes):
        path = _path(app, rule, furnished)
        api = path.startswith("/api")
        where = {"REMOTE_ADDR": f"10.0.{i}.9"}  # one wrong PIN an address: none locked out
        for headers in ({}, {"X-Dicepad-Pin": "0000"}):
            r = client.post(path, json=body, headers=headers, environ_base=where)
            if api:
                assert r.status_code == (403 if headers else 401), (rule.rule, r.status_code)
            else:  # a page form: refused for want of the session's CSRF token
                assert r.status_code == 403, (rule.rule, r.status_code)
        if not api:  # even with a valid token, a visitor is sent to log in
            r = client.post(path, data={"csrf": page_token(client), "hidden": "1"})
            assert r.status_code == 302, rule.rule
            assert "/login" in r.headers["Location"]
    assert everything(app) == before


def test_the_pin_is_never_stored_in_clear(tmp_path: Path) -> None:
    data = tmp_path / "data"
    app = make_app(data, pin_scrypt_n=2**14)  # the product's cost
    client = app.test_client()
    new_table(client)
    log_in(client)
    stored = dicepad(app).store.setting(server.auth.PIN_HASH)
    assert stored is not None
    assert stored.startswith("scrypt$16384$8$1$")
    dicepad(app).close()
    for f in data.iterdir():
        assert PIN.encode() not in f.read_bytes(), f.name
        assert PIN.encode("utf-16-le") not in f.read_bytes(), f.name


def test_pins_are_compared_in_constant_time(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = new_table(client)
    calls: list[tuple[int, int]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    r = client.post(
        f"/api/tables/{t}/actions", json={"type": "end"}, headers={"X-Dicepad-Pin": "1111"}
    )
    assert r.status_code == 403
    assert (32, 32) in calls  # the scrypt digest, compared whole
    calls.clear()
    r = client.post(f"/api/tables/{t}/actions", json={"type": "end"}, headers=AUTH)
    assert r.status_code == 201
    assert calls  # the right PIN goes through compare_digest too, never ==


def test_the_lockout_is_per_address_and_never_locks_the_table(
    app: Flask, client: FlaskClient, clock: FakeMonotonic
) -> None:
    t = new_table(client)
    phone = app.test_client()  # logged in from the guesser's address before the guessing
    log_in(phone)
    guesser = {"REMOTE_ADDR": "10.0.0.66"}
    for _ in range(5):
        r = client.post("/api/login", json={"pin": "0000"}, environ_base=guesser)
        assert r.status_code == 403
    for pin in ("0000", PIN):  # locked: even the right PIN is refused from there
        r = client.post("/api/login", json={"pin": pin}, environ_base=guesser)
        assert r.status_code == 429
        assert int(r.headers["Retry-After"]) > 0
    # X-Forwarded-For is not believed (no proxy in front of dicepad): no way around it
    spoofed = {"X-Forwarded-For": "10.9.9.9", "X-Real-IP": "10.9.9.9"}
    r = client.post("/api/login", json={"pin": PIN}, headers=spoofed, environ_base=guesser)
    assert r.status_code == 429
    # the table goes on: the PIN from another phone, a logged-in phone, the camera
    blow = {"type": "roll", "dice": [2, 3, 4, 6, 3]}
    r = client.post(
        f"/api/tables/{t}/actions",
        json=blow,
        headers=AUTH,
        environ_base={"REMOTE_ADDR": "10.0.0.5"},
    )
    assert r.status_code == 201
    csrf = phone.get(f"/t/{t}").get_data(as_text=True)
    token = re.search(r'data-csrf="([^"]+)"', csrf)
    assert token
    r = phone.post(
        f"/api/tables/{t}/actions",
        json=blow,
        headers={"X-CSRF-Token": token.group(1)},
        environ_base=guesser,
    )
    assert r.status_code == 201
    dicepad(app).tables.apply(t, _action("roll", [2, 3, 4, 6, 3]), source="camera")
    assert dicepad(app).tables.view(t)["seq"] == 3
    # and the lock-out ends by itself
    clock.now += dicepad(app).config.pin_lockout_seconds + 1
    r = client.post("/api/login", json={"pin": PIN}, environ_base=guesser)
    assert r.status_code == 200


# -- sessions -----------------------------------------------------------------------------


def _cookie(secret: str | bytes, data: dict[str, Any]) -> str:
    """A session cookie as Flask would sign it with ``secret``."""
    forge = Flask("forge")
    forge.secret_key = secret
    serializer = SecureCookieSessionInterface().get_signing_serializer(forge)
    assert serializer is not None
    return str(serializer.dumps(data))


def test_sessions_cannot_be_forged(app: Flask, client: FlaskClient, tmp_path: Path) -> None:
    t = new_table(client)
    log_in(client)
    with client.session_transaction() as s:
        want = dict(s)  # a live session's token: only the signature is missing
    right = app.test_client()
    assert app.secret_key is not None
    right.set_cookie("dicepad_session", _cookie(app.secret_key, want))
    assert right.get("/api/login").json == {"authenticated": True}  # the forger's recipe works
    for secret in (b"dev", b"secret", b"changeme", b"\x00" * 32, b"another install's key"):
        forger = app.test_client()
        forger.set_cookie("dicepad_session", _cookie(secret, want))
        assert forger.get("/api/login").json == {"authenticated": False}
        r = forger.post(f"/api/tables/{t}/actions", json={"type": "end"})
        assert r.status_code == 401
    # a real session cookie, tampered with, is not a session either
    real = client.get_cookie("dicepad_session")
    assert real is not None
    head, _, sig = real.value.rpartition(".")
    tampered = app.test_client()
    tampered.set_cookie("dicepad_session", head + "." + sig[::-1])
    assert tampered.get("/api/login").json == {"authenticated": False}
    # the key is made at install, random per install, kept 0600, and is not in the code
    key_file = dicepad(app).config.data_dir / SECRET_FILE
    assert key_file.stat().st_mode & 0o777 == 0o600
    other = make_app(tmp_path / "other")
    assert other.secret_key != app.secret_key
    assert len(bytes.fromhex(key_file.read_text())) == 32
    dicepad(other).close()


def test_the_session_cookie_is_httponly_and_samesite_strict(client: FlaskClient) -> None:
    r = client.post("/api/login", json={"pin": PIN})
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie


def test_no_secret_is_hard_coded_in_the_product() -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    patterns = [
        r"SECRET_KEY\s*=\s*['\"b]",
        r"secret_key\s*=\s*['\"b]",
        r"(PIN|pin)\s*=\s*['\"][0-9]{4,}['\"]",
        r"BEGIN (RSA |EC |OPENSSH )?PRIVATE KEY",
        r"(password|passwd|api_key|token)\s*=\s*['\"][^'\"]{6,}['\"]",
    ]
    for pattern in patterns:
        found = subprocess.run(
            ["git", "grep", "-nIE", pattern, "--", "server", "scoring", "vision", "hardware",
             "systemd", "pyproject.toml"],
            cwd=REPO, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert found.stdout == "", f"hard-coded secret? {found.stdout}"


# -- CSRF -----------------------------------------------------------------------------------


def test_every_page_form_carries_the_csrf_token(
    app: Flask, client: FlaskClient, furnished: dict[str, str]
) -> None:
    token = log_in(client)
    t = furnished["table_id"]
    for path in ("/", "/login", "/new", "/records", f"/t/{t}"):
        page = client.get(path).get_data(as_text=True)
        for form in re.findall(r"<form\b[^>]*method=\"post\".*?</form>", page, re.S | re.I):
            assert f'name="csrf" value="{token}"' in form, (path, form[:200])
    assert f'data-csrf="{token}"' in client.get(f"/t/{t}").get_data(as_text=True)


def test_a_cross_site_form_or_call_is_refused(
    app: Flask, client: FlaskClient, furnished: dict[str, str]
) -> None:
    log_in(client)
    t = furnished["table_id"]
    before = everything(app)
    attacker = app.test_client()  # a token from another session is no good
    foreign = page_token(attacker)
    for path, form in (
        ("/new", {"game": "bolo", "players": "Eve\nMallory"}),
        (f"/records/{furnished['record_id']}/hide", {"hidden": "1"}),
        ("/logout", {}),
    ):
        assert client.post(path, data=form).status_code == 403
        assert client.post(path, data=form | {"csrf": foreign}).status_code == 403
    r = client.post(f"/api/tables/{t}/actions", json={"type": "end"})  # riding the cookie
    assert r.status_code == 403
    assert everything(app) == before
    assert client.get("/api/login").json == {"authenticated": True}


# -- rotating the PIN -----------------------------------------------------------------------


def test_dicepad_pin_rotates_the_pin_of_a_running_server(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    t = new_table(client)
    phone = app.test_client()
    log_in(phone)
    data = str(dicepad(app).config.data_dir)
    monkeypatch.delenv("DICEPAD_PIN", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO("New-Pin-2027\n"))
    assert dicepad_main(["pin", "--data", data, "--stdin"]) == 0
    assert "New-Pin-2027" not in capsys.readouterr().out
    end = {"type": "end"}
    r = client.post(f"/api/tables/{t}/actions", json=end, headers=AUTH)
    assert r.status_code == 403  # the old PIN is dead at once, no restart
    assert phone.get("/api/login").json == {"authenticated": False}  # and every session
    r = client.post(f"/api/tables/{t}/actions", json=end, headers={"X-Dicepad-Pin": "New-Pin-2027"})
    assert r.status_code == 201
    # without --stdin a PIN is made up and printed once
    assert dicepad_main(["pin", "--data", data]) == 0
    made = re.search(r"new table PIN is (\d{6})", capsys.readouterr().out)
    assert made
    undo = {"type": "undo"}
    r = client.post(f"/api/tables/{t}/actions", json=undo, headers={"X-Dicepad-Pin": made.group(1)})
    assert r.status_code == 201


def test_dicepad_pin_refuses_bad_input_and_changes_nothing(
    app: Flask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    data = str(dicepad(app).config.data_dir)
    version = dicepad(app).auth.version
    monkeypatch.setattr("sys.stdin", io.StringIO("12\n"))
    assert dicepad_main(["pin", "--data", data, "--stdin"]) == 2
    assert "4-64" in capsys.readouterr().err
    assert dicepad(app).auth.version == version
    assert dicepad_main(["pin", "--data", str(tmp_path / "nowhere")]) == 1
    assert "no dicepad database" in capsys.readouterr().err
    assert not (tmp_path / "nowhere").exists()


# -- no debug mode, no leaks ----------------------------------------------------------------


def test_no_debug_mode_is_reachable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASK_DEBUG", "1")
    app = make_app(tmp_path / "data")
    assert not app.debug
    assert not app.testing
    assert type(app.wsgi_app).__name__ != "DebuggedApplication"

    @app.get("/api/boom")
    def api_boom() -> str:
        raise RuntimeError("secret detail /etc/dicepad")

    @app.get("/boom")
    def page_boom() -> str:
        raise RuntimeError("secret detail /etc/dicepad")

    client = app.test_client()
    for path in ("/api/boom", "/boom"):
        r = client.get(path)
        assert r.status_code == 500
        body = r.get_data(as_text=True)
        assert "secret detail" not in body
        assert "Traceback" not in body
        assert 'File "' not in body
    assert client.get("/console").status_code == 404
    r = client.get("/?__debugger__=yes&cmd=resource&f=debugger.js")
    assert "debugger" not in r.get_data(as_text=True).lower()
    dicepad(app).close()


# -- browser hardening on every response --------------------------------------------------


def test_every_kind_of_response_carries_the_hardening_headers(
    app: Flask, client: FlaskClient, furnished: dict[str, str]
) -> None:
    t = furnished["table_id"]
    responses = [
        client.get("/"),
        client.get(f"/t/{t}"),
        client.get(f"/api/tables/{t}"),
        client.get("/api/nowhere"),
        client.put(f"/api/tables/{t}"),
        client.get("/static/dicepad.css"),
        client.get(f"/api/tables/{t}/snapshots/1"),
        client.post("/new", data={}),
        client.get("/new"),
        client.post(
            "/api/tables", data="x" * 70_000, headers=AUTH, content_type="application/json"
        ),
    ]
    stream = client.get(f"/api/tables/{t}/events", buffered=False)
    stream.close()
    responses.append(stream)
    for r in responses:
        r.close()
        h = r.headers
        assert "frame-ancestors 'none'" in h["Content-Security-Policy"], r
        assert "script-src 'self'" in h["Content-Security-Policy"]
        assert h["X-Content-Type-Options"] == "nosniff"
        assert h["Referrer-Policy"] == "same-origin"
        assert h["X-Frame-Options"] == "DENY"
        if r.mimetype == "text/html":  # may hold a CSRF token: no shared cache keeps it
            assert "private" in h["Cache-Control"] or "no-store" in h["Cache-Control"], r


def test_oversized_bodies_are_refused_with_413(app: Flask, client: FlaskClient) -> None:
    t = new_table(client)
    huge = '{"type": "roll", "dice": [' + "1, " * 40_000 + "1]}"
    for path in (f"/api/tables/{t}/actions", "/api/tables", "/api/login", "/api/pad"):
        r = client.post(path, data=huge, headers=AUTH, content_type="application/json")
        assert r.status_code == 413, path
        assert r.json["error"] == "request_entity_too_large"  # type: ignore[index]
    form = {"csrf": "x", "players": "A\n" * 40_000}
    assert client.post("/new", data=form).status_code == 413
    assert dicepad(app).tables.view(t)["seq"] == 0


# -- markup comes back escaped ----------------------------------------------------------------

NAMES = st.text(
    alphabet=st.sampled_from(list("<>&\"'/=`ab ")) | st.characters(codec="utf-8"),
    min_size=1,
    max_size=20,
).filter(lambda s: s.strip() and s.isprintable() and len(s.strip()) <= 40)


@pytest.fixture(scope="module")
def shared_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    a = make_app(tmp_path_factory.mktemp("escape"))
    yield a
    dicepad(a).close()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAMES, team=NAMES)
def test_names_with_markup_are_escaped_on_every_page(
    shared_app: Flask, name: str, team: str
) -> None:
    client = shared_app.test_client()
    # wrapped in a tag of its own, so that finding it raw in a page means it was not escaped
    name, team = f"<i title='{name.strip()}'>", f"<u data-t='{team.strip()}'>"
    players = [name, name + "2"]
    bolo = new_table(client, players=players)
    for kind in ("roll", "keep"):  # a high roll: the name goes on the wall too
        action = {"type": kind, "dice": [2, 2, 2, 2, 2]}
        assert (
            client.post(f"/api/tables/{bolo}/actions", json=action, headers=AUTH).status_code == 201
        )
    teams = {team: [name + "3"], team + "B": ["Zed"]}
    r = client.post("/api/tables", json={"game": "you-blew-it", "teams": teams}, headers=AUTH)
    assert r.status_code == 201, r.json
    ybi = str(r.json["table"])  # type: ignore[index]
    keeper = shared_app.test_client()
    log_in(keeper)
    pages = [client.get(p) for p in ("/", "/tables.part", "/records")]
    for t in (bolo, ybi):
        pages += [client.get(f"/t/{t}"), client.get(f"/t/{t}/kiosk"), keeper.get(f"/t/{t}"),
                  client.get(f"/t/{t}/board")]  # fmt: skip
    for r in pages:
        assert r.status_code == 200
        page = r.get_data(as_text=True)
        for shown in (name, team):
            assert shown not in page, (r.request.path, shown)
        assert str(escape(name)) in page, r.request.path


def test_house_rule_values_with_markup_come_back_escaped(client: FlaskClient) -> None:
    csrf = log_in(client)
    r = client.post(
        "/new",
        data={"csrf": csrf, "game": "bolo", "players": "Ann\nBob",
              "rule.bolo.four_of_a_kind": MARKUP, "rule.bolo.target": MARKUP},
    )  # fmt: skip
    assert r.status_code == 400
    page = r.get_data(as_text=True)
    assert MARKUP not in page
    assert "&lt;script&gt;" in page
    r = client.post(
        "/api/tables",
        json={"game": "bolo", "players": ["A", "B"], "rules": {"four_of_a_kind": MARKUP}},
        headers=AUTH,
    )
    assert r.status_code == 400
    assert r.mimetype == "application/json"  # and nosniff: a browser never renders it
