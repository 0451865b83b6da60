"""One player's Farkle-family turn as a frozen value: roll, keep, roll or bank, blow, re-roll.

Shared by You Blew It and Bolo. The functions here check what is common (dice counts, legal
keeps, hot dice, re-rolls of offending dice) and raise :class:`IllegalActionError` with the
rule ids the game passes in (:class:`RuleIds`); banking, blows and scores are the game's job.

Phases: ``roll`` (waiting for ``dice_wanted`` dice), ``keep`` (a roll stands, choose a keep),
``decide`` (after a keep: roll the rest or bank), ``reroll`` (some dice of the roll stand
while ``rerolling`` dice are thrown again), ``blown`` (the standing roll scores nothing; the
game settles the blow when the next action is not a re-roll of it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

from scoring.errors import IllegalActionError
from scoring.farkle.combos import ComboTable, KeepOption, RollScore, score_roll
from scoring.game import n_dice

Dice: TypeAlias = tuple[int, ...]
Phase: TypeAlias = Literal["roll", "keep", "decide", "reroll", "blown"]
PHASES: tuple[Phase, ...] = ("roll", "keep", "decide", "reroll", "blown")
CockedRule: TypeAlias = Literal["reroll_offending", "reroll_all_just_rolled"]


@dataclass(frozen=True)
class RuleIds:
    """The rule ids a game's messages cite (RULES.md numbering)."""

    keep: str  #: must keep at least one scoring die / only legal keeps
    hot: str  #: every die scored: roll them all again, no banking
    cocked: str  #: which dice a cocked / sloppy re-roll covers
    cocked_option: str  #: the house rule that says so (named in its message)


@dataclass(frozen=True)
class Step:
    """One roll of a turn and what was kept from it (the scratch sheet of YBI-12)."""

    roll: Dice
    keep: Dice
    points: int
    combos: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "roll": list(self.roll),
            "keep": list(self.keep),
            "points": self.points,
            "combos": list(self.combos),
        }

    @staticmethod
    def from_json(obj: Any) -> Step:
        return Step(
            tuple(obj["roll"]), tuple(obj["keep"]), int(obj["points"]), tuple(obj["combos"])
        )


@dataclass(frozen=True)
class Turn:
    """The turn in progress. ``kept``: dice set aside in the current cycle (since the last
    pick-up of all dice); ``roll``: the standing roll (``keep``/``blown``) or the dice that
    stand while others are re-thrown (``reroll``)."""

    phase: Phase = "roll"
    points: int = 0
    kept: Dice = ()
    steps: tuple[Step, ...] = ()
    roll: Dice = ()
    rerolling: int = 0
    hot: bool = False
    may_stop: bool = False
    cycle_start: int = 0
    clause_rerolls: int = 0

    def dice_wanted(self, total: int) -> int:
        """How many dice the next roll must have (RULES.md C3)."""
        if self.phase == "reroll":
            return self.rerolling
        return total - len(self.kept)

    @property
    def started(self) -> bool:
        return bool(self.steps or self.roll or self.phase != "roll")

    def cycle_steps(self) -> tuple[Step, ...]:
        return self.steps[self.cycle_start :]

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "points": self.points,
            "kept": list(self.kept),
            "steps": [s.to_json() for s in self.steps],
            "roll": list(self.roll),
            "rerolling": self.rerolling,
            "hot": self.hot,
            "may_stop": self.may_stop,
            "cycle_start": self.cycle_start,
            "clause_rerolls": self.clause_rerolls,
        }

    @staticmethod
    def from_json(obj: Any) -> Turn:
        phase = obj["phase"]
        if phase not in PHASES:
            raise ValueError(f"unknown turn phase {phase!r}")
        return Turn(
            phase=phase,
            points=int(obj["points"]),
            kept=tuple(obj["kept"]),
            steps=tuple(Step.from_json(s) for s in obj["steps"]),
            roll=tuple(obj["roll"]),
            rerolling=int(obj["rerolling"]),
            hot=bool(obj["hot"]),
            may_stop=bool(obj["may_stop"]),
            cycle_start=int(obj["cycle_start"]),
            clause_rerolls=int(obj["clause_rerolls"]),
        )


def is_sub_multiset(small: Dice, big: Dice) -> bool:
    need, have = Counter(small), Counter(big)
    return all(have[d] >= n for d, n in need.items())


def _minus(big: Dice, small: Dice) -> Dice:
    left = Counter(big)
    left.subtract(small)
    return tuple(sorted(left.elements()))


def apply_roll(turn: Turn, dice: Dice, total: int, table: ComboTable, ids: RuleIds) -> Turn:
    """A throw came to rest: score it (with the dice that stood during a re-roll). After a
    keep it is the player's choice to roll on (:func:`continue_roll`)."""
    if turn.phase == "keep":
        raise IllegalActionError(f"{ids.keep}: keep dice from the roll on the pad before rolling")
    if turn.phase == "decide":
        turn = continue_roll(turn)
    wanted = turn.dice_wanted(total)
    if len(dice) != wanted:
        raise IllegalActionError(f"C3: expected a roll of {n_dice(wanted)}, got {len(dice)}")
    full = tuple(sorted(turn.roll + dice)) if turn.phase == "reroll" else tuple(sorted(dice))
    blown = score_roll(full, table).blown
    return replace(turn, phase="blown" if blown else "keep", roll=full, rerolling=0)


def roll_score(turn: Turn, table: ComboTable) -> RollScore:
    return score_roll(turn.roll, table)


def apply_keep(turn: Turn, dice: Dice, total: int, table: ComboTable, ids: RuleIds) -> Turn:
    """Set aside ``dice`` of the standing roll; it must be one of the legal keeps."""
    if turn.phase != "keep":
        raise IllegalActionError(f"{ids.keep}: there is no roll to keep dice from")
    scored = roll_score(turn, table)
    option = scored.option(dice)
    if option is None:
        if not is_sub_multiset(tuple(dice), turn.roll):
            why = f"the roll {words(turn.roll)} has no {words(tuple(sorted(dice)))}"
        else:
            why = f"{words(tuple(sorted(dice)))} is not a legal keep"
        choices = "; ".join(f"{words(o.keep)} ({o.points})" for o in scored.options)
        raise IllegalActionError(f"{ids.keep}: {why}; legal keeps: {choices}")
    return keep_option(turn, option, total)


def keep_option(turn: Turn, option: KeepOption, total: int) -> Turn:
    step = Step(turn.roll, option.keep, option.points, option.combos)
    kept = tuple(sorted(turn.kept + option.keep))
    hot = len(kept) == total
    return replace(
        turn,
        phase="decide",
        points=turn.points + option.points,
        kept=() if hot else kept,
        steps=(*turn.steps, step),
        roll=(),
        hot=hot,
        may_stop=option.may_stop and not hot,
        cycle_start=len(turn.steps) + 1 if hot else turn.cycle_start,
        clause_rerolls=0 if hot else turn.clause_rerolls,  # Bolo B13 counts per 5-dice cycle
    )


def keep_sole_option(turn: Turn, table: ComboTable, total: int, why: str) -> Turn:
    """Before a bank: a standing roll with exactly one scoring keep is kept for the player;
    with several the player must choose first (``why`` opens the error, the keeps follow)."""
    if turn.phase != "keep":
        return turn
    options = roll_score(turn, table).options
    if len(options) != 1:
        listed = "; ".join(f"{words(o.keep)} ({o.points})" for o in options)
        raise IllegalActionError(f"{why}: {listed}")
    return keep_option(turn, options[0], total)


def turn_view(turn: Turn, settled: Turn, total: int) -> dict[str, Any]:
    """The scoreboard's fields for the turn in play: ``turn`` as it stands, ``settled`` as it
    is once a blow waiting on the pad is settled (it decides how many dice are wanted)."""
    return {
        "turn_points": turn.points,
        "dice_left": settled.dice_wanted(total),
        "current_roll": list(turn.roll) if turn.phase in ("keep", "blown") else [],
        "kept": [d for step in turn.steps for d in step.keep],
        "blown": turn.phase == "blown",
    }


def options_view(turn: Turn, table: ComboTable) -> list[dict[str, Any]]:
    """The legal keeps of the standing roll for the scoreboard; none outside the keep phase."""
    if turn.phase != "keep":
        return []
    return [o.to_json() for o in roll_score(turn, table).options]


def continue_roll(turn: Turn) -> Turn:
    """After a keep the player rolls again: back to waiting for dice."""
    return replace(turn, phase="roll", hot=False, may_stop=False)


def apply_reroll(turn: Turn, dice: Dice, rule: CockedRule, ids: RuleIds) -> Turn:
    """Cocked / stacked / off-pad dice of the standing roll are thrown again (RULES.md C1);
    an empty list means every die just rolled."""
    if turn.phase not in ("keep", "blown"):
        raise IllegalActionError(f"{ids.cocked}: a re-roll follows a roll, before any keep")
    chosen = tuple(sorted(dice)) if dice else turn.roll
    if not is_sub_multiset(chosen, turn.roll):
        raise IllegalActionError(
            f"{ids.cocked}: the roll {words(turn.roll)} has no {words(chosen)} to re-roll"
        )
    if rule == "reroll_all_just_rolled" and chosen != turn.roll:
        raise IllegalActionError(
            f"{ids.cocked} ({ids.cocked_option}=reroll_all_just_rolled):"
            " re-roll every die just rolled"
        )
    return replace(turn, phase="reroll", roll=_minus(turn.roll, chosen), rerolling=len(chosen))


def words(dice: Dice) -> str:
    return " ".join(map(str, dice)) if dice else "nothing"
