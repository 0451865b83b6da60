"""Every fix teaches (Vision IV): the dice of a camera roll a phone fixes, or of a throw the pad
asked about and a phone answered, join the house set in ``DATA/house/`` with the player's
values, cut from the raw camera frame; an undo takes them back out; ``dicepad serve`` reads
with the house model and survives a damaged house folder.

A real app on a temporary data directory, a real pad service and house worker; the camera's
settled frames are rendered scenes handed to the service as the settle detector would
(``PadService.settled``), read from the renderer's truth (one die made unsure where a test
needs the pad to ask).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import house_bar
import numpy as np
import pytest
from house_bar import MODELS
from server_app import AUTH, create_table, login, make_app

from server.pad.api import start_pad_service
from server.pad.house import HOUSE_DIR
from server.pad.reading import Throw, vision_reader
from server.pad.teaching import pair
from server.pad.truth import reading_from_truth
from server.pages.ask import question
from server.services import dicepad
from vision.annotate import annotate
from vision.house import Example, HouseSet, load_set, save_set
from vision.house.views import die_view
from vision.params import DetectorParams

THROW = (1, 3, 3, 4, 6)
SLOW_DEMO = "demo?fps=1"  # no throw settles while a serve-wiring test runs


class Bar(house_bar.Bar):
    """:class:`house_bar.Bar` with a Bolo table in play."""

    def __init__(self, data: Path, *, limit: int | None = None) -> None:
        super().__init__(data, limit=limit)
        self.table = create_table(self.client, {"game": "bolo", "players": ["Ann"]})

    def throw(self, values: tuple[int, ...] = THROW, *, unsure: int | None = None) -> Throw:
        return super().throw(values, unsure=unsure)

    def act(self, body: dict[str, Any]) -> Any:
        r = self.client.post(f"/api/tables/{self.table}/actions", json=body, headers=AUTH)
        assert r.status_code == 201, r.json
        return r.json


@pytest.fixture
def bar(tmp_path: Path) -> Iterator[Bar]:
    b = Bar(tmp_path)
    yield b
    b.close()


def die_of(house: HouseSet, view: np.ndarray) -> list[Example]:
    return [e for e in house.examples if np.array_equal(e.view, view)]


# -- the pairing rule ---------------------------------------------------------------------------


def test_the_values_given_pair_with_the_dice_only_where_that_is_no_guess() -> None:
    assert pair([1, 3, 3, 4, 6], [1, 3, 3, 4, 5]) == [1, 3, 3, 4, 5]  # the 6 was a 5
    assert pair([1, 3, 3, 4, 6], [1, 3, 4, 4, 6]) == [1, None, None, 4, 6]  # which 3 was a 4?
    assert pair([None, 2, None], [2, 5, 5]) == [5, 2, 5]  # the dice asked are alike
    assert pair([None, 2, None], [2, 5, 6]) == [None, 2, None]  # which is the 5?
    assert pair([3, None], [3, 3]) == [3, 3]
    assert pair([4, 2], [4, 5, 2]) == [4, 2]  # a die the camera missed: nothing to pair it with
    assert pair([4, None, 2], [4, 2]) == [4, None, 2]  # one seen by mistake: not taught


# -- a fix teaches ----------------------------------------------------------------------------


def test_a_fixed_camera_roll_teaches_its_dice_with_the_fixed_values(bar: Bar) -> None:
    throw = bar.throw()
    assert throw.applied == (1,)  # the camera logged the roll
    assert throw.reading is not None
    fix = bar.act({"type": "fix", "dice": [1, 3, 3, 4, 5]})
    house = bar.kept()
    assert sorted(e.value for e in house.examples) == [1, 3, 3, 4, 5]
    assert {(e.origin, e.ref) for e in house.examples} == {("fix", f"{bar.table}/{fix['seq']}")}
    (taught,) = die_of(house, bar.view_of(6))  # cut from the raw frame ...
    assert taught.value == 5
    six = throw.reading.dice[bar.index(6)]
    drawn = die_view(annotate(bar.image, throw.reading, label_all=False), six, DetectorParams())
    assert not die_of(house, drawn)  # ... not from the photo with the reading drawn on it
    status = bar.client.get("/api/pad").json or {}
    assert status["house"]["examples"] == 5
    assert status["house"]["per_face"] == {"1": 1, "2": 0, "3": 2, "4": 1, "5": 1, "6": 0}


def test_an_ambiguous_fix_teaches_nothing_of_the_dice_it_leaves_in_doubt(bar: Bar) -> None:
    read = bar.throw().reading
    assert read is not None
    bar.act({"type": "fix", "dice": [1, 3, 4, 4, 6]})  # one of the 3s was a 4: which?
    house = bar.kept()
    assert sorted(e.value for e in house.examples) == [1, 4, 6]
    threes = [d for d in read.dice if d.value == 3]
    assert len(threes) == 2
    for three in threes:
        assert not die_of(house, die_view(bar.image, three, DetectorParams()))


def test_a_second_fix_of_the_roll_replaces_what_the_first_taught(bar: Bar) -> None:
    bar.throw()
    bar.act({"type": "fix", "dice": [1, 3, 3, 4, 5]})
    second = bar.act({"type": "fix", "dice": [1, 3, 3, 4, 4]})  # it was a 4 after all
    house = bar.kept()
    assert sorted(e.value for e in house.examples) == [1, 3, 3, 4, 4]
    assert {e.ref for e in house.examples} == {f"{bar.table}/{second['seq']}"}


def test_an_undo_takes_the_fixed_roll_and_what_it_taught_back_out(bar: Bar) -> None:
    bar.throw()
    bar.act({"type": "fix", "dice": [1, 3, 3, 4, 5]})
    assert len(bar.kept()) == 5
    bar.act({"type": "undo"})  # takes back the (fixed) roll
    assert len(bar.kept()) == 0
    assert bar.parts.health.check()["house"].ok


def test_the_set_is_bounded_the_oldest_go(tmp_path: Path) -> None:
    bar = Bar(tmp_path, limit=3)
    try:
        bar.throw()
        bar.act({"type": "fix", "dice": [1, 3, 3, 4, 5]})
        assert len(bar.kept()) == 3
    finally:
        bar.close()


# -- an answer teaches ------------------------------------------------------------------------


def test_a_one_tap_answer_teaches_the_die_asked_about(bar: Bar) -> None:
    throw = bar.throw(unsure=6)  # the 6 is one the camera asks about
    assert throw.applied == ()
    view = bar.client.get(f"/api/tables/{bar.table}").json or {}
    q = question(view)
    assert q is not None
    assert q.one_tap
    answer = bar.act({"type": "roll", "dice": [1, 3, 3, 4, 6], "answers": q.key})
    house = bar.kept()
    assert sorted(e.value for e in house.examples) == [1, 3, 3, 4, 6]
    assert {(e.origin, e.ref) for e in house.examples} == {
        ("answer", f"{bar.table}/{answer['seq']}")
    }
    (asked,) = die_of(house, bar.view_of(6))
    assert asked.value == 6


def test_only_an_answer_to_the_question_teaches(bar: Bar) -> None:
    bar.throw(unsure=6)
    bar.act({"type": "roll", "dice": [1, 3, 3, 4, 6]})  # typed in, not the pad's question
    assert len(bar.kept()) == 0
    bar.act({"type": "undo"})
    bar.throw(unsure=6)  # the same throw again, asked again: answered this time
    q = question(bar.client.get(f"/api/tables/{bar.table}").json or {})
    assert q is not None
    bar.act({"type": "roll", "dice": [1, 3, 3, 4, 6], "answers": q.key})
    assert len(bar.kept()) == 5


def test_the_no_script_answer_teaches_too(bar: Bar) -> None:
    bar.throw(unsure=6)
    view = bar.client.get(f"/api/tables/{bar.table}").json or {}
    q = question(view)
    assert q is not None
    token = login(bar.client)
    picks = {"csrf": token, "question": q.key, f"d{bar.index(6)}": "5"}
    r = bar.client.post(f"/t/{bar.table}/answer", data=picks)
    assert r.status_code == 303
    house = bar.kept()
    (asked,) = die_of(house, bar.view_of(6))
    assert (asked.value, asked.origin) == (5, "answer")


# -- dicepad serve ----------------------------------------------------------------------------


def test_a_damaged_house_folder_never_stops_the_server(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / HOUSE_DIR
    folder.mkdir()
    (folder / "examples.npz").write_bytes(b"PK\x03\x04 not a house set")
    app = make_app(tmp_path, camera=SLOW_DEMO)
    with caplog.at_level(logging.ERROR, logger="server.pad.worker"):
        pad = start_pad_service(app)
        assert pad is not None
        assert pad.house is not None
        try:
            pad.house.wait()
            assert pad.running
            client = app.test_client()
            health = client.get("/api/health")
            assert health.status_code == 200  # the house is no critical part
            part = (health.json or {})["components"]["house"]
            assert part["ok"] is False
            assert "damaged" in part["detail"]
            house = (client.get("/api/pad").json or {})["house"]
            assert "damaged" in house["problem"]
            assert house["model"] is False
            create_table(client, {"game": "bolo", "players": ["Ann"]})  # it serves
        finally:
            pad.stop()
            dicepad(app).close()
    assert any("damaged" in r.getMessage() for r in caplog.records)
    assert (folder / "examples.npz").read_bytes() == b"PK\x03\x04 not a house set"  # left as is


def test_the_house_set_outlives_a_restart_of_the_server(tmp_path: Path) -> None:
    bar = Bar(tmp_path)
    try:
        bar.throw()
        bar.act({"type": "fix", "dice": [1, 3, 3, 4, 5]})
        before = [(e.id, e.value) for e in bar.kept().examples]
    finally:
        bar.close()
    app = make_app(tmp_path, camera=SLOW_DEMO)  # dicepad serve's own wiring, on DATA/
    pad = start_pad_service(app)
    assert pad is not None
    assert pad.house is not None
    try:
        assert pad.house.wait()
        house = (app.test_client().get("/api/pad").json or {})["house"]
        assert house["examples"] == 5
        assert house["per_face"]["5"] == 1
        assert [(e.id, e.value) for e in load_set(tmp_path / HOUSE_DIR).examples] == before
    finally:
        pad.stop()
        dicepad(app).close()


@pytest.mark.skipif(
    not (MODELS / "value.onnx").is_file(), reason="vision models (train_vision) not installed"
)
def test_serve_reads_every_throw_with_the_house_model(tmp_path: Path) -> None:
    shot = house_bar.render(THROW)
    dice = reading_from_truth(shot.truth).dice
    params = DetectorParams()
    taught = [
        Example(
            np.ascontiguousarray(np.rot90(die_view(shot.image, d, params), k)),
            d.value or 1,
            "learn",
            f"photo{k}",
            0.0,
        )
        for k in range(4)
        for d in dice
    ]
    save_set(tmp_path / HOUSE_DIR, HouseSet(tuple(taught)))
    app = make_app(tmp_path, camera=SLOW_DEMO)
    pad = start_pad_service(app)
    assert pad is not None
    assert pad.house is not None
    try:
        assert pad.house.wait()
        assert pad.house.model is not None  # loaded (fitted) off the camera's thread
        status = (app.test_client().get("/api/pad").json or {})["house"]
        assert (status["examples"], status["model"]) == (20, True)
        assert dicepad(app).health.check()["house"].ok
    finally:
        pad.stop()
        dicepad(app).close()
    asked: list[object] = []

    def model() -> Any:
        asked.append(pad.house.model if pad.house is not None else None)
        return asked[-1]

    reading = vision_reader(house=model)(shot.image, None)  # the reader serve builds
    assert asked
    assert asked[0] is not None
    assert len(reading.dice) == 5
