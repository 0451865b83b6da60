"""``dicepad replay``: apply a JSON-lines file of actions to a new game, print the final state.

The same path as the table server: every line goes through :func:`scoring.history.apply_logged`
(so ``undo`` and ``fix`` lines work), the first malformed or illegal line stops the replay
with exit code 1 and a message naming the line and the rule.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from server.cli._game_args import add_game_argument, add_rule_argument

HELP = "replay a game from a JSON-lines file of actions and print its final state"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_game_argument(parser)
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--team",
        action="append",
        metavar="NAME=P1,P2,...",
        help="a team and its players in order of play (repeat per team)",
    )
    who.add_argument("--players", metavar="P1,P2,...", help="the players in order of play")
    add_rule_argument(parser)
    parser.add_argument(
        "file", metavar="FILE", help='actions, one JSON object per line ("-": standard input)'
    )


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def parse_teams(pairs: list[str]) -> dict[str, list[str]]:
    """``["DJS=Dick,Spot,Jane", ...]`` -> ``{"DJS": ["Dick", "Spot", "Jane"], ...}``."""
    teams: dict[str, list[str]] = {}
    for pair in pairs:
        name, sep, members = pair.partition("=")
        if not sep or not name.strip() or not _names(members):
            raise ValueError(f"--team takes NAME=P1,P2,..., got {pair!r}")
        if name.strip() in teams:
            raise ValueError(f"--team {name.strip()!r} is given twice")
        teams[name.strip()] = _names(members)
    return teams


def run(args: argparse.Namespace) -> int:
    from scoring.games import find
    from scoring.rules import parse_assignments

    game = find(args.game)
    try:
        rules = parse_assignments(args.rule)
        if args.team is not None:
            state = game.new(teams=parse_teams(args.team), rules=rules)
        else:
            state = game.new(players=_names(args.players), rules=rules)
    except ValueError as exc:
        print(f"dicepad replay: {exc}", file=sys.stderr)
        return 2
    try:
        stream: TextIO = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        print(f"dicepad replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    with stream:
        code, final = _replay(game, state, stream, args.file)
    if code == 0:
        print(json.dumps(game.state_to_json(final), indent=2))
    return code


def _replay(game: Any, start: Any, lines: TextIO, name: str) -> tuple[int, Any]:
    from scoring.actions import Action, action_from_json
    from scoring.errors import IllegalActionError, MalformedActionError
    from scoring.history import apply_logged

    where = "stdin" if name == "-" else name
    log: list[Action] = []
    state = start
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            action = action_from_json(json.loads(line))
        except json.JSONDecodeError as exc:
            print(f"dicepad replay: {where}:{n}: not valid JSON: {exc.msg}", file=sys.stderr)
            return 1, state
        except MalformedActionError as exc:
            print(f"dicepad replay: {where}:{n}: malformed action: {exc}", file=sys.stderr)
            return 1, state
        try:
            state = apply_logged(game, start, log, action)
        except IllegalActionError as exc:
            print(f"dicepad replay: {where}:{n}: illegal {action.type}: {exc}", file=sys.stderr)
            return 1, state
        log.append(action)
    return 0, state
