"""The teaching page on the PIN holder's phone ("Teach the house dice", Vision IV), in headless
Chromium (Debian's ``chromium``, driven by Python Playwright) at 390 x 844.

A real app on a loopback port with a real :class:`~server.pad.service.PadService` (not started:
the test hands it the settled frame) and house worker; no game in play. The frame is a rendered
throw of five white dice (``tests/settled_rolls.py``), read from the renderer's truth with the 6
made unsure. The page must show each die's crop and the big face buttons inside the screen; a tap
on the 6 and one on "Teach these" must add the throw to the house set, and the page it goes back
to must count it. Skipped, with the reason, when Playwright or Chromium is missing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from chromium import CHROMIUM, have_chromium, launched
from flask import Flask
from server_app import PIN
from settled_rolls import flat_roll
from werkzeug.serving import make_server

from hardware.frames import Frame
from server.app import create_app
from server.config import Config
from server.pad.api import attach
from server.pad.house import HOUSE_DIR, PadHouse
from server.pad.service import PadService
from server.pad.truth import reading_from_truth
from server.services import dicepad
from vision.house import load_set
from vision.reading import DieFlag, Pad, Reading

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"
PHONE = {"width": 390, "height": 844}
WAIT_MS = 10_000

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright (python) not installed")
if not have_chromium():
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)


@dataclass
class Rig:
    app: Flask
    service: PadService
    house: PadHouse
    url: str
    data: Path
    reading: Reading | None = None

    def read(self, image: Any, pad: Pad | None) -> Reading:
        assert self.reading is not None
        return self.reading


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    app = create_app(Config(data_dir=tmp_path, pin=PIN, camera="demo", pin_scrypt_n=2**4))
    house = PadHouse(tmp_path / HOUSE_DIR)
    holder: list[Rig] = []
    service = PadService(
        dicepad(app).tables,
        None,
        reader=lambda image, pad: holder[0].read(image, pad),
        truth_fallback=False,
        house=house,
    )
    attach(app, service)
    house.start()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    holder.append(Rig(app, service, house, f"http://127.0.0.1:{server.server_port}", tmp_path))
    yield holder[0]
    server.shutdown()
    thread.join(5)
    service.stop()
    dicepad(app).close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched(sync_api)


def inside_the_phone(page: Any, selector: str) -> list[dict[str, float]]:
    """The boxes of every element ``selector`` finds: each shown, and inside 390 px."""
    boxes = []
    for el in page.query_selector_all(selector):
        assert el.is_visible(), selector
        box = el.bounding_box()
        assert box is not None, selector
        assert box["x"] >= 0, (selector, box)
        assert box["x"] + box["width"] <= PHONE["width"], (selector, box)
        boxes.append(box)
    assert boxes, f"nothing matches {selector}"
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    return boxes


def count(page: Any, face: int) -> int:
    return int(page.inner_text(f"#progress li[data-face='{face}'] .n"))


def test_one_tap_and_teach_these_grow_the_count(rig: Rig, browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(rig.url + "/house/teach")
    page.wait_for_url("**/login?next=/house/teach")  # the PIN holder's page
    page.fill("input[name=pin]", PIN)
    page.click("form.stack button[type=submit]")
    page.wait_for_url(rig.url + "/house/teach")
    assert page.inner_text("#examples .n") == "0"

    scene = flat_roll()
    truth = reading_from_truth(scene.truth)
    (six,) = [i for i, d in enumerate(truth.dice) if d.value == 6]
    asked = replace(
        truth.dice[six], value=None, flags=frozenset({DieFlag.UNREADABLE}), candidates=()
    )
    rig.reading = replace(truth, dice=(*truth.dice[:six], asked, *truth.dice[six + 1 :]))
    rig.service.settled(Frame(scene.image, 1.0, 1))
    # the page's script sees the new throw and shows it (no reload by hand)
    page.wait_for_selector(".teach-die", timeout=WAIT_MS)
    crops = inside_the_phone(page, "img.teach-crop")
    assert len(crops) == 5
    assert all(c["width"] >= 96 for c in crops)  # big enough to count the pips
    assert all(
        page.evaluate(f"() => document.querySelectorAll('img.teach-crop')[{i}].naturalWidth") > 0
        for i in range(5)
    )
    faces = inside_the_phone(page, ".teach-die .choice.face")
    assert len(faces) == 30
    assert all(f["height"] >= 44 and f["width"] >= 44 for f in faces)  # thumb-sized
    inside_the_phone(page, "#teach-send")
    before = count(page, 6)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "teach-390.png"), full_page=True)

    page.click(f".teach-die[data-die='{six}'] .choice.face:has(input[value='6'])")
    assert page.is_checked(f"input[name='d{six}'][value='6']")
    page.click("#teach-send")
    page.wait_for_url("**/house/teach?done=taught&n=5", timeout=WAIT_MS)
    deadline = time.monotonic() + WAIT_MS / 1000
    while page.inner_text("#examples .n") != "5":  # kept by the worker (at once, here)
        assert time.monotonic() < deadline, "the count never grew"
        time.sleep(0.1)
        page.reload()
    assert count(page, 6) == before + 1
    assert page.is_visible("#again")  # taught: throw again
    assert rig.house.wait()
    assert sorted(e.value for e in load_set(rig.data / HOUSE_DIR).examples) == [2, 3, 4, 5, 6]
    assert errors == []
    context.close()
