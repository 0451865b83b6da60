"""The players' pages (``/players``, ``/players/<name>``), the chart under every table's
board, and hiding a player (the PIN holder, by a form carrying the CSRF token).

Reads go through :class:`server.players.service.PlayerService` (indexed aggregates over the
derived rows, never a replay); the table chart reads the view the board already holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Flask, make_response, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from server.pages import chart
from server.pages.routes import logged_in
from server.pages.security import check_form
from server.players.api import page_json, players, title
from server.players.names import player_key
from server.players.series import ScoreChart, Series, score_chart

bp = Blueprint("players", __name__)

CHART_GAMES = 5  #: the latest games drawn on a player's chart


def init_app(app: Flask) -> None:
    app.add_template_global(table_chart)
    app.register_blueprint(bp)


def player_url(name: str) -> str:
    return url_for("players.player", name=player_key(name))


def table_chart(view: Mapping[str, Any]) -> chart.Drawn | None:
    """The chart of a table's view: its score by round, names linked to their pages."""
    found = score_chart(view["game"], view["state"])
    return chart.draw(found, url=player_url) if found is not None else None


def _show_hidden() -> bool:
    return request.args.get("hidden") == "1" and logged_in()


def _missing(name: str) -> Response:
    html = render_template(
        "error.html",
        title="No such player",
        message=f"Nobody called {name!r} has played here.",
        back=url_for("players.index"),
    )
    return make_response(html, 404)


@bp.get("/players")
def index() -> str:
    hidden = _show_hidden()
    return render_template(
        "players.html",
        players=players().listing(include_hidden=hidden),
        show_hidden=hidden,
        layout="base.html",
        bp="players",
        heading="Players",
        nobody="Nobody has played yet.",
    )


@bp.get("/players/<path:name>")
def player(name: str) -> Response | str:
    page = players().page(name, include_hidden=logged_in())
    if page is None:
        return _missing(name)
    data = page_json(page)
    games = [g for g in page.latest if len(g.rounds) > 1][:CHART_GAMES]
    drawn = None
    if games:
        lines = tuple(Series(g.table_id, g.rounds, player=False) for g in games)
        labels = [f"{title(g.game)} {g.at[:10]} ({g.table_id})" for g in games]
        drawn = chart.draw(ScoreChart(lines, "score"), bold=games[0].table_id, names=labels)
    return render_template(
        "player.html", page=page, data=data, drawn=drawn, title=title, house=False
    )


@bp.post("/players/<path:name>/hide")
def hide(name: str) -> Response:
    check_form()
    if not logged_in():
        return redirect(url_for("pages.login", next=url_for("players.player", name=name)))
    hidden = request.form.get("hidden", "1") != "0"
    key = players().set_hidden(name, hidden)
    if key is None:
        return _missing(name)
    target = url_for("players.player", name=key) if not hidden else url_for("players.index")
    return redirect(target)
