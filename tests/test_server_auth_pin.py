"""The PIN at rest: a salted scrypt hash, generated at first start, rotation, the session secret."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from flask import Flask
from server_app import AUTH, PIN, make_app
from server_auth_rig import (
    _create,
    fixture_app,  # noqa: F401 (the app fixture)
)
from test_server_api import error

from server.auth import PinHash, load_or_create_secret
from server.services import dicepad
from server.store import Store


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
    assert client._cookies is not None  # (None only for a client without cookies)
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


@pytest.mark.parametrize("pin", ["2468 ", " 2468"])
def test_a_pin_with_a_space_at_either_end_is_refused(tmp_path: Path, pin: str) -> None:
    """Such a PIN was taken, and then no phone could log in: the page trims what was typed
    and HTTP trims the header, so each try was a wrong PIN that counted towards a lock-out."""
    with pytest.raises(ValueError, match="space"):
        make_app(tmp_path / "start", pin=pin)  # DICEPAD_PIN
    app = make_app(tmp_path / "rotate")
    with pytest.raises(ValueError, match="space"):
        dicepad(app).auth.change(pin)  # dicepad pin --stdin
    assert _create(app.test_client(), AUTH).status_code == 201  # the PIN before still holds
    dicepad(app).auth.change("24 68")  # a space inside can be typed and sent: kept
    assert _create(app.test_client(), {"X-Dicepad-Pin": "24 68"}).status_code == 201
    dicepad(app).close()


def test_the_session_secret_is_0600_and_survives_restarts(tmp_path: Path) -> None:
    first = make_app(tmp_path)
    client = first.test_client()
    client.post("/api/login", json={"pin": PIN})
    dicepad(first).close()
    secret = tmp_path / "session.key"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    second = make_app(tmp_path)
    client2 = second.test_client()
    assert client._cookies is not None  # (None only for a client without cookies)
    for cookie in client._cookies.values():
        client2.set_cookie(cookie.key, cookie.value)
    assert _create(client2).status_code == 201  # same secret: the login still holds
    dicepad(second).close()
    assert load_or_create_secret(secret) == load_or_create_secret(secret)
    secret.write_text("garbage")
    with pytest.raises(RuntimeError, match="damaged"):
        load_or_create_secret(secret)
