"""The scoreboard and the kiosk show the pad service: the camera's status, the notice about
the last throw (with its photo when the table must check it), re-roll requests with the roll's
snapshot, and the PIN holder's "put this table on the pad".

A real :class:`~server.pad.service.PadService` (not started: the tests hand it the settled
frame) decides on dice readings given directly; the reader is the edge faked here, as the
camera is in the pad service's own tests. The rig is :mod:`pages_pad_rig`; the pad's question
answered on the phone is in ``test_pages_pad_ask.py``, the real browser in
``test_pages_pad_browser.py``.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from flask.testing import FlaskClient
from markupsafe import escape
from pages_pad_rig import (
    Rig,
    _app,
    fixture_client,  # noqa: F401 (the client fixture)
    fixture_rig,  # noqa: F401 (the rig fixture)
    html,
    new_table,
    reading,
)
from server_app import AUTH, login

from hardware.supervisor import CameraState, CameraStatus
from server.pages import board
from server.services import dicepad

EVIL = '<script>alert("x")</script>'


def shown_pad(part: str) -> Any:
    """The pad state the rendered board says it shows (what board.js compares)."""
    found = re.search(r"data-pad='([^']*)'", part)
    assert found is not None
    return json.loads(found.group(1).replace("&#39;", "'"))


# -- the camera's status --------------------------------------------------------------------


def test_the_camera_status_is_on_the_scoreboard_and_the_kiosk(
    rig: Rig, client: FlaskClient
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    rig.camera(CameraState.LIVE, "camera live")
    for path in (f"/t/{table}", f"/t/{table}/kiosk", f"/t/{table}/board"):
        assert "Camera live: rolls are read from the pad" in html(client.get(path))
    cause = "camera offline: no frame for 5 s — check the ribbon cable; retrying in 4.0 s"
    rig.camera(CameraState.OFFLINE, cause)
    for path in (f"/t/{table}", f"/t/{table}/kiosk", f"/t/{table}/board"):
        page = html(client.get(path))
        assert str(escape(cause)) in page
        assert "Enter rolls on a phone meanwhile." in page
        assert 'class="pad pad-off"' in page
    rig.camera(CameraState.MANUAL, "no camera (no /dev/video0) — manual entry")
    assert "no camera (no /dev/video0) — manual entry. Enter rolls" in html(
        client.get(f"/t/{table}/board")
    )


def test_a_camera_change_renews_the_board_without_a_log_entry(
    rig: Rig, client: FlaskClient
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    rig.camera(CameraState.LIVE, "camera live")
    first = client.get(f"/t/{table}/board")
    etag = first.headers["ETag"]
    assert client.get(f"/t/{table}/board", headers={"If-None-Match": etag}).status_code == 304
    rig.camera(CameraState.OFFLINE, "camera offline: unplugged")
    again = client.get(f"/t/{table}/board", headers={"If-None-Match": etag})
    assert again.status_code == 200  # same seq, new pad state: not the cached body
    part = html(again)
    assert "camera offline: unplugged" in part
    # the board says which pad state it shows, exactly as the live feed sends it
    assert shown_pad(part) == client.get(f"/api/tables/{table}").json["pad"]  # type: ignore[index]


def test_with_camera_none_the_board_says_rolls_are_entered_by_hand(tmp_path: Path) -> None:
    app = _app(tmp_path, "none")
    try:
        client = app.test_client()
        table = new_table(client, "gords", players=["Ann", "Bob"])
        page = html(client.get(f"/t/{table}"))
        assert board.NO_CAMERA in page
        keeper = app.test_client()
        login(keeper)
        assert "Put this table on the pad" not in html(keeper.get(f"/t/{table}/board"))
    finally:
        dicepad(app).close()


def test_a_finished_game_shows_no_camera(rig: Rig, client: FlaskClient) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    rig.camera(CameraState.LIVE, "camera live")
    client.post(f"/api/tables/{table}/actions", json={"type": "end"}, headers=AUTH)
    assert 'class="pad' not in html(client.get(f"/t/{table}/board"))


# -- notices and photos ----------------------------------------------------------------------


def test_an_unreadable_throw_asks_to_confirm_and_shows_its_photo(
    rig: Rig, client: FlaskClient
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    rig.throw(reading(1, 5, None, 3, 3))
    notice = rig.tables.view(table)["pad"]["notice"]
    assert notice["kind"] == "confirm"
    for path in (f"/t/{table}/board", f"/t/{table}/kiosk"):
        page = html(client.get(path))
        assert str(escape(notice["text"])) in page
        assert 'aria-label="unreadable">?</span>' in page  # the die it could not read
        photo = re.search(r'<img src="(/api/pad/snapshot/[^"]+)"', page)
        assert photo is not None
        jpeg = client.get(photo.group(1).replace("&amp;", "&"))
        assert jpeg.status_code == 200
        assert jpeg.mimetype == "image/jpeg"
        assert jpeg.data.startswith(b"\xff\xd8\xff")
    # the phone enters the roll: the notice is answered and leaves the board
    r = client.post(
        f"/api/tables/{table}/actions", json={"type": "roll", "dice": [1, 5, 2, 3, 3]}, headers=AUTH
    )
    assert r.status_code == 201
    part = html(client.get(f"/t/{table}/board"))
    assert "pad-notice" not in part
    assert "/api/pad/snapshot/" not in part


def test_a_cocked_die_asks_for_a_re_roll_with_the_rolls_snapshot(
    rig: Rig, client: FlaskClient
) -> None:
    table = new_table(client, "you-blew-it", teams={"A": ["Ann"], "B": ["Bob"]})
    throw = rig.throw(reading(1, 2, 3, 4, 6, 6, cocked=(5,)))
    assert throw.applied == (1, 2)  # the roll (with its photo), then the re-roll
    for path in (f"/t/{table}/board", f"/t/{table}/kiosk"):
        page = html(client.get(path))
        assert "Re-roll 1 die" in page
        assert "cocked dice: Ann: re-roll 1 die" in page  # the pad service's notice
        assert f'src="/api/tables/{table}/snapshots/1"' in page
    snap = client.get(f"/api/tables/{table}/snapshots/1")
    assert snap.status_code == 200
    assert snap.data.startswith(b"\xff\xd8\xff")


def test_a_sloppy_throw_that_logs_nothing_shows_the_pad_photo(
    rig: Rig, client: FlaskClient
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    throw = rig.throw(reading(1, 5, 3, 3))  # four of five dice on the pad
    assert throw.applied == ()
    assert rig.tables.view(table)["pad"]["notice"]["kind"] == "missing"
    page = html(client.get(f"/t/{table}/board"))
    assert "sloppy dice" in page
    assert f"/api/pad/snapshot/{table}?v=" in page


def test_a_keep_inferred_from_the_dice_count_says_so_and_can_be_fixed(
    rig: Rig, client: FlaskClient
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    rig.throw(reading(1, 5, 2, 3, 3))  # keeps: 1 (100), 5 (50), or both (150)
    throw = rig.throw(reading(4, 4, 6))  # three dice came back: the two kept were 1 and 5
    assert throw.applied == (2, 3)  # the inferred keep, then the roll
    notice = rig.tables.view(table)["pad"]["notice"]
    assert notice["kind"] == "inferred"
    keeper = rig.app.test_client()
    login(keeper)
    part = html(keeper.get(f"/t/{table}/board"))
    assert 'class="pad-notice notice-inferred"' in part
    assert str(escape(notice["text"])) in part
    assert "fix" in notice["text"]
    assert "Undo" in part  # the PIN holder can take the inferred keep back


def test_markup_in_a_notice_is_escaped(rig: Rig, client: FlaskClient) -> None:
    table = new_table(client, "bolo", players=[EVIL, "Bob"])
    rig.throw(reading(1, 5, None, 3, 3))
    page = html(client.get(f"/t/{table}/board"))
    assert EVIL not in page
    assert str(escape(EVIL)) in page


# -- which table is on the pad ---------------------------------------------------------------


def test_the_pin_holder_puts_this_table_on_the_pad(rig: Rig, client: FlaskClient) -> None:
    first = new_table(client, "bolo", players=["Ann", "Bob"])
    second = new_table(client, "gords", players=["Cy", "Dee"])
    rig.service.step(0.01)  # the loop's first turn tells every table about the camera
    assert rig.service.table_on_pad() == second  # the newest table, until one is assigned
    keeper = rig.app.test_client()
    csrf = login(keeper)
    part = html(keeper.get(f"/t/{first}/board"))
    assert "(the pad is on another table)" in part
    assert 'data-pad-assign="' + first + '"' in part
    assert "Put this table on the pad" not in html(keeper.get(f"/t/{second}/board"))
    assert "(this table is on the pad)" in html(keeper.get(f"/t/{second}/board"))
    assert "Put this table on the pad" not in html(client.get(f"/t/{first}/board"))  # watcher
    assert "Put this table on the pad" not in html(keeper.get(f"/t/{first}/board?kiosk=1"))
    page = html(keeper.get(f"/t/{first}"))
    assert 'data-pad-url="/api/pad"' in page

    # what board.js sends when the button is tapped
    r = keeper.post("/api/pad", json={"table": first}, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 200
    assert r.json["table"] == first  # type: ignore[index]
    part = html(keeper.get(f"/t/{first}/board"))
    assert "(this table is on the pad)" in part
    assert "Put this table on the pad" not in part
    assert "(the pad is on another table)" in html(client.get(f"/t/{second}/board"))
    # a watcher cannot move the pad
    assert client.post("/api/pad", json={"table": second}).status_code == 401
    assert rig.service.table_on_pad() == first


# -- the panel as a pure function -------------------------------------------------------------


@pytest.mark.parametrize("state", list(CameraState))
def test_every_camera_state_has_a_sentence(state: CameraState) -> None:
    status = CameraStatus(state, "camera offline: the cable", 0.0, "picamera2")
    view = {"over": False, "pad": {"camera": status.to_json(), "on_pad": True}}
    panel = board.pad_panel(view, camera_configured=True)
    assert panel is not None
    assert panel.camera
    assert "{" not in panel.camera
    assert panel.camera_class == ("ok" if state is CameraState.LIVE else panel.camera_class)
    if state in (CameraState.OFFLINE, CameraState.MANUAL):
        assert panel.camera.startswith("camera offline: the cable")


def test_the_pad_key_follows_the_pad_state_only() -> None:
    a = {"seq": 1, "pad": {"camera": {"state": "live"}, "on_pad": True}}
    b = {"seq": 2, "pad": {"on_pad": True, "camera": {"state": "live"}}}
    c = {"seq": 1, "pad": {"camera": {"state": "offline"}, "on_pad": True}}
    assert board.pad_key(a) == board.pad_key(b) != board.pad_key(c)
    assert board.pad_key({}) == board.pad_key({"pad": {}})


def test_the_photo_of_a_throw_shows_what_the_camera_read(rig: Rig, client: FlaskClient) -> None:
    """The roll's snapshot is the settled frame with each die outlined: a flagged die in the
    flag colour, the others in the scorable colour, so the table sees which die to throw
    again (the frame itself is plain grey)."""
    table = new_table(client, "you-blew-it", teams={"A": ["Ann"], "B": ["Bob"]})
    rig.throw(reading(1, 2, 3, 4, 6, 6, cocked=(5,)))
    snap = client.get(f"/api/tables/{table}/snapshots/1")
    assert snap.status_code == 200
    image = cv2.imdecode(np.frombuffer(snap.data, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    b, g, r = (image[:, :, k].astype(int) for k in range(3))
    orange = (r > 150) & (r - b > 80)  # JPEG's chroma blurs the 1 px lines' colours
    green = (g - r > 30) & (g - b > 30)
    assert orange[80:125, 200:245].sum() > 20  # the cocked die (centre 220, 100)
    assert orange[80:125, :195].sum() == 0
    assert green[80:125, 0:45].sum() > 20  # a flat die (centre 20, 100)
    assert not (orange | green)[150:, :].any()  # nothing drawn where no die is
    assert not green[60:88, 0:45].any()  # a scored die is outlined, not labelled (its value
    assert orange[60:88, 200:260].sum() > 10  # is on it); a flagged one is: "6 cocked"


def test_throws_with_no_table_open_are_logged_once(
    rig: Rig, client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A demo camera throws every few seconds with no game open: the log says so once, not at
    every throw, and again after a table has been played and closed."""
    caplog.set_level(logging.INFO, logger="server.pad.service")

    def said() -> int:
        return sum("no table is open" in r.getMessage() for r in caplog.records)

    for _ in range(3):
        assert rig.throw(reading(1, 2, 3)).table is None
    assert said() == 1
    table = new_table(client, "bolo", players=["Ann"])
    rig.throw(reading(1, 5, 2, 3, 3))
    client.post(f"/api/tables/{table}/end", headers=AUTH)
    for _ in range(2):
        rig.throw(reading(1, 2, 3))
    assert said() == 2
