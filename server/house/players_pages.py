"""The house's players pages (``/players``, ``/players/<name>``) over every table of every
Pi, and the house PIN holder's form hiding a player (it carries the CSRF token).

The table server's pages in the house's frame: the same figures (:mod:`.players_api`), the
same server-drawn SVG chart (:mod:`server.pages.chart`, ``_chart.html``: no script, no inline
style), each game naming its table server and linking to its own scoreboard. Jinja escapes
every name people typed.
"""

from __future__ import annotations

from flask import Blueprint, make_response, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from server.house import guard
from server.house.players_api import find, page_json, working_out
from server.house.values import game_title
from server.pages import chart
from server.players.series import ScoreChart, Series

bp = Blueprint("house_players", __name__)

CHART_GAMES = 5  #: the latest games drawn on a player's chart


def _missing(name: str) -> Response:
    message = f"Nobody called {name!r} has played in this house."
    busy = working_out()
    if busy is not None:  # a game that just ended is derived a moment after its batch ships
        message = (
            f"Nobody called {name!r} is known to this house yet: it is {busy}. A game that"
            " has just ended shows here when that is done."
        )
    html = render_template("house_error.html", title="No such player", message=message)
    return make_response(html, 404)


@bp.get("/players")
def index() -> str:
    hidden = request.args.get("hidden") == "1" and guard.logged_in()
    rows = guard.parts().player_reads.listing(include_hidden=hidden)
    return render_template(
        "players.html",
        players=rows,
        show_hidden=hidden,
        layout="house_base.html",
        bp="house_players",
        heading="Players of the house",
        nobody="Nobody has played in this house yet.",
    )


@bp.get("/players/<path:name>")
def player(name: str) -> Response | str:
    page = find(name, include_hidden=guard.logged_in())
    if page is None:
        return _missing(name)
    games = [g for g in page.latest if len(g.row.rounds) > 1][:CHART_GAMES]
    drawn = None
    if games:
        keys = [f"{g.house_name}/{g.row.table_id}" for g in games]
        lines = tuple(
            Series(k, g.row.rounds, player=False) for k, g in zip(keys, games, strict=True)
        )
        labels = [
            f"{game_title(g.row.game)} {g.row.at[:10]} ({g.house_name} · {g.row.table_id})"
            for g in games
        ]
        drawn = chart.draw(ScoreChart(lines, "score"), bold=keys[0], names=labels)
    return render_template(
        "player.html", data=page_json(page), drawn=drawn, title=game_title, house=True
    )


@bp.post("/players/<path:name>/hide")
def hide(name: str) -> Response:
    guard.check_form()
    if not guard.logged_in():
        target = url_for("house_players.player", name=name)
        return redirect(url_for("house_pages.login", next=target))
    hidden = request.form.get("hidden", "1") != "0"
    key = guard.parts().player_reads.set_hidden(name, hidden)
    if key is None:
        return _missing(name)
    if hidden:
        return redirect(url_for("house_players.index"))
    return redirect(url_for("house_players.player", name=key))
