"""The phone pages in a real browser: headless Chromium (Debian's ``chromium``) driven by
Python Playwright against a real ``dicepad serve`` (waitress) on 127.0.0.1.

Two "phones" (360 x 740) watch a scoreboard while a third client posts a roll through the
API: both show it within a second. The PIN holder logs in through the page, fixes a die,
sees an illegal fix refused with the rule's message, and undoes. Screenshots of every
game's phone scoreboard, the kiosk, the table list, the new-game form and the wall are
written to ``artifacts/``. Every page must run without a console error (a Content-Security-
Policy violation is one). Skipped, with the reason, when Playwright or Chromium is missing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import CHROMIUM, have_chromium, launched
from serve_process import PIN, REPO, Server

pytestmark = pytest.mark.browser

ARTIFACTS = REPO / "artifacts"
DATA = Path(__file__).parent / "data"
PHONE = {"width": 360, "height": 740}

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright (python) not installed")
if not have_chromium():
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)

# (game, line-up, house rules, script in tests/data, actions of it to play)
GAMES: list[tuple[str, dict[str, Any], dict[str, Any] | None, str, int]] = [
    ("you-blew-it", {"teams": {"Reds": ["Ann", "Al"], "Blues": ["Bob", "Bea"]}}, None,
     "ybi_sample_game.jsonl", 26),
    ("bolo", {"players": ["Ann", "Bob"]}, None, "bolo_board_game.jsonl", 12),
    ("bar-dice", {"players": ["Ann", "Bob", "Cy", "Dee"]}, None, "bardice_four_players.jsonl", 46),
    ("gords", {"players": ["Ann", "Bob", "Cy"]}, None, "gords_three_players.jsonl", 14),
]  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("browser")
    s = Server(tmp / "data", tmp / "serve.log", max_clients=16)
    yield s
    s.terminate()


@pytest.fixture(scope="module")
def tables(server: Server) -> dict[str, str]:
    """One table per game, played part-way through its sample script."""
    out = {}
    for game, lineup, rules, script, count in GAMES:
        body: dict[str, Any] = {"game": game, **lineup}
        if rules:
            body["rules"] = rules
        table = server.call("POST", "/api/tables", body)["table"]
        lines = (DATA / script).read_text().splitlines()[:count]
        for line in lines:
            server.call("POST", f"/api/tables/{table}/actions", json.loads(line))
        out[game] = table
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched(sync_api)


class Phone:
    """One browser context (its own cookies) with one page; console errors collected."""

    def __init__(self, browser: Any, base: str) -> None:
        self.context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
        self.page = self.context.new_page()
        self.base = base
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))

    def _console(self, msg: Any) -> None:
        if msg.type == "error":
            self.errors.append(msg.text)

    def open(self, path: str) -> Any:
        self.page.goto(self.base + path)
        return self.page

    def wait_live(self) -> None:
        self.page.wait_for_selector("#live.on", timeout=5000)

    def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def login(self) -> None:
        self.open("/login")
        self.page.fill("input[name=pin]", PIN)
        self.page.click("form.stack button[type=submit]")
        self.page.wait_for_url(self.base + "/")

    def close(self, *, expected: tuple[str, ...] = ()) -> None:
        """Close; every console error must be one of ``expected`` (substrings)."""
        unexpected = [e for e in self.errors if not any(x in e for x in expected)]
        assert not unexpected, unexpected
        self.context.close()


def _seq_shown(page: Any) -> int:
    return int(page.get_attribute("#board-body .board-part", "data-seq"))


def test_two_phones_see_a_roll_posted_by_a_third_client_within_a_second(
    server: Server, browser: Any
) -> None:
    table = server.call("POST", "/api/tables", {"game": "bolo", "players": ["Ann", "Bob"]})
    table_id = table["table"]
    phones = [Phone(browser, server.url) for _ in range(2)]
    for phone in phones:
        phone.open(f"/t/{table_id}")
        phone.wait_live()
        assert "Ann: roll 5 dice" in phone.page.inner_text("#expecting")
    posted = time.monotonic()
    entry = server.call(
        "POST", f"/api/tables/{table_id}/actions", {"type": "roll", "dice": [1, 1, 1, 5, 2]}
    )
    for phone in phones:
        phone.page.wait_for_selector(
            f'#board-body .board-part[data-seq="{entry["seq"]}"]', timeout=1000
        )
        dice = phone.page.eval_on_selector_all(
            ".turn .roll .die", "els => els.map(e => e.getAttribute('aria-label'))"
        )
        assert sorted(dice) == ["1", "1", "1", "2", "5"]
    assert time.monotonic() - posted < 1.0
    for phone in phones:
        phone.close()


def test_a_phone_refused_by_a_full_feed_follows_by_polling(tmp_path: Path, browser: Any) -> None:
    small = Server(tmp_path / "data", tmp_path / "serve.log", max_clients=1)
    try:
        table_id = small.call("POST", "/api/tables", {"game": "bolo", "players": ["Ann", "Bob"]})[
            "table"
        ]
        first, second = Phone(browser, small.url), Phone(browser, small.url)
        first.open(f"/t/{table_id}")
        first.wait_live()  # holds the only feed slot
        second.open(f"/t/{table_id}")
        second.page.wait_for_selector("#live.polling", timeout=5000)
        small.call("POST", f"/api/tables/{table_id}/actions", {"type": "roll", "dice": [5] * 5})
        for phone in (first, second):  # polling every 2 s
            phone.page.wait_for_selector('#board-body .board-part[data-seq="1"]', timeout=4000)
        # the first phone leaves: its place is free once the server's keep-alive (15 s) finds
        # it gone, and the second phone, asking again every 10 s, goes live, polling no more
        first.close()
        second.page.wait_for_selector("#live.on", timeout=40000)
        small.call("POST", f"/api/tables/{table_id}/actions", {"type": "undo"})
        second.page.wait_for_selector('#board-body .board-part[data-seq="2"]', timeout=1500)
        assert second.page.inner_text("#live") == "live"
        second.close(expected=("status of 503",))  # the refused event stream
    finally:
        small.terminate()


def test_dice_picked_for_a_reroll_outlive_a_redraw_for_the_camera(
    tmp_path: Path, browser: Any
) -> None:
    """A camera notice redraws the board without the game moving; the dice tapped for a
    re-roll must stay tapped (none tapped means all: "Cocked" then re-rolled every die). A
    new log entry clears them. The keeper polls (a watcher holds the only feed slot), and
    the test makes the shown pad state differ from the server's, which is what a notice does."""
    small = Server(tmp_path / "data", tmp_path / "serve.log", max_clients=1)
    try:
        table_id = small.call(
            "POST", "/api/tables", {"game": "you-blew-it", "teams": {"A": ["Ann"], "B": ["Bob"]}}
        )["table"]
        actions = f"/api/tables/{table_id}/actions"
        small.call("POST", actions, {"type": "roll", "dice": [1, 1, 1, 5, 2, 3]})
        watcher, keeper = Phone(browser, small.url), Phone(browser, small.url)
        watcher.open(f"/t/{table_id}")
        watcher.wait_live()
        keeper.login()
        page = keeper.open(f"/t/{table_id}")
        page.wait_for_selector("#live.polling", timeout=5000)
        page.click('#reroll [data-reroll-pick="1"] >> nth=1')  # the second of three 1s
        page.evaluate(
            "document.querySelector('#board-body .board-part').dataset.pad = '{\"x\": 1}'"
        )
        deadline = time.monotonic() + 5  # redrawn from the server's HTML by the next poll (2 s)
        while page.get_attribute("#board-body .board-part", "data-pad") == '{"x": 1}':
            assert time.monotonic() < deadline, "the board was not redrawn"
            page.wait_for_timeout(100)
        assert _seq_shown(page) == 1
        picked = page.locator("#reroll [data-reroll-pick]")
        assert "selected" in (picked.nth(1).get_attribute("class") or "")
        assert page.locator("#reroll .selected[data-reroll-pick]").count() == 1
        page.click('#reroll [data-reroll="cocked"]')
        page.wait_for_selector('#board-body .board-part[data-seq="2"]')
        assert "Re-roll 1 die" in page.inner_text(".status .reroll")
        # a new entry (another phone's fix of the roll) clears what was tapped: other dice
        small.call("POST", actions, {"type": "undo"})
        page.wait_for_selector('#board-body .board-part[data-seq="3"]', timeout=5000)
        page.click('#reroll [data-reroll-pick="5"]')
        small.call("POST", actions, {"type": "fix", "dice": [1, 1, 1, 5, 2, 4]})
        page.wait_for_selector('#board-body .board-part[data-seq="4"]', timeout=5000)
        assert page.locator("#reroll .selected[data-reroll-pick]").count() == 0
        watcher.close()
        keeper.close(expected=("status of 503",))  # the refused event stream
    finally:
        small.terminate()


def test_the_pin_holder_fixes_a_die_is_refused_an_illegal_fix_undoes_and_rerolls(
    server: Server, browser: Any
) -> None:
    table_id = server.call(
        "POST", "/api/tables", {"game": "you-blew-it", "teams": {"A": ["Ann"], "B": ["Bob"]}}
    )["table"]
    keeper = Phone(browser, server.url)
    keeper.login()
    page = keeper.open(f"/t/{table_id}")
    keeper.wait_live()
    # manual entry: tap six faces, send the roll
    for face in (1, 1, 1, 5, 2, 3):
        page.click(f'#entry [data-face="{face}"]')
    assert page.inner_text("#tray-count") == "6 / 6"
    page.click("#send-roll")
    page.wait_for_selector('#board-body .board-part[data-seq="1"]')
    # the camera misread the 3 as a 6? tap the die of the last roll, pick its value
    page.click('#fix [data-fix-index="5"]')
    page.click('#fix-picker [data-fix-value="6"]')
    page.wait_for_selector('#board-body .board-part[data-seq="2"]')
    state = server.call("GET", f"/api/tables/{table_id}")["state"]
    assert sorted(state["current_roll"]) == [1, 1, 1, 2, 5, 6]
    # keep the triple and the five through the page's keep buttons
    page.click(".keeps .keep >> nth=0")
    page.wait_for_selector('#board-body .board-part[data-seq="3"]')
    assert server.call("GET", f"/api/tables/{table_id}")["state"]["turn_points"] == 1050
    # a fix that makes the keep impossible is refused with the rule's message, nothing changes
    page.click('#fix [data-fix-index="0"]')
    page.click('#fix-picker [data-fix-value="4"]')
    page.wait_for_selector("#message:not([hidden])")
    assert page.inner_text("#message").strip()
    assert _seq_shown(page) == 3
    keeper.shot("control-refused")
    # undo through the page: the keep is taken back
    page.click('button[data-action=\'{"type": "undo"}\']')
    page.wait_for_selector('#board-body .board-part[data-seq="4"]')
    view = server.call("GET", f"/api/tables/{table_id}")
    assert view["state"]["turn_points"] == 0
    assert sorted(view["state"]["current_roll"]) == [1, 1, 1, 2, 5, 6]
    assert page.is_hidden("#message")
    keeper.shot("control-after-undo")
    # one die cocked: tap it, send the re-roll, throw it again
    page.click('#reroll [data-reroll-pick="6"]')
    page.click('#reroll [data-reroll="cocked"]')
    page.wait_for_selector('#board-body .board-part[data-seq="5"]')
    assert "Re-roll 1 die" in page.inner_text(".status .reroll")
    page.click('#entry [data-face="3"]')
    page.click("#send-roll")
    page.wait_for_selector('#board-body .board-part[data-seq="6"]')
    state = server.call("GET", f"/api/tables/{table_id}")["state"]
    assert sorted(state["current_roll"]) == [1, 1, 1, 2, 3, 5]
    keeper.close(expected=("status of 409",))  # the refused fix, as the browser logs it


def test_the_pin_holder_bids_calls_and_reveals_through_the_page(
    server: Server, browser: Any
) -> None:
    table_id = server.call("POST", "/api/tables", {"game": "gords", "players": ["Ann", "Bob"]})[
        "table"
    ]
    keeper = Phone(browser, server.url)
    keeper.login()
    page = keeper.open(f"/t/{table_id}")
    keeper.wait_live()
    page.fill("#bid-form input[name=count]", "3")
    page.click('#bid-form [data-bid-face="4"]')
    page.click("#bid-form button[type=submit]")
    page.wait_for_selector('#board-body .board-part[data-seq="1"]')
    bid = server.call("GET", f"/api/tables/{table_id}")["state"]["bid"]
    assert (bid["player"], bid["count"], bid["face"]) == ("Ann", 3, 4)
    page.click('button[data-action=\'{"type": "call"}\']')
    page.wait_for_selector('#board-body .board-part[data-seq="2"]')
    assert "reveal all 10 dice" in page.inner_text("#expecting")
    for face in (4, 4, 1, 2, 3, 5, 6, 6, 2, 3):
        page.click(f'#entry [data-face="{face}"]')
    page.click("#send-roll")
    page.wait_for_selector('#board-body .board-part[data-seq="3"]')
    result = server.call("GET", f"/api/tables/{table_id}")["state"]["results"][-1]
    assert result["matching"] == 3
    keeper.close()


LONG = "W" * 40  # the longest name the API takes, without a space to wrap at

NO_OVERFLOW = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
LINES_OF_LAST_TEXT = """el => {
  const range = document.createRange();
  range.selectNodeContents(el.lastChild);
  const tops = Array.from(range.getClientRects()).filter((r) => r.width > 1).map((r) => r.top);
  return new Set(tops).size;
}"""


def test_a_forty_character_name_does_not_widen_the_page_past_the_phone(
    server: Server, browser: Any
) -> None:
    """Whose turn, the turn box, Bar Dice's chips, Gords' bid, the table cards: a long name
    wraps (even mid-word) inside the screen; the points beside it stay whole."""
    plays: list[tuple[str, list[dict[str, Any]]]] = [
        ("bolo", [{"type": "roll", "dice": [2] * 5}, {"type": "keep", "dice": [2] * 5}]),
        ("bar-dice", [{"type": "lineup", "order": [LONG, "Bob"]},
                      {"type": "roll", "dice": [6, 6, 6, 1, 2]}, {"type": "stand"}]),
        ("gords", [{"type": "bid", "count": 2, "face": 3}]),
    ]  # fmt: skip
    phone = Phone(browser, server.url)
    phone.page.set_viewport_size({"width": 390, "height": 844})
    for game, actions in plays:
        table_id = server.call("POST", "/api/tables", {"game": game, "players": [LONG, "Bob"]})[
            "table"
        ]
        for action in actions:
            server.call("POST", f"/api/tables/{table_id}/actions", action)
        for path in (f"/t/{table_id}", f"/t/{table_id}/kiosk"):
            page = phone.open(path)
            phone.wait_live()
            assert page.evaluate(NO_OVERFLOW), (game, path)
        if game == "bolo":  # "turn 5,000" beside the name: the number on one line
            phone.open(f"/t/{table_id}")
            lines = page.eval_on_selector(".turn-head .points", LINES_OF_LAST_TEXT)
            assert lines == 1
    phone.open("/")
    assert phone.page.evaluate(NO_OVERFLOW)
    phone.close()


def test_screenshots_of_every_page(server: Server, browser: Any, tables: dict[str, str]) -> None:
    phone = Phone(browser, server.url)
    for game, table_id in tables.items():
        page = phone.open(f"/t/{table_id}")
        phone.wait_live()
        assert page.inner_text("#expecting, .status .winner")
        phone.shot(f"board-{game}")
    phone.open("/")
    assert phone.page.locator(".card").count() >= len(tables)
    phone.shot("tables")
    phone.open("/records")
    assert "Ann" in phone.page.inner_text(".high-rollers")
    phone.shot("wall")
    keeper = Phone(browser, server.url)
    keeper.login()
    for game, table_id in tables.items():
        keeper.open(f"/t/{table_id}")
        keeper.wait_live()
        assert keeper.page.is_visible(".controls")
        keeper.shot(f"control-{game}")
    keeper.open("/new")
    keeper.page.select_option("#game-select", "bolo")
    assert keeper.page.is_visible('fieldset[data-game="bolo"]')
    assert keeper.page.is_hidden('fieldset[data-game="gords"]')
    keeper.shot("new-game")
    keeper.page.fill("textarea[name=players]", "Ann\nBob\n<b>Cy</b>")
    keeper.page.click("#new-game button[type=submit]")
    keeper.page.wait_for_selector("#board")
    assert "<b>Cy</b>" in keeper.page.inner_text(".scores")
    keeper.shot("control-bolo-new")
    kiosk = Phone(browser, server.url)
    kiosk.context.close()
    kiosk.context = browser.new_context(viewport={"width": 1280, "height": 800})
    kiosk.page = kiosk.context.new_page()
    kiosk.page.on("console", kiosk._console)
    kiosk.open(f"/t/{tables['you-blew-it']}/kiosk")
    kiosk.wait_live()
    kiosk.shot("kiosk")
    for p in (phone, keeper, kiosk):
        p.close()
