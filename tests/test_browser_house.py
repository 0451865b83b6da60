"""The house pages in headless Chromium at 390 px (a phone) and 1920 px (a TV kiosk), against
a real ``dicepad house`` on a real PostgreSQL: a batch shipped at a table shows on the open
board without a reload, a new table appears, names people typed stay text (a ``<script>``
name runs nothing), nothing overflows a phone's width, and the house PIN holder hides and
shows a record on the wall. Screenshots go to ``artifacts/``. No console error is allowed
(a CSP violation is one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from chromium import CHROMIUM, have_chromium, launched
from house_fill import Event, Rec, add_member, add_table, replace_records, ship
from test_house_server import EVIL, PIN, HouseProcess

from server.house.migrate import connect

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"
PHONE = {"width": 390, "height": 844}
TV = {"width": 1920, "height": 1080}

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright (python) not installed")
if not have_chromium():
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)


@pytest.fixture
def browser() -> Iterator[Any]:
    yield from launched(sync_api)


@pytest.fixture
def filled(house_url: str) -> Iterator[psycopg.Connection[Any]]:
    conn = connect(house_url, autocommit=True)
    add_member(conn, "bar-pi", "http://bar-pi.local:8080")
    add_member(conn, "back-room", "http://back-room.local:8080")
    add_table(conn, "bar-pi", "t1", players=[EVIL, "Bob"])
    add_table(conn, "back-room", "t1", game="you-blew-it",
              teams={"Reds": ["Ann", "Al"], "Blues": ["Bea", "Bo"]})  # fmt: skip
    ship(conn, "bar-pi", "t1", [Event()], scores={EVIL: 350, "Bob": 0})
    ship(conn, "back-room", "t1", [Event(), Event()], scores={"Reds": 1200, "Blues": 850})
    replace_records(conn, "bar-pi", "t1", [
        Rec("bar-pi", "t1.1.0", "t1", "bolo", "roll", EVIL, 1500),
        Rec("bar-pi", "t1.1.1", "t1", "bolo", "turn", "Bob", 900),
    ])  # fmt: skip
    yield conn
    conn.close()


def _page(
    browser: Any, viewport: dict[str, int], errors: list[str], *, confirm: bool = False
) -> Any:
    """A page whose console errors go to ``errors``; a dialog is one too (an alert would be
    a name run as script), except the wall's "hide?" confirm when ``confirm``."""
    context = browser.new_context(viewport=viewport, device_scale_factor=2, is_mobile=True)
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    def dialog(d: Any) -> None:
        if confirm and d.type == "confirm":
            d.accept()
        else:
            errors.append(f"dialog: {d.message}")
            d.dismiss()

    page.on("dialog", dialog)
    return page


def test_the_board_is_live_escaped_and_fits_a_phone(
    browser: Any, house_url: str, filled: psycopg.Connection[Any], tmp_path: Path
) -> None:
    server = HouseProcess(house_url, tmp_path / "house.log")
    errors: list[str] = []
    try:
        page = _page(browser, PHONE, errors)
        page.goto(server.url + "/")
        page.wait_for_selector('#house-status[data-state="live"]', timeout=5000)
        card = page.locator('li.house-card[data-key="bar-pi/t1"]')
        assert EVIL in card.inner_text()  # shown as typed, as text
        assert page.locator("li.house-card script").count() == 0
        # a batch shipped at the table: the open board follows, no reload
        seq = ship(filled, "bar-pi", "t1", [Event()], scores={EVIL: 2750, "Bob": 400})
        page.wait_for_selector(
            f'li.house-card[data-key="bar-pi/t1"][data-seq="{seq}"]', timeout=2000
        )
        assert "2,750" in card.inner_text()
        assert EVIL in card.inner_text()
        # a table new to the house appears, with its link to its own scoreboard
        add_table(filled, "back-room", "t2", players=["Cy", "<img src=x onerror=alert(2)>"])
        ship(filled, "back-room", "t2", [Event()], scores={"Cy": 50})
        fresh = page.locator('li.house-card[data-key="back-room/t2"]')
        fresh.wait_for(timeout=2000)
        assert "<img src=x onerror=alert(2)>" in fresh.inner_text()
        link = fresh.locator("a.card-link")
        assert link.get_attribute("href") == "http://back-room.local:8080/t/t2"
        # the game ends: the card moves to "Finished"
        ship(filled, "back-room", "t1", [Event(type="end")], over=True)
        page.wait_for_selector(
            'section[data-group="over"] li.house-card[data-key="back-room/t1"]', timeout=2000
        )
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"the board is {width} px wide on a 390 px phone"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "house-390.png"), full_page=True)
        tv = _page(browser, TV, errors)
        tv.goto(server.url + "/?kiosk=1")
        tv.wait_for_selector('#house-status[data-state="live"]', timeout=5000)
        tv.screenshot(path=str(ARTIFACTS / "house-kiosk.png"))
        assert errors == []
    finally:
        server.stop()


def test_the_pin_holder_hides_and_shows_a_record_on_the_wall(
    browser: Any, house_url: str, filled: psycopg.Connection[Any], tmp_path: Path
) -> None:
    server = HouseProcess(house_url, tmp_path / "house.log")
    errors: list[str] = []
    try:
        page = _page(browser, PHONE, errors, confirm=True)
        page.goto(server.url + "/records")
        assert "1,500" in page.inner_text("main")
        assert page.locator("button", has_text="hide").count() == 0
        page.click("text=PIN")
        page.fill('input[name="pin"]', PIN)
        page.click('button[type="submit"]')
        page.wait_for_url(server.url + "/records")
        page.locator(".record", has_text="1,500").locator("button", has_text="hide").click()
        page.wait_for_load_state()
        assert "1,500" not in page.inner_text("main")
        page.click("text=Show hidden entries")
        again = page.locator(".record", has_text="1,500").locator("button", has_text="show again")
        again.click()
        page.wait_for_load_state()
        page.goto(server.url + "/records")
        assert "1,500" in page.inner_text("main")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"]
        page.screenshot(path=str(ARTIFACTS / "house-wall-390.png"), full_page=True)
        assert errors == []
    finally:
        server.stop()


def test_the_house_players_pages_fit_a_phone(
    browser: Any, house_url: str, filled: psycopg.Connection[Any], tmp_path: Path
) -> None:
    """The players' list and a player's page (figures, chart, latest games) at 390 px."""
    game: list[dict[str, Any]] = [
        {"type": "roll", "dice": [1, 1, 1, 2, 3]}, {"type": "keep", "dice": [1, 1, 1]},
        {"type": "bank"}, {"type": "roll", "dice": [5, 5, 5, 2, 3]},
        {"type": "keep", "dice": [5, 5, 5]}, {"type": "bank"},
        {"type": "roll", "dice": [1, 5, 2, 3, 4]}, {"type": "keep", "dice": [1, 5]},
        {"type": "bank"},
    ]  # fmt: skip
    add_table(filled, "back-room", "t2", players=["Ann", EVIL])
    ship(filled, "back-room", "t2", [Event(a["type"], a) for a in game])
    server = HouseProcess(house_url, tmp_path / "house.log")
    errors: list[str] = []
    try:
        page = _page(browser, PHONE, errors)
        for _ in range(100):  # until the house's worker has derived the tables
            page.goto(server.url + "/players")
            if page.locator("a:text-is('Ann')").count():
                break
            page.wait_for_timeout(200)
        assert page.locator("main script").count() == 0
        page.click("a:text-is('Ann')")
        page.wait_for_selector("#turns")
        assert page.inner_text("#turns") == "2"
        assert page.locator("svg.chart-svg polyline").count() == 1
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"a player's page is {width} px wide on a 390 px phone"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "house-player-390.png"), full_page=True)
        page.goto(server.url + "/players")
        assert EVIL in page.inner_text("main")  # as text
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert errors == []
    finally:
        server.stop()
