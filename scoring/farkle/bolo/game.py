"""Bolo: five-dice Farkle with full house, straights, 4/5 of a kind and the board (RULES.md 2).

Each player keeps a board score. A turn is tallied only if it reaches the minimum set by the
board at the start of the turn (650 to get on, then 350, 750 from 7000, 1000 from 9000; B-6,
B10); a player may stop only with a non-scoring die left to pick up (B-4, B4); the first
player to reach the target wins at once (B-7, B11), or with ``final_round`` after one more
turn for every other player, tied leaders then playing sudden death. One player is a solo
game: it ends when the board reaches the target, and the reason says in how many turns.
Bong hits: one per full 1000 of a banked turn (B-8, B12), plus one for a board of exactly
5150 (Van Halen, B14). A ``rule`` action is the table's vote (B-11, B17): it changes a house
rule for the rest of this game and is logged.

Keeps and banking follow :mod:`scoring.farkle.you_blew_it`: a ``keep`` names one legal keep of the
roll (the player chooses between readings such as full house 500 or 1100, B-5); a ``bank``
straight after a roll is accepted only when the roll has exactly one legal keep (C4). A
BOLO stays on the pad until the next action, so that a sloppy-die re-roll (B16) or the
Yahtzee clause (B13, a ``reroll`` with reason ``"yahtzee"``) can still apply; every view
already shows it settled.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal

from scoring.actions import Action, Bank, End, Keep, Lineup, Reroll, Roll, SetRule
from scoring.errors import IllegalActionError, RulesError
from scoring.farkle.combos import Combo, ComboTable, NonScoring
from scoring.farkle.game import FarkleGame
from scoring.farkle.turn import (
    RuleIds,
    Step,
    Turn,
    apply_keep,
    apply_reroll,
    apply_roll,
    keep_sole_option,
    options_view,
    roll_score,
    turn_view,
    words,
)
from scoring.game import Expecting, Game, Highlight, n_dice
from scoring.rules import house_rule, parse_rules, rules_to_json

DICE = 5
#: A single roll or a banked turn worth at least this goes to the high-roll wall.
HIGHLIGHT_MIN = 1000
HIT_EVERY = 1000  #: B-8: one bong hit per 1000 points of a turn

IDS = RuleIds(keep="B-2", hot="B-4", cocked="B-9/B16", cocked_option="bolo.sloppy_dice")


@dataclass(frozen=True)
class HouseRules:
    """Every Bolo ambiguity of RULES.md 2.2 (B1-B17) with its default."""

    start_order: str = house_rule(
        "lineup",
        "B-1: who starts: the players as listed or set with a line-up (the table rolls for it "
        "off the books), or one die each on the pad, highest starts, clockwise from there",
        ("lineup", "roll"),
    )
    start_order_ties: str = house_rule(
        "reroll", "B1: tied start rolls: the tied players roll again", ("reroll",)
    )
    four_of_a_kind: str = house_rule(
        "double_triple",
        "B2: four of a kind = 2 x the triple (four 1s 2000), or triple plus a single",
        ("double_triple", "triple_plus_single"),
    )
    five_ones_wins_instantly: bool = house_rule(False, "B3: keeping five 1s wins the game at once")
    non_scoring_die: str = house_rule(
        "face_count_lt_3",
        "B4: a non-scoring die (to stop) is a 2/3/4/6 showing fewer than three times, or any "
        "2/3/4/6 not counted",
        ("face_count_lt_3", "player_choice"),
    )
    all_scoring_roll_takes_all: bool = house_rule(
        True, "B5: when every rolled die scores, all must be kept and five rolled again"
    )
    full_house_distinct_pair: bool = house_rule(
        True, "B6: a full house needs a pair of another face (five of a kind is not one)"
    )
    below_min_may_pass: bool = house_rule(
        True, "B9: a player below the minimum may stop; the turn scores nothing"
    )
    entry_min: int = house_rule(650, "B10: points in one turn to get on the board")
    take_min: int = house_rule(350, "B10: minimum turn to take once on the board")
    take_min_7000: int = house_rule(750, "B10: minimum turn with a board of 7000 or more")
    take_min_9000: int = house_rule(1000, "B10: minimum turn with a board of 9000 or more")
    target: int = house_rule(10000, "B-7/B11: board score that wins", range=(50, 1000000))
    final_round: bool = house_rule(
        False, "B11: after a player reaches the target every other player has one more turn"
    )
    final_round_ties: str = house_rule(
        "sudden_death",
        "B11 (final_round): players tied for the top board after the final turns each take one "
        "more turn, in seating order, until one of them leads (sudden_death), or share the win "
        "(shared)",
        ("sudden_death", "shared"),
    )
    hits_on: str = house_rule(
        "banked_turn",
        "B12: bong hits count on banked, tallied turns only, or on every turn total",
        ("banked_turn", "turn_total_even_if_bolo"),
    )
    yahtzee_clause: bool = house_rule(
        True, "B13: kept three/four of a 2/3/4/6 and the rest rolled the same face: re-roll them"
    )
    yahtzee_rerolls: int = house_rule(1, "B13: Yahtzee-clause re-rolls per cycle (0 = unlimited)")
    van_halen: bool = house_rule(
        True, "B14: a board of exactly van_halen_score earns a bonus bong hit"
    )
    van_halen_score: int = house_rule(5150, "B14: the Van Halen board score")
    high_roller_min: int = house_rule(5000, "B15: a roll (or turn) worth this signs the pad")
    high_roller_on: str = house_rule(
        "roll",
        "B15: what must be worth high_roller_min to sign the pad: a single roll, or a banked "
        "turn's total",
        ("roll", "turn_total"),
    )
    sloppy_dice: str = house_rule(
        "reroll_offending",
        "B16/C1: off-pad or cocked dice: re-roll only them, or every die just rolled",
        ("reroll_offending", "reroll_all_just_rolled"),
    )
    rule_overrides: str = house_rule(
        "per_game", "B17: a vote changes a rule for the rest of this game only", ("per_game",)
    )


@lru_cache(maxsize=64)
def table(rules: HouseRules = HouseRules()) -> ComboTable:
    """The combination table of B-3 under these house rules (B2, B4-B6)."""
    combos = [Combo.single(1, 100), Combo.single(5, 50)]
    for face in range(1, 7):
        triple = 1000 if face == 1 else 100 * face
        combos.append(Combo.of_a_kind(face, 3, triple))
        if rules.four_of_a_kind == "double_triple":
            combos.append(Combo.of_a_kind(face, 4, 2 * triple))
        combos.append(Combo.of_a_kind(face, 5, 10000 if face == 1 else 5000))
    for face in range(1, 7):
        for pair in range(1, 7):
            if pair != face or not rules.full_house_distinct_pair:
                dice = (face,) * 3 + (pair,) * 2
                combos.append(Combo.made_of(f"full house {words(dice)}", dice, 500))
    combos.append(Combo.made_of("straight 1-5", (1, 2, 3, 4, 5), 1000))
    combos.append(Combo.made_of("straight 2-6", (2, 3, 4, 5, 6), 1000))
    non_scoring: NonScoring = (
        "player_choice" if rules.non_scoring_die == "player_choice" else "face_count_lt_3"
    )
    return ComboTable(
        "bolo",
        DICE,
        tuple(combos),
        all_scoring_takes_all=rules.all_scoring_roll_takes_all,
        stop_rule="non_scoring_left",
        non_scoring=non_scoring,
    )


def minimum(rules: HouseRules, board: int, on_board: bool) -> int:
    """The least turn that is tallied, from the board at the start of the turn (B10)."""
    if not on_board:
        return rules.entry_min
    if board >= 9000:
        return rules.take_min_9000
    if board >= 7000:
        return rules.take_min_7000
    return rules.take_min


TurnStatus = Literal["banked", "bolo", "passed"]


@dataclass(frozen=True)
class TurnRecord:
    """One finished turn: ``points`` made (lost on a BOLO), ``tallied`` onto the board."""

    player: str
    points: int
    status: TurnStatus
    tallied: int
    hits: int
    board: int
    minimum: int
    steps: tuple[Step, ...] = ()
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "points": self.points,
            "status": self.status,
            "tallied": self.tallied,
            "hits": self.hits,
            "board": self.board,
            "minimum": self.minimum,
            "steps": [s.to_json() for s in self.steps],
            "notes": list(self.notes),
        }

    @staticmethod
    def from_json(obj: Any) -> TurnRecord:
        status = obj["status"]
        if status not in ("banked", "bolo", "passed"):
            raise ValueError(f"unknown turn status {status!r}")
        return TurnRecord(
            str(obj["player"]),
            int(obj["points"]),
            status,
            int(obj["tallied"]),
            int(obj["hits"]),
            int(obj["board"]),
            int(obj["minimum"]),
            tuple(Step.from_json(s) for s in obj["steps"]),
            tuple(obj["notes"]),
        )


@dataclass(frozen=True)
class State:
    """A whole Bolo game (immutable)."""

    rules: HouseRules
    players: tuple[str, ...]
    boards: tuple[int, ...]
    on_board: tuple[bool, ...]
    hits: tuple[int, ...]
    current: int = 0
    turn: Turn = field(default_factory=Turn)
    turns: tuple[TurnRecord, ...] = ()
    overrides: tuple[tuple[str, Any], ...] = ()
    final_turns: int | None = None
    over: bool = False
    winners: tuple[str, ...] = ()
    reason: str = ""
    order: tuple[int, ...] = ()  #: B-1 order roll under way: the players rolling this round
    order_faces: tuple[int, ...] = ()  #: ... the faces they rolled so far, in that order
    tied: tuple[int, ...] = ()  #: B11 sudden death under way: the tied players, in turn order

    @property
    def player(self) -> str:
        return self.players[self.current]

    def minimum(self) -> int:
        i = self.current
        return minimum(self.rules, self.boards[i], self.on_board[i])


def _n_turns(n: int) -> str:
    """ "1 turn", "23 turns"."""
    return "1 turn" if n == 1 else f"{n} turns"


def _set(values: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return (*values[:i], value, *values[i + 1 :])


def _decide(state: State, why: str) -> State:
    best = max(state.boards)
    leaders = tuple(p for p, b in zip(state.players, state.boards, strict=True) if b == best)
    return replace(state, over=True, winners=leaders, reason=why, turn=Turn(), tied=())


def _end_final_round(state: State) -> State:
    """The final turns (or a sudden-death round) are over: the top board wins. Players tied
    at the top take one more turn each under ``final_round_ties = sudden_death`` (B11), in
    seating order from the next seat, as often as it takes; otherwise they share the win."""
    best = max(state.boards)
    n = len(state.players)
    tied = tuple(
        sorted(
            (j for j, b in enumerate(state.boards) if b == best),
            key=lambda j: (j - state.current) % n,
        )
    )
    if len(tied) > 1 and state.rules.final_round_ties == "sudden_death":
        return replace(state, tied=tied, final_turns=len(tied), current=tied[0])
    names = " and ".join(state.players[j] for j in tied)
    if state.tied:
        why = f"{names} won the sudden death with {best} (B11)"
    else:
        why = "every other player had a final turn"
        if len(tied) > 1:
            why += f": {names} share the win on {best} (B11)"
    return _decide(state, why)


def _finish_turn(state: State, record: TurnRecord) -> State:
    """Write the turn down, pass the dice, check the end (B-7, B11)."""
    i = state.current
    state = replace(
        state,
        boards=_set(state.boards, i, record.board),
        hits=_set(state.hits, i, state.hits[i] + record.hits),
        on_board=_set(state.on_board, i, state.on_board[i] or record.tallied > 0),
        turns=(*state.turns, record),
        current=(i + 1) % len(state.players),
        turn=Turn(),
    )
    rules = state.rules
    if state.final_turns is not None:
        left = state.final_turns - 1
        if left <= 0:
            return _end_final_round(replace(state, final_turns=0))
        if state.tied:  # sudden death: only the tied players play
            return replace(state, final_turns=left, current=state.tied[-left])
        return replace(state, final_turns=left)
    if record.board >= rules.target:
        why = f"{record.player} reached {rules.target} with {record.board}"
        others = len(state.players) - 1
        if not rules.final_round or not others:  # a solo game has nobody to give a final turn
            if not others:
                why += f" (solo game, in {_n_turns(len(state.turns))})"
            return replace(state, over=True, winners=(record.player,), reason=why)
        state = replace(state, final_turns=others)
    return state


def _turn_hits(rules: HouseRules, points: int, tallied: bool) -> int:
    if tallied or rules.hits_on == "turn_total_even_if_bolo":
        return points // HIT_EVERY
    return 0


def yahtzee_ready(state: State) -> bool:
    """B13: the kept dice of this cycle are three or four of one face 2/3/4/6, kept from one
    roll, and the blown roll shows only that face; re-rolls left."""
    turn, rules = state.turn, state.rules
    if turn.phase != "blown" or not rules.yahtzee_clause:
        return False
    if rules.yahtzee_rerolls and turn.clause_rerolls >= rules.yahtzee_rerolls:
        return False
    kept = turn.kept
    return (
        len(turn.cycle_steps()) == 1
        and len(kept) in (3, 4)
        and len(set(kept)) == 1
        and kept[0] in (2, 3, 4, 6)
        and set(turn.roll) == {kept[0]}
    )


def _settle_order(state: State) -> State:
    """A round of the order roll every contender has rolled (B-1): the highest starts, and
    play goes clockwise (the listed order) from there; tied players roll again (B1). Like a
    BOLO it stands until the next action, so the last die can still be re-rolled if cocked."""
    if not state.order or len(state.order_faces) < len(state.order):
        return state
    best = max(state.order_faces)
    tied = tuple(p for p, f in zip(state.order, state.order_faces, strict=True) if f == best)
    if len(tied) == 1:
        return replace(state, order=(), order_faces=(), current=tied[0])
    return replace(state, order=tied, order_faces=(), current=tied[0])


def _apply_order(state: State, action: Action) -> State:
    """An action while the order is rolled for: one die each (or a line-up, or the end)."""
    if type(action) is Roll:
        if len(action.dice) != 1:
            raise IllegalActionError(
                f"B-1: the order of play is one die each; {state.player} rolled {len(action.dice)}"
            )
        faces = (*state.order_faces, action.dice[0])
        nxt = state.order[len(faces)] if len(faces) < len(state.order) else state.current
        return replace(state, order_faces=faces, current=nxt)
    raise IllegalActionError(
        f"B-1: first the order of play: {state.player} rolls one die (or set a line-up)"
    )


def _reroll_order(state: State, action: Reroll) -> State:
    """A cocked or sloppy order die is thrown again: the last one rolled is taken back."""
    if action.dice and tuple(action.dice) != state.order_faces[-1:]:
        raise IllegalActionError(f"B-1: the last order die rolled was a {state.order_faces[-1]}")
    faces = state.order_faces[:-1]
    return replace(state, order_faces=faces, current=state.order[len(faces)])


def _settle(state: State) -> State:
    """Apply a pending BOLO (the roll stood until the next action; see scoring.farkle.turn), or a
    finished round of the order roll."""
    state = _settle_order(state)
    if state.turn.phase != "blown" or state.over:
        return state
    turn, i = state.turn, state.current
    notes = ("bolo after five of a kind",) if _after_five(turn.steps) else ()
    record = TurnRecord(
        state.player,
        turn.points,
        "bolo",
        0,
        _turn_hits(state.rules, turn.points, False),
        state.boards[i],
        state.minimum(),
        turn.steps,
        notes,
    )
    return _finish_turn(state, record)


def _after_five(steps: tuple[Step, ...]) -> bool:
    return bool(steps) and any(c.startswith("five ") for c in steps[-1].combos)


def _bank(state: State, *, win: bool = False) -> State:
    turn, rules, i = state.turn, state.rules, state.current
    least = state.minimum()
    board = state.boards[i]
    notes: list[str] = []
    if turn.points < least and not win:
        if not rules.below_min_may_pass:
            raise IllegalActionError(
                f"B9 (below_min_may_pass=false): {turn.points} is below the minimum of "
                f"{least}; keep rolling"
            )
        record = TurnRecord(
            state.player,
            turn.points,
            "passed",
            0,
            _turn_hits(rules, turn.points, False),
            board,
            least,
            turn.steps,
            (f"below the minimum of {least}: not tallied",),
        )
        return _finish_turn(state, record)
    board += turn.points
    hits = _turn_hits(rules, turn.points, True)
    if rules.van_halen and board == rules.van_halen_score:
        hits += 1
        notes.append(f"Van Halen: exactly {board}")
    if win:
        notes.append("five 1s win at once")
    record = TurnRecord(
        state.player,
        turn.points,
        "banked",
        turn.points,
        hits,
        board,
        least,
        turn.steps,
        tuple(notes),
    )
    state = _finish_turn(state, record)
    if win and not state.over:
        state = replace(
            state, over=True, winners=(record.player,), reason=f"{record.player} kept five 1s"
        )
    return state


def _may_bank_points(state: State, keeping: int = 0) -> bool:
    """B9: a bank below the minimum is a pass, refused when passing is off. ``keeping``: the
    points of the sole keep a bank straight after a roll takes first (they count too)."""
    return state.rules.below_min_may_pass or state.turn.points + keeping >= state.minimum()


def _cocked(rules: HouseRules) -> Literal["reroll_offending", "reroll_all_just_rolled"]:
    if rules.sloppy_dice == "reroll_all_just_rolled":
        return "reroll_all_just_rolled"
    return "reroll_offending"


class Bolo(FarkleGame[State, HouseRules]):
    """The Bolo rules (stateless; see :data:`GAME`)."""

    name = "bolo"
    title = "Bolo"
    rules_prefix = "bolo"
    rules_type = HouseRules
    uses_teams = False
    all_dice_word = "all five"

    def new(
        self,
        *,
        players: Sequence[str] | None = None,
        teams: Mapping[str, Sequence[str]] | None = None,
        rules: Mapping[str, object] | HouseRules | None = None,
    ) -> State:
        """A new game. One player is a solo game (practice, or a race against the turn count):
        the same turns, minimums and board, over when the board reaches the target."""
        parsed = self.parse_rules(rules)
        if teams is not None:
            raise ValueError("Bolo is played by players, not teams")
        names = tuple(str(p).strip() for p in players or ())
        if not names or any(not n for n in names):
            raise ValueError("B-1: Bolo needs at least one named player")
        if len(set(names)) != len(names):
            raise ValueError("B-1: player names must be unique")
        n = len(names)
        order = tuple(range(n)) if parsed.start_order == "roll" and n > 1 else ()
        return State(parsed, names, (0,) * n, (False,) * n, (0,) * n, order=order)

    # -- play ----------------------------------------------------------------------------
    def apply(self, state: State, action: Action) -> State:
        if isinstance(action, Reroll) and state.order_faces:
            return _reroll_order(state, action)
        if isinstance(action, Reroll) and state.turn.phase in ("keep", "blown"):
            return self._apply_reroll(state, action)
        state = _settle(state)
        if state.over:
            raise IllegalActionError("B-7: the game is over")
        if state.order and not isinstance(action, Lineup | End | SetRule):
            return _apply_order(state, action)
        turn = state.turn
        tbl = table(state.rules)
        if type(action) is Roll:  # a Reveal is Gords' (a Roll subclass)
            return replace(state, turn=apply_roll(turn, action.dice, DICE, tbl, IDS))
        if type(action) is Keep:  # Reroll and Fix are Keep subclasses
            turn = apply_keep(turn, action.dice, DICE, tbl, IDS)
            state = replace(state, turn=turn)
            if state.rules.five_ones_wins_instantly and "five 1s" in turn.steps[-1].combos:
                return _bank(state, win=True)
            return state
        if isinstance(action, Bank):
            return self._apply_bank(state, tbl)
        if isinstance(action, Reroll):
            raise IllegalActionError(f"{IDS.cocked}: a re-roll follows a roll, before any keep")
        if isinstance(action, SetRule):
            return self._apply_rule(state, action)
        if isinstance(action, Lineup):
            if state.turns or state.turn.started:
                raise IllegalActionError("B-1: the order of play is set before the first roll")
            if sorted(action.order) != sorted(state.players):
                raise IllegalActionError(
                    f"B-1: the order must name every player once: {', '.join(state.players)}"
                )
            return replace(state, players=tuple(action.order), order=(), order_faces=(), current=0)
        if isinstance(action, End):
            why = "ended by the scorekeeper"
            return replace(state, over=True, winners=(), reason=why, turn=Turn(), tied=())
        if action.type in ("undo", "fix"):
            raise IllegalActionError(f"{action.type} replays the log: use scoring.history")
        raise IllegalActionError(f"Bolo has no {action.type!r} action")

    def _apply_reroll(self, state: State, action: Reroll) -> State:
        if action.reason == "yahtzee":
            if not yahtzee_ready(state):
                raise IllegalActionError(
                    "B13: the Yahtzee clause applies only when the three or four kept dice "
                    "of one face 2/3/4/6 are matched by every die of the next roll"
                )
            if action.dice and tuple(sorted(action.dice)) != state.turn.roll:
                raise IllegalActionError(f"B13: re-roll all of {words(state.turn.roll)}")
            turn = replace(
                state.turn,
                phase="reroll",
                roll=(),
                rerolling=len(state.turn.roll),
                clause_rerolls=state.turn.clause_rerolls + 1,
            )
            return replace(state, turn=turn)
        return replace(state, turn=apply_reroll(state.turn, action.dice, _cocked(state.rules), IDS))

    def _apply_bank(self, state: State, tbl: ComboTable) -> State:
        why = "B-5: choose which dice to keep before stopping"
        turn = keep_sole_option(state.turn, tbl, DICE, why)
        state = replace(state, turn=turn)
        if turn.phase != "decide":
            raise IllegalActionError("B-2: stop after keeping scoring dice from a roll")
        if turn.hot:
            raise IllegalActionError(
                "B-4: every die rolled scored: pick up all five and continue the turn"
            )
        if not turn.may_stop:
            raise IllegalActionError(
                "B-4: a player may stop only with a non-scoring die left to pick up"
            )
        return _bank(state)

    def _apply_rule(self, state: State, action: SetRule) -> State:
        current = rules_to_json(state.rules)
        short = action.name.removeprefix(self.rules_prefix + ".")
        if short == "rule_overrides":
            raise IllegalActionError("B17: rule_overrides cannot be voted on")
        try:
            rules = parse_rules(HouseRules, {**current, action.name: action.value}, "bolo")
        except RulesError as exc:
            raise IllegalActionError(f"B17: {exc}") from None
        return replace(state, rules=rules, overrides=(*state.overrides, (short, action.value)))

    def legal_actions(self, state: State) -> list[Action]:
        out: list[Action] = []
        if state.order_faces:
            out.append(Reroll(state.order_faces[-1:]))
        if state.turn.phase in ("keep", "blown"):
            out.append(Reroll(()))
            if yahtzee_ready(state):
                out.append(Reroll(state.turn.roll, "yahtzee"))
        settled = _settle(state)
        if settled.over:
            return out
        turn = settled.turn
        if turn.phase == "keep":
            options = roll_score(turn, table(settled.rules)).options
            out.extend(Keep(o.keep) for o in options)
            sole = options[0] if len(options) == 1 else None
            if sole is not None and sole.may_stop and _may_bank_points(settled, sole.points):
                out.append(Bank())
        elif turn.phase == "decide" and turn.may_stop and _may_bank_points(settled):
            out.append(Bank())
        if not settled.turns and not turn.started:
            out.append(Lineup(settled.players))
        out.append(End())
        return out

    def expecting(self, state: State) -> Expecting:
        if yahtzee_ready(state):
            n = len(state.turn.roll)
            text = f"{state.player}: Yahtzee clause! re-roll the {n} {state.turn.roll[0]}s"
            return Expecting(state.player, "reroll", n, text)
        settled = _settle(state)
        if settled.over:
            return Expecting(None, "none", 0, f"Game over: {settled.reason}")
        if settled.order:
            again = " again (a tie)" if len(settled.order) < len(settled.players) else ""
            text = f"{settled.player}: roll 1 die for the order of play{again}"
            return Expecting(settled.player, "roll", 1, text)
        player, turn = settled.player, settled.turn
        n = turn.dice_wanted(DICE)
        dice = n_dice(n)
        if turn.phase == "keep":
            count = len(roll_score(turn, table(settled.rules)).options)
            choices = "1 choice" if count == 1 else f"{count} choices"
            return Expecting(player, "keep", 0, f"{player}: keep scoring dice ({choices})")
        if turn.phase == "decide" and turn.may_stop:
            least = settled.minimum()
            take = "stop" if turn.points >= least else f"pass (under {least})"
            text = f"{player}: roll {dice} or {take} with {turn.points}"
            return Expecting(player, "roll_or_bank", n, text)
        if turn.phase == "reroll":
            return Expecting(player, "roll", n, f"{player}: re-roll {dice}")
        if turn.hot:
            text = f"{player}: all dice scored! roll all five again ({turn.points} so far)"
        elif turn.steps:
            text = f"{player}: roll {dice} ({turn.points} so far)"
        else:
            text = f"{player}: roll {dice} (needs {settled.minimum()} to take points)"
            if settled.tied:
                text += f"; sudden death, tied at {settled.boards[settled.current]} (B11)"
        return Expecting(player, "roll", n, text)

    def highlights(self, before: State, action: Action, after: State) -> tuple[Highlight, ...]:
        """Rolls and banked turns of 1000+, high rollers (B-10/B15), Van Halen (B14)."""
        out: list[Highlight] = []
        rules = before.rules
        turn = after.turn
        if (
            type(action) is Roll
            and turn.phase == "blown"
            and _after_five(turn.steps)
            and not yahtzee_ready(after)
        ):  # B-10: the roll that BOLOs right after a five of a kind signs the pad too
            text = f"{after.player} BOLOed right after five of a kind ({words(turn.roll)})"
            out.append(Highlight("high_roller", after.player, turn.points, turn.roll, text))
        if not isinstance(action, Keep | Bank) or isinstance(action, Reroll):
            return tuple(out)
        settled = _settle(before)
        prior = settled.turn.steps
        banked = after.turns[-1] if len(after.turns) > len(settled.turns) else None
        steps = banked.steps if banked is not None else after.turn.steps
        player = banked.player if banked is not None else after.player
        by_roll = rules.high_roller_on == "roll"
        if len(steps) > len(prior):
            step = steps[-1]
            if by_roll and step.points >= rules.high_roller_min:
                text = f"{player}: HIGH ROLLER, {step.points} in one roll ({words(step.roll)})"
                out.append(Highlight("high_roller", player, step.points, step.roll, text))
            elif step.points >= HIGHLIGHT_MIN:
                text = f"{player}: {step.points} in one roll ({words(step.roll)})"
                out.append(Highlight("roll", player, step.points, step.roll, text))
        if banked is not None and banked.status == "banked":
            if not by_roll and banked.points >= rules.high_roller_min:
                text = f"{player}: HIGH ROLLER, {banked.points} in one turn"
                out.append(Highlight("high_roller", player, banked.points, (), text))
            elif banked.points >= HIGHLIGHT_MIN:
                text = f"{player} took {banked.points} in one turn ({banked.hits} bong hits)"
                out.append(Highlight("turn", player, banked.points, (), text))
            if any(n.startswith("Van Halen") for n in banked.notes):
                text = f"{player}: Van Halen! exactly {banked.board}"
                out.append(Highlight("van_halen", player, banked.board, (), text))
        return tuple(out)

    # -- the hooks of FarkleGame ----------------------------------------------------------
    _settled = staticmethod(_settle)
    _table = staticmethod(table)

    def _scores(self, settled: State) -> dict[str, int]:
        return dict(zip(settled.players, settled.boards, strict=True))

    def _board(self, state: State, settled: State) -> dict[str, Any]:
        """Each player's minimum, the thresholds, the turn (a BOLO shown settled), the keeps."""
        rules = settled.rules
        return {
            "minimum": {
                p: minimum(rules, b, o)
                for p, b, o in zip(settled.players, settled.boards, settled.on_board, strict=True)
            },
            "thresholds": {
                "entry": rules.entry_min,
                "take": rules.take_min,
                "from_7000": rules.take_min_7000,
                "from_9000": rules.take_min_9000,
            },
            **turn_view(state.turn, settled.turn, DICE),
            "yahtzee_clause": yahtzee_ready(state),
            "options": options_view(state.turn, table(rules)),
            "order_roll": [  # B-1 under way: this round's rollers and the faces they rolled
                [settled.players[p], f]
                for p, f in itertools.zip_longest(settled.order, settled.order_faces)
            ],
        }

    def _fields(self, state: State) -> dict[str, Any]:
        """Everything :meth:`_decode` needs, plus the turn sheet."""
        players = state.players
        return {
            "rules": rules_to_json(state.rules),
            "players": list(players),
            "boards": dict(zip(players, state.boards, strict=True)),
            "on_board": dict(zip(players, state.on_board, strict=True)),
            "hits": dict(zip(players, state.hits, strict=True)),
            "current": state.current,
            "turn": state.turn.to_json(),
            "turns": [t.to_json() for t in state.turns],
            "overrides": [{"name": n, "value": v} for n, v in state.overrides],
            "final_turns": state.final_turns,
            "state_over": state.over,
            "state_winners": list(state.winners),
            "state_reason": state.reason,
            "order": list(state.order),
            "order_faces": list(state.order_faces),
            "tied": [state.players[j] for j in state.tied],
        }

    def _decode(self, src: Mapping[str, Any]) -> State:
        players = tuple(map(str, src["players"]))
        final = src["final_turns"]
        return State(
            rules=self.parse_rules(src["rules"]),
            players=players,
            boards=tuple(int(src["boards"][p]) for p in players),
            on_board=tuple(bool(src["on_board"][p]) for p in players),
            hits=tuple(int(src["hits"][p]) for p in players),
            current=int(src["current"]),
            turn=Turn.from_json(src["turn"]),
            turns=tuple(TurnRecord.from_json(t) for t in src["turns"]),
            overrides=tuple((str(o["name"]), o["value"]) for o in src["overrides"]),
            final_turns=None if final is None else int(final),
            over=bool(src["state_over"]),
            winners=tuple(src["state_winners"]),
            reason=str(src["state_reason"]),
            order=tuple(int(p) for p in src.get("order", ())),  # absent in older digests
            order_faces=tuple(int(f) for f in src.get("order_faces", ())),
            tied=tuple(players.index(str(p)) for p in src.get("tied", ())),  # absent in older
        )


GAME = Bolo()
_PROTOCOL_CHECK: Game[State] = GAME  # mypy proves Bolo implements the Game protocol

__all__ = [
    "DICE",
    "GAME",
    "Bolo",
    "HouseRules",
    "State",
    "TurnRecord",
    "minimum",
    "table",
    "yahtzee_ready",
]
