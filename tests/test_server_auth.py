"""The PIN rules: hashed at rest, 401/403, sessions, lock-out per address, rotation."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_app import AUTH, PIN, FakeMonotonic, make_app
from test_server_api import TEAMS, error

from server.auth import FailureLimiter, LockedOutError, PinHash, load_or_create_secret
from server.services import dicepad
from server.store import Store


@pytest.fixture
def app(tmp_path: Path, clock: FakeMonotonic) -> Iterator[Flask]:
    a = make_app(tmp_path, monotonic=clock, pin_max_failures=3, pin_lockout_seconds=60)
    yield a
    dicepad(a).close()


def _create(client: FlaskClient, headers: dict[str, str] | None = None, **kw: Any) -> Any:
    body = {"game": "you-blew-it", "teams": TEAMS}
    return client.post("/api/tables", json=body, headers=headers or {}, **kw)


def _from(address: str) -> dict[str, Any]:
    return {"environ_base": {"REMOTE_ADDR": address}}


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


def test_a_forged_session_cookie_is_not_a_login(app: Flask) -> None:
    client = app.test_client()
    client.set_cookie("dicepad_session", "eyJwaW5fdmVyc2lvbiI6MX0.forged.signature")
    error(_create(client), 401)


def test_lockout_is_per_address_and_never_locks_the_table(app: Flask, clock: FakeMonotonic) -> None:
    phone = app.test_client()
    phone.post("/api/login", json={"pin": PIN}, **_from("10.0.0.5"))  # the scorekeeper
    guesser = app.test_client()
    for _ in range(3):
        error(_create(guesser, {"X-Dicepad-Pin": "1111"}, **_from("10.0.0.66")), 403)
    r = _create(guesser, AUTH, **_from("10.0.0.66"))  # even the right PIN now waits
    assert "try again" in error(r, 429)
    assert int(r.headers["Retry-After"]) == 60
    error(guesser.post("/api/login", json={"pin": PIN}, **_from("10.0.0.66")), 429)
    # everyone else carries on: another address with the PIN, a logged-in phone
    assert _create(app.test_client(), AUTH, **_from("10.0.0.7")).status_code == 201
    assert _create(phone, **_from("10.0.0.5")).status_code == 201
    clock.now += 61
    assert _create(guesser, AUTH, **_from("10.0.0.66")).status_code == 201


def test_failures_outside_the_window_are_forgotten(clock: FakeMonotonic) -> None:
    limiter = FailureLimiter(max_failures=3, window=10, lockout=60, monotonic=clock)
    for _ in range(5):
        limiter.failure("a")
        clock.now += 6  # never 3 within 10 s
        limiter.check("a")
    limiter.failure("b")
    limiter.failure("b")
    limiter.success("b")  # a success clears the count
    limiter.failure("b")
    limiter.check("b")
    limiter.failure("b")
    limiter.failure("b")
    with pytest.raises(LockedOutError):
        limiter.check("b")


def test_the_limiter_forgets_the_stalest_addresses(clock: FakeMonotonic) -> None:
    limiter = FailureLimiter(
        max_failures=2, window=100, lockout=100, monotonic=clock, max_addresses=50
    )
    for n in range(500):
        limiter.failure(f"10.0.{n // 250}.{n % 250}")
    assert limiter.tracked <= 100


def test_the_pin_is_stored_only_as_a_salted_scrypt_hash(app: Flask) -> None:
    store: Store = dicepad(app).store
    stored = store.setting("pin_hash") or ""
    assert stored.startswith("scrypt$")
    assert PIN not in stored
    hashed = PinHash.decode(stored)
    assert hashed.matches(PIN)
    assert not hashed.matches(PIN + "0")
    assert PinHash.make(PIN, n=16).salt != PinHash.make(PIN, n=16).salt
    raw = Path(store.path).read_bytes()
    assert PIN.encode() not in raw.replace(stored.encode(), b"")


def test_a_pin_is_generated_on_first_start_and_kept(tmp_path: Path) -> None:
    first = make_app(tmp_path, pin=None)
    pin = dicepad(first).auth.generated_pin
    assert pin is not None
    assert pin.isdigit()
    assert len(pin) == 6
    dicepad(first).close()
    second = make_app(tmp_path, pin=None)
    assert dicepad(second).auth.generated_pin is None  # printed once only
    client = second.test_client()
    assert _create(client, {"X-Dicepad-Pin": pin}).status_code == 201
    dicepad(second).close()


def test_changing_the_pin_ends_sessions_and_the_old_pin(tmp_path: Path) -> None:
    first = make_app(tmp_path)
    client = first.test_client()
    client.post("/api/login", json={"pin": PIN})
    assert _create(client).status_code == 201
    dicepad(first).close()
    second = make_app(tmp_path, pin="13579")  # DICEPAD_PIN changed between starts
    client2 = second.test_client()
    for cookie in client._cookies.values():
        client2.set_cookie(cookie.key, cookie.value)
    error(_create(client2), 401)  # the old session is void
    error(_create(client2, AUTH), 403)
    assert _create(client2, {"X-Dicepad-Pin": "13579"}).status_code == 201
    dicepad(second).auth.change("24680")  # rotation at runtime
    error(_create(client2, {"X-Dicepad-Pin": "13579"}), 403)
    assert _create(client2, {"X-Dicepad-Pin": "24680"}).status_code == 201
    with pytest.raises(ValueError, match="4-64"):
        dicepad(second).auth.change("12")
    dicepad(second).close()


def test_a_too_short_dicepad_pin_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="4-64"):
        make_app(tmp_path, pin="12")


def test_the_session_secret_is_0600_and_survives_restarts(tmp_path: Path) -> None:
    first = make_app(tmp_path)
    client = first.test_client()
    client.post("/api/login", json={"pin": PIN})
    dicepad(first).close()
    secret = tmp_path / "session.key"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    second = make_app(tmp_path)
    client2 = second.test_client()
    for cookie in client._cookies.values():
        client2.set_cookie(cookie.key, cookie.value)
    assert _create(client2).status_code == 201  # same secret: the login still holds
    dicepad(second).close()
    assert load_or_create_secret(secret) == load_or_create_secret(secret)
    secret.write_text("garbage")
    with pytest.raises(RuntimeError, match="damaged"):
        load_or_create_secret(secret)
