"""Sessions signed with a per-install secret, no secret in the code, CSRF on every form."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.sessions import SecureCookieSessionInterface
from flask.testing import FlaskClient
from security_rig import (
    PIN,
    everything,
    fixture_app,  # noqa: F401 (the app fixture)
    fixture_furnished,  # noqa: F401 (the furnished fixture)
    log_in,
    make_app,
    new_table,
    page_token,
)

from server.app import SECRET_FILE
from server.services import dicepad

REPO = Path(__file__).resolve().parent.parent


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
