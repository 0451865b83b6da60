"""Bar Dice rules, one action at a time: pure functions from a state to the next state.

Every round (order roll, elimination, sponsor turn, roll-off) is a roster rolling in order,
each player taking one *go*; a go ends on its roll when it is a one-roll flop, else with a
``stand``. Finished rounds are resolved here (resets, roll-offs, who is out, turns and
horses, the sponsor). :mod:`scoring.bar_dice` wraps these in the Game protocol.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from scoring.actions import Dice, Reroll
from scoring.bar_dice.hand import (
    ACE,
    DICE,
    hand_value,
    is_five_aces,
    pace_text,
    result_key,
    rolls_words,
    value_words,
)
from scoring.bar_dice.rules import HouseRules
from scoring.bar_dice.state import (
    BarDiceState,
    Go,
    News,
    Penalty,
    Result,
    Rethrow,
    Round,
    Standing,
    Throw,
    TurnResult,
)
from scoring.errors import IllegalActionError
from scoring.game import n_dice

MAX_ROLLS = 3  #: D-7: up to three rolls per turn


# -- small helpers ----------------------------------------------------------------------------


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


def show(dice: Dice) -> str:
    """``(1, 4, 4)`` -> "1 4 4" for messages."""
    return " ".join(map(str, dice)) if dice else "no dice"


def _rotate(names: Sequence[str], first: str) -> tuple[str, ...]:
    i = list(names).index(first)
    return (*names[i:], *names[:i])


def _value(dice: Dice, rules: HouseRules) -> int | None:
    return hand_value(dice, ace_required=rules.ace_required, five_aces_value=rules.five_aces_value)


def rank(r: Result, rules: HouseRules) -> tuple[int, int]:
    """How results compare: value first ("nothing" lowest), then fewer rolls (D8; for
    "nothing" too unless ``nothing_in_fewer_rolls_wins`` is off)."""
    return result_key(
        r.value,
        r.rolls,
        fewer_rolls_wins_tie=rules.fewer_rolls_wins_tie,
        nothing_in_fewer_rolls_wins=rules.nothing_in_fewer_rolls_wins,
    )


def current(rnd: Round) -> str:
    """Whose go it is in ``rnd``."""
    return rnd.roster[len(rnd.results)]


def n_rolls(n: int) -> str:
    """ "1 roll", "2 rolls"."""
    return "1 roll" if n == 1 else f"{n} rolls"


def roll_limit(rnd: Round) -> int:
    """Rolls allowed to the go now under way: the pace setter may take all; the rest take
    no more than the first go of the round did (D-7)."""
    if rnd.max_rolls == 1 or not rnd.results:
        return rnd.max_rolls
    return rnd.results[0].rolls


def _horses(n: int) -> str:
    return "a horse" if n == 1 else f"{('', 'one', 'two', 'three', 'four')[n]} horses"


def horses_text(finalists: Sequence[str], lost: Sequence[int]) -> str:
    """ "a horse on Bob", "a horse a piece" (D-10)."""
    if not finalists or not any(lost):
        return "no horses yet"
    if len(set(lost)) == 1:
        return f"{_horses(lost[0])} a piece"
    return ", ".join(f"{_horses(n)} on {p}" for p, n in zip(finalists, lost, strict=True) if n)


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
        return _finish(state, Result(player, dice[0], 1, dice), [News("order", player, text)])
    news: list[News] = []
    if state.rules.too_lucky == "five_aces_one_throw" and is_five_aces(thrown):
        state = _too_lucky(state, player, dice, news)
    prior = rnd.go or Go(player)
    go = Go(player, prior.rolls + 1, prior.farmed, dice)
    if rnd.max_rolls == 1:  # a flop is the whole go; longer goes end with a stand
        return _finish(state, result_of(go, state.rules), news)
    return replace(state, round=replace(rnd, go=go), news=tuple(news))


def _too_lucky(state: BarDiceState, player: str, dice: Dice, news: list[News]) -> BarDiceState:
    text = f"{player} is too lucky: five aces, buys a shot for everyone playing (D-15)"
    value = _value(dice, state.rules)
    news.append(News("too_lucky", player, text, value, dice))
    return replace(state, penalties=(*state.penalties, Penalty(player, "too_lucky", text)))


def result_of(go: Go, rules: HouseRules) -> Result:
    """The hand a go stands on: farmed dice plus the last roll."""
    hand = go.farmed + go.roll
    return Result(go.player, _value(hand, rules), go.rolls, hand)


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
    return _finish(state, result_of(go, state.rules), [])


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
    return _start_play(replace(state, players=order), order[0], news)


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


# -- finishing gos and rounds -----------------------------------------------------------------


def _finish(state: BarDiceState, result: Result, news: list[News]) -> BarDiceState:
    rnd = state.round
    assert rnd is not None
    rules = state.rules
    if rnd.kind != "order":
        if result.value is None:
            words = "nothing" if rnd.max_rolls == 1 else pace_text(None, result.rolls)
            news.append(News("nothing", result.player, f"{result.player}: {words}", None, ()))
        else:
            words = (
                value_words(result.value)
                if rnd.max_rolls == 1
                else f"{result.value} {rolls_words(result.rolls)}"
            )
            text = f"{result.player}: {words} ({show(result.dice)})"
            news.append(News("hand", result.player, text, result.value, result.dice))
        if rules.too_lucky == "five_aces_in_final_hand" and is_five_aces(result.dice):
            state = _too_lucky(state, result.player, result.dice, news)
    rnd = replace(rnd, results=(*rnd.results, result), go=None, rolled=(*rnd.rolled, result.player))
    state = replace(state, round=rnd)
    if len(rnd.results) < len(rnd.roster):
        return replace(state, news=tuple(news))
    if rnd.kind == "order":
        return _resolve_order(state, news)
    if rnd.kind == "sponsor" or rnd.purpose == "sponsor":
        return _resolve_sponsor(state, news)
    return _resolve_elimination(state, news)


def _again(
    state: BarDiceState,
    news: list[News],
    roster: tuple[str, ...] | None = None,
    kind: str | None = None,
) -> BarDiceState:
    """The same round rolled again (a reset, or a roll-off among ``roster``)."""
    rnd = state.round
    assert rnd is not None
    new = replace(
        rnd,
        kind=kind or rnd.kind,
        roster=roster or rnd.roster,
        max_rolls=1 if kind == "rolloff" else rnd.max_rolls,
        results=(),
        go=None,
        resets=rnd.resets + 1,
        purpose=rnd.purpose or (rnd.kind if kind == "rolloff" else ""),
    )
    return replace(state, round=new, news=tuple(news))


def _resolve_order(state: BarDiceState, news: list[News]) -> BarDiceState:
    rnd = state.round
    assert rnd is not None
    top = max(r.value or 0 for r in rnd.results)
    tops = tuple(r.player for r in rnd.results if r.value == top)
    if len(tops) > 1:
        news.append(News("reset", None, f"D1: {' and '.join(tops)} tie on {top} and roll again"))
        return _again(state, news, tops)
    news.append(News("order", tops[0], f"{tops[0]} rolled highest and goes first"))
    return _start_play(state, tops[0], news)


def _start_play(state: BarDiceState, first: str, news: list[News]) -> BarDiceState:
    seating = _rotate(state.players, first)
    if len(seating) == 2:
        return _start_sponsor(state, seating[0], seating[1], news)
    rnd = Round("elimination", 1, seating, _elimination_rolls(state.rules))
    return replace(state, phase="elimination", round=rnd, hammer=first, news=tuple(news))


def _elimination_rolls(rules: HouseRules) -> int:
    """Rolls per elimination go: one flop (D-3), or up to three "all day" (D-17, D16)."""
    return MAX_ROLLS if rules.all_day_elimination else 1


def _start_sponsor(state: BarDiceState, hammer: str, other: str, news: list[News]) -> BarDiceState:
    news.append(
        News("sponsor", hammer, f"sponsor phase: {hammer} v {other}, {hammer} is the hammer")
    )
    finalists = tuple(p for p in state.players if p in (hammer, other))
    rnd = Round("sponsor", 1, (hammer, other), MAX_ROLLS, turn_hammer=hammer)
    return replace(
        state,
        phase="sponsor",
        round=rnd,
        hammer=hammer,
        finalists=finalists,
        news=tuple(news),
    )


def _resolve_elimination(state: BarDiceState, news: list[News]) -> BarDiceState:
    rnd = state.round
    assert rnd is not None
    rules = state.rules
    results = rnd.results
    counting = [r for r in results if r.value is not None]
    if not counting:
        news.append(News("reset", None, "D5: nobody's flop counted: the round is re-rolled"))
        return _again(state, news)
    keys = [rank(r, rules) for r in counting]
    tie = rules.one_tie_all_tie
    if tie == "any_counting" and rnd.kind == "elimination" and len(set(keys)) < len(keys):
        dup = [r for r in counting if keys.count(rank(r, rules)) > 1]
        text = (
            f"one tie all tie (D-12): {' and '.join(r.player for r in dup)} "
            f"match on {value_words(dup[0].value)}; everybody rolls again"
        )
        news.append(News("reset", None, text))
        return _again(state, news)
    top = max(keys)
    tops = tuple(r.player for r in counting if rank(r, rules) == top)
    if len(tops) > 1:
        names = " and ".join(tops)
        if tie == "off" or rnd.kind == "rolloff":
            news.append(News("rolloff", None, f"D6: {names} tie for the top and roll off"))
            return _again(state, news, tops, "rolloff")
        news.append(News("reset", None, f"one tie all tie (D-12): {names} tie for the top"))
        return _again(state, news)
    winner = next(r for r in counting if r.player == tops[0])
    return _out(state, winner, news)


def _out(state: BarDiceState, result: Result, news: list[News]) -> BarDiceState:
    rnd = state.round
    assert rnd is not None
    safe = (*state.safe, Standing(result.player, rnd.number, result.value, result.rolls))
    gone = {s.player for s in safe}
    still_in = tuple(p for p in state.players if p not in gone)
    hammer = next(p for p in reversed(rnd.rolled) if p in still_in)
    shown = (
        value_words(result.value) if rnd.max_rolls == 1 else pace_text(result.value, result.rolls)
    )
    news.append(News("out", result.player, f"{result.player} is out with {shown}", result.value))
    state = replace(state, safe=safe, hammer=hammer)
    if len(still_in) == 2:
        other = next(p for p in still_in if p != hammer)
        return _start_sponsor(state, hammer, other, news)
    news.append(News("hammer", hammer, f"{hammer} is the hammer and brings it back"))
    rolls = _elimination_rolls(state.rules)  # not rnd's: a roll-off that put a player out has 1
    new = Round("elimination", rnd.number + 1, _rotate(still_in, hammer), rolls)
    return replace(state, round=new, news=tuple(news))


def _resolve_sponsor(state: BarDiceState, news: list[News]) -> BarDiceState:
    rnd = state.round
    assert rnd is not None
    rules = state.rules
    first, second = rnd.results
    k1, k2 = rank(first, rules), rank(second, rules)
    if k1 == k2:
        if rnd.kind == "rolloff":
            text = f"D-9: {value_words(first.value)} each: roll off again"
        else:
            text = (
                f"D-9: {pace_text(first.value, first.rolls)} v "
                f"{pace_text(second.value, second.rolls)}: a roll-off, {rnd.turn_hammer} first"
            )
        news.append(News("rolloff", None, text))
        roster = _rotate(rnd.roster, rnd.turn_hammer)
        return _again(state, news, roster, "rolloff")
    win, lose = (first, second) if k1 > k2 else (second, first)
    how = (
        f"{win.player} wins the roll-off"
        if rnd.kind == "rolloff"
        else f"{pace_text(win.value, win.rolls)} beats {pace_text(lose.value, lose.rolls)}"
    )
    return _turn_won(state, win.player, lose.player, how, news)


def _turn_won(
    state: BarDiceState, winner: str, loser: str, how: str, news: list[News]
) -> BarDiceState:
    rnd = state.round
    assert rnd is not None
    won = tuple(n + (p == winner) for p, n in zip(state.players, state.turns_won, strict=True))
    turns = (*state.turns, TurnResult(rnd.number, winner, loser, how))
    lost = [sum(t.loser == p for t in turns) for p in state.finalists]
    horses = horses_text(state.finalists, lost)
    news.append(News("turn", winner, f"turn {rnd.number}: {how}; {horses}"))
    state = replace(state, turns_won=won, turns=turns)
    if max(lost) > state.rules.best_of // 2:
        news.append(News("sponsor", loser, f"{loser} is the sponsor and buys a round"))
        return replace(state, phase="over", sponsor=loser, news=tuple(news))
    hammer = rnd.rolled[-1]  # D10: whoever rolled last brings it back
    other = winner if hammer == loser else loser
    new = Round("sponsor", rnd.number + 1, (hammer, other), MAX_ROLLS, turn_hammer=hammer)
    news.append(News("hammer", hammer, f"{hammer} is the hammer and brings it back"))
    return replace(state, round=new, hammer=hammer, news=tuple(news))


def end(state: BarDiceState) -> BarDiceState:
    """The scorekeeper ends the game early: no sponsor is named."""
    news = News("ended", None, "the scorekeeper ended the game")
    return replace(state, phase="over", ended=True, news=(news,))
