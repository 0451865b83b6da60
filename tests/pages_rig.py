"""Shared helpers of the page tests (``test_pages*.py``): sample games, HTML, strict markup."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from flask.testing import FlaskClient
from server_app import AUTH, create_table

DATA = Path(__file__).parent / "data"
JPEG = b"\xff\xd8\xff\xe0a-roll"

SCRIPTS: dict[str, tuple[dict[str, Any], str, int]] = {
    "you-blew-it": ({"teams": {"Reds": ["Ann", "Al"], "Blues": ["Bob", "Bea"]}},
                    "ybi_sample_game.jsonl", 26),
    "bolo": ({"players": ["Ann", "Bob"]}, "bolo_board_game.jsonl", 12),
    "bar-dice": ({"players": ["Ann", "Bob", "Cy", "Dee"]}, "bardice_four_players.jsonl", 46),
    "gords": ({"players": ["Ann", "Bob", "Cy"]}, "gords_three_players.jsonl", 14),
}  # fmt: skip


def new_table(client: FlaskClient, game: str, **lineup: Any) -> str:
    return create_table(client, {"game": game, **lineup})


def act(client: FlaskClient, table: str, action: dict[str, Any], status: int = 201) -> Any:
    r = client.post(f"/api/tables/{table}/actions", json=action, headers=AUTH)
    assert r.status_code == status, r.json
    return r.json


def played(client: FlaskClient, game: str, count: int | None = None) -> str:
    """A table of ``game`` played part-way through its sample script (``count`` actions)."""
    lineup, script, part = SCRIPTS[game]
    table = new_table(client, game, **lineup)
    for line in (DATA / script).read_text().splitlines()[: count or part]:
        act(client, table, json.loads(line))
    return table


def html(r: Any, status: int = 200) -> str:
    assert r.status_code == status, (r.status_code, r.data[:500])
    text: str = r.get_data(as_text=True)
    return text


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
EVENT_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)
STYLE_ATTR = re.compile(r"<[^>]+\sstyle\s*=", re.I)


def assert_strict_markup(page: str) -> None:
    """No inline script, no event-handler attribute, no inline style (CSP would block them)."""
    assert not INLINE_SCRIPT.search(page)
    assert not EVENT_HANDLER.search(page)
    assert not STYLE_ATTR.search(page)
