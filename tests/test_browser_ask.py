"""The pad's question answered on a phone (issue 31, "one tap to answer"), in headless
Chromium (Debian's ``chromium``, driven by Python Playwright) at 390 x 844.

A real app on a loopback port with a real :class:`~server.pad.service.PadService` (not
started: the test hands it each settled frame). The frame is a rendered throw of five white
dice (``tests/settled_rolls.py``); the reader is the edge faked here: it reports the
renderer's truth with one die made unsure (value None and its two best guesses), or with a die
too many or too few. The PIN holder's phone must show the die's crop of the photo and its
guesses inside the screen, and one tap on the right guess must log the roll; a miscounted
throw is put right with a tap on a die (or a face) and one more on "Log the roll". Skipped,
with the reason, when Playwright or Chromium is missing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from chromium import CHROMIUM, have_chromium, launched
from flask import Flask
from server_app import PIN, create_table
from settled_rolls import flat_roll
from werkzeug.serving import make_server

from hardware.frames import Frame
from server.app import create_app
from server.config import Config
from server.pad.api import attach
from server.pad.service import PadService
from server.pad.truth import reading_from_truth
from server.services import dicepad
from vision.reading import DieFlag, DieReading, Pad, Reading

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"
PHONE = {"width": 390, "height": 844}
WAIT_MS = 10_000  # well under a second here; generous for a loaded CI machine

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright (python) not installed")
if not have_chromium():
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)


class Reader:
    """The dice reader the pad service calls on a settled frame: it answers ``next``."""

    def __init__(self) -> None:
        self.next = Reading((), (640, 480))

    def __call__(self, image: np.ndarray, pad: Pad | None) -> Reading:
        return self.next


@dataclass
class Rig:
    app: Flask
    service: PadService
    reader: Reader
    url: str
    frames: int = 0

    def throw(self, image: np.ndarray, read: Reading) -> None:
        """The dice of a throw came to rest in ``image`` and were read as ``read``."""
        self.reader.next = read
        self.frames += 1
        self.service.settled(Frame(image, float(self.frames), self.frames))

    def rolls(self, table: str) -> list[dict[str, Any]]:
        return [e for e in dicepad(self.app).tables.log(table) if e["action"]["type"] == "roll"]


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    app = create_app(Config(data_dir=tmp_path, pin=PIN, camera="demo", pin_scrypt_n=2**4))
    reader = Reader()
    service = PadService(dicepad(app).tables, None, reader=reader, truth_fallback=False)
    attach(app, service)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Rig(app, service, reader, f"http://127.0.0.1:{server.server_port}")
    dicepad(app).feed.close()  # live streams end, so their threads return
    server.shutdown()
    thread.join(5)
    dicepad(app).close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched(sync_api)


class Phone:
    """The PIN holder's phone: one browser context at 390 x 844, logged in; console errors
    (a Content-Security-Policy violation is one) collected."""

    def __init__(self, browser: Any, base: str, *, script: bool = True) -> None:
        self.context = browser.new_context(
            viewport=PHONE, device_scale_factor=2, is_mobile=True, java_script_enabled=script
        )
        self.page = self.context.new_page()
        self.base = base
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.goto(base + "/login")
        self.page.fill("input[name=pin]", PIN)
        self.page.click("form.stack button[type=submit]")
        self.page.wait_for_url(base + "/")

    def board(self, table: str) -> Any:
        """The table's scoreboard, following the table live."""
        self.page.goto(f"{self.base}/t/{table}")
        self.page.wait_for_selector("#live.on", timeout=WAIT_MS)
        return self.page

    def close(self) -> None:
        assert self.errors == []
        self.context.close()


def inside_the_phone(page: Any, selector: str) -> list[dict[str, float]]:
    """The boxes of every element ``selector`` finds: each shown, and inside 390 px."""
    boxes = []
    for el in page.query_selector_all(selector):
        assert el.is_visible(), selector
        box = el.bounding_box()
        assert box is not None, selector
        assert box["width"] > 0, selector
        assert box["height"] > 0, selector
        assert box["x"] >= 0, (selector, box)
        assert box["x"] + box["width"] <= PHONE["width"], (selector, box)
        boxes.append(box)
    assert boxes, f"nothing matches {selector}"
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    return boxes


def wait_until(check: Any, what: str) -> Any:
    """Poll ``check`` (the page's CSP forbids Playwright's in-page polling: no eval)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while not (found := check()):
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
    return found


def five_dice() -> tuple[np.ndarray, Reading]:
    """A rendered throw of five flat white dice (2, 3, 4, 5, 6) and its perfect reading."""
    scene = flat_roll()
    return scene.image, reading_from_truth(scene.truth)


def unsure(read: Reading, value: int, guesses: tuple[tuple[int, float], ...]) -> Reading:
    """``read`` with the die showing ``value`` not read: only ``guesses`` for it."""
    dice = tuple(
        replace(d, value=None, flags=frozenset({DieFlag.UNREADABLE}), confidence=0.4,
                candidates=guesses)
        if d.value == value else d
        for d in read.dice
    )  # fmt: skip
    return replace(read, dice=dice)


def test_one_tap_on_the_right_guess_logs_the_roll(rig: Rig, browser: Any) -> None:
    client = rig.app.test_client()
    table = create_table(client, {"game": "bolo", "players": ["Ann", "Bob"]})
    phone = Phone(browser, rig.url)
    page = phone.board(table)
    image, read = five_dice()
    order = [d.value for d in read.dice]  # the reader's order: top to bottom
    # the camera is torn between 6 and 5; the die shows 5 (the second guess)
    rig.throw(image, unsure(read, 5, ((6, 0.52), (5, 0.41))))

    page.wait_for_selector("#ask svg.crop", timeout=WAIT_MS)
    [crop] = inside_the_phone(page, "#ask svg.crop")
    assert crop["width"] >= 80  # big enough to count pips on
    guesses = inside_the_phone(page, "#ask .choice.guess")
    assert len(guesses) == 2
    assert all(g["height"] >= 60 and g["width"] >= 80 for g in guesses)  # big buttons
    assert page.inner_text("#ask .choice.guess >> nth=0").split() == ["52", "%"]
    assert page.get_attribute("#ask .choice.guess >> nth=1", "value") == "5"
    inside_the_phone(page, "#ask .choice.other")  # and the other four faces, smaller
    assert len(page.query_selector_all("#ask .choice.other")) == 4
    # the dice the camera is sure of are filled in, the asked one is a "?"
    shown = page.eval_on_selector_all(
        "#ask .ask-roll .die", "els => els.map(e => e.getAttribute('aria-label'))"
    )
    assert shown == [str(v) if v != 5 else "unreadable" for v in order]

    # the crop shows the die: a white die (with dark pips) fills its middle, on a darker pad
    def die_in_crop() -> bool:
        png = page.locator("#ask svg.crop").screenshot()
        grey = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_GRAYSCALE)
        assert grey is not None
        h, w = grey.shape
        middle = grey[h * 3 // 8 : h * 5 // 8, w * 3 // 8 : w * 5 // 8]
        rim = np.concatenate([grey[:, : w // 10].ravel(), grey[:, -w // 10 :].ravel()])
        return bool(np.percentile(middle, 75) > np.median(rim) + 40)

    wait_until(die_in_crop, "the crop never showed the die")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ask-one-die-390.png"), full_page=True)

    page.click("#ask .choice.guess[value='5']")
    [roll] = wait_until(lambda: rig.rolls(table), "the roll was never logged")
    assert roll["action"]["dice"] == order
    assert roll["source"] == "phone"
    assert roll["snapshot"] is True  # the answer named its question: the photo is kept
    page.wait_for_selector("#ask", state="detached", timeout=WAIT_MS)
    phone.close()


def test_two_unsure_dice_are_answered_then_logged_in_one_tap(rig: Rig, browser: Any) -> None:
    client = rig.app.test_client()
    table = create_table(client, {"game": "bolo", "players": ["Ann", "Bob"]})
    phone = Phone(browser, rig.url)
    page = phone.board(table)
    image, read = five_dice()
    order = [d.value for d in read.dice]
    read = unsure(unsure(read, 2, ((2, 0.7), (3, 0.2))), 6, ())  # nothing to offer for the 6
    rig.throw(image, read)
    page.wait_for_selector("#ask-send", timeout=WAIT_MS)
    assert len(page.query_selector_all("#ask svg.crop")) == 2
    assert page.is_disabled("#ask-send")
    page.click("#ask .choice.guess:has(input[value='2'])")
    # a camera notice redraws the board (no log entry): the pick stays
    rig.service.tables.set_pad(table, "camera", {"state": "live", "message": "camera live"})
    page.wait_for_selector("#pad.pad-ok", timeout=WAIT_MS)
    assert page.is_checked("#ask input[name^='d'][value='2']")
    assert page.is_disabled("#ask-send")
    inside_the_phone(page, "#ask .asked.no-guess .choice.other")  # all six faces offered
    page.click("#ask .asked.no-guess .choice:has(input[value='6'])")
    assert page.inner_text("#ask-send") == "Log the roll " + " ".join(map(str, order))
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ask-two-dice-390.png"), full_page=True)
    assert rig.rolls(table) == []
    page.click("#ask-send")
    [roll] = wait_until(lambda: rig.rolls(table), "the roll was never logged")
    assert roll["action"]["dice"] == order
    phone.close()


def test_a_miscounted_throw_loses_or_gains_a_die_and_is_logged(rig: Rig, browser: Any) -> None:
    client = rig.app.test_client()
    table = create_table(client, {"game": "bolo", "players": ["Ann", "Bob"]})
    phone = Phone(browser, rig.url)
    page = phone.board(table)
    image, read = five_dice()
    order = [d.value for d in read.dice]
    # glare on the felt taken for a sixth die, a 1
    glare = DieReading(1, (40.0, 40.0), (), 30.0, "white", 0.7)
    rig.throw(image, replace(read, dice=(glare, *read.dice)))
    page.wait_for_selector("#ask .pick", timeout=WAIT_MS)
    assert "6 dice on the pad, expected 5" in page.inner_text("#pad")
    assert len(inside_the_phone(page, "#ask .pick")) == 6  # every die read, tappable
    assert page.is_disabled("#ask-send")
    page.click("#ask .pick:has(input[value='0'])")  # the glare
    assert page.inner_text("#ask-send") == "Log the roll " + " ".join(map(str, order))
    inside_the_phone(page, "#ask-send")
    page.screenshot(path=str(ARTIFACTS / "ask-one-too-many-390.png"), full_page=True)
    page.click("#ask-send")
    [roll] = wait_until(lambda: rig.rolls(table), "the roll was never logged")
    assert roll["action"]["dice"] == order

    # the next player: the camera misses the 4 (a die it did not find at all)
    other = create_table(client, {"game": "bolo", "players": ["Cy", "Dee"]})
    rig.service.assign(other)
    page = phone.board(other)
    rig.throw(image, replace(read, dice=tuple(d for d in read.dice if d.value != 4)))
    page.wait_for_selector("#ask .add-faces", timeout=WAIT_MS)
    assert "only 4 of 5 dice" in page.inner_text("#pad")
    assert len(inside_the_phone(page, "#ask .add-faces .choice")) == 6
    page.click("#ask .add-faces .choice:has(input[value='4'])")
    page.click("#ask-send")
    [roll] = wait_until(lambda: rig.rolls(other), "the roll was never logged")
    assert sorted(roll["action"]["dice"]) == sorted(v or 0 for v in order)
    phone.close()


def test_without_javascript_a_tap_on_a_guess_logs_the_roll(rig: Rig, browser: Any) -> None:
    """The page works with no script: the guess is a submit button of the page's form."""
    client = rig.app.test_client()
    table = create_table(client, {"game": "bolo", "players": ["Ann", "Bob"]})
    image, read = five_dice()
    order = [d.value for d in read.dice]
    rig.throw(image, unsure(read, 3, ((3, 0.8), (2, 0.1))))
    phone = Phone(browser, rig.url, script=False)
    phone.page.goto(f"{rig.url}/t/{table}")
    inside_the_phone(phone.page, "#ask .choice.guess")
    phone.page.click("#ask .choice.guess[value='3']")
    phone.page.wait_for_url(f"{rig.url}/t/{table}")
    [roll] = wait_until(lambda: rig.rolls(table), "the roll was never logged")
    assert roll["action"]["dice"] == order
    assert phone.page.query_selector("#ask") is None  # answered: the notice is gone
    phone.close()
