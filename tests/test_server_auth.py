"""The PIN holder's session: 401/403, login and logout, restarts, expiry, CSRF, redirects."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_app import AUTH, PIN, csrf_token, login, make_app
from server_auth_rig import (
    _create,
    fixture_app,  # noqa: F401 (the app fixture)
)
from test_server_api import error

from server.auth import SESSION_SECONDS, PinAuth
from server.limiter import FailureLimiter
from server.services import dicepad
from server.store import Store


def test_writes_need_the_pin_401_without_403_wrong(app: Flask) -> None:
    client = app.test_client()
    assert "PIN" in error(_create(client), 401)
    assert error(_create(client, {"X-Dicepad-Pin": "0000"}), 403) == "wrong PIN"
    assert _create(client, AUTH).status_code == 201
    assert client.get("/api/tables").status_code == 200  # reading is public


def test_login_holds_a_session_until_logout(app: Flask) -> None:
    client = app.test_client()
    assert client.get("/api/login").json == {"authenticated": False}
    error(client.post("/api/login", json={"pin": "9999"}), 403)
    error(client.post("/api/login", json={}), 400)
    error(client.post("/api/login", json={"pin": PIN, "admin": True}), 400)
    r = client.post("/api/login", json={"pin": PIN})
    assert r.json == {"authenticated": True}
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    assert _create(client).status_code == 201  # no header needed now
    client.post("/api/logout")
    error(_create(client), 401)


def _copy_session(source: FlaskClient, app: Flask) -> FlaskClient:
    """Another phone holding a copy of ``source``'s session cookie (sniffed on the Wi-Fi)."""
    cookie = source.get_cookie("dicepad_session")
    assert cookie is not None
    thief = app.test_client()
    thief.set_cookie("dicepad_session", cookie.value)
    return thief


def test_logging_out_ends_every_copy_of_the_session(app: Flask) -> None:
    """A session is a record on the server: logging out deletes it, so a copy of the cookie
    taken before is no login either, through the API or the pages."""
    for logout in ("/api/logout", "/logout"):
        phone = app.test_client()
        if logout == "/logout":  # a page session: the form's token goes with the logout
            login(phone)
            form = {"data": {"csrf": csrf_token(phone), "next": "/"}}
        else:
            phone.post("/api/login", json={"pin": PIN})
            form = {}
        thief = _copy_session(phone, app)
        assert thief.get("/api/login").json == {"authenticated": True}
        assert phone.post(logout, **form).status_code in (200, 302)
        assert thief.get("/api/login").json == {"authenticated": False}, logout
        error(_create(thief), 401)
        assert phone.get("/api/login").json == {"authenticated": False}


def test_logging_in_again_ends_the_session_before(app: Flask) -> None:
    """A phone that logs in anew gets a new session; the one its cookie held before ends."""
    phone = app.test_client()
    phone.post("/api/login", json={"pin": PIN})
    before = _copy_session(phone, app)
    phone.post("/api/login", json={"pin": PIN})
    assert phone.get("/api/login").json == {"authenticated": True}
    assert before.get("/api/login").json == {"authenticated": False}


def test_a_double_tapped_login_leaves_one_session_that_logging_out_ends(app: Flask) -> None:
    """Both logins of a double tap leave before either answer sets the cookie: the browser
    keeps one cookie, so the other login must not hold a session of its own for the night. A
    login after the logout, seconds later, opens a new session (not the one logged out)."""
    first, second = app.test_client(), app.test_client()
    first.post("/api/login", json={"pin": PIN})
    second.post("/api/login", json={"pin": PIN})  # no cookie yet: the same tap, twice
    assert first.get("/api/login").json == {"authenticated": True}
    second.post("/api/logout")
    assert first.get("/api/login").json == {"authenticated": False}
    pages = app.test_client()
    pages.post("/api/login", json={"pin": PIN})
    assert pages.get("/api/login").json == {"authenticated": True}


def test_a_session_outlives_a_restart_and_is_stored_only_as_a_hash(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    phone = app.test_client()
    phone.post("/api/login", json={"pin": PIN})
    cookie = phone.get_cookie("dicepad_session")
    assert cookie is not None
    with phone.session_transaction() as s:
        token = s["session_token"]
    dicepad(app).close()
    assert token.encode() not in (tmp_path / "dicepad.sqlite3").read_bytes()
    again = make_app(tmp_path)  # a restart (a power cut) keeps the PIN holder logged in
    back = again.test_client()
    back.set_cookie("dicepad_session", cookie.value)
    assert back.get("/api/login").json == {"authenticated": True}
    dicepad(again).close()


def test_a_session_ends_after_a_night(tmp_path: Path) -> None:
    """16 hours after the login the session is over, whatever the cookie says."""
    store = Store(tmp_path / "s.sqlite3")
    now = [1_800_000_000.0]
    limiter = FailureLimiter(max_failures=3, window=60, lockout=60, monotonic=lambda: 0.0)
    auth = PinAuth(store, limiter, pin=PIN, scrypt_n=2**4, wall_clock=lambda: now[0])
    token = auth.open_session(auth.version)
    assert auth.session_ok(token)
    now[0] += SESSION_SECONDS - 1
    assert auth.session_ok(token)
    now[0] += 1
    assert not auth.session_ok(token)
    for junk in (None, "", 3, auth.version, "not-a-token", ["x"]):
        assert not auth.session_ok(junk)
    store.close()


def test_a_forged_session_cookie_is_not_a_login(app: Flask) -> None:
    client = app.test_client()
    client.set_cookie("dicepad_session", "eyJwaW5fdmVyc2lvbiI6MX0.forged.signature")
    error(_create(client), 401)


# C3 -- pages/security.py: only /api/login is exempt from the page session's CSRF header


def test_logout_riding_a_page_session_needs_the_csrf_header(
    app: Flask, client: FlaskClient
) -> None:
    csrf = login(client)
    assert client.post("/api/logout").status_code == 403  # a cross-site form cannot log out
    assert client.get("/api/login").json == {"authenticated": True}
    r = client.post("/api/logout", headers={"X-CSRF-Token": csrf})
    assert r.status_code == 200
    assert client.get("/api/login").json == {"authenticated": False}


# C4, C5 -- pages/routes.py _local: backslash and control characters never redirect off-site


@pytest.mark.parametrize("target", ["/\\evil.example", "/\t/evil.example", "/\n/evil.example"])
def test_login_never_redirects_off_site_through_backslash_or_control_characters(
    client: FlaskClient, target: str
) -> None:
    r = client.post("/login", data={"pin": PIN, "csrf": csrf_token(client), "next": target})
    assert r.status_code == 302
    assert r.headers["Location"] == "/"
