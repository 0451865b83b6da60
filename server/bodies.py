"""Request bodies and query parameters, validated before anything reaches the engine.

Each parser takes what the client sent (raw bytes, a decoded JSON value, a query string) and
returns typed values or raises :class:`~server.errors.BodyError` (or the engine's
``MalformedActionError``) with a sentence saying what was wrong.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import Request

from scoring.actions import ACTION_TYPES, Action, action_from_json
from server.errors import BodyError
from server.rows import SOURCES

MAX_NAME = 40
MAX_PLAYERS = 12
MAX_TEAMS = 6


def _no_constants(name: str) -> Any:
    raise BodyError(f"{name} is not valid JSON")


def json_body(request: Request) -> Any:
    """The decoded JSON body; 400 unless it is ``application/json`` and well-formed JSON.
    (An oversized body raises 413 from Werkzeug while it is read.)"""
    if request.mimetype != "application/json":
        raise BodyError("send a JSON body with Content-Type: application/json")
    raw = request.get_data(cache=True)
    try:
        value = json.loads(raw, parse_constant=_no_constants)
        # JSON may spell a lone UTF-16 surrogate ("\ud800"): Python decodes it to a str that
        # no UTF-8 encoder takes (the PIN hash, SQLite, the feed), so a 500 after the engine
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise BodyError("the body has a lone surrogate (\\ud800-\\udfff): not text") from None
    except ValueError as exc:  # also a number too long to convert (Python's 4300 digits)
        raise BodyError(f"the body is not valid JSON: {exc}") from None
    except RecursionError:
        raise BodyError("the body is nested too deeply") from None
    return value


def _object(value: object, what: str, allowed: set[str]) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise BodyError(f"{what} must be a JSON object")
    extra = sorted(set(value) - allowed)
    if extra:
        raise BodyError(f"{what}: unknown field(s) {', '.join(map(repr, extra))}")
    return value


def _name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > MAX_NAME:
        raise BodyError(f"{what} must be a name of 1-{MAX_NAME} characters")
    name = value.strip()
    if not name.isprintable():
        raise BodyError(f"{what} must not contain control characters")
    return name


def _names(value: object, what: str, limit: int) -> list[str]:
    if not isinstance(value, list) or not value:
        raise BodyError(f"{what} must be a non-empty list of names")
    if len(value) > limit:
        raise BodyError(f"{what}: at most {limit}")
    names = [_name(v, f"each of {what}") for v in value]
    if len(set(names)) != len(names):
        raise BodyError(f"{what}: names must be different")
    return names


@dataclass(frozen=True)
class NewTable:
    game: str
    players: list[str] | None
    teams: dict[str, list[str]] | None
    rules: dict[str, object] | None


def parse_new_table(obj: object) -> NewTable:
    """``{"game", "players" | "teams", "rules"?}``."""
    body = _object(obj, "a new table", {"game", "players", "teams", "rules"})
    game = body.get("game")
    if not isinstance(game, str) or not game:
        raise BodyError("game must be the name of a game")
    if ("players" in body) == ("teams" in body):
        raise BodyError("give either players (a list) or teams (an object of lists)")
    players = teams = None
    if "players" in body:
        players = _names(body["players"], "players", MAX_PLAYERS)
    else:
        raw = body["teams"]
        if not isinstance(raw, dict) or not raw:
            raise BodyError("teams must be an object: team name -> list of players")
        if len(raw) > MAX_TEAMS:
            raise BodyError(f"teams: at most {MAX_TEAMS}")
        teams = {}
        for k, v in raw.items():
            name = _name(k, "a team name")
            if name in teams:  # "Reds" and "Reds " are one name: the second would replace
                raise BodyError(f"teams: two teams are called {name!r}")
            teams[name] = _names(v, f"team {k!r}", MAX_PLAYERS)
        everyone = [p for members in teams.values() for p in members]
        if len(set(everyone)) != len(everyone):
            raise BodyError("teams: a player can only sit in one team")
    rules = body.get("rules")
    if rules is not None:
        if not isinstance(rules, dict):
            raise BodyError("rules must be an object: house-rule name -> value")
        spelled: dict[str, str] = {}
        for key, value in rules.items():
            if not isinstance(value, bool | int | str) or len(key) > 60:
                raise BodyError(
                    f"house rule {key[:60]!r}: value must be a number, true/false or a word"
                )
            # "target" and "bolo.target" name one rule: the game would keep the last silently
            short = key.rsplit(".", 1)[-1]
            if short in spelled:
                raise BodyError(f"house rule {short!r} is given twice: {spelled[short]!r}, {key!r}")
            spelled[short] = key
    return NewTable(game, players, teams, rules)


QUESTION_KEY = re.compile(r"[0-9a-f]{1,64}")
"""What the pad's question key (``pages.ask.Question.key``) an answer names may look like."""


def parse_action(obj: object) -> tuple[Action, str, str | None]:
    """One action as in DESIGN.md, plus an optional ``source`` (default ``phone``) and an
    optional ``answers``: the key of the pad's question the action answers (its throw's photo
    goes with it; an answer to a question no longer asked is refused)."""
    if not isinstance(obj, dict):
        raise BodyError("an action must be a JSON object with a 'type'")
    kind = obj.get("type")
    cls = ACTION_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is not None:
        allowed = {"type", "source", "answers"} | {f.name for f in dataclasses.fields(cls)}
        _object(obj, f"a {kind} action", allowed)
    source = obj.get("source", "phone")
    if source not in SOURCES:
        raise BodyError(f"source must be one of {', '.join(SOURCES)}")
    answers = obj.get("answers")
    if answers is not None and not (isinstance(answers, str) and QUESTION_KEY.fullmatch(answers)):
        raise BodyError("answers must be the key of the pad's question (hex digits)")
    action = action_from_json({k: v for k, v in obj.items() if k not in ("source", "answers")})
    return action, source, answers


def parse_pin(obj: object) -> str:
    body = _object(obj, "a login", {"pin"})
    pin = body.get("pin")
    if not isinstance(pin, str) or not pin:
        raise BodyError("pin must be a string")
    return pin


def parse_hidden(obj: object) -> bool:
    body = _object(obj, "a record change", {"hidden"})
    hidden = body.get("hidden", True)
    if not isinstance(hidden, bool):
        raise BodyError("hidden must be true or false")
    return hidden


WHOLE_NUMBER = re.compile(r"[0-9]{1,19}")
"""What a number in a query or header may look like: ASCII digits, at most 19 (``str.isdigit``
takes "²", which ``int`` refuses, and ``int`` refuses over 4300 digits: both were 500s)."""


def whole_number(raw: str) -> int | None:
    """``raw`` as a whole number, or None when it is not 1-19 ASCII digits (the callers
    bound the value itself: ``int_arg``'s range, the feed's catch-up from any event number)."""
    return int(raw) if WHOLE_NUMBER.fullmatch(raw) else None


def int_arg(args: Mapping[str, str], name: str, default: int, lo: int, hi: int) -> int:
    raw = args.get(name)
    if raw is None:
        return default
    value = whole_number(raw)
    if value is None or not lo <= value <= hi:
        raise BodyError(f"{name} must be a whole number from {lo} to {hi}")
    return value
