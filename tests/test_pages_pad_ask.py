"""The pad's question about unsure or miscounted dice, shown on the board and answered."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest
from flask.testing import FlaskClient
from pages_pad_rig import (
    Rig,
    fixture_client,  # noqa: F401 (the client fixture)
    fixture_rig,  # noqa: F401 (the rig fixture)
    html,
    new_table,
    reading,
)
from server_app import AUTH, csrf_token, login

from server.pages import ask
from vision.reading import Reading

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
