"""Bar Dice rules, one action at a time: pure functions from a state to the next state.

Every round (order roll, elimination, sponsor turn, roll-off) is a roster rolling in order,
each player taking one *go*; a go ends on its roll when it is a one-roll flop, else with a
``stand``. Here each action is checked and landed: a throw (C3, D-1, D-7, D-8), farming
(D-8, D11), standing, the line-up, a re-roll (D-16, D14, D15) and the end. How a finished go
and round resolve is :mod:`scoring.bar_dice.rounds`; :mod:`scoring.bar_dice.game` wraps both
in the Game protocol.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from scoring.actions import Dice, Reroll
from scoring.bar_dice.hand import ACE, DICE, is_five_aces, pace_text
from scoring.bar_dice.rounds import (
    MAX_ROLLS,
    current,
    finish_go,
    roll_limit,
    show,
    start_play,
    too_lucky,
    value_of,
)
from scoring.bar_dice.rules import HouseRules
from scoring.bar_dice.state import BarDiceState, Go, News, Penalty, Result, Rethrow, Throw
from scoring.errors import IllegalActionError
from scoring.game import n_dice


def _minus(have: Dice, take: Dice) -> Dice | None:
    """``have`` without the dice of ``take`` (a multiset difference), or None if not a subset."""
    left = Counter(have)
    left.subtract(Counter(take))
    if any(n < 0 for n in left.values()):
        return None
    out = list(have)
    for d in take:
        out.remove(d)
    return tuple(out)


def n_rolls(n: int) -> str:
    """ "1 roll", "2 rolls"."""
    return "1 roll" if n == 1 else f"{n} rolls"


# -- the rules, one action at a time ------------------------------------------------------------


def over_text(state: BarDiceState) -> str:
    """How the game ended, in words (the outcome's reason)."""
    if state.ended or state.sponsor is None:
        return "ended by the scorekeeper"
    won = state.turns_won[state.players.index(state.sponsor)]
    lost = sum(t.loser == state.sponsor for t in state.turns)
    return (
        f"{state.sponsor} is the sponsor (lost {lost} turns to {won}) "
        "and buys a round for all the players"
    )


def _need(state: BarDiceState, player: str, n: int, got: int) -> IllegalActionError:
    return IllegalActionError(f"C3: {player} rolls {n_dice(n)} now; the roll had {got}")


def roll(state: BarDiceState, dice: Dice) -> BarDiceState:
    """A throw the camera (or a phone) read: checked against C3, D-1, D-7 and D-8, then
    landed; a pending re-roll is completed by it."""
    rnd = state.round
    assert rnd is not None
    player = current(rnd)
    if state.rethrow is not None:
        if len(dice) != state.rethrow.count:
            raise _need(state, player, state.rethrow.count, len(dice))
        return _throw(replace(state, rethrow=None), state.rethrow.kept, dice)
    if rnd.kind == "order":
        if len(dice) != 1:
            raise IllegalActionError(f"D-1: the order of play is one die each; got {len(dice)}")
        return _throw(state, (), dice)
    go = rnd.go or Go(player)
    limit = roll_limit(rnd)
    if go.rolls >= limit:
        hint = f"stand on {pace_text(result_of(go, state.rules).value, go.rolls)}"
        if rnd.results:
            raise IllegalActionError(
                f"D-7: the hammer took {n_rolls(limit)}; you may take no more ({hint})"
            )
        raise IllegalActionError(f"D-7: at most {MAX_ROLLS} rolls per turn ({hint})")
    want = DICE - len(go.farmed)
    if not want:
        raise IllegalActionError("D-8: all five dice are farmed: stand on the hand")
    if len(dice) != want:
        if go.farmed and len(dice) > want:
            raise IllegalActionError(
                f"D-8: farmed dice ({show(go.farmed)}) may not be re-rolled this turn: "
                f"roll {n_dice(want)}, the roll had {len(dice)}"
            )
        raise _need(state, player, want, len(dice))
    return _throw(state, (), dice)


def _throw(state: BarDiceState, kept: Dice, thrown: Dice) -> BarDiceState:
    """Land a throw and remember the state before it, for a re-roll."""
    before = replace(state, throw=None, news=())
    after = _land(state, kept + thrown, thrown)
    return replace(after, throw=Throw(before, kept, thrown))


def _land(state: BarDiceState, dice: Dice, thrown: Dice) -> BarDiceState:
    rnd = state.round
    assert rnd is not None
    player = current(rnd)
    if rnd.kind == "order":
        text = f"{player} rolls a {dice[0]} for the order"
        return finish_go(state, Result(player, dice[0], 1, dice), [News("order", player, text)])
    news: list[News] = []
    if state.rules.too_lucky == "five_aces_one_throw" and is_five_aces(thrown):
        state = too_lucky(state, player, dice, news)
    prior = rnd.go or Go(player)
    go = Go(player, prior.rolls + 1, prior.farmed, dice)
    if rnd.max_rolls == 1:  # a flop is the whole go; longer goes end with a stand
        return finish_go(state, result_of(go, state.rules), news)
    return replace(state, round=replace(rnd, go=go), news=tuple(news))


def result_of(go: Go, rules: HouseRules) -> Result:
    """The hand a go stands on: farmed dice plus the last roll."""
    hand = go.farmed + go.roll
    return Result(go.player, value_of(hand, rules), go.rolls, hand)


def farm(state: BarDiceState, dice: Dice) -> BarDiceState:
    """Set dice of the last roll aside for the rest of the go (D-8, D11)."""
    rnd = state.round
    assert rnd is not None
    if state.rethrow is not None:
        raise IllegalActionError("D-16: the last throw must be re-rolled before farming")
    if rnd.kind == "order" or rnd.max_rolls == 1:
        raise IllegalActionError(
            "D-8: farming is for turns of up to three rolls (sponsor phase, or all day); "
            "this is a one-roll flop"
        )
    go = rnd.go
    if go is None or go.rolls == 0:
        raise IllegalActionError("D-8: roll before farming: dice are farmed from the last roll")
    left = _minus(go.roll, dice)
    if left is None:
        farmed = f"; farmed dice ({show(go.farmed)}) stay farmed" if go.farmed else ""
        raise IllegalActionError(
            f"D-8: only dice of the last roll can be farmed ({show(go.roll)}); "
            f"{show(dice)} are not among them{farmed}"
        )
    if go.rolls >= roll_limit(rnd):
        raise IllegalActionError("D-7: no rolls are left to farm for: stand on the hand")
    if not go.farmed and state.rules.first_farm_needs_ace and ACE not in dice:
        raise IllegalActionError(
            "D-8: at least one ace is needed to begin farming; "
            f"{show(dice)} has none (keep rolling for an ace)"
        )
    new = Go(go.player, go.rolls, go.farmed + dice, left)
    news = News("farm", go.player, f"{go.player} farms {show(dice)}", None, dice)
    return replace(state, round=replace(rnd, go=new), news=(news,))


def stand(state: BarDiceState) -> BarDiceState:
    """End a multi-roll go on its hand ("in one", "in two"...; D-7)."""
    rnd = state.round
    assert rnd is not None
    if state.rethrow is not None:
        raise IllegalActionError("D-16: the last throw must be re-rolled before standing")
    if rnd.kind == "order" or rnd.max_rolls == 1:
        raise IllegalActionError("D-3: a flop is a single roll; there is no standing on it")
    go = rnd.go
    if go is None or go.rolls == 0:
        raise IllegalActionError("D-7: roll at least once before standing")
    return finish_go(state, result_of(go, state.rules), [])


def lineup(state: BarDiceState, order: tuple[str, ...]) -> BarDiceState:
    """The table sets the order of play instead of rolling for it (D-1)."""
    rnd = state.round
    assert rnd is not None
    if state.phase != "order" or rnd.results or rnd.resets:
        raise IllegalActionError("D-1: the order of play is set before the first roll")
    if sorted(order) != sorted(state.players):
        raise IllegalActionError(
            f"D-1: the lineup must name every player once: {', '.join(state.players)}"
        )
    news = [News("order", order[0], f"{order[0]} goes first (lineup)")]
    return start_play(replace(state, players=order), order[0], news)


def reroll(state: BarDiceState, action: Reroll) -> BarDiceState:
    """Take back the throw just made and owe a re-throw: cocked or stacked dice (D-16, C1,
    D14) or a dropped die (D15, a gin shot).

    The re-throw is always owed, so a hand is always five dice: the dice that stayed plus the
    re-throw. Under ``cocked_reroll_counts`` a cocked throw also spends a roll of the pace and
    the re-throw is the next roll, but only while a roll is left for it: a cocked throw that
    was the go's last allowed roll is re-rolled in its place, as when the rule is off (D-7
    never allows a fourth roll, nor more than the hammer took)."""
    throw = state.throw
    if throw is None:
        raise IllegalActionError(
            "D-16: a re-roll replaces the throw just made; nothing has been thrown since"
        )
    listed = action.dice
    rest = _minus(throw.thrown, listed)
    if rest is None:
        raise IllegalActionError(
            f"D-16: {show(listed)} were not in the last throw ({show(throw.thrown)})"
        )
    before = throw.before
    rnd = before.round
    assert rnd is not None
    player = current(rnd)
    rules = state.rules
    penalties = before.penalties
    if action.reason == "dropped":
        if not listed:
            raise IllegalActionError("D15: name the dropped die to re-roll it")
        redo, kept = listed, throw.kept + rest
        text = f"{player} dropped {n_dice(len(listed))}: a shot of well gin (D-14), re-roll it"
        penalties = (*penalties, Penalty(player, "gin", text))
        news = News("gin", player, text, None, listed)
    else:
        if rules.cocked_dice == "reroll_all_just_rolled" or not listed:
            redo, kept = throw.thrown, throw.kept
        else:
            redo, kept = listed, throw.kept + rest
        why = action.reason or "cocked"
        text = f"{player}: {why} dice, re-roll {n_dice(len(redo))} (D-16)"
        if rules.cocked_reroll_counts and rnd.kind != "order" and rnd.max_rolls > 1:
            go, limit = rnd.go or Go(player), roll_limit(rnd)
            if go.rolls + 1 < limit:  # D14: the cocked throw spends a roll
                text += f"; the {why} throw counts as roll {go.rolls + 1} of {limit} (D14)"
                before = replace(
                    before, round=replace(rnd, go=Go(player, go.rolls + 1, go.farmed, kept))
                )
            else:  # no roll is left to spend: the re-roll stands in for the last one
                text += f"; it was roll {limit} of {limit}, so the re-roll replaces it (D14)"
        news = News("reroll", player, text, None, redo)
    base = replace(before, penalties=penalties, news=(news,), throw=None)
    return replace(base, rethrow=Rethrow(kept, len(redo), action.reason or "cocked"))


def end(state: BarDiceState) -> BarDiceState:
    """The scorekeeper ends the game early: no sponsor is named."""
    news = News("ended", None, "the scorekeeper ended the game")
    return replace(state, phase="over", ended=True, news=(news,))
