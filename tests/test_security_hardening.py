"""No debug mode is reachable, every response is hardened, oversized bodies get 413."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from security_rig import (
    AUTH,
    fixture_app,  # noqa: F401 (the app fixture)
    fixture_furnished,  # noqa: F401 (the furnished fixture)
    make_app,
    new_table,
)

from server.services import dicepad


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
