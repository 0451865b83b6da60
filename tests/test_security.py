"""Access control, verified: anyone may watch, only the PIN holder may change anything.

Reading is public; every change needs the PIN (hashed at rest, compared in constant time);
wrong PINs are rate-limited per address and the lock-out never locks the table; the admin
rotates the PIN with ``dicepad pin``. The rig is :mod:`security_rig`; sessions and CSRF are
in ``test_security_sessions.py``, no debug mode and the hardening headers in
``test_security_hardening.py``, escaped markup in ``test_security_escaping.py``.
"""

from __future__ import annotations

import hmac
import io
import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from security_rig import (
    AUTH,
    PIN,
    everything,
    fixture_app,  # noqa: F401 (the app fixture)
    fixture_furnished,  # noqa: F401 (the furnished fixture)
    log_in,
    make_app,
    new_table,
    page_token,
)
from security_rig import action as _action
from server_app import FakeMonotonic
from werkzeug.routing import Rule

import server.auth
from server.cli import main as dicepad_main
from server.services import dicepad

PIN_HOLDERS_PICTURES = {"pages.teach_crop", "pages.teach_latest", "pages.example_view"}
"""The teaching page's pictures of the house dice and its poll: the PIN holder's only."""


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
