"""The house's players JSON (``/api/house/players``): every table of every Pi; reading is
public, hiding a player from the house pages needs the house PIN (:mod:`server.house.guard`).

The same figures and shape as a table server's ``/api/players`` (:mod:`server.players.api`),
plus each game's ``house_name``, and links that go to the table's own scoreboard and photo
on its Pi. A name in a URL is any spelling of the player's; a player hidden by the house PIN
or at any member table server is a 404, except to the house PIN holder asking ``?hidden=1``
(as the wall's ``/api/house/records?hidden=1``), who sees who hid them: ``hidden`` (the
house) and ``hidden_at_tables`` (those table servers).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request, url_for
from werkzeug.exceptions import NotFound

from server import bodies
from server.house import guard
from server.house.api import flag_arg
from server.house.player_reads import HousePlayerPage
from server.house.values import game_title
from server.players.service import best_roll_json, game_json, totals_json

bp = Blueprint("house_players_api", __name__, url_prefix="/api/house")


def page_json(page: HousePlayerPage) -> dict[str, Any]:
    """A player's house page as JSON (``GET /api/house/players/<name>``)."""
    best = None
    if page.best is not None:
        best = best_roll_json(page.best.row, lambda _t, _s: "") | {
            "house_name": page.best.house_name,
            "photo": page.best.photo(page.best.row.best_roll_seq),
        }
    latest = [
        game_json(g.row)
        | {"title": game_title(g.row.game), "house_name": g.house_name, "url": g.scoreboard}
        for g in page.latest
    ]
    return {
        "name": page.name,
        "key": page.key,
        "hidden": page.hidden,
        "hidden_at_tables": list(page.hidden_at_tables),
        **totals_json(page.all),
        "best_roll": best,
        "by_game": {g: totals_json(t) for g, t in sorted(page.by_game.items())},
        "last_games": latest,
        "pending": page.pending,
    }


def find(name: str, *, include_hidden: bool = False) -> HousePlayerPage | None:
    parts = guard.parts()
    return parts.player_reads.page(
        name, pending=parts.players.pending(), include_hidden=include_hidden
    )


def working_out() -> str | None:
    """The words "still working out N tables" while the worker has tables to derive, else None: the
    worker derives a table's rows after its batch ships, so a player whose first game just
    ended is known a moment later, and a page that finds nobody says so."""
    pending = guard.parts().players.pending()
    if not pending:
        return None
    return f"still working out {pending} {'table' if pending == 1 else 'tables'}"


def not_yet(name: str) -> str:
    """Why ``name`` has no page: nobody of that name, or not yet (:func:`working_out`)."""
    busy = working_out()
    if busy is None:
        return f"no player {name!r} in the house"
    return f"no player {name!r} in the house yet: {busy}"


def _include_hidden() -> bool:
    """``?hidden=1``: the house PIN holder's view, hidden players too (401 without the PIN)."""
    wanted = flag_arg(request.args, "hidden")
    if wanted:
        guard.require_pin()
    return wanted


@bp.get("/players")
def list_players() -> Response:
    """Every player shown, most finished games first: ``name``, ``games``, ``wins``, ``url``,
    ``hidden``, ``hidden_at_tables``; ``?hidden=1`` (house PIN) adds the hidden ones."""
    hidden = _include_hidden()
    return jsonify(
        [
            {
                "name": p.name,
                "games": p.games,
                "wins": p.wins,
                "url": url_for(
                    "house_players_api.get_player", name=p.player, hidden="1" if hidden else None
                ),
                "hidden": p.hidden,
                "hidden_at_tables": list(p.hidden_at_tables),
            }
            for p in guard.parts().player_reads.listing(include_hidden=hidden)
        ]
    )


@bp.get("/players/<path:name>")
def get_player(name: str) -> Response:
    page = find(name, include_hidden=_include_hidden())
    if page is None:
        raise NotFound(not_yet(name))
    return jsonify(page_json(page))


@bp.post("/players/<path:name>/hide")
def hide_player(name: str) -> Response:
    """Hide a player from the house pages (house PIN), or show them again with
    ``{"hidden": false}``."""
    guard.require_pin()
    hidden = bodies.parse_hidden(bodies.json_body(request)) if request.content_length else True
    key = guard.parts().player_reads.set_hidden(name, hidden)
    if key is None:
        raise NotFound(f"no player {name!r} in the house")
    return jsonify({"player": key, "hidden": hidden})
