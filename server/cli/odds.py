"""``dicepad odds``: the coach's odds and best play for a game state, in words or as JSON.

Farkle games (you-blew-it, bolo): with no state it describes the start of a turn; otherwise
``--turn-points`` and ``--dice-left`` (after a keep: roll on or bank), ``--roll`` (which dice
to keep), ``--board`` (Bolo's minimum take), ``--teammates`` (You Blew It: points teammates
banked this round, lost on a blow). Bar Dice: ``--beat``, ``--rolls-left``, ``--farmed``,
``--roll``. Gords: ``--bid``, ``--own``, ``--unknown``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from server.cli._game_args import add_game_argument, add_rule_argument, house_rules

HELP = "odds and best play: P(blow it), roll or bank, best keep, farming, bid odds"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_game_argument(parser)
    add_rule_argument(parser, "bolo.take_min=400")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of words")
    farkle = parser.add_argument_group("you-blew-it and bolo")
    farkle.add_argument("--turn-points", type=int, default=0, metavar="P", help="points so far")
    farkle.add_argument(
        "--dice-left", type=int, metavar="N", help="dice to roll next (default: all of them)"
    )
    parser.add_argument(
        "--roll",
        nargs="+",
        metavar="DIE",
        help="the roll on the pad (which dice to keep; bar-dice: the last throw)",
    )
    farkle.add_argument(
        "--board", type=int, default=0, metavar="B", help="bolo: board score (0: not on it yet)"
    )
    farkle.add_argument(
        "--teammates",
        type=int,
        default=0,
        metavar="W",
        help="you-blew-it: points teammates banked earlier this round (a blow wipes them)",
    )
    farkle.add_argument(
        "--off-board",
        action="store_true",
        help="you-blew-it: not on the board yet (with an on_board_min house rule)",
    )
    farkle.add_argument(
        "--must-roll", action="store_true", help="banking is not allowed now (hot dice, B-4)"
    )
    bar = parser.add_argument_group("bar-dice")
    bar.add_argument(
        "--beat",
        metavar="VALUE",
        help="the pace to beat or tie (e.g. 43; 'nothing': any counting hand)",
    )
    bar.add_argument("--rolls-left", type=int, default=3, metavar="N", help="throws left")
    bar.add_argument(
        "--pace-rolls",
        type=int,
        metavar="N",
        help="the hammer's rolls for --beat ('43 in two': 2): play to win the turn (D8)",
    )
    bar.add_argument("--farmed", nargs="+", metavar="DIE", help="dice farmed so far")
    gords = parser.add_argument_group("gords")
    gords.add_argument("--bid", metavar="CxF", help="the standing bid, e.g. 8x4")
    gords.add_argument("--own", nargs="+", metavar="DIE", help="your own dice")
    gords.add_argument("--unknown", type=int, metavar="N", help="dice in play you cannot see")


def _dice(given: list[str] | None) -> tuple[int, ...]:
    """``["1", "1", "5"]``, ``["115"]`` or ``["1,1,5"]`` -> ``(1, 1, 5)``; none -> ``()``."""
    from server.cli.score import parse_dice

    text = " ".join(given or ())
    return parse_dice(text) if text.strip() else ()


def farkle_hint(args: argparse.Namespace, rules: Any) -> dict[str, Any]:
    from scoring.coach.farkle import TurnState, endgame, spec_for, turn_hint
    from scoring.coach.solver import STEP, solve
    from scoring.farkle import bolo

    full = bolo.DICE if args.game == "bolo" else 6
    points, w = args.turn_points, args.teammates
    for name, v in (("--turn-points", points), ("--teammates", w)):
        if v < 0 or v % STEP:
            raise ValueError(f"{name} is a multiple of {STEP} and not negative, got {v}")
    if args.game == "bolo":
        if w:
            raise ValueError("--teammates is for you-blew-it")
        minimum = bolo.minimum(rules, args.board, args.board > 0)
        spec = spec_for("bolo", rules, minimum=minimum)
    else:
        if args.board:
            raise ValueError("--board is for bolo")
        minimum = rules.on_board_min if args.off_board else 0
        spec = spec_for("you-blew-it", rules, minimum=minimum, teammates=w)
    policy = solve(spec)
    roll = _dice(args.roll)
    if roll:
        if len(roll) > full or (args.dice_left is not None and args.dice_left != len(roll)):
            raise ValueError(f"--roll has {len(roll)} dice; {args.game} rolls 1 to {full}")
        turn = TurnState("keep", points, len(roll), roll=roll, teammates=w)
    else:
        n = full if args.dice_left is None else args.dice_left
        if not 1 <= n <= full:
            raise ValueError(f"--dice-left is 1 to {full}, got {n}")
        start = points == 0 and n == full
        hot = n == full and points > 0
        phase = "roll" if start or hot else "decide"
        turn = TurnState(phase, points, n, may_stop=not (args.must_roll or hot), teammates=w)
    hint = turn_hint(policy, turn)
    if args.game == "bolo" and args.board > 0:
        hint.update(endgame(rules, turn, max(rules.target - args.board, minimum), hint))
    return hint


def bar_dice_hint(args: argparse.Namespace, rules: Any) -> dict[str, Any]:
    from scoring.coach.bar_dice import go_hint

    beat = args.beat
    target: int | None = None
    if beat is not None and beat.strip().lower() != "nothing":
        try:
            target = int(beat)
        except ValueError:
            raise ValueError(f"--beat takes a hand value such as 43, got {beat!r}") from None
    return go_hint(
        rolls_left=args.rolls_left,
        farmed=_dice(args.farmed),
        roll=_dice(args.roll),
        target=target,
        beat_nothing=beat is not None and target is None,
        pace_rolls=args.pace_rolls,
        rules=rules,
    )


def gords_hint(args: argparse.Namespace, rules: Any) -> dict[str, Any]:
    from scoring.coach.gords import advise, legal_raises
    from scoring.gords.bids import parse_board
    from server.cli.score import parse_bid

    if args.unknown is None:
        raise ValueError("gords: give --unknown (dice in play you cannot see)")
    own = _dice(args.own)
    current = parse_bid(args.bid) if args.bid else None
    board = parse_board(rules.board) if rules.ones_bid_rank == "board_order" else ()
    raises = legal_raises(
        current,
        len(own) + args.unknown,
        ones_rank=rules.ones_bid_rank,
        board=board,
        open_on_ones=rules.open_on_ones,
    )
    return advise(
        current,
        raises,
        own=own,
        unknown=args.unknown,
        ones_rank=rules.ones_bid_rank,
        board=board,
        spot_on=rules.spot_on and current is not None,
        dice_lost=rules.dice_lost,
        my_dice=len(own) or None,
    )


def words(h: dict[str, Any]) -> str:
    """The hint in words: the sentence, then the figures behind it."""
    lines = [h["text"]]
    if h.get("keeps"):
        for k in h["keeps"][:6]:
            keep = " ".join(map(str, k["keep"]))
            lines.append(f"  keep {keep} ({k['points']}): {k['value']:.0f}, then {k['then']}")
    if h.get("endgame"):
        e = h["endgame"]
        lines.append(f"To finish this turn ({e['need']} needed): {100 * e['p_finish']:.1f} %.")
    if h.get("expected_turn") is not None:
        lines.append(f"A fresh turn is worth {h['expected_turn']:.0f} under best play.")
    for c in h.get("choices", [])[:6]:
        what = "stand" if c["stand"] else "farm " + (" ".join(map(str, c["farm"])) or "nothing")
        lines.append(f"  {what}: {c['value']:.4g}")
    if h.get("most_likely"):
        m = h["most_likely"]
        lines.append(f"Most likely true bid: {m['count']} x {m['face']} ({100 * m['p']:.1f} %).")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from scoring.errors import RulesError
    from scoring.games import find

    game = find(args.game)
    try:
        rules = house_rules(game, args.rule)
        if args.game in ("you-blew-it", "bolo"):
            hint = farkle_hint(args, rules)
        elif args.game == "bar-dice":
            hint = bar_dice_hint(args, rules)
        else:
            hint = gords_hint(args, rules)
    except (RulesError, ValueError) as exc:
        print(f"dicepad odds: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(hint) if args.json else words(hint))
    return 0
