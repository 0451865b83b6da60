"""The teaching page, "Teach the house dice" (Vision IV): the PIN holder throws the house dice,
the page shows each die's crop of the raw frame with the reader's value picked, one tap corrects
a die, "Teach these" adds the throw to the house set (once); it shows the examples per face and
how well the house model reads the examples it held back, and takes one bad example out.

A real app on a temporary data directory, a real pad service and house worker; the camera's
settled frames are rendered scenes handed to the service as the settle detector would
(``PadService.settled``), read from the renderer's truth (one die made unsure where a test needs
it). No table is on the pad unless a test makes one: teaching needs no game in play.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import house_bar
import numpy as np
import pytest
from house_bar import MODELS
from server_app import create_table, csrf_token, login, make_app

from server.pad.house import HOUSE_DIR
from server.pad.reading import Throw
from server.pad.truth import reading_from_truth
from server.services import dicepad
from vision.house import Example, HouseSet, load_set, save_set
from vision.house.views import die_view
from vision.params import DetectorParams

THROW = (1, 2, 4, 5, 6)


class Bar(house_bar.Bar):
    """:class:`house_bar.Bar` with the teaching page's own steps."""

    def throw(self, values: tuple[int, ...] = THROW, *, unsure: int | None = None) -> Throw:
        return super().throw(values, unsure=unsure)

    def page(self) -> str:
        r = self.client.get("/house/teach")
        assert r.status_code == 200, r.status_code
        return r.get_data(as_text=True)

    def number(self) -> int:
        throw, _ = self.house.latest()
        assert throw is not None
        return throw.number

    def teach(self, picks: dict[str, str] | None = None, **form: str) -> Any:
        token = csrf_token(self.client)
        data = {"csrf": token, "throw": str(self.number())} | (picks or {}) | form
        return self.client.post("/house/teach", data=data)

    def close(self) -> None:
        self.service.stop()
        self.parts.close()


@pytest.fixture
def bar(tmp_path: Path) -> Iterator[Bar]:
    b = Bar(tmp_path)
    assert b.house.wait()
    yield b
    b.close()


def checked(page: str, die: int) -> str | None:
    """The value picked for die ``die`` on the page (None: none)."""
    found = re.findall(rf'<input type="radio" name="d{die}" value="([^"]+)" checked', page)
    assert len(found) <= 1
    return found[0] if found else None


def per_face(page: str) -> dict[int, int]:
    return {
        int(v): int(n)
        for v, n in re.findall(r'<li data-face="(\d)"[^>]*>.*?<b class="n">(\d+)</b>', page)
    }


def total(page: str) -> int:
    found = re.search(r'<p id="examples"><b class="n">(\d+)</b>', page)
    assert found
    return int(found.group(1))


# -- the PIN holder's only ----------------------------------------------------------------------


def test_the_page_its_pictures_and_its_changes_need_the_pin(bar: Bar) -> None:
    bar.throw()
    number = bar.number()
    r = bar.client.get("/house/teach")
    assert r.status_code == 302
    assert "/login" in r.headers["Location"]
    for path in (f"/house/teach/{number}/0.jpg", "/house/teach/latest.json"):
        assert bar.client.get(path).status_code == 401, path
    # a visitor with a token (any page hands one out) is sent to log in; nothing is taught
    token = csrf_token(bar.client)
    r = bar.client.post("/house/teach", data={"csrf": token, "throw": str(number)})
    assert r.status_code == 302
    assert "/login" in r.headers["Location"]
    assert len(bar.kept()) == 0
    login(bar.client)
    r = bar.client.post("/house/teach", data={"throw": str(number)})  # no token
    assert r.status_code == 403
    r = bar.client.post("/house/teach", data={"csrf": "x" * 43, "throw": str(number)})
    assert r.status_code == 403
    assert len(bar.kept()) == 0
    assert bar.teach().status_code == 303  # with the session's token
    house = bar.kept()
    assert len(house) == 5
    # an example's picture is the PIN holder's; removing one needs the token
    eid = house.examples[0].id
    assert bar.client.get(f"/house/examples/{eid}.png").status_code == 200
    r = bar.client.post(f"/house/examples/{eid}/remove", data={})
    assert r.status_code == 403
    outsider = bar.app.test_client()
    assert outsider.get(f"/house/examples/{eid}.png").status_code == 401
    r = outsider.post(f"/house/examples/{eid}/remove", data={"csrf": csrf_token(outsider)})
    assert r.status_code == 302
    assert len(bar.kept()) == 5


# -- the throw shown --------------------------------------------------------------------------


def test_a_throw_with_no_game_in_play_shows_each_die_with_the_readers_guess(bar: Bar) -> None:
    assert dicepad(bar.app).tables.summaries() == []  # no table: the throw is no game's
    login(bar.client)
    assert "No throw yet" in bar.page()
    bar.throw(unsure=4)  # the camera asks about the 4
    page = bar.page()
    number = bar.number()
    assert f'data-throw="{number}"' in page
    assert page.count('class="teach-die"') == 5
    for i, die in enumerate(bar.truth.dice):
        if die.value == 4:
            assert checked(page, i) == "skip"  # no guess: left out unless tapped
            assert "(perhaps 4)" in page
        else:
            assert checked(page, i) == str(die.value)  # the reader's value, picked
        for v in ("1", "2", "3", "4", "5", "6", "0"):
            assert f'name="d{i}" value="{v}"' in page
        r = bar.client.get(f"/house/teach/{number}/{i}.jpg")
        assert r.status_code == 200
        assert r.mimetype == "image/jpeg"
        crop = cv2.imdecode(np.frombuffer(r.data, np.uint8), cv2.IMREAD_GRAYSCALE)
        assert crop is not None
        assert crop.shape == (128, 128)
        middle, rim = (
            crop[48:80, 48:80],
            np.concatenate([crop[:, :10].ravel(), crop[:, -10:].ravel()]),
        )
        assert np.percentile(middle, 75) > np.median(rim) + 40  # a white die on the darker pad
        assert f'src="/house/teach/{number}/{i}.jpg"' in page
    assert bar.client.get(f"/house/teach/{number}/5.jpg").status_code == 404
    assert (bar.client.get("/house/teach/latest.json").json or {})["throw"] == number
    # the next throw is the page's
    bar.throw()
    assert bar.number() != number
    assert f'data-throw="{bar.number()}"' in bar.page()


def test_the_no_camera_page_says_so(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    try:
        client = app.test_client()
        login(client)
        index = client.get("/").get_data(as_text=True)
        assert 'href="/house/teach"' in index  # linked for the PIN holder
        page = client.get("/house/teach").get_data(as_text=True)
        assert "No camera is running" in page
        assert (client.get("/house/teach/latest.json").json or {})["throw"] is None
    finally:
        dicepad(app).close()


# -- teaching ---------------------------------------------------------------------------------


def test_teaching_adds_the_dice_with_the_values_chosen(bar: Bar) -> None:
    login(bar.client)
    bar.throw(unsure=2)
    number = bar.number()
    six, one = bar.index(6), bar.index(1)
    # the 6 was a 5 after all (say), the 1 no die; the asked 2 left as it is: not taught
    r = bar.teach({f"d{six}": "5", f"d{one}": "0"})
    assert r.status_code == 303
    assert r.headers["Location"].endswith("/house/teach?done=taught&n=4")
    house = bar.kept()
    assert sorted(e.value for e in house.examples) == [0, 4, 5, 5]
    assert {(e.origin, e.ref) for e in house.examples} == {("learn", f"page/{number}")}
    for value, taught in ((6, 5), (1, 0), (4, 4), (5, 5)):  # cut from the raw frame
        (e,) = [e for e in house.examples if np.array_equal(e.view, bar.view_of(value))]
        assert e.value == taught
    assert not [e for e in house.examples if np.array_equal(e.view, bar.view_of(2))]
    page = bar.client.get(r.headers["Location"]).get_data(as_text=True)
    assert "Taught 4 dice." in page
    assert "is taught. Throw the dice again." in page
    assert 'id="teach-form"' not in page


def test_an_asked_die_is_taught_with_the_face_tapped_and_a_die_left_out_is_not(bar: Bar) -> None:
    login(bar.client)
    bar.throw(unsure=2)
    r = bar.teach({f"d{bar.index(2)}": "2", f"d{bar.index(6)}": "skip"})
    assert r.status_code == 303
    house = bar.kept()
    assert sorted(e.value for e in house.examples) == [1, 2, 4, 5]
    r = bar.teach()  # taught: the same form again adds nothing
    assert r.headers["Location"].endswith("done=before")
    bad = bar.client.post(
        "/house/teach", data={"csrf": csrf_token(bar.client), "throw": "12345", "d0": "1"}
    )
    assert bad.headers["Location"].endswith("done=gone")
    bar.throw()
    junk = bar.teach({"d0": "7"})
    assert junk.status_code == 400
    assert len(bar.kept()) == 4


def test_a_throw_is_taught_once(bar: Bar) -> None:
    login(bar.client)
    bar.throw()
    assert bar.teach().status_code == 303
    assert len(bar.kept()) == 5
    again = bar.teach({"d0": "3"})  # the same throw (another value, even): nothing more
    assert again.headers["Location"].endswith("done=before")
    assert len(bar.kept()) == 5
    assert "taught already" in bar.client.get(again.headers["Location"]).get_data(as_text=True)
    bar.throw()  # the next throw is taught
    assert bar.teach().status_code == 303
    assert len(bar.kept()) == 10


def test_teaching_works_while_a_game_is_on_the_pad(bar: Bar) -> None:
    login(bar.client)
    table = create_table(bar.client, {"game": "bolo", "players": ["Ann"]})
    throw = bar.throw()
    assert throw.applied == (1,)  # the camera logged the roll as ever
    bar.teach()
    assert sorted(e.value for e in bar.kept().examples) == sorted(THROW)
    assert len(dicepad(bar.app).tables.log(table)) == 1


# -- one bad example out -----------------------------------------------------------------------


def test_remove_takes_one_example_out(bar: Bar) -> None:
    login(bar.client)
    bar.throw()
    bar.teach({f"d{bar.index(6)}": "3"})  # a slip: the 6 taught as a 3
    house = bar.kept()
    (bad,) = [e for e in house.examples if np.array_equal(e.view, bar.view_of(6))]
    page = bar.page()
    listed = re.findall(r'<li class="example" data-id="([0-9a-f]{12})">', page)
    assert sorted(listed) == sorted(e.id for e in house.examples)
    assert listed[0] == house.examples[-1].id  # newest first
    r = bar.client.get(f"/house/examples/{bad.id}.png")
    assert r.mimetype == "image/png"
    shown = cv2.imdecode(np.frombuffer(r.data, np.uint8), cv2.IMREAD_COLOR)
    assert shown is not None
    assert np.array_equal(shown, bad.view)
    r = bar.client.post(f"/house/examples/{bad.id}/remove", data={"csrf": csrf_token(bar.client)})
    assert r.status_code == 303
    assert r.headers["Location"].endswith("done=removed")
    after = bar.kept()
    assert len(after) == 4
    assert bad.id not in {e.id for e in after.examples}
    page = bar.page()
    assert f'data-id="{bad.id}"' not in page
    assert total(page) == 4
    assert per_face(page)[3] == 0
    gone = bar.client.post(
        f"/house/examples/{bad.id}/remove", data={"csrf": csrf_token(bar.client)}
    )
    assert gone.headers["Location"].endswith("done=unknown")
    assert len(bar.kept()) == 4


# -- progress -----------------------------------------------------------------------------------


def seeded(folder: Path, refs: int) -> HouseSet:
    """A house set of a rendered throw's dice, each in four turns, under ``refs`` refs."""
    shot = house_bar.render(THROW)
    dice = reading_from_truth(shot.truth).dice
    params = DetectorParams()
    examples = [
        Example(
            np.ascontiguousarray(np.rot90(die_view(shot.image, d, params), k)),
            d.value or 1,
            "learn",
            f"photo{k % refs}",
            0.0,
        )
        for k in range(4)
        for d in dice
    ]
    extra = [  # and a few not-a-die examples: a patch of the bare pad
        Example(
            np.ascontiguousarray(shot.image[10 + 4 * k : 42 + 4 * k, 10:42]), 0, "fix", "t/1", 0.0
        )
        for k in range(6)
    ]
    house = HouseSet(tuple(examples + extra))
    save_set(folder, house)
    return house


def test_the_progress_shown_is_the_sets(tmp_path: Path) -> None:
    house = seeded(tmp_path / HOUSE_DIR, refs=1)
    bar = Bar(tmp_path)
    try:
        assert bar.house.wait()
        login(bar.client)
        page = bar.page()
        counts = house.counts()
        assert per_face(page) == counts
        assert counts[1] == 4
        assert counts[0] == 6
        assert total(page) == len(house) == 26
        bar.throw()
        bar.teach()
        page = bar.page()
        assert total(page) == 31
        assert per_face(page) == {v: counts[v] + (v in THROW) for v in range(7)}
    finally:
        bar.close()


@pytest.mark.skipif(
    not (MODELS / "value.onnx").is_file(), reason="vision models (train_vision) not installed"
)
def test_the_held_back_figure_is_the_workers_and_matches_the_set(tmp_path: Path) -> None:
    from vision.house.learn import held_back
    from vision.nets import VALUE_FILE, read_onnx

    house = seeded(tmp_path / HOUSE_DIR, refs=4)
    bar = Bar(tmp_path)
    try:
        assert bar.house.wait()
        login(bar.client)
        first = bar.page()  # the figure is asked for, never worked out on the request
        assert "Working out how well it reads" in first
        assert bar.house.wait()
        page = bar.page()
        back = held_back(house, read_onnx(MODELS / VALUE_FILE))
        assert back is not None
        found = re.search(
            r'id="held-back" data-right="(\d+)" data-wrong="(\d+)" data-asked="(\d+)"', page
        )
        assert found
        assert tuple(map(int, found.groups())) == (back.right, back.wrong, back.asked)
        assert f"<b>{back.dice}</b> dice" in page
        assert f"<b>{back.floor:.2f}</b> sure" in page
        assert back.dice < 500  # a floor is fitted from 500 held-back dice on
        assert back.floor == 0.99
        assert "until 500 dice are held back" in page
        # teaching while the page is in use: the figure follows the new set after the fit
        bar.throw()
        bar.teach()
        assert bar.house.wait()
        again = held_back(load_set(tmp_path / HOUSE_DIR), read_onnx(MODELS / VALUE_FILE))
        assert again is not None
        assert f"<b>{again.dice}</b> dice" in bar.page()
        assert again.dice == back.dice + 5
    finally:
        bar.close()


def test_what_the_page_shows_of_an_example_is_escaped(tmp_path: Path) -> None:
    view = np.zeros((32, 32, 3), np.uint8)
    marked = Example(view, 3, "learn", '<script>alert("x")</script>.jpg', 0.0)
    save_set(tmp_path / HOUSE_DIR, HouseSet((marked,)))
    bar = Bar(tmp_path)
    try:
        assert bar.house.wait()
        login(bar.client)
        page = bar.page()
        assert "<script>alert" not in page
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;.jpg" in page
        assert f'data-id="{marked.id}"' in page
    finally:
        bar.close()
