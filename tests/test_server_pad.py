"""``/api/pad`` across a restart: the table a phone put on the pad stays on it."""

from __future__ import annotations

from pathlib import Path

from server_app import AUTH, create_table, make_app

from server.pad.api import start_pad_service
from server.services import dicepad

SLOW_DEMO = "demo?fps=1"  # no throw settles while the test runs


def test_the_table_put_on_the_pad_stays_on_it_after_a_restart(tmp_path: Path) -> None:
    """A power cut used to forget the pick: the camera's next throw went to whichever table
    was acted on last, another table's game."""
    app = make_app(tmp_path, camera=SLOW_DEMO)
    pad = start_pad_service(app)
    assert pad is not None
    client = app.test_client()
    chosen = create_table(client, {"game": "bolo", "players": ["Ann", "Bob"]})
    other = create_table(client, {"game": "bolo", "players": ["Cy", "Di"]})
    assert client.post("/api/pad", json={"table": chosen}, headers=AUTH).status_code == 200
    r = client.post(
        f"/api/tables/{other}/actions", json={"type": "roll", "dice": [2, 2, 3, 4, 6]}, headers=AUTH
    )
    assert r.status_code == 201  # the other table is now the one acted on last
    assert (client.get("/api/pad").json or {})["table"] == chosen
    pad.stop()
    dicepad(app).close()

    app = make_app(tmp_path, camera=SLOW_DEMO)
    pad = start_pad_service(app)
    assert pad is not None
    client = app.test_client()
    status = client.get("/api/pad").json or {}
    assert (status["assigned"], status["table"]) == (chosen, chosen)
    assert client.post("/api/pad", json={"table": None}, headers=AUTH).status_code == 200
    pad.stop()
    dicepad(app).close()

    app = make_app(tmp_path, camera=SLOW_DEMO)  # back to the table acted on last, for good
    pad = start_pad_service(app)
    assert pad is not None
    status = app.test_client().get("/api/pad").json or {}
    assert (status["assigned"], status["table"]) == (None, other)
    pad.stop()
    dicepad(app).close()
