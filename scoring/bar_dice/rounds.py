"""Bar Dice rounds: how a finished go, and a finished round, resolve.

A go's hand is written down; a round every player of it has rolled is resolved: the order
roll's winner goes first (D-1, D1), an elimination round resets (D5, one tie all tie D-12, D6),
rolls off or puts its winner out (D-5), a sponsor turn is won (the pace, D-7, D8, D-9) and the
horses counted until the sponsor is named (D-10, D10). Also the small rules every action
shares: whose go it is, how many rolls it may take, how results rank.
:mod:`scoring.bar_dice.play` lands each action and calls :func:`finish_go` when a go ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from scoring.actions import Dice
from scoring.bar_dice.hand import (
    hand_value,
    is_five_aces,
    pace_text,
    result_key,
    rolls_words,
    value_words,
)
from scoring.bar_dice.rules import HouseRules
from scoring.bar_dice.state import BarDiceState, News, Penalty, Result, Round, Standing, TurnResult

MAX_ROLLS = 3  #: D-7: up to three rolls per turn


# -- what every action asks -------------------------------------------------------------------


def show(dice: Dice) -> str:
    """``(1, 4, 4)`` -> "1 4 4" for messages."""
    return " ".join(map(str, dice)) if dice else "no dice"


def _rotate(names: Sequence[str], first: str) -> tuple[str, ...]:
    i = list(names).index(first)
    return (*names[i:], *names[:i])


def value_of(dice: Dice, rules: HouseRules) -> int | None:
    """The hand's value under the house's ace rules (D2, D4); ``None``: "nothing"."""
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


def too_lucky(state: BarDiceState, player: str, dice: Dice, news: list[News]) -> BarDiceState:
    text = f"{player} is too lucky: five aces, buys a shot for everyone playing (D-15)"
    value = value_of(dice, state.rules)
    news.append(News("too_lucky", player, text, value, dice))
    return replace(state, penalties=(*state.penalties, Penalty(player, "too_lucky", text)))


# -- finishing gos and rounds -----------------------------------------------------------------


def finish_go(state: BarDiceState, result: Result, news: list[News]) -> BarDiceState:
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
            state = too_lucky(state, result.player, result.dice, news)
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
    return start_play(state, tops[0], news)


def start_play(state: BarDiceState, first: str, news: list[News]) -> BarDiceState:
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
