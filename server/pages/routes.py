"""The page routes: each one reads through the same services as the API and renders a
template; every POST here is a form carrying the session's CSRF token."""

from __future__ import annotations

from typing import Any

from flask import (
    Blueprint,
    Response,
    jsonify,
    make_response,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from werkzeug.wrappers import Response as BaseResponse

from scoring import games
from scoring.actions import Reveal, Roll
from scoring.errors import IllegalActionError, RulesError
from server import bodies
from server.api import SESSION_KEY, pad_answer, pad_photo
from server.auth_errors import AuthError, LockedOutError
from server.errors import BodyError
from server.hardening import CsrfError, csrf_token, rotate_csrf_token
from server.pages import ask, board, coach, forms, links, wall
from server.pages.cache import render_cache
from server.pages.security import check_form
from server.records import RecordNotFoundError
from server.services import dicepad
from server.table_values import UnknownTableError

bp = Blueprint("pages", __name__)

GAME_PARTIALS = {
    "you-blew-it": "you_blew_it",
    "bolo": "bolo",
    "bar-dice": "bar_dice",
    "gords": "gords",
}


def logged_in() -> bool:
    return dicepad().auth.session_ok(session.get(SESSION_KEY))


@bp.app_context_processor
def _globals() -> dict[str, Any]:
    return {"logged_in": logged_in, "game_partials": GAME_PARTIALS}


def _error_page(status: int, title: str, message: str, back: str | None = None) -> Response:
    html = render_template("error.html", title=title, message=message, back=back)
    return make_response(html, status)


@bp.errorhandler(UnknownTableError)
def _unknown_table(exc: UnknownTableError) -> Response:
    return _error_page(404, "No such table", str(exc.args[0]) if exc.args else "not found")


@bp.errorhandler(RecordNotFoundError)
def _unknown_record(exc: RecordNotFoundError) -> Response:
    return _error_page(404, "No such record", str(exc.args[0]) if exc.args else "not found")


@bp.errorhandler(CsrfError)
def _csrf(exc: CsrfError) -> Response:
    return _error_page(403, "Please reload", exc.description or "")


def _local(target: str | None) -> str:
    """A redirect target only if it stays on this site. No control characters: browsers
    drop tabs and newlines from a URL, so slash-tab-slash-evil would be ``//evil``."""
    if (
        target
        and target.isprintable()
        and target.startswith("/")
        and not target.startswith(("//", "/\\"))
    ):
        return target
    return url_for("pages.index")


def _to_login() -> BaseResponse:
    return redirect(url_for("pages.login", next=request.full_path.rstrip("?")))


# -- table list ---------------------------------------------------------------------------


FINISHED_SHOWN = 12  #: finished games listed under the ones in play (the wall keeps the rest)
#: idle games listed (newest first) between them: abandoned games pile up for ever, and one
#: taken up again is in play from its next action
IDLE_SHOWN = 12
LIST_LIMITS = {"finished_shown": FINISHED_SHOWN, "idle_shown": IDLE_SHOWN}


@bp.get("/")
def index() -> str:
    tables = dicepad().tables.summaries()
    return render_template("index.html", tables=tables, **LIST_LIMITS)


@bp.get("/tables.part")
def table_list() -> str:
    """The table list alone: the index page refreshes it in place."""
    tables = dicepad().tables.summaries()
    return render_template("_table_list.html", tables=tables, **LIST_LIMITS)


@bp.get("/t/<table_id>/qr.svg")
def qr(table_id: str) -> Response:
    dicepad().tables.view(table_id)  # 404 for an unknown table
    path = url_for("pages.scoreboard", table_id=table_id)
    url = links.public_url(request.host_url, path, lan=links.lan_address())
    response = Response(links.qr_svg(url), mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "public, max-age=300"
    return response


# -- the scoreboard -----------------------------------------------------------------------


def board_context(table_id: str, *, kiosk: bool) -> dict[str, Any]:
    """Everything the scoreboard templates show for one table."""
    d = dicepad()
    view = d.tables.view(table_id)
    try:
        entries = board.standing(d.tables.log(table_id))
    except IllegalActionError:  # a closed table whose log no longer resolves
        entries = []
    state = view["state"]
    control = logged_in() and not kiosk and view["problem"] is None
    hint = None
    if not view["over"]:
        hint = coach.hint_text(d.tables.game_of(table_id), state)
    return {
        "view": view,
        "state": state,
        "table": table_id,
        "kiosk": kiosk,
        "control": control,
        "last": board.last_roll(entries),
        "reroll": board.reroll_request(state, entries),
        "keeps": board.keep_choices(view),
        "farm": board.can_farm(view),
        "legal": board.legal_types(view),
        "dice_wanted": board.dice_wanted(view),
        "bid_floor": board.bid_floor(view),
        "max_bid": board.max_bid(view),
        "bolo_rounds": board.rounds(state.get("turns", []), len(state.get("players", []))),
        "hint": hint,
        "pad": board.pad_panel(view, camera_configured=not d.config.manual_only),
        "ask": ask.question(view),
        "house_banner": house_banner(),
    }


def house_banner() -> str | None:
    """The house shipping's line when it is offline or refused (``--house``), else None."""
    house = dicepad().house
    return house.status().banner() if house is not None else None


@bp.get("/t/<table_id>")
def scoreboard(table_id: str) -> str:
    return render_template("board.html", **board_context(table_id, kiosk=False))


@bp.get("/t/<table_id>/kiosk")
def kiosk(table_id: str) -> str:
    return render_template("kiosk.html", **board_context(table_id, kiosk=True))


@bp.get("/t/<table_id>/board")
def board_part(table_id: str) -> BaseResponse:
    """The scoreboard's body alone, fetched by the page on every change. It depends only on
    the log position and the viewer's role, so it is rendered once for every phone (and
    answered 304 while unchanged); the pad state (camera, notices) is part of that key."""
    kiosk_mode = request.args.get("kiosk") == "1"
    view = dicepad().tables.view(table_id)
    control = logged_in() and not kiosk_mode
    # the pad service's notices and camera status change the board without a log entry
    key = (table_id, view["seq"], control, kiosk_mode, board.pad_key(view), house_banner())

    def render() -> str:
        return render_template("_board.html", **board_context(table_id, kiosk=kiosk_mode))

    response = make_response(render_cache().get(key, render))
    response.set_etag("-".join(map(str, key)))
    response.headers["Cache-Control"] = "private, no-cache"  # the PIN holder sees controls
    return response.make_conditional(request)


@bp.post("/t/<table_id>/answer")
def answer(table_id: str) -> BaseResponse:
    """The pad's question answered by a phone that runs no script (board.js posts the same
    roll to the API): the roll the picks make is logged as the phone's, then the board."""
    check_form()
    if not logged_in():
        return _to_login()
    d = dicepad()
    view = d.tables.view(table_id)
    q = ask.asked(view, request.form.get("question"))
    back = url_for("pages.scoreboard", table_id=table_id)
    if q is None:
        return _error_page(409, "Not logged", ask.ANSWERED_ELSEWHERE, back)
    try:
        dice = ask.answer(q, request.form)
        action = (Reveal if q.kind == "reveal" else Roll)(dice)
        with pad_answer(table_id, view):  # the throw's dice teach the house
            d.tables.apply(table_id, action, source="phone", snapshot=pad_photo(table_id))
    except (ask.AnswerError, IllegalActionError) as exc:
        return _error_page(409, "Not logged", str(exc), back)
    return redirect(back, 303)


# -- PIN holder's session -----------------------------------------------------------------


@bp.get("/login")
def login() -> str:
    return render_template("login.html", next=_local(request.args.get("next")), error=None)


@bp.post("/login")
def login_post() -> BaseResponse:
    check_form()
    target = _local(request.form.get("next"))
    auth = dicepad().auth
    try:
        version = auth.attempt(
            request.remote_addr or "unknown", request.form.get("pin", "").strip()
        )
    except AuthError as exc:
        html = render_template("login.html", next=target, error=str(exc))
        response = make_response(html, exc.status)
        if isinstance(exc, LockedOutError):  # as the API says it: a client may wait for it
            response.headers["Retry-After"] = str(exc.retry_after)
        return response
    session[SESSION_KEY] = auth.open_session(
        version, address=request.remote_addr or "unknown", replacing=session.get(SESSION_KEY)
    )
    session.permanent = True
    rotate_csrf_token()
    return redirect(target)


@bp.get("/csrf.json")
def fresh_token() -> Response:
    """This session's CSRF token (``null`` unless logged in), for a board opened before a login
    in another tab rotated it: board.js asks for it once a call is refused for the old one.
    Only this site's scripts can read it (no CORS header; the Strict cookie is not sent from
    another site), and no cache keeps it."""
    keeper = logged_in()
    response = jsonify({"logged_in": keeper, "csrf": csrf_token() if keeper else None})
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.post("/logout")
def logout() -> BaseResponse:
    check_form()
    dicepad().auth.end_session(session.pop(SESSION_KEY, None))
    rotate_csrf_token()
    return redirect(_local(request.form.get("next")))


# -- a new game ---------------------------------------------------------------------------


def _game_forms() -> list[dict[str, Any]]:
    out = []
    for name in games.NAMES:
        try:
            game = games.find(name)
        except ImportError:
            continue
        out.append(
            {
                "name": game.name,
                "title": game.title,
                "uses_teams": game.uses_teams,
                "rules": forms.rule_fields(game),
            }
        )
    return out


def _render_new(values: dict[str, Any], error: str | None, status: int = 200) -> Response:
    html = render_template("new.html", games=_game_forms(), values=values, error=error)
    return make_response(html, status)


@bp.get("/new")
def new_game() -> BaseResponse:
    if not logged_in():
        return _to_login()
    return _render_new({"game": request.args.get("game", games.NAMES[0])}, None)


@bp.post("/new")
def new_game_post() -> BaseResponse:
    check_form()
    if not logged_in():
        return _to_login()
    form = request.form
    values: dict[str, Any] = {k: form.getlist(k)[-1] for k in form if k != "csrf"}
    try:
        game = games.find(str(form.get("game", "")))
        new = bodies.parse_new_table(forms.new_table_body(form, game))
        view = dicepad().tables.create(
            new.game, players=new.players, teams=new.teams, rules=new.rules
        )
    except (BodyError, RulesError, ValueError) as exc:
        return _render_new(values, str(exc), 400)
    return redirect(url_for("pages.scoreboard", table_id=view["table"]))


# -- the high-roll wall -------------------------------------------------------------------


def _show_hidden() -> bool:
    return request.args.get("hidden") == "1" and logged_in()


@bp.get("/records")
def records() -> str:
    d = dicepad()
    hidden = _show_hidden()
    return render_template(
        "records.html",
        walls=wall.wall(d.records, include_hidden=hidden),
        high_rollers=wall.high_rollers(d.records, include_hidden=hidden),
        show_hidden=hidden,
    )


@bp.get("/records.csv")
def records_csv() -> Response:
    rows = dicepad().records.wall(include_hidden=_show_hidden(), limit=1_000_000)
    response = Response(wall.to_csv(rows), mimetype="text/csv")
    response.headers["Content-Disposition"] = 'attachment; filename="dicepad-records.csv"'
    return response


@bp.post("/records/<record_id>/hide")
def hide_record(record_id: str) -> BaseResponse:
    check_form()
    if not logged_in():
        return _to_login()
    hidden = request.form.get("hidden", "1") != "0"
    dicepad().records.set_hidden(record_id, hidden)
    return redirect(_local(request.form.get("next") or url_for("pages.records")))
