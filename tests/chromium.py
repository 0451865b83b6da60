"""The headless Chromium the browser tests drive: Debian's, through Playwright (one launch
recipe for every browser test, so a flag a test needs is never missing from another)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("DICEPAD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def have_chromium() -> bool:
    return Path(CHROMIUM).exists() or shutil.which("chromium") is not None


def launched(sync_api: Any) -> Iterator[Any]:
    """A started browser for a fixture to yield from; a broken browser install is a skip,
    not a failure."""
    with sync_api.sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        except Exception as exc:
            pytest.skip(f"Chromium did not start: {exc}")
        yield b
        b.close()
