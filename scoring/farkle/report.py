"""``dicepad score`` for the Farkle family: one roll's report as JSON and in words."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from scoring.farkle.combos import ComboTable, score_roll


def roll_report(game: str, dice: Sequence[int], table: ComboTable) -> dict[str, Any]:
    """The issue-2 JSON: dice, best points, blown, all_score and every legal keep once."""
    if not 1 <= len(dice) <= table.dice:
        raise ValueError(f"{game}: a roll has 1 to {table.dice} dice, got {len(dice)}")
    if any(isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 6 for d in dice):
        raise ValueError(f"{game}: dice show 1-6, got {' '.join(map(str, dice))}")
    return {"game": game, **score_roll(dice, table).to_json()}


def _combo_words(combos: Sequence[str]) -> str:
    parts = [f"{n}× {name}" if n > 1 else name for name, n in Counter(combos).items()]
    return " + ".join(parts)


def describe(report: Mapping[str, Any], *, all_dice_word: str) -> str:
    """The report in words, one keep per line (``all_dice_word``: "all six", "all five")."""
    dice = " ".join(map(str, report["dice"]))
    if report["blown"]:
        return f"{dice}: no scoring dice — blown."
    lines = [f"{dice}: best {report['points']} points"]
    if report["all_score"]:
        lines[0] += f"; every die can score (keep them all, then roll {all_dice_word} again)"
    for o in report["options"]:
        then = "may stop" if o.get("may_stop") else f"must roll {all_dice_word}"
        if not o.get("uses_all") and not o.get("may_stop"):
            then = "must roll again"
        lines.append(
            f"  keep {' '.join(map(str, o['keep']))}: {o['points']} "
            f"({_combo_words(o['combos'])}) — {then}"
        )
    return "\n".join(lines)
