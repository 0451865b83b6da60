"""``dicepad score``: the scoring of one roll for any game, in words or as JSON.

With DICE on the command line it scores that roll; with none it reads one roll per line from
standard input and writes one JSON object per line (a bad line gets ``{"line", "error"}`` in
its place, so output lines stay aligned with input lines, and the exit code is 1).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from server.cli._game_args import add_game_argument, add_rule_argument, house_rules

HELP = "score one roll of dice for a game (every legal keep and its points)"

_BID = re.compile(r"^\s*(\d+)\s*[x×*]\s*([1-6])\s*$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_game_argument(parser)
    add_rule_argument(parser)
    parser.add_argument("--bid", metavar="CxF", help="gords: the bid to check, e.g. 4x6")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of words")
    parser.add_argument(
        "dice",
        nargs="*",
        metavar="DICE",
        help="pip values 1-6 separated by spaces; none: read one roll per line from stdin",
    )


def parse_dice(text: str) -> tuple[int, ...]:
    """``"1 1 5"``, ``"1,1,5"`` or ``"115"`` -> ``(1, 1, 5)``; raises ``ValueError``."""
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    if len(tokens) == 1 and len(tokens[0]) > 1:
        tokens = list(tokens[0])
    if not tokens:
        raise ValueError("no dice given")
    dice = []
    for t in tokens:
        if not (t.isdigit() and len(t) == 1 and 1 <= int(t) <= 6):
            raise ValueError(f"a die shows 1-6, got {t!r}")
        dice.append(int(t))
    return tuple(dice)


def parse_bid(text: str) -> tuple[int, int]:
    """``"4x6"`` -> ``(4, 6)``; raises ``ValueError``."""
    m = _BID.match(text)
    if m is None or int(m.group(1)) < 1:
        raise ValueError(f"--bid takes COUNTxFACE such as 4x6, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def run(args: argparse.Namespace) -> int:
    from scoring.errors import RulesError
    from scoring.games import find

    game = find(args.game)
    try:
        bid = parse_bid(args.bid) if args.bid is not None else None
        rules = house_rules(game, args.rule)
    except (RulesError, ValueError) as exc:
        print(f"dicepad score: {exc}", file=sys.stderr)
        return 2

    def report(dice: tuple[int, ...]) -> dict[str, Any]:
        if bid is None:
            return game.score_report(dice, rules)
        return game.score_report(dice, rules, bid=bid)

    if args.dice:
        try:
            result = report(parse_dice(" ".join(args.dice)))
        except ValueError as exc:
            print(f"dicepad score: {exc}", file=sys.stderr)
            return 2
        print(json.dumps(result) if args.json else game.describe_report(result))
        return 0

    failed = 0
    for n, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            out = report(parse_dice(line))
        except ValueError as exc:
            failed += 1
            out = {"line": n, "error": str(exc)}
            print(f"dicepad score: line {n}: {exc}", file=sys.stderr)
        print(json.dumps(out), flush=True)
    return 1 if failed else 0
