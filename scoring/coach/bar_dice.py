"""Bar Dice coach: the chance to reach a hand within the rolls left, and the best farming.

Exact dynamic programming over multisets (multinomial weights), memoised per rule set and goal:
a go is "farmed dice, rolls left"; after each roll the player stands or farms some of the
rolled dice and throws the rest again (RULES.md D-7, D-8, D11: the first farm needs an ace).
Hands are valued by :func:`scoring.bar_dice.hand.hand_value` only.

Goals: ``at_least(v)`` maximises P(final hand >= v) ("beat or tie" v; ``v = 0`` means any
counting hand, which beats "nothing"); ``beat_pace(v, rolls)`` maximises P(winning the turn)
against the hammer's "v in rolls": a higher hand wins, an equal one in fewer rolls wins under
D8, an equal one in as many rolls (or "nothing" against "nothing") goes to a roll-off, counted
as 1/2 (one flop each until someone wins: symmetric); ``mean`` maximises the mean hand value
("nothing" = 0), a reasonable aim for the hammer, who sets the pace with no target yet.

``elimination_round(...)`` is the goal of an elimination go (D-5, D-12, D6): win the round
against the hands so far, with ties settled as the engine settles them under
``bardice.one_tie_all_tie``. ``any_counting``: a hand equal to *any* counting hand so far (not
only the best) resets the round, and so does any earlier pair of equal hands, whatever is
thrown now; ``top_only``: a tie for the top resets it; ``off`` (and in an elimination
roll-off): the players tied for the top roll off, one flop each, so each of ``m`` wins 1/m. A
reset is worth ``share``, the chance to win the round rolled again: ``1/n`` for ``n`` players
of one-flop rounds, which is exact (every seat flops alike, so every seat is as likely to be
out); for all-day rounds it is the same fair share, an approximation (there the later seats,
who know the hand to top, do better). For the last to roll "the hands so far" are all of
them, so the figure is the exact chance to be out of this round.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from scoring.bar_dice.hand import ACE, DICE, hand_value, result_key, value_words
from scoring.bar_dice.rules import HouseRules
from scoring.coach.solver import multisets

Dice = tuple[int, ...]


@dataclass(frozen=True)
class Goal:
    """What a go plays for: ``kind`` ``at_least`` (with ``value``), ``beat_pace`` (the pace
    ``value`` in ``rolls``; -1 = "nothing") or ``mean``. ``spare``: throws this go may take
    beyond ``rolls`` (an all-day elimination go is limited by the first go, not by the best
    hand it must top), so standing with more than ``spare`` left is "in fewer rolls"."""

    kind: str
    value: int = 0
    rolls: int = 0
    fewer_rolls_wins_tie: bool = True
    spare: int = 0
    nothing_in_fewer_rolls_wins: bool = True  # bardice.nothing_in_fewer_rolls_wins
    # kind "round" (see elimination_round): the counting hands so far as rank keys, the tie
    # rule, what a reset is worth and the rolls this go may take.
    keys: tuple[tuple[int, int], ...] = ()
    tie_rule: str = "any_counting"
    share: float = 0.0
    limit: int = 1

    def utility(self, value: int | None, rolls_left: int = 0) -> float:
        """Utility of standing on ``value`` with ``rolls_left`` throws unused."""
        if self.kind == "mean":
            return float(value or 0)
        if self.kind == "round":
            return self._round_utility(value, self.limit - rolls_left)
        mine = -1 if value is None else value
        if self.kind == "at_least":
            return 1.0 if value is not None and mine >= self.value else 0.0
        if mine != self.value:
            return 1.0 if mine > self.value else 0.0
        nothing_rolls_off = value is None and not self.nothing_in_fewer_rolls_wins
        if nothing_rolls_off or not self.fewer_rolls_wins_tie or rolls_left == self.spare:
            return 0.5  # the same hand in as many rolls (or nothing v nothing): a roll-off
        return 1.0 if rolls_left > self.spare else 0.0  # D8: fewer rolls win, more lose

    def _round_utility(self, value: int | None, rolls: int) -> float:
        """The chance to win an elimination round standing on ``value`` in ``rolls``, against
        the counting hands ``keys`` (as :func:`scoring.bar_dice.rounds._resolve_elimination`
        settles it: a reset is worth ``share``)."""
        keys, rule = self.keys, self.tie_rule
        top = max(keys)
        tied_top = keys.count(top)
        if rule == "any_counting" and len(set(keys)) < len(keys):
            return self.share  # two hands so far already match: the round resets regardless
        mine = result_key(
            value,
            rolls,
            fewer_rolls_wins_tie=self.fewer_rolls_wins_tie,
            nothing_in_fewer_rolls_wins=self.nothing_in_fewer_rolls_wins,
        )
        if value is not None and mine > top:
            return 1.0
        if value is not None and mine == top:
            return 1.0 / (tied_top + 1) if rule == "off" else self.share
        if rule == "any_counting" and value is not None and mine in keys:
            return self.share  # equal to a lower counting hand: one tie all tie
        if rule == "top_only" and tied_top > 1:
            return self.share  # the top is already shared: a reset unless someone tops it
        return 0.0


def at_least(value: int) -> Goal:
    return Goal("at_least", value)


def beat_pace(
    value: int | None,
    rolls: int,
    *,
    fewer_rolls_wins_tie: bool = True,
    spare: int = 0,
    nothing_in_fewer_rolls_wins: bool = True,
) -> Goal:
    """Win the turn against the hammer's ``value`` (``None``: nothing) in ``rolls`` rolls
    (``spare``: see :class:`Goal`)."""
    pace = -1 if value is None else value
    return Goal("beat_pace", pace, rolls, fewer_rolls_wins_tie, spare, nothing_in_fewer_rolls_wins)


MEAN = Goal("mean")


def elimination_round(
    keys: Iterable[tuple[int, int]],
    *,
    players: int,
    limit: int = 1,
    tie_rule: str = "any_counting",
    fewer_rolls_wins_tie: bool = True,
    nothing_in_fewer_rolls_wins: bool = True,
) -> Goal:
    """Win an elimination round of ``players`` against the counting hands so far (``keys``:
    their :func:`scoring.bar_dice.hand.result_key`), taking up to ``limit`` rolls, ties
    settled by ``tie_rule`` (``bardice.one_tie_all_tie``; ``off`` for a roll-off too)."""
    ordered = tuple(sorted(keys))
    if not ordered:
        raise ValueError("an elimination goal needs a counting hand to top")
    if tie_rule not in ("any_counting", "top_only", "off"):
        raise ValueError(f"unknown one_tie_all_tie {tie_rule!r}")
    if players < 2 or not 1 <= limit <= 3:
        raise ValueError("a round has at least two players and a go 1 to 3 rolls")
    return Goal(
        "round",
        value=ordered[-1][0],
        fewer_rolls_wins_tie=fewer_rolls_wins_tie,
        nothing_in_fewer_rolls_wins=nothing_in_fewer_rolls_wins,
        keys=ordered,
        tie_rule=tie_rule,
        share=1.0 / players,
        limit=limit,
    )


@dataclass(frozen=True)
class _Rules:
    ace_required: bool
    five_aces_value: int
    first_farm_needs_ace: bool

    @staticmethod
    def of(rules: HouseRules) -> _Rules:
        return _Rules(rules.ace_required, rules.five_aces_value, rules.first_farm_needs_ace)


def _sorted(dice: Iterable[int]) -> Dice:
    return tuple(sorted(dice))


def _sub_multisets(roll: Dice) -> list[Dice]:
    """Every sub-multiset of ``roll`` once (sorted)."""
    counts = Counter(roll)
    faces = sorted(counts)
    out = []
    for pick in itertools.product(*(range(counts[f] + 1) for f in faces)):
        out.append(tuple(f for f, k in zip(faces, pick, strict=True) for _ in range(k)))
    return out


@lru_cache(maxsize=200_000)
def _value(r: _Rules, dice: Dice) -> int | None:
    return hand_value(dice, ace_required=r.ace_required, five_aces_value=r.five_aces_value)


@lru_cache(maxsize=200_000)
def _roll(r: _Rules, goal: Goal, farmed: Dice, rolls: int) -> float:
    """Expected utility of throwing the unfarmed dice now with ``rolls`` rolls left (>= 1)."""
    m = DICE - len(farmed)
    total = 0
    acc = 0.0
    for dice, ways in multisets(m):
        acc += ways * _after(r, goal, farmed, dice, rolls - 1)
        total += ways
    return acc / total


def _choices(r: _Rules, farmed: Dice, roll: Dice) -> list[Dice]:
    """Dice that may be farmed from ``roll`` before the next throw (leaving at least one)."""
    out = []
    for sub in _sub_multisets(roll):
        if len(sub) == len(roll):
            continue
        if sub and not farmed and r.first_farm_needs_ace and ACE not in sub:
            continue
        out.append(sub)
    return out


@lru_cache(maxsize=200_000)
def _after(r: _Rules, goal: Goal, farmed: Dice, roll: Dice, rolls_left: int) -> float:
    """Expected utility after a throw showing ``roll``: stand, or farm and throw again."""
    best = goal.utility(_value(r, _sorted(farmed + roll)), rolls_left)
    if rolls_left <= 0:
        return best
    for sub in _choices(r, farmed, roll):
        best = max(best, _roll(r, goal, _sorted(farmed + sub), rolls_left))
    return best


def _check(farmed: Dice, roll: Dice, rolls_left: int) -> None:
    if any(not 1 <= d <= 6 for d in farmed + roll):
        raise ValueError("dice show 1-6")
    if len(farmed) + len(roll) > DICE:
        raise ValueError(f"a hand has {DICE} dice, got {len(farmed) + len(roll)}")
    if not 0 <= rolls_left <= 3:
        raise ValueError(f"rolls left are 0 to 3, got {rolls_left}")


def p_reach(
    goal_value: int,
    *,
    rolls_left: int,
    farmed: Iterable[int] = (),
    rules: HouseRules | None = None,
) -> float:
    """P(a hand >= ``goal_value`` within ``rolls_left`` throws of the unfarmed dice), with
    the best farming (``goal_value = 0``: any counting hand)."""
    f = _sorted(farmed)
    _check(f, (), rolls_left)
    if len(f) == DICE or rolls_left == 0:
        return (
            at_least(goal_value).utility(_value(_Rules.of(rules or HouseRules()), f))
            if len(f) == DICE
            else 0.0
        )
    return _roll(_Rules.of(rules or HouseRules()), at_least(goal_value), f, rolls_left)


@dataclass(frozen=True)
class FarmChoice:
    """One choice after a throw: ``farm`` these dice and throw the rest, or stand."""

    farm: Dice
    stand: bool
    value: float  #: P(goal) (or the mean hand) under best play afterwards

    def to_json(self) -> dict[str, Any]:
        return {"farm": list(self.farm), "stand": self.stand, "value": round(self.value, 4)}


def farm_choices(
    roll: Iterable[int],
    *,
    rolls_left: int,
    goal: Goal,
    farmed: Iterable[int] = (),
    rules: HouseRules | None = None,
) -> list[FarmChoice]:
    """Every choice after a throw showing ``roll`` (stand, or farm a legal subset and throw
    the rest), best first; ``rolls_left`` throws remain after this one."""
    f, rl = _sorted(farmed), _sorted(roll)
    _check(f, rl, rolls_left)
    r = _Rules.of(rules or HouseRules())
    out = [FarmChoice((), True, goal.utility(_value(r, _sorted(f + rl)), rolls_left))]
    if rolls_left > 0:
        for sub in _choices(r, f, rl):
            out.append(FarmChoice(sub, False, _roll(r, goal, _sorted(f + sub), rolls_left)))
    out.sort(key=lambda c: (-round(c.value, 12), not c.stand, -len(c.farm), c.farm))
    return out


def _best(
    r: _Rules, goal: Goal, farmed: Dice, roll: Dice, rolls_left: int, rules: HouseRules | None
) -> float:
    """Best expected utility now: after the throw ``roll``, or before throwing."""
    if roll:
        return farm_choices(roll, rolls_left=rolls_left, goal=goal, farmed=farmed, rules=rules)[
            0
        ].value
    if rolls_left:
        return _roll(r, goal, farmed, rolls_left)
    return goal.utility(_value(r, farmed))


def go_hint(
    *,
    rolls_left: int,
    farmed: Iterable[int] = (),
    roll: Iterable[int] = (),
    target: int | None = None,
    beat_nothing: bool = False,
    pace_rolls: int | None = None,
    limit: int | None = None,
    versus: str = "win the turn against",
    rules: HouseRules | None = None,
    round_goal: Goal | None = None,
) -> dict[str, Any]:
    """The hint for a go. ``roll``: the throw on the pad (empty before the first throw);
    ``rolls_left``: throws still allowed after it.

    With a pace (``target``, or ``beat_nothing`` when the pace is "nothing") it reports
    ``p_goal`` (beat or tie) and ``p_beat``; with ``pace_rolls`` (the hammer's rolls) also
    ``p_win`` and the advice plays for it, otherwise for ``p_goal``. With no pace the advice
    plays for the best mean hand (``mean_hand``). ``limit``: the rolls this go may take when
    that is not ``pace_rolls`` (all-day elimination); ``versus`` words the ``p_win`` text.
    ``round_goal`` (an :func:`elimination_round` goal, with a pace): ``p_win`` and the advice
    play for it instead of the sponsor-phase pace (an elimination go)."""
    f, rl = _sorted(farmed), _sorted(roll)
    _check(f, rl, rolls_left)
    if not rl and len(f) < DICE and rolls_left == 0:
        raise ValueError("no throw on the pad and no rolls left")
    rules = rules or HouseRules()
    r = _Rules.of(rules)
    paced = target is not None or beat_nothing
    if paced and pace_rolls is not None and round_goal is not None:
        goal = round_goal
    elif paced and pace_rolls is not None:
        pace = None if beat_nothing else target
        spare = 0 if limit is None else max(limit - pace_rolls, 0)
        goal = beat_pace(
            pace,
            pace_rolls,
            fewer_rolls_wins_tie=rules.fewer_rolls_wins_tie,
            spare=spare,
            nothing_in_fewer_rolls_wins=rules.nothing_in_fewer_rolls_wins,
        )
    elif paced:
        goal = at_least(0 if beat_nothing or target is None else target)
    else:
        goal = MEAN
    out: dict[str, Any] = {
        "game": "bar-dice",
        "farmed": list(f),
        "roll": list(rl),
        "rolls_left": rolls_left,
        "target": None if beat_nothing else target,
        "pace_rolls": pace_rolls,
        "goal": goal.kind,
    }
    if rl:
        choices = farm_choices(rl, rolls_left=rolls_left, goal=goal, farmed=f, rules=rules)
        best = choices[0]
        hand = _value(r, _sorted(f + rl))
        out["hand"] = hand
        out["choices"] = [c.to_json() for c in choices[:8]]
        out["advice"] = "stand" if best.stand else "farm" if best.farm else "roll"
        out["farm"] = list(best.farm)
        if best.stand:
            text = f"Stand on {value_words(hand)}"
        elif not best.farm:
            text = f"Throw all {DICE - len(f)} again"
        else:
            text = (
                f"Farm {' '.join(map(str, best.farm))} and throw {DICE - len(f) - len(best.farm)}"
            )
        chance = best.value
    else:
        out["advice"] = "roll"
        chance = _best(r, goal, f, rl, rolls_left, rules)
        text = f"Throw {DICE - len(f)}"
    if goal.kind == "mean":
        out["mean_hand"] = round(chance, 2)
        out["text"] = f"{text}: best mean hand {chance:.1f}."
        return out
    floor = 0 if beat_nothing or target is None else target
    out["p_goal"] = round(_best(r, at_least(floor), f, rl, rolls_left, rules), 4)
    if beat_nothing or target is None:
        aim = "to make a counting hand"
    else:
        out["p_beat"] = round(_best(r, at_least(target + 1), f, rl, rolls_left, rules), 4)
        aim = f"to beat or tie {value_words(target)}"
    if goal.kind in ("beat_pace", "round"):
        out["p_win"] = round(chance, 4)
        against = "nothing" if beat_nothing else value_words(target)
        out["text"] = (
            f"{text}: {100 * chance:.1f} % to {versus} {against} in {pace_rolls} "
            f"({100 * out['p_goal']:.1f} % {aim})."
        )
    else:
        out["text"] = f"{text}: {100 * chance:.1f} % {aim}."
    return out


def forget() -> None:
    """Drop memoised results (benchmarks time a cold start with this)."""
    _roll.cache_clear()
    _after.cache_clear()
    _value.cache_clear()
