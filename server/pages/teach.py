"""The teaching page, "Teach the house dice" (Vision IV): the PIN holder throws the house dice on
the pad, confirms or corrects the reader's value of each die with one tap, and the dice join the
house set (``server.pad.house``); it shows how far the teaching has come and lets one bad example
be taken out.

Only the PIN holder sees it, as with the other change pages: without the session the page sends
to the log-in, and the pictures and the poll answer 401. Every POST is a form with the session's
CSRF token. The page works without script (the throw's dice are radio buttons in one form; "throw
again" is a link); ``teach.js`` only reloads it when the camera settles on the next throw and no
pick has been made on this one. The pictures are cut on the pad service's thread when the throw
settles, so a request only sends bytes; the held-back figure is the house worker's.
"""

from __future__ import annotations

import re
import time
from typing import Any

import cv2
from flask import Response, abort, jsonify, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from server.pad.api import pad_service
from server.pad.house import PadHouse
from server.pad.teaching import TeachThrow
from server.pages.routes import _error_page, _to_login, bp, logged_in
from server.pages.security import check_form

KEEP_WAIT_S = 3.0
"""How long a teach or a remove waits for the house worker to keep it, so that the page it
goes back to shows it (longer only while the worker fits: the page then says it is coming)."""
EXAMPLE_ID = re.compile(r"[0-9a-f]{12}")
PICKS = {"skip": None, **{str(v): v for v in range(7)}}
"""A die's form value: 1-6, 0 (not a die), or "skip" (left out)."""
MESSAGES = {
    "taught": "Taught {n} dice. Throw them again.",
    "none": "Nothing to teach in that throw: no die had a value.",
    "before": "That throw was taught already: throw the dice again.",
    "gone": "That throw is no longer held (the camera has seen several since): look again.",
    "removed": "Example removed.",
    "unknown": "That example is no longer among the newest: look again.",
    "broken": "The house set cannot be taught now: see below.",
}


def _house() -> PadHouse | None:
    service = pad_service()
    return None if service is None else service.house


def _guard() -> None:
    """The pictures and the poll: the PIN holder's only (no log-in page for an image)."""
    if not logged_in():
        abort(401)


def _picks(throw: TeachThrow) -> dict[int, int | None]:
    """The value picked per die (absent: the reader's value stands)."""
    out: dict[int, int | None] = {}
    for i in range(len(throw.dice)):
        raw = request.form.get(f"d{i}")
        if raw is None:
            continue
        if raw not in PICKS:
            raise ValueError(f"die {i + 1}: {raw[:20]!r} is not a value")
        out[i] = PICKS[raw]
    return out


def _back(done: str, n: int | None = None) -> BaseResponse:
    """Back to the page (303), saying what was done."""
    args: dict[str, Any] = {"done": done}
    if n is not None:
        args["n"] = n
    return redirect(url_for("pages.teach", **args), 303)


@bp.get("/house/teach")
def teach() -> BaseResponse | str:
    if not logged_in():
        return _to_login()
    house = _house()
    throw, taught = (None, False) if house is None else house.latest()
    progress = None if house is None else house.progress()
    done = request.args.get("done", "")
    n = request.args.get("n", "")
    count = int(n) if n.isascii() and n.isdigit() and len(n) < 6 else "the"
    message = MESSAGES.get(done, "").format(n=count)
    keeping = house is not None and house.keeping  # the worker is fitting: counts to come
    from vision.house.model import MIN_EXAMPLES, MIN_HELD_BACK, MIN_PER_VALUE

    return render_template(
        "teach.html",
        house=house,
        throw=throw,
        taught=taught,
        settled=None if throw is None else time.strftime("%H:%M:%S", time.localtime(throw.at)),
        progress=progress,
        message=message,
        keeping=keeping,
        min_examples=MIN_EXAMPLES,
        min_per_value=MIN_PER_VALUE,
        min_held_back=2 * MIN_EXAMPLES,
        fitted_from=MIN_HELD_BACK,  # held-back dice before the house's floor is fitted
    )


@bp.post("/house/teach")
def teach_post() -> BaseResponse:
    check_form()
    if not logged_in():
        return _to_login()
    house = _house()
    if house is None or not house.ready:
        return _back("broken")
    raw = str(request.form.get("throw", ""))
    number = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 20 else None
    throw = None if number is None else house.held_throw(number)
    if throw is None:
        return _back("gone")
    try:
        picks = _picks(throw)
    except ValueError as exc:
        return _error_page(400, "Not taught", str(exc), url_for("pages.teach"))
    taught = house.teach(throw.number, picks)
    if taught is None:
        return _back("gone")
    if taught.before:
        return _back("before")
    if not taught.examples:
        return _back("none")
    house.wait_kept(taught.ticket, KEEP_WAIT_S)  # else the page says the counts are coming
    return _back("taught", taught.examples)


@bp.get("/house/teach/latest.json")
def teach_latest() -> Response:
    """The number of the latest throw held (null: none): ``teach.js`` reloads the page when
    it is not the one shown."""
    _guard()
    house = _house()
    throw, taught = (None, False) if house is None else house.latest()
    response = jsonify({"throw": None if throw is None else throw.number, "taught": taught})
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/house/teach/<int:number>/<int:die>.jpg")
def teach_crop(number: int, die: int) -> Response:
    """Die ``die`` of throw ``number``, cut from the raw frame (JPEG)."""
    _guard()
    house = _house()
    throw = None if house is None else house.held_throw(number)
    if throw is None or die >= len(throw.dice) or throw.dice[die].crop is None:
        abort(404)
    response = Response(throw.dice[die].crop, mimetype="image/jpeg")
    response.headers["Cache-Control"] = "private, max-age=600"  # a throw's crops never change
    return response


@bp.get("/house/examples/<example_id>.png")
def example_view(example_id: str) -> Response:
    """One of the newest examples as the value network sees it (PNG)."""
    _guard()
    house = _house()
    found = None
    if house is not None and EXAMPLE_ID.fullmatch(example_id):
        found = house.example(example_id)
    if found is None:
        abort(404)
    ok, buf = cv2.imencode(".png", found.view)
    if not ok:
        abort(500)
    response = Response(bytes(buf), mimetype="image/png")
    response.headers["Cache-Control"] = "private, max-age=86400"  # the id names its pixels
    return response


@bp.post("/house/examples/<example_id>/remove")
def example_remove(example_id: str) -> BaseResponse:
    check_form()
    if not logged_in():
        return _to_login()
    house = _house()
    if house is None or not house.ready:
        return _back("broken")
    if not EXAMPLE_ID.fullmatch(example_id) or house.example(example_id) is None:
        return _back("unknown")
    house.wait_kept(house.forget([example_id]), KEEP_WAIT_S)
    return _back("removed")
