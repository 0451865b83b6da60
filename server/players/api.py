"""The players' JSON routes (``/api/players``): reading is public, hiding needs the PIN.

A name in a URL is any spelling of the player's (matched as :mod:`server.players.names`
says); a hidden player is a 404 to everyone (the PIN holder sees them on the pages).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, request, url_for
from werkzeug.exceptions import NotFound

from scoring import games
from server import bodies
from server.api import require_pin
from server.players.service import (
    PlayerPage,
    PlayerService,
    best_roll_json,
    game_json,
    totals_json,
)
from server.services import dicepad

bp = Blueprint("players_api", __name__, url_prefix="/api")

EXTENSION = "dicepad_players"


def players(app: Flask | None = None) -> PlayerService:
    """The app's player service."""
    found: PlayerService = (app or current_app).extensions[EXTENSION]
    return found


def init_app(app: Flask, service: PlayerService | None = None) -> PlayerService:
    """Start the players' rows on ``app``'s tables and register the routes; ``service``: one
    made by the app factory (with ``--house``, one that tells the shipper of hides)."""
    d = dicepad(app)
    if service is None:
        service = PlayerService(d.store, clock=d.config.clock)
    service.attach(d.tables)
    app.extensions[EXTENSION] = service
    app.register_blueprint(bp)
    return service


def title(game: str) -> str:
    try:
        return games.find(game).title
    except (ValueError, ImportError):
        return game


def page_json(page: PlayerPage) -> dict[str, Any]:
    """A player's page as JSON (``GET /api/players/<name>``)."""

    def photo(table: str, seq: int) -> str:
        return url_for("api.get_snapshot", table_id=table, seq=seq)

    latest = []
    for r in page.latest:
        line = game_json(r) | {"title": title(r.game)}
        line["url"] = url_for("pages.scoreboard", table_id=r.table_id)
        latest.append(line)
    return {
        "name": page.name,
        "key": page.key,
        "hidden": page.hidden,
        **totals_json(page.all),
        "best_roll": best_roll_json(page.best, photo),
        "by_game": {g: totals_json(t) for g, t in sorted(page.by_game.items())},
        "last_games": latest,
        "pending": page.pending,
    }


@bp.get("/players")
def list_players() -> Response:
    """Every player shown, most games first: ``name``, ``games``, ``wins``, ``url``."""
    return jsonify(
        [
            {
                "name": p.name,
                "games": p.games,
                "wins": p.wins,
                "url": url_for("players_api.get_player", name=p.player),
            }
            for p in players().listing()
        ]
    )


@bp.get("/players/<path:name>")
def get_player(name: str) -> Response:
    page = players().page(name)
    if page is None:
        raise NotFound(f"no player {name!r}")
    return jsonify(page_json(page))


@bp.post("/players/<path:name>/hide")
def hide_player(name: str) -> Response:
    """Hide a player from the pages (PIN), or show them again with ``{"hidden": false}``."""
    require_pin()
    hidden = bodies.parse_hidden(bodies.json_body(request)) if request.content_length else True
    key = players().set_hidden(name, hidden)
    if key is None:
        raise NotFound(f"no player {name!r}")
    return jsonify({"player": key, "hidden": hidden})
