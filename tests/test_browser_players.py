"""The players' pages and the score chart in a real browser at 390 px (issue 36): headless
Chromium through Playwright against a real ``dicepad serve``. A held-out Bolo game is played
through the API; the player list, Ann's page and the table's board must fit a 390 px phone
without sideways scrolling, show the chart as a drawn SVG (lines inside the viewport), link
names to the player pages, and run without a console error (a CSP violation is one).
Screenshots go to ``artifacts/``. Skipped when Playwright or Chromium is missing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from chromium import CHROMIUM, have_chromium, launched
from serve_process import REPO, Server
from test_players import BOLO_RULES, HELD_OUT

pytestmark = pytest.mark.browser

ARTIFACTS = REPO / "artifacts"
PHONE = {"width": 390, "height": 844}

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright (python) not installed")
if not have_chromium():
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("players")
    s = Server(tmp / "data", tmp / "serve.log")
    yield s
    s.terminate()


@pytest.fixture(scope="module")
def table(server: Server) -> str:
    body = {"game": "bolo", "players": ["Ann", "Bob", "Cy"], "rules": BOLO_RULES}
    table = str(server.call("POST", "/api/tables", body)["table"])
    for action in HELD_OUT:
        server.call("POST", f"/api/tables/{table}/actions", action)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # the players' worker derives in the background
        if len(server.call("GET", "/api/players")) == 3:
            return table
        time.sleep(0.1)
    raise AssertionError("the players' rows never came")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched(sync_api)


def check_page(browser: Any, url: str, shot: str) -> Any:
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url)
    page.wait_for_load_state("networkidle")
    overflow = page.evaluate("document.scrollingElement.scrollWidth")
    assert overflow <= PHONE["width"], f"{url} scrolls sideways: {overflow} px"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{shot}.png"), full_page=True)
    return page, context, errors


def check_chart(page: Any) -> None:
    svg = page.locator("svg.chart-svg").first
    box = svg.bounding_box()
    assert box is not None
    assert 250 <= box["width"] <= PHONE["width"]
    assert box["height"] > 100
    assert page.locator("svg.chart-svg polyline").count() >= 1
    label = page.locator("svg.chart-svg text").first.bounding_box()
    assert label is not None
    assert label["height"] >= 9  # tick labels stay readable once scaled to the phone


def test_players_pages_and_the_chart_fit_a_390px_phone(
    server: Server, table: str, browser: Any
) -> None:
    page, context, errors = check_page(browser, server.url + "/players", "players-390")
    assert page.locator("table.stats-table a", has_text="Bob").count() == 1
    page.click("text=Ann")
    page.wait_for_url("**/players/ann")
    assert page.locator("#games").inner_text() == "1"
    assert page.locator("#turns").inner_text() == "2"
    assert page.locator("#blown").inner_text() == "1"
    context.close()
    assert not errors, errors

    page, context, errors = check_page(browser, server.url + "/players/Ann", "player-390")
    check_chart(page)
    assert page.locator(".how-well .explain").count() == 2
    context.close()
    assert not errors, errors

    page, context, errors = check_page(browser, server.url + f"/t/{table}", "board-chart-390")
    check_chart(page)
    legend = page.locator(".chart .legend a", has_text="Bob")
    assert legend.get_attribute("href") == "/players/bob"
    assert page.locator(".chart .legend li").count() == 3
    context.close()
    assert not errors, errors
