"""The new-game form, turned into the same JSON body ``POST /api/tables`` takes, so it is
validated by the same parser (:func:`server.bodies.parse_new_table`) and the same game.

Players are typed one per line, in seating order. Teams are one per line, ``Name: Ann, Al``
(a line without a name becomes ``Team N``). House rules arrive as ``rule.<game>.<name>``
fields; a checkbox is preceded by a hidden ``false`` so that an unticked box still says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scoring.rules import describe_rules
from server.errors import BodyError

RULE_FIELD = "rule.{game}.{name}"


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.replace("\r", "").split("\n") if line.strip()]


def parse_players(text: str) -> list[str]:
    """One name per line (commas also separate), in seating order."""
    return [n.strip() for line in _lines(text) for n in line.split(",") if n.strip()]


def parse_teams(text: str) -> dict[str, list[str]]:
    """``Reds: Ann, Al`` per line -> ``{"Reds": ["Ann", "Al"]}`` (order kept)."""
    teams: dict[str, list[str]] = {}
    for n, line in enumerate(_lines(text), 1):
        name, sep, members = line.partition(":")
        if not sep:
            name, members = f"Team {n}", line
        name = name.strip() or f"Team {n}"
        if name in teams:
            raise BodyError(f"two teams are called {name!r}")
        teams[name] = [m.strip() for m in members.split(",") if m.strip()]
    return teams


def rule_fields(game: Any) -> list[dict[str, Any]]:
    """The game's house rules for the form: ``describe_rules`` plus each field's form name
    and input kind (``bool``, ``int``, ``choice`` or ``text``)."""
    out = []
    for rule in describe_rules(game.rules_type, game.rules_prefix):
        short = rule["name"].split(".", 1)[1]
        default = rule["default"]
        if isinstance(default, bool):
            kind = "bool"
        elif "choices" in rule:
            kind = "choice"
        elif isinstance(default, int):
            kind = "int"
        else:
            kind = "text"
        field = RULE_FIELD.format(game=game.name, name=short)
        shown = ("on" if default else "off") if kind == "bool" else (str(default) or "(none)")
        out.append(rule | {"short": short, "field": field, "kind": kind, "default_text": shown})
    return out


def new_table_body(form: Mapping[str, Any], game: Any) -> dict[str, Any]:
    """The JSON body for ``POST /api/tables`` from the submitted form (``form`` is a
    ``MultiDict``: ``getlist`` reads the hidden-plus-checkbox pairs)."""
    body: dict[str, Any] = {"game": game.name}
    if game.uses_teams:
        body["teams"] = parse_teams(str(form.get("teams", "")))
    else:
        body["players"] = parse_players(str(form.get("players", "")))
    rules: dict[str, object] = {}
    for rule in rule_fields(game):
        values = form.getlist(rule["field"])  # type: ignore[attr-defined]
        if not values:
            continue
        rules[rule["short"]] = str(values[-1]).strip()
    if rules:
        body["rules"] = rules
    return body
