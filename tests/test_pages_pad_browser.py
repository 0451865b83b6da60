"""In headless Chromium: a phone follows the camera and puts its table on the pad, live."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pages_pad_rig import (
    Rig,
    fixture_rig,  # noqa: F401 (the rig fixture)
    new_table,
    reading,
)
from server_app import PIN
from werkzeug.serving import make_server

from hardware.supervisor import CameraState
from server.services import dicepad

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
