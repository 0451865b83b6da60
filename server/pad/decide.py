"""What one settled throw means for a table: pure decisions, no threads, no I/O.

:func:`decide` takes a game, its state, the camera's :class:`~vision.reading.Reading` and the
dice the pad service knows are still standing on the pad from a partial re-roll, and returns
ONE :class:`Decision`: the actions to apply (in order, all validated against the engine
here) and/or a :class:`Notice` for the table. The rules engine is the judge throughout: the
candidate plans are the engine's own legal actions and ``expecting``, and every plan is
checked by applying it to the state, so nothing here restates a game's rules.

- the right number of clean dice -> ``roll`` (``reveal`` when the table expects one);
- a COCKED / STACKED / OFF_PAD die -> ``roll`` + ``reroll`` of the offending dice, or of
  every die just rolled, per the game's house rule (``*.cocked_dice``, ``bolo.sloppy_dice``);
  when the flags are all unsure (``UNSURE_FLAG``) the notice asks the table to check the photo;
- too few dice -> "sloppy dice: re-roll" notice (no action: the engine takes no short roll);
  one die off the count the table waits for (too few or too many) also says how many dice
  the phone may log instead (``Notice.wanted``): the camera may have missed a die, or seen
  one that is not there;
- unreadable dice -> a "confirm" notice: the phone enters the roll (the snapshot is shown),
  offered as one tap per die: each unread die's best guesses and its crop of the photo
  (:class:`Asked`);
- fewer dice than the engine expects while a keep/farm is due -> the keep of that size is
  inferred when exactly one fits, or one is clearly best (:func:`keep_worth`), else asked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from scoring.actions import Action, Keep, Reroll, Reveal, Roll
from scoring.bar_dice.hand import ACE, hand_of
from scoring.errors import IllegalActionError
from scoring.game import Expecting, Game
from vision.reading import JUDGED, DieFlag, DieReading, Reading

ROLLING = frozenset({"roll", "roll_or_bank", "roll_or_stand", "farm_or_roll", "reveal"})
"""``Expecting.action`` values that a throw of ``Expecting.dice`` dice answers."""

KEEPING = frozenset({"keep", "keep_or_bank", "farm_or_roll", "reroll"})
"""``Expecting.action`` values where a keep (or a house-clause re-roll) may come first."""

OFFENDING = frozenset({DieFlag.COCKED, DieFlag.STACKED, DieFlag.OFF_PAD})
"""Flags that make a die be thrown again (RULES.md C1/C2)."""

UNSURE_FLAG = 0.9
"""A re-roll whose every offending die is flagged less surely than this says so: the table
looks at the photo and undoes the re-roll if the die was flat. On the clean, degraded and tray
renders the flags network's COCKED from 0.8 to 0.9 was right 12 times in 16 (5 in 9 in a
tray), from 0.9 up 1447 in 1453 (``bench_synth --only flags``)."""

STANDING_TOLERANCE = 0.5
"""A die counts as not moved when its centre is within this many die sizes of where it was."""

CROP_SIDES = 2.0
"""The photo crop the phone shows of an asked die is this many die sides wide, around its
centre: its pips, and the die or glare beside it that may be why it was not read."""


class NoticeKind(StrEnum):
    REROLL = "reroll"  # cocked / stacked / sloppy dice: throw again (the roll may be logged)
    MISSING = "missing"  # fewer dice than expected on the pad: the missing one is re-rolled
    CONFIRM = "confirm"  # some die could not be read: enter the roll on the phone
    KEEP = "keep"  # which dice were kept cannot be told from the count: choose on the phone
    INFERRED = "inferred"  # a keep was inferred from the dice count (fix or undo if wrong)
    COUNT = "count"  # more dice than the table expects (kept dice left on the pad?)
    REFUSED = "refused"  # the engine refused what the camera saw (its rule is quoted)
    IGNORED = "ignored"  # the table is not waiting for a throw (bidding, game over)


@dataclass(frozen=True)
class Asked:
    """A die the camera asks about (``value`` None): its place in ``Notice.dice``, its most
    probable values with their probabilities, best first (``DieReading.candidates``; may be
    empty: the phone then offers all six faces), and where it lies in the throw's photo:
    ``box`` is left, top, width, height as fractions of the photo's width and height, so a
    JPEG made smaller to fit the snapshot limit is cropped in the same place."""

    index: int
    candidates: tuple[tuple[int, float], ...]
    box: tuple[float, float, float, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "candidates": [[v, round(p, 3)] for v, p in self.candidates],
            "box": [round(b, 4) for b in self.box],
        }


def crop_box(die: DieReading, frame_size: tuple[int, int]) -> tuple[float, float, float, float]:
    """The square :data:`CROP_SIDES` die sides wide around ``die``, slid inside the frame
    (shrunk only when the frame is smaller), as fractions of the frame (see :class:`Asked`)."""
    width, height = max(1, frame_size[0]), max(1, frame_size[1])
    side = min(max(die.size_px * CROP_SIDES, 8.0), width, height)
    x, y = die.center_xy
    left = min(max(x - side / 2, 0.0), width - side)
    top = min(max(y - side / 2, 0.0), height - side)
    return (left / width, top / height, side / width, side / height)


def asked_about(dice: Sequence[DieReading], frame_size: tuple[int, int]) -> tuple[Asked, ...]:
    """Every die of ``dice`` the camera could not read, for the phone to answer."""
    return tuple(
        Asked(i, d.candidates, crop_box(d, frame_size))
        for i, d in enumerate(dice)
        if d.value is None
    )


@dataclass(frozen=True)
class Notice:
    """A sentence for the table about its last throw; ``dice`` is what the camera read (None
    for a die it could not read), ``options`` the keeps to choose from.

    ``wanted`` > 0 says the phone may answer the notice with a roll of that many dice: the
    dice read, each ``asked`` one answered, and one die removed (``wanted`` is one less than
    the dice read) or added (one more); 0: the notice is not answered by a roll."""

    kind: NoticeKind
    text: str
    dice: tuple[int | None, ...] = ()
    options: tuple[tuple[int, ...], ...] = ()
    asked: tuple[Asked, ...] = ()
    wanted: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value, "text": self.text}
        if self.dice:
            out["dice"] = list(self.dice)
        if self.options:
            out["options"] = [list(o) for o in self.options]
        if self.asked:
            out["asked"] = [a.to_json() for a in self.asked]
        if self.wanted:
            out["wanted"] = self.wanted
        return out


@dataclass(frozen=True)
class Decision:
    """The actions to apply, in order (the first ``roll``/``reveal`` carries the snapshot),
    a notice for the table, and the dice left standing on the pad for the re-roll owed."""

    actions: tuple[Action, ...] = ()
    notice: Notice | None = None
    standing: tuple[DieReading, ...] = field(default=())


@dataclass(frozen=True)
class _Plan:
    prefix: tuple[Action, ...]
    state: Any
    expecting: Expecting


def words(dice: Sequence[int | None]) -> str:
    return " ".join("?" if d is None else str(d) for d in dice) or "nothing"


def _n(n: int) -> str:
    return f"{n} {'die' if n == 1 else 'dice'}"


def reroll_rule(state: Any) -> str:
    """``reroll_offending`` or ``reroll_all_just_rolled``: the game's house rule for cocked,
    stacked and sloppy dice (Bolo's ``sloppy_dice``, everyone else's ``cocked_dice``)."""
    rules = getattr(state, "rules", None)
    rule = getattr(rules, "sloppy_dice", None) or getattr(rules, "cocked_dice", None)
    return "reroll_all_just_rolled" if rule == "reroll_all_just_rolled" else "reroll_offending"


def keep_worth(game: Game[Any], after: Any) -> tuple[float, ...] | None:
    """How good the keep that led to ``after`` is, comparable between keeps of one size
    (bigger is better), or None when the game has no such measure.

    Farkle games: the turn's points (same-size keeps leave the same dice to roll, so points
    decide). Bar Dice: the value of the farmed dice as a hand, then how many are wild aces.
    """
    if game.name in ("you-blew-it", "bolo"):
        return (float(after.turn.points),)
    if game.name == "bar-dice":
        go = after.round.go if after.round is not None else None
        farmed: tuple[int, ...] = go.farmed if go is not None else ()
        hand = hand_of(farmed, ace_required=False)
        return (float(hand.value if hand is not None else 0), float(farmed.count(ACE)))
    return None


def split_standing(
    dice: Sequence[DieReading], standing: Sequence[DieReading]
) -> tuple[tuple[DieReading, ...], tuple[DieReading, ...]] | None:
    """``(thrown, stayed)``: the dice of this reading that were thrown, and those that stayed
    where they were (same value, centre within :data:`STANDING_TOLERANCE` die sizes).

    None when some standing die is gone or moved: then the whole pad was re-thrown."""
    left = list(dice)
    stayed: list[DieReading] = []
    for s in standing:
        best: DieReading | None = None
        best_d = math.inf
        for d in left:
            reach = STANDING_TOLERANCE * max(s.size_px, d.size_px, 1.0)
            dist = math.dist(s.center_xy, d.center_xy)
            if d.value == s.value and dist <= reach and dist < best_d:
                best, best_d = d, dist
        if best is None:
            return None
        left.remove(best)
        stayed.append(best)
    return tuple(left), tuple(stayed)


def _plans(game: Game[Any], state: Any, exp: Expecting) -> list[_Plan]:
    """Every way the table can be waiting for a throw: directly, or after one keep (or a house
    clause re-roll) that the count of dice coming back must reveal."""
    plans: list[_Plan] = []
    if exp.action in ROLLING and exp.dice > 0:
        plans.append(_Plan((), state, exp))
    if exp.action not in KEEPING:
        return plans
    for action in game.legal_actions(state):
        if type(action) is not Keep and not (isinstance(action, Reroll) and action.reason):
            continue
        try:
            after = game.apply(state, action)
        except IllegalActionError:
            continue
        then = game.expecting(after)
        if then.action in ROLLING and then.dice > 0:
            plans.append(_Plan((action,), after, then))
    return plans


def _choose(game: Game[Any], plans: list[_Plan]) -> tuple[_Plan | None, list[_Plan]]:
    """The plan to apply among those fitting the dice count, or None and the tied choices."""
    if len(plans) == 1 or not plans[0].prefix:
        return plans[0], []
    scored = [(keep_worth(game, p.state), p) for p in plans]
    if any(w is None for w, _ in scored):
        return None, plans
    scored.sort(key=lambda wp: wp[0] or (), reverse=True)
    if scored[0][0] != scored[1][0]:
        return scored[0][1], []
    best = scored[0][0]
    return None, [p for w, p in scored if w == best]


def dice_wanted(game: Game[Any], state: Any) -> int | None:
    """How many dice the next throw should have: what the table waits for, or after a keep
    is due, the count left by the best keep (so the demo camera plays along with the game);
    None when no throw is expected."""
    plans = _plans(game, state, game.expecting(state))
    if not plans:
        return None
    if plans[0].prefix:
        worth = [keep_worth(game, p.state) or () for p in plans]
        plans = [p for _, p in sorted(zip(worth, plans, strict=True), key=lambda wp: wp[0])]
        return plans[-1].expecting.dice
    return plans[0].expecting.dice


def _kept_dice(action: Action) -> tuple[int, ...]:
    return tuple(getattr(action, "dice", ()))


def decide(
    game: Game[Any],
    state: Any,
    reading: Reading,
    *,
    standing: Sequence[DieReading] = (),
) -> Decision:
    """The one decision for a settled throw (see the module docstring).

    ``standing`` are the dice the pad service left on the pad for a partial re-roll it logged
    (only while nothing else has happened at the table since); they are told apart from the
    thrown dice by position and value.
    """
    exp = game.expecting(state)
    dice: tuple[DieReading, ...] = reading.dice
    stayed: tuple[DieReading, ...] = ()
    if standing:
        split = split_standing(dice, standing)
        if split is not None:
            dice, stayed = split
    seen = tuple(d.value for d in dice)
    plans = _plans(game, state, exp)
    if not plans:
        return Decision(
            notice=Notice(NoticeKind.IGNORED, f"not waiting for a throw: {exp.text}", seen)
        )
    n = len(dice)
    fitting = [p for p in plans if p.expecting.dice == n]
    rule = reroll_rule(state)
    if not fitting:
        dropped = getattr(getattr(state, "rules", None), "dropped_die", None)
        missing_rule = "reroll_offending" if dropped == "reroll_that_die" else rule
        notice = _count_notice(exp, plans, n, seen, missing_rule)
        if not plans[0].prefix and abs(n - plans[0].expecting.dice) == 1:  # a die off
            asked = asked_about(dice, reading.frame_size)
            notice = replace(notice, asked=asked, wanted=plans[0].expecting.dice)
        return Decision(notice=notice)
    plan, tied = _choose(game, fitting)
    if plan is None:
        options = tuple(_kept_dice(p.prefix[0]) for p in tied)
        listed = "; ".join(words(o) for o in options)
        text = (
            f"{exp.player or 'the table'}: {_n(n)} came back: which were kept? "
            f"({listed}) - choose on the phone"
        )
        return Decision(notice=Notice(NoticeKind.KEEP, text, seen, options))
    decision = _for_plan(plan, dice, stayed, rule, seen, reading.frame_size)
    return _validated(game, state, decision, seen)


def _count_notice(
    exp: Expecting, plans: list[_Plan], n: int, seen: tuple[int | None, ...], rule: str
) -> Notice:
    who = exp.player or "the table"
    want = plans[0].expecting.dice
    if n < want and not plans[0].prefix:
        missing = want - n
        if rule == "reroll_all_just_rolled":
            what = f"re-roll all {_n(want)}"
        else:
            what = f"re-roll the missing {_n(missing)}"
        text = f"sloppy dice: {who}: only {n} of {_n(want)} on the pad - {what}"
        return Notice(NoticeKind.MISSING, text, seen)
    sizes = sorted({p.expecting.dice for p in plans})
    wanted = " or ".join(str(s) for s in sizes)
    text = f"{who}: {_n(n)} on the pad, expected {wanted} ({exp.text})"
    return Notice(NoticeKind.COUNT, text, seen)


def _unsure(die: DieReading) -> bool:
    """A die flagged only COCKED / STACKED, none of them at ``UNSURE_FLAG`` or more (a flag
    without a confidence, or OFF_PAD, which the pad's outline decides, is sure)."""
    if DieFlag.OFF_PAD in die.flags:
        return False
    sure = [die.flag_sure(f) for f in die.flags & JUDGED]
    return bool(sure) and all(c is not None and c < UNSURE_FLAG for c in sure)


def _for_plan(
    plan: _Plan,
    dice: tuple[DieReading, ...],
    stayed: tuple[DieReading, ...],
    rule: str,
    seen: tuple[int | None, ...],
    frame_size: tuple[int, int],
) -> Decision:
    exp = plan.expecting
    who = exp.player or "the table"
    offending = [d for d in dice if d.flags & OFFENDING]
    unreadable = [d for d in dice if d.value is None]
    inferred = ""
    if plan.prefix and type(plan.prefix[0]) is Keep:
        inferred = f"kept {words(_kept_dice(plan.prefix[0]))} (from the dice count: fix if not); "
    roll_type = Reveal if exp.action == "reveal" else Roll
    if offending and exp.action != "reveal":
        off_pad = any(DieFlag.OFF_PAD in d.flags for d in offending)
        stacked = all(DieFlag.STACKED in d.flags for d in offending)
        reason = "sloppy" if off_pad else "stacked" if stacked else "cocked"
        every = rule == "reroll_all_just_rolled"
        count = len(dice) if every else len(offending)
        text = f"{inferred}{reason} dice: {who}: re-roll {'all ' if every else ''}{_n(count)}"
        if all(_unsure(d) for d in offending):
            text += " (the camera is not sure: check the photo, undo if it is wrong)"
        if unreadable:  # the roll cannot be logged; the next throw answers the same question
            return Decision(plan.prefix, Notice(NoticeKind.REROLL, text, seen))
        values = tuple(d.value for d in dice if d.value is not None)
        redo = () if every else tuple(d.value for d in offending if d.value is not None)
        stay = () if every else (*stayed, *(d for d in dice if not d.flags & OFFENDING))
        actions = (*plan.prefix, roll_type(values), Reroll(redo, reason))
        return Decision(actions, Notice(NoticeKind.REROLL, text, seen), stay)
    if unreadable or (offending and exp.action == "reveal"):
        text = (
            f"{inferred}{who}: the camera could not read every die ({words(seen)}): "
            "check the photo and enter the roll on the phone"
        )
        asked = asked_about(dice, frame_size)
        wanted = len(dice) if asked else 0  # flagged dice at a reveal: checked on the photo
        return Decision(plan.prefix, Notice(NoticeKind.CONFIRM, text, seen, (), asked, wanted))
    values = tuple(d.value for d in dice if d.value is not None)
    notice = Notice(NoticeKind.INFERRED, f"{who}: {inferred[:-2]}", seen) if inferred else None
    return Decision((*plan.prefix, roll_type(values)), notice)


def _validated(
    game: Game[Any], state: Any, decision: Decision, seen: tuple[int | None, ...]
) -> Decision:
    """The decision if the engine accepts its actions in order; else a REFUSED notice quoting
    the rule, with nothing applied."""
    try:
        for action in decision.actions:
            state = game.apply(state, action)
    except IllegalActionError as exc:
        shown = f" ({words(seen)})" if seen else ""
        text = f"the camera's reading{shown} was refused: {exc}"
        return Decision(notice=Notice(NoticeKind.REFUSED, text, seen))
    return decision
