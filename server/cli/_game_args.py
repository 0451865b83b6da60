"""The ``--game`` and ``--rule`` options shared by ``score``, ``odds`` and ``replay``.

One definition keeps the choices, the spelling and the rule parsing the same in every
sub-command. Scoring is imported inside the functions so that building the parser stays cheap.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoring.game import Game

RULE_EXAMPLE = "target=5000, ybi.target=5000"


def add_game_argument(parser: argparse.ArgumentParser) -> None:
    """``--game NAME`` (required), one of the registered games."""
    from scoring.games import NAMES

    parser.add_argument("--game", required=True, choices=NAMES, help="which game's rules")


def add_rule_argument(parser: argparse.ArgumentParser, example: str = RULE_EXAMPLE) -> None:
    """``--rule NAME=VALUE`` (repeatable); ``example`` shows it in the help."""
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"a house rule, with or without the game's prefix ({example})",
    )


def house_rules(game: Game[Any], assignments: list[str]) -> Any:
    """``game``'s house rules from ``--rule`` values; raises ``RulesError`` or ``ValueError``."""
    from scoring.rules import parse_assignments, parse_rules

    return parse_rules(game.rules_type, parse_assignments(assignments), game.rules_prefix)
