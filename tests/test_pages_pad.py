"""The scoreboard and the kiosk show the pad service: the camera's status, the notice about
the last throw (with its photo when the table must check it), re-roll requests with the roll's
snapshot, and the PIN holder's "put this table on the pad".

A real :class:`~server.pad.service.PadService` (not started: the tests hand it the settled
frame) decides on dice readings given directly; the reader is the edge faked here, as the
camera is in the pad service's own tests.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient
from markupsafe import escape
from server_app import AUTH, PIN, create_table, csrf_token, login
from werkzeug.serving import make_server

from hardware.frames import Frame
from hardware.supervisor import CameraState, CameraStatus
from server.app import create_app
from server.config import Config
from server.pad.api import attach
from server.pad.service import PadService
from server.pages import ask, board
from server.services import dicepad
from vision.reading import DieFlag, DieReading, Pad, Reading

EVIL = '<script>alert("x")</script>'


class Dice:
    """The dice reader the pad service calls on a settled frame: it answers ``next``."""

    def __init__(self) -> None:
        self.next = Reading((), (320, 240))

    def __call__(self, image: np.ndarray, pad: Pad | None) -> Reading:
        return self.next


def reading(*values: int | None, cocked: tuple[int, ...] = ()) -> Reading:
    dice = []
    for i, v in enumerate(values):
        flags = {DieFlag.UNREADABLE} if v is None else set()
        if i in cocked:
            flags.add(DieFlag.COCKED)
        dice.append(DieReading(v, (40.0 * i + 20, 100.0), (), 20.0, "white", 0.9, frozenset(flags)))
    return Reading(tuple(dice), (320, 240))


class Rig:
    """An app with a pad service attached, as ``dicepad serve`` builds it."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.tables = dicepad(app).tables
        self.dice = Dice()
        self.service = PadService(self.tables, None, reader=self.dice, truth_fallback=False)
        attach(app, self.service)
        self.frames = 0

    def throw(self, read: Reading) -> Any:
        """The dice of a throw came to rest and were read as ``read``."""
        self.dice.next = read
        self.frames += 1
        image = np.full((240, 320, 3), 90, np.uint8)
        return self.service.settled(Frame(image, float(self.frames), self.frames))

    def camera(self, state: CameraState, message: str) -> None:
        """The camera's status as the supervisor reports it, shown on every open table."""
        status = CameraStatus(state, message, 0.0, "opencv:0")
        for s in self.tables.summaries():
            self.tables.set_pad(s["table"], "camera", status.to_json())


def _app(tmp_path: Path, camera: str) -> Flask:
    return create_app(Config(data_dir=tmp_path, pin=PIN, camera=camera, pin_scrypt_n=2**4))


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    app = _app(tmp_path, "demo")
    yield Rig(app)
    dicepad(app).close()


@pytest.fixture
def client(rig: Rig) -> FlaskClient:
    return rig.app.test_client()


def new_table(client: FlaskClient, game: str, **lineup: Any) -> str:
    return create_table(client, {"game": game, **lineup})


def html(r: Any, status: int = 200) -> str:
    assert r.status_code == status, (r.status_code, r.data[:300])
    text: str = r.get_data(as_text=True)
    return text


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


# -- the pad's question, answered on the phone -------------------------------------------------

GUESSES = ((5, 0.61), (6, 0.32))


def asking(*values: int | None, guesses: tuple[tuple[int, float], ...] = GUESSES) -> Reading:
    """``reading(*values)`` whose unread dice come with ``guesses``."""
    read = reading(*values)
    dice = tuple(replace(d, candidates=guesses) if d.value is None else d for d in read.dice)
    return replace(read, dice=dice)


def controls(part: str) -> list[str]:
    """The tags of the question that act: buttons and inputs bound to the answer form."""
    return re.findall(r'<(?:button|input)[^>]*form="ask-form"[^>]*>', part)


def test_an_unsure_die_shows_its_crop_and_guesses_and_one_tap_answers(
    rig: Rig, client: FlaskClient
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    rig.throw(asking(1, 5, None, 3, 3))  # the die at (100, 100), 20 px, in a 320 x 240 frame
    keeper = rig.app.test_client()
    login(keeper)
    part = html(keeper.get(f"/t/{table}/board"))
    # its crop: a square of twice its side around it, over the throw's photo
    crop = re.search(r'<svg class="crop" viewBox="([^"]+)"[^>]*><image href="([^"]+)"', part)
    assert crop is not None
    assert crop.group(1) == "0.2500 0.3333 0.1250 0.1667"
    assert crop.group(2).replace("&amp;", "&").startswith(f"/api/pad/snapshot/{table}?v=")
    assert keeper.get(crop.group(2).replace("&amp;", "&")).mimetype == "image/jpeg"
    # its two best guesses, big, with how sure the camera is; then the other faces
    guesses = re.findall(
        r'class="choice guess" name="d2" value="(\d)".*?<small>(\d+ %)</small>', part
    )
    assert guesses == [("5", "61 %"), ("6", "32 %")]
    others = re.findall(r'class="choice other" name="d2" value="(\d)"', part)
    assert others == ["1", "2", "3", "4"]
    assert all('type="submit"' in tag for tag in controls(part) if 'name="d2"' in tag)
    assert 'id="ask-send"' not in part  # one die asked: the guess itself logs the roll
    # the dice it is sure of are filled in
    shown = re.findall(r'data-slot="\d"><span class="die (d\d|unknown)"', part)
    assert shown == ["d1", "d5", "unknown", "d3", "d3"]
    # the page shell carries the form (and the session's token); the cached body does not
    page = html(keeper.get(f"/t/{table}"))
    assert f'<form id="ask-form" method="post" action="/t/{table}/answer"' in page
    assert "csrf" not in part
    # watchers and the kiosk see the question, the crop and the guesses: nothing to tap
    for path in (f"/t/{table}/board", f"/t/{table}/kiosk", f"/t/{table}"):
        seen = html(client.get(path))
        assert 'class="crop"' in seen
        assert '<span class="choice guess">' in seen
        assert controls(seen) == []
        assert "ask-form" not in seen
        assert "61 %" in seen


def test_a_die_with_nothing_to_offer_shows_every_face_and_waits_for_the_log_tap(
    rig: Rig, client: FlaskClient
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    read = asking(1, None, 2, None, 3)
    dice = list(read.dice)
    dice[3] = replace(dice[3], candidates=())
    rig.throw(replace(read, dice=tuple(dice)))
    keeper = rig.app.test_client()
    login(keeper)
    part = html(keeper.get(f"/t/{table}/board"))
    faces = r'class="choice other"><input type="radio" form="ask-form" name="d3" value="(\d)"'
    assert re.findall(faces, part) == ["1", "2", "3", "4", "5", "6"]
    assert 'type="radio" form="ask-form" name="d1" value="5"' in part  # two asked: radios
    assert '<button type="submit" form="ask-form" class="primary" id="ask-send">' in part


def answer_form(keeper: FlaskClient, table: str, csrf: str, **picks: str) -> Any:
    page = html(keeper.get(f"/t/{table}"))
    found = re.search(r'name="question" value="([0-9a-f]+)"', page)
    question = found.group(1) if found else ""
    data = {"csrf": csrf, "question": question} | picks
    return keeper.post(f"/t/{table}/answer", data=data)


def test_without_a_script_the_answer_is_a_form_that_logs_the_roll(
    rig: Rig, client: FlaskClient
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    rig.throw(asking(1, 5, None, 3, 3))
    keeper = rig.app.test_client()
    csrf = login(keeper)
    assert answer_form(keeper, table, "wrong", d2="5").status_code == 403  # the CSRF check
    outsider = rig.app.test_client()  # no PIN session: sent to log in, nothing logged
    r = answer_form(outsider, table, csrf_token(outsider), d2="5")
    assert r.status_code == 302
    assert "/login" in r.headers["Location"]
    r = answer_form(keeper, table, csrf)  # the die left unanswered
    assert "choose what die 3 shows" in html(r, 409)
    r = keeper.post(f"/t/{table}/answer", data={"csrf": csrf, "question": "0" * 16, "d2": "5"})
    assert "the camera has seen another throw" in html(r, 409)  # an earlier question
    assert rig.tables.log(table) == []
    r = answer_form(keeper, table, csrf, d2="5")
    assert r.status_code == 303
    assert r.headers["Location"].endswith(f"/t/{table}")
    [entry] = rig.tables.log(table)
    assert entry["action"] == {"type": "roll", "dice": [1, 5, 5, 3, 3]}
    assert entry["source"] == "phone"
    assert entry["snapshot"] is True  # the throw's photo is kept with the answered roll
    assert "notice" not in rig.tables.view(table)["pad"]  # answered
    assert answer_form(keeper, table, csrf, d2="5").status_code == 409  # not twice


def test_an_answer_through_the_api_names_its_question_and_keeps_the_photo(
    rig: Rig, client: FlaskClient
) -> None:
    """board.js posts the answer to the API with the question's key: the roll keeps the
    throw's photo, and an answer to a question the camera has replaced is refused."""
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    rig.throw(asking(1, 5, None, 3, 3))
    asked = ask.question(rig.tables.view(table))
    assert asked is not None
    roll = {"type": "roll", "dice": [1, 5, 5, 3, 3]}
    url = f"/api/tables/{table}/actions"
    for bad in ("0" * 16, "not hex", 7):
        r = client.post(url, json=roll | {"answers": bad}, headers=AUTH)
        assert r.status_code == (409 if bad == "0" * 16 else 400), bad
    assert rig.tables.log(table) == []
    r = client.post(url, json=roll | {"answers": asked.key}, headers=AUTH)
    assert r.status_code == 201
    [entry] = rig.tables.log(table)
    assert (entry["source"], entry["snapshot"]) == ("phone", True)
    assert (rig.tables.snapshot(table, entry["seq"]) or b"").startswith(b"\xff\xd8\xff")


def test_a_miscount_is_put_right_by_taking_a_die_away_or_adding_one(
    rig: Rig, client: FlaskClient
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    rig.throw(reading(1, 5, 2, 3, 3, 4))  # six dice read, five thrown
    keeper = rig.app.test_client()
    csrf = login(keeper)
    part = html(keeper.get(f"/t/{table}/board"))
    assert "6 dice on the pad, expected 5" in part  # the notice as it was
    drops = re.findall(r'type="radio" form="ask-form" name="drop" value="(\d)"', part)
    assert drops == ["0", "1", "2", "3", "4", "5"]
    assert 'id="ask-send"' in part
    assert "take away die 6" in part
    assert "the camera counted by mistake" in html(answer_form(keeper, table, csrf), 409)
    assert answer_form(keeper, table, csrf, drop="5").status_code == 303
    assert rig.tables.log(table)[-1]["action"]["dice"] == [1, 5, 2, 3, 3]

    other = new_table(client, "bolo", players=["Cy", "Dee"])
    rig.service.assign(other)
    rig.throw(asking(1, None, 2, 3))  # four read, one of them unsure: one missed
    part = html(keeper.get(f"/t/{other}/board"))
    assert "only 4 of 5 dice" in part
    adds = re.findall(r'type="radio" form="ask-form" name="add" value="(\d)"', part)
    assert adds == ["1", "2", "3", "4", "5", "6"]
    assert 'name="d1" value="5"' in part  # the unsure die is asked as well
    r = answer_form(keeper, other, csrf, d1="6")
    assert "the die the camera missed" in html(r, 409)
    assert answer_form(keeper, other, csrf, d1="6", add="4").status_code == 303
    assert rig.tables.log(other)[-1]["action"]["dice"] == [1, 6, 2, 3, 4]
    # two dice off: the notice stays as it always was, with nothing to tap
    rig.throw(reading(1, 2, 3))
    part = html(keeper.get(f"/t/{other}/board"))
    assert 'class="pad-notice' in part
    assert 'id="ask"' not in part


def test_the_question_is_read_from_the_notice_only_while_the_table_waits_for_it() -> None:
    notice = {
        "kind": "confirm", "text": "t", "dice": [1, None, 2], "wanted": 3, "snapshot": "/x",
        "asked": [{"index": 1, "candidates": [[4, 0.5], [2, 0.25]], "box": [0.1, 0.2, 0.3, 0.4]}],
    }  # fmt: skip
    view = {"over": False, "expecting": {"action": "roll", "dice": 3}, "pad": {"notice": notice}}
    q = ask.question(view)
    assert q is not None
    assert q.one_tap
    assert q.kind == "roll"
    [slot] = q.asked
    assert slot.guesses == (ask.Guess(4, 50), ask.Guess(2, 25))
    assert slot.others == (1, 3, 5, 6)
    assert slot.view_box == "0.1000 0.2000 0.3000 0.4000"
    assert ask.answer(q, {"d1": "2"}) == (1, 2, 2)
    for bad in ({}, {"d1": "7"}, {"d1": "x"}, {"d0": "2"}):
        with pytest.raises(ask.AnswerError):
            ask.answer(q, bad)
    assert ask.question(view | {"expecting": {"action": "keep", "dice": 0}}) is None  # moved on
    assert ask.question(view | {"over": True}) is None
    reveal = ask.question(view | {"expecting": {"action": "reveal", "dice": 3}})
    assert reveal is not None
    assert reveal.kind == "reveal"
    unseen = ask.question({**view, "pad": {"notice": notice | {"snapshot": None}}})
    assert unseen is not None
    assert unseen.asked[0].view_box == ""  # no photo kept: no crop
    # anything this code did not write asks nothing (and is never drawn)
    for broken in (
        {"dice": [1, "<b>", 2]},
        {"dice": [1, True, 2]},
        {"wanted": "x"},
        {"asked": [{"index": 1, "candidates": [["<b>", 0.5]]}]},
        {"asked": [{"index": 1, "candidates": [[4, 2.0]]}]},
        {"dice": [1, 2, 2]},  # nothing unread and the count right: nothing to ask
    ):
        assert ask.question({**view, "pad": {"notice": notice | broken}}) is None, broken
    odd = ask.question(
        {**view, "pad": {"notice": notice | {"asked": [{"index": 1, "box": ["<x>", 0, 2, 1]}]}}}
    )
    assert odd is not None  # a bad crop box: no crop, all six faces
    assert (odd.asked[0].view_box, odd.asked[0].others) == ("", (1, 2, 3, 4, 5, 6))


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


# -- in a real browser ------------------------------------------------------------------------

CHROMIUM = os.environ.get("DICEPAD_CHROMIUM", "/usr/bin/chromium")
LIVE_MS = 10_000  # a live update should take well under a second; generous for a loaded CI machine


@pytest.fixture
def served(rig: Rig) -> Iterator[str]:
    """The rig's app on a loopback port (werkzeug's threaded server: in-process, so the test
    can play the pad service while the browser watches)."""
    server = make_server("127.0.0.1", 0, rig.app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    dicepad(rig.app).feed.close()  # live streams end, so their threads return
    server.shutdown()
    thread.join(5)


@pytest.mark.browser
def test_a_phone_follows_the_camera_and_puts_its_table_on_the_pad(
    rig: Rig, served: str, tmp_path: Path
) -> None:
    """Headless Chromium: the camera going offline, a notice with its photo and the pad
    moving to this table all reach the open page live, with no new log entry."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    client = rig.app.test_client()
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    other = new_table(client, "gords", players=["Cy", "Dee"])  # newest: on the pad
    rig.service.step(0.01)
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        try:
            browser = p.chromium.launch(
                executable_path=CHROMIUM, args=["--headless", "--no-sandbox"]
            )
        except Exception as exc:  # a broken browser install is a skip, not a failure
            pytest.skip(f"Chromium did not start: {exc}")
        context = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True)
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(served + "/login")
        page.fill("input[name=pin]", PIN)
        page.click("form.stack button[type=submit]")
        page.wait_for_url(served + "/")
        page.goto(f"{served}/t/{table}")
        page.wait_for_selector("#live.on", timeout=LIVE_MS)
        assert "(the pad is on another table)" in page.inner_text("#pad")

        rig.camera(CameraState.OFFLINE, "camera offline: no frame for 5 s — check the cable")
        page.wait_for_selector("#pad.pad-off:has-text('check the cable')", timeout=LIVE_MS)

        page.click("#pad-assign")
        page.wait_for_selector("#pad .here", timeout=LIVE_MS)
        assert rig.service.table_on_pad() == table
        assert page.query_selector("#pad-assign") is None

        rig.throw(reading(1, 5, None, 3, 3))  # the camera cannot read one die
        page.wait_for_selector(".pad-notice.notice-confirm img", timeout=LIVE_MS)
        # polled from here: wait_for_function compiles its string in the page, which the
        # page's Content-Security-Policy (no 'unsafe-eval') refuses once it has to poll
        deadline = time.monotonic() + LIVE_MS / 1000
        loaded = "() => document.querySelector('.pad-notice img').naturalWidth > 0"
        while not page.evaluate(loaded):
            assert time.monotonic() < deadline, "the roll's photo never loaded"
            time.sleep(0.05)
        assert page.get_attribute(".board-part", "data-seq") == "0"  # all without a log entry
        page.screenshot(path=str(tmp_path / "pad-notice.png"), full_page=True)
        context.close()
        browser.close()
    assert rig.tables.view(other)["pad"]["on_pad"] is False
    assert errors == []


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
