"""How well a Farkle turn was played, by the coach's own yardstick (You Blew It and Bolo).

Each keep of a turn is one *decision*: which dice to keep, then roll on or bank. The coach's
solved policy (:mod:`scoring.coach.solver`) gives the expected points of every such choice
under best play afterwards, so a decision *gives away* the best choice's value minus the
value of the choice made: never negative, by construction, and 0 for the best play. What the
turn then brought above what the decisions made were expected to give is *luck*:

    luck = points taken - (the fresh turn's value under best play - points given away)

so over many turns luck averages 0 whoever plays, and a player's points per turn are the
best play's value, minus what they gave away, plus their luck. Values are in turn points (in
You Blew It a blow also wipes the teammates' points of the round: that loss counts too).
The coach maximises expected points; it knows nothing of a race to the target, so endgame
gambles are rated as the points they cost on average.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scoring.coach.solver import Policy, dice_text, successor
from scoring.farkle.combos import KeepOption, keeps
from scoring.farkle.turn import Step
from scoring.game import n_dice

WIN = (0, True, False)  #: the solver's successor state of a keep that wins at once
COSTLY = 3  #: the costliest decisions of a game kept per player
NOTABLE = 0.5  #: a decision giving away less than this is the best play, to the page


@dataclass(frozen=True)
class Decision:
    """One rated decision: what it gave away (``cost``, points on average) and in words."""

    cost: float
    text: str

    def to_json(self) -> dict[str, object]:
        return {"cost": round(self.cost, 1), "text": self.text}


@dataclass(frozen=True)
class TurnRating:
    """A finished turn rated: points given away, luck, and its decisions that cost."""

    decisions: int
    given_away: float
    luck: float
    costly: tuple[Decision, ...]


def _chosen(roll: Sequence[int], step: Step, policy: Policy) -> KeepOption | None:
    """The keep the player made, as one of the roll's legal keeps."""
    options = keeps(tuple(roll), policy.spec.table)
    exact = [o for o in options if o.keep == tuple(sorted(step.keep))]
    same = [o for o in exact if o.points == step.points]
    found = same or exact
    return found[0] if found else None


def _then(policy: Policy, at_risk: int, state: tuple[int, bool, bool]) -> tuple[str, float]:
    """The best follow-up of a keep that leads to ``state``: ``bank`` or ``roll``, its value."""
    if state == WIN:
        return "win", policy.spec.win_value(at_risk)
    n, may_stop, clause = state
    roll = policy.roll_value(at_risk, n, clause)
    bank = policy.spec.bank(at_risk) if may_stop else None
    if bank is not None and bank >= roll:
        return "bank", bank
    return "roll", roll


def rate_turn(
    policy: Policy, steps: Sequence[Step], *, banked: bool, teammates: int = 0
) -> TurnRating | None:
    """Rate one finished turn: its ``steps`` (roll and keep), whether it ended ``banked``
    (else blown), ``teammates``: the points a blow would also wipe (You Blew It). ``None``
    when the coach cannot follow it (a keep it does not know: a house rule changed)."""
    spec = policy.spec
    at_risk = teammates
    given = 0.0
    costly: list[Decision] = []
    rated = 0
    final: float | None = None
    for i, step in enumerate(steps):
        option = _chosen(step.roll, step, policy)
        ranked = policy.keep_values(step.roll, at_risk)
        if option is None or not ranked:  # not a keep the coach knows (a rule changed)
            return None
        after = at_risk + option.points
        state = successor(spec, len(step.roll), option)
        last = i == len(steps) - 1
        if state == WIN:
            what, chosen = "won", spec.win_value(after)
            final = chosen
        elif last and banked:
            bank = spec.bank(after)
            what, chosen = f"banked {after - teammates}", bank if bank is not None else 0.0
            final = chosen
        else:
            n = state[0]
            what, chosen = f"rolled {n_dice(n)}", policy.roll_value(after, n, state[2])
        best_option, best, best_state = ranked[0]
        cost = max(0.0, best - chosen)
        given += cost
        rated += 1
        if cost >= NOTABLE:
            then, _ = _then(policy, at_risk + best_option.points, best_state)
            follow = {"bank": "bank", "win": "win"}.get(then, f"roll {n_dice(best_state[0])}")
            if best_option.keep == option.keep:
                play = follow
            else:
                play = f"keep {dice_text(best_option.keep)} and {follow}"
            text = (
                f"kept {dice_text(option.keep)}, {what}: the best play was to {play}, "
                f"worth {cost:.0f} more on average"
            )
            costly.append(Decision(cost, text))
        at_risk = after
    if not banked:
        final = 0.0
    elif final is None:  # banked with no keep of its own (a rule the coach cannot follow)
        return None
    start = policy.roll_value(teammates, spec.table.dice, False)
    luck = (final - start) + given
    costly.sort(key=lambda d: -d.cost)
    return TurnRating(rated, given, luck, tuple(costly[:COSTLY]))
