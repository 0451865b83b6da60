"""The house pages: every table of every house name live (``/``), the house wall
(``/records``), and the house PIN's log-in. Rendered by Jinja (autoescaped: player and house
names are whatever people typed); one small script (``house.js``) keeps the board live from
``/api/house/events`` and builds what it adds with ``textContent``, never markup. The pages
work without it, and ``?kiosk=1`` draws them large for a TV over the bar.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Blueprint, Response, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response as BaseResponse

from scoring import games
from server.auth_errors import AuthError, LockedOutError
from server.errors import BodyError
from server.hardening import rotate_csrf_token
from server.house import guard
from server.house.api import checked, game_arg, text_arg
from server.house.values import HouseRecord, TableLine, game_title
from server.records import HIGH_ROLLER

bp = Blueprint("house_pages", __name__)

#: the wall's lists per game, as on a table server's wall: (title, kinds); the rest: honours
LISTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Biggest rolls", ("roll", HIGH_ROLLER)),
    ("Biggest turns", ("turn",)),
    ("Best hands", ("hand",)),
)
HONOURS = "Honours"
ROWS_PER_LIST = 10


@dataclass(frozen=True)
class GameWall:
    name: str
    title: str
    lists: tuple[tuple[str, tuple[HouseRecord, ...]], ...]


def group(
    rows: list[HouseRecord], kind: str | None
) -> tuple[tuple[str, tuple[HouseRecord, ...]], ...]:
    """One game's records (biggest first) in the wall's lists; empty lists dropped."""
    rows = sorted(rows, key=lambda r: (-r.points, r.at))
    if kind is not None:
        return (
            ((kind.replace("_", " ").capitalize(), tuple(rows[: ROWS_PER_LIST * 3])),)
            if rows
            else ()
        )
    listed = {k for _, kinds in LISTS for k in kinds}
    out = [
        (title, tuple(r for r in rows if r.kind in kinds)[:ROWS_PER_LIST]) for title, kinds in LISTS
    ]
    out.append((HONOURS, tuple(r for r in rows if r.kind not in listed)[: ROWS_PER_LIST * 3]))
    return tuple((title, found) for title, found in out if found)


def _kiosk() -> bool:
    return request.args.get("kiosk") == "1"


# -- the board --------------------------------------------------------------------------------


@bp.get("/")
def board() -> str:
    lines = guard.parts().reads.board()
    playing = [t for t in lines if not t.over and not t.idle]
    idle = [t for t in lines if t.idle]
    over = [t for t in lines if t.over]
    return render_template(
        "house.html",
        groups=(
            ("playing", "Playing now", playing),
            ("idle", "Idle", idle),
            ("over", "Finished", over),
        ),
        kiosk=_kiosk(),
    )


def card_players(line: TableLine) -> str:
    teams = line.setup.get("teams")
    if isinstance(teams, dict):
        return " · ".join(
            f"{team}: {', '.join(map(str, members))}" for team, members in teams.items()
        )
    return ", ".join(line.players)


bp.add_app_template_filter(card_players, "card_players")


# -- the wall ---------------------------------------------------------------------------------


def _show_hidden() -> bool:
    return request.args.get("hidden") == "1" and guard.logged_in()


@bp.get("/records")
def records() -> str:
    args = request.args
    game, kind = game_arg(args), text_arg(args, "kind")
    house_name = text_arg(args, "house_name")
    hidden = _show_hidden()
    reads = guard.parts().reads
    rows = reads.wall(include_hidden=hidden, house_name=house_name)
    walls = []
    for name in games.NAMES:
        if game is not None and name != game:
            continue
        mine = [r for r in rows if r.game == name and (kind is None or r.kind == kind)]
        walls.append(GameWall(name, game_title(name), group(mine, kind)))
    return render_template(
        "house_records.html",
        walls=walls,
        show_hidden=hidden,
        game=game,
        kind=kind,
        house_name=house_name,
        house_names=[n for n, _ in reads.house_names()],
        games=[(n, game_title(n)) for n in games.NAMES],
        kiosk=_kiosk(),
    )


@bp.post("/records/<house_name>/<record_id>/hide")
def hide_record(house_name: str, record_id: str) -> BaseResponse:
    guard.check_form()
    if not guard.logged_in():
        return redirect(url_for("house_pages.login", next=url_for("house_pages.records")))
    hidden = request.form.get("hidden", "1") != "0"
    name, rid = checked(house_name, "house name"), checked(record_id, "record id")
    guard.parts().reads.set_hidden(name, rid, hidden)
    return redirect(_local(request.form.get("next")) or url_for("house_pages.records"))


# -- the PIN ----------------------------------------------------------------------------------


def _local(target: str | None) -> str | None:
    """A redirect target only if it stays on this site (no ``//host``, no control chars)."""
    if (
        target
        and target.isprintable()
        and target.startswith("/")
        and not target.startswith(("//", "/\\"))
    ):
        return target
    return None


@bp.get("/login")
def login() -> str:
    return render_template(
        "house_login.html", next=_local(request.args.get("next")) or "/", error=None
    )


@bp.post("/login")
def login_post() -> BaseResponse | tuple[str, int]:
    guard.check_form()
    target = _local(request.form.get("next")) or "/"
    pin = (request.form.get("pin") or "").strip()
    try:
        if not pin:
            raise BodyError("enter the house PIN")
        version = guard.parts().pin.attempt(guard.address(), pin)
    except (AuthError, BodyError) as exc:
        status = exc.status if isinstance(exc, AuthError) else 400
        message = str(exc)
        if isinstance(exc, LockedOutError):
            message = f"Too many wrong PINs: try again in {exc.retry_after} s."
        return render_template("house_login.html", next=target, error=message), status
    guard.log_in(version)
    rotate_csrf_token()
    return redirect(target)


@bp.post("/logout")
def logout() -> BaseResponse:
    guard.check_form()
    guard.log_out()
    return redirect(_local(request.form.get("next")) or "/")


@bp.get("/favicon.ico")
def favicon() -> BaseResponse:
    return redirect(url_for("static", filename="favicon.svg"))


@bp.after_request
def _no_store_for_pin_holder(response: Response) -> Response:
    """A page drawn for the PIN holder carries its controls: never cached anywhere."""
    if guard.TOKEN_KEY in session:
        response.headers["Cache-Control"] = "no-store"
    return response
