"""You Blew It: team Farkle with six dice, exactly as in RULES.md section 1.

Rounds: every player takes one turn, in the line-up order (team by team as listed, or
alternating seats, or as a ``lineup`` action set it before the round). A blown roll loses the
blower's turn points *and* those of his teammates who banked earlier in the round (YBI-8/Y8);
points of finished rounds are locked (YBI-10). The game ends at the end of a round in which a
team has reached the target (YBI-11), or per ``end_rule``.

Keeps: after a roll the player keeps one of the legal keeps of :mod:`scoring.farkle.combos`, then
rolls the rest or banks. A ``bank`` straight after a roll (no keep) is accepted only when the
roll has exactly one legal keep, so the engine never chooses between keeps for the player
(RULES.md C4); otherwise it is refused with the list of keeps.

A blown roll stays on the pad until the next action, so that a cocked-die re-roll (Y16, C1)
can still turn it into a scoring roll; every view (scores, ``expecting``, ``outcome``, the
JSON) already shows the blow settled, and the next action settles it for real.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal

from scoring.actions import (
    Action,
    Bank,
    End,
    Keep,
    Lineup,
    Reroll,
    Roll,
    SetRule,
)
from scoring.errors import IllegalActionError
from scoring.farkle.combos import Combo, ComboTable
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
from scoring.rules import house_rule, rules_to_json

DICE = 6
#: A single roll or a banked turn worth at least this goes to the high-roll wall.
HIGHLIGHT_MIN = 1000

IDS = RuleIds(keep="YBI-4", hot="YBI-6", cocked="Y16", cocked_option="ybi.cocked_dice")


@dataclass(frozen=True)
class HouseRules:
    """Every You Blew It ambiguity of RULES.md 1.3 (Y1-Y16) with its default."""

    combo_must_be_kept: bool = house_rule(
        True, "Y1: every combination rolled (triples, the straight) must be kept whole"
    )
    keep_all_scoring_dice: bool = house_rule(False, "Y2: every scoring die of a roll must be kept")
    extra_dice_of_a_kind: str = house_rule(
        "singles",
        "Y3/Y6: four to six of a kind: extra dice score as singles, or linear "
        "((n-2) x triple), or doubling (2^(n-3) x triple)",
        ("singles", "linear", "doubling"),
    )
    four_of_a_kind_is_one_combo: bool = house_rule(
        False, "Y4: four 1s (1100) / four 5s (550) are one combo that must be kept whole"
    )
    six_of_a_kind_as_two_triples: bool = house_rule(
        True, "Y5: six of a kind scores as two triples (six 1s = 2000) rather than one triple"
    )
    seating: str = house_rule(
        "together",
        "YBI-2: default line-up: teams sit together (as listed) or alternate seats",
        ("together", "alternate"),
    )
    first_player: str = house_rule(
        "choose", "Y9: the scorekeeper chooses who starts (the line-up order)", ("choose",)
    )
    rotate_start: bool = house_rule(
        False, "Y9/YBI-9: each round starts with the previous round's second player"
    )
    target: int = house_rule(
        10000, "Y10/YBI-11: score to reach (5000 short game)", range=(50, 1000000)
    )
    end_rule: str = house_rule(
        "end_of_round",
        "Y11: the game ends at the end of the round a team reaches the target, or after one "
        "more turn for every other player",
        ("end_of_round", "one_more_turn_each"),
    )
    final_turns_from: str = house_rule(
        "round_score",
        "Y11 (end_rule=one_more_turn_each): the extra turns play on in the round, so a blow "
        "still wipes the teammates' earlier points of that round (round_score), or each extra "
        "turn starts from zero: points are safe once the target is reached and a blow loses "
        "only the blower's own turn (zero)",
        ("round_score", "zero"),
    )
    tie_rule: str = house_rule(
        "extra_round",
        "Y12: equal top totals at the end: play on, or share",
        ("extra_round", "shared"),
    )
    on_board_min: int = house_rule(
        0, "Y13: a single banked turn needed to get on the board (0 = off; 350, 700)"
    )
    on_board_scope: str = house_rule(
        "team", "Y13: the on-board minimum applies per team or per player", ("team", "player")
    )
    teams: int = house_rule(2, "Y14: number of teams", range=(2, 8))
    unequal_teams: str = house_rule(
        "allow_with_warning",
        "Y14: teams of different sizes",
        ("allow_with_warning", "allow", "forbid"),
    )
    cocked_dice: str = house_rule(
        "reroll_offending",
        "Y16/C1: a cocked, stacked or off-pad die: re-roll only it, or every die just rolled",
        ("reroll_offending", "reroll_all_just_rolled"),
    )


@lru_cache(maxsize=64)
def table(rules: HouseRules = HouseRules()) -> ComboTable:
    """The combination table of YBI-5 under these house rules (Y1-Y5)."""
    two_triples = rules.six_of_a_kind_as_two_triples
    combos = [Combo.single(1, 100), Combo.single(5, 50)]
    for face in range(1, 7):
        triple = 1000 if face == 1 else 100 * face
        combos.append(Combo.of_a_kind(face, 3, triple, repeatable=two_triples))
        if rules.extra_dice_of_a_kind == "singles":
            if rules.four_of_a_kind_is_one_combo and face in (1, 5):
                combos.append(Combo.of_a_kind(face, 4, triple + (100 if face == 1 else 50)))
            continue
        for n in (4, 5, 6):
            factor = n - 2 if rules.extra_dice_of_a_kind == "linear" else 2 ** (n - 3)
            combos.append(Combo.of_a_kind(face, n, factor * triple, repeatable=False))
    combos.append(Combo.made_of("straight", (1, 2, 3, 4, 5, 6), 1500))
    return ComboTable(
        "you-blew-it",
        DICE,
        tuple(combos),
        must_keep_combos=rules.combo_must_be_kept,
        keep_all_scoring=rules.keep_all_scoring_dice,
    )


TurnStatus = Literal["banked", "blown", "wiped", "not_on_board"]


@dataclass(frozen=True)
class TurnRecord:
    """One finished turn on the scratch sheet (YBI-12). ``points``: made (or lost, when
    blown); only ``banked`` turns count; ``wiped``: banked, then lost to ``wiped_by``'s blow."""

    player: str
    team: str
    points: int
    status: TurnStatus
    steps: tuple[Step, ...] = ()
    wiped_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "team": self.team,
            "points": self.points,
            "status": self.status,
            "counts": self.points if self.status == "banked" else 0,
            "wiped_by": self.wiped_by,
            "steps": [s.to_json() for s in self.steps],
        }

    @staticmethod
    def from_json(obj: Any) -> TurnRecord:
        status = obj["status"]
        if status not in ("banked", "blown", "wiped", "not_on_board"):
            raise ValueError(f"unknown turn status {status!r}")
        return TurnRecord(
            str(obj["player"]),
            str(obj["team"]),
            int(obj["points"]),
            status,
            tuple(Step.from_json(s) for s in obj["steps"]),
            obj["wiped_by"],
        )


@dataclass(frozen=True)
class RoundRecord:
    """A finished round (the team sheet): points per team and the running totals."""

    number: int
    turns: tuple[TurnRecord, ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]
    complete: bool = True

    def to_json(self, team_names: Sequence[str]) -> dict[str, Any]:
        return {
            "round": self.number,
            "complete": self.complete,
            "points": dict(zip(team_names, self.points, strict=True)),
            "totals": dict(zip(team_names, self.totals, strict=True)),
            "turns": [t.to_json() for t in self.turns],
        }

    @staticmethod
    def from_json(obj: Any, team_names: Sequence[str]) -> RoundRecord:
        return RoundRecord(
            int(obj["round"]),
            tuple(TurnRecord.from_json(t) for t in obj["turns"]),
            tuple(int(obj["points"][t]) for t in team_names),
            tuple(int(obj["totals"][t]) for t in team_names),
            bool(obj["complete"]),
        )


@dataclass(frozen=True)
class State:
    """A whole You Blew It game (immutable)."""

    rules: HouseRules
    teams: tuple[tuple[str, tuple[str, ...]], ...]
    order: tuple[str, ...]  #: this round's line-up, from its first player
    locked: tuple[int, ...]  #: per team: points of finished rounds (YBI-10)
    round: int = 1
    turn_no: int = 0  #: turns finished in this round
    turn: Turn = field(default_factory=Turn)
    this_round: tuple[TurnRecord, ...] = ()
    rounds: tuple[RoundRecord, ...] = ()
    on_board: tuple[str, ...] = ()  #: teams (or players) on the board (Y13)
    final_turns: int | None = None  #: end_rule=one_more_turn_each: turns left
    over: bool = False
    winners: tuple[str, ...] = ()
    reason: str = ""

    @property
    def team_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.teams)

    def team_of(self, player: str) -> str:
        return next(name for name, members in self.teams if player in members)

    @property
    def player(self) -> str:
        return self.order[self.turn_no]


def _team_index(state: State, team: str) -> int:
    return state.team_names.index(team)


def provisional(state: State) -> tuple[int, ...]:
    """Each team's score now: locked rounds plus this round's standing banked turns."""
    out = list(state.locked)
    for rec in state.this_round:
        if rec.status == "banked":
            out[_team_index(state, rec.team)] += rec.points
    return tuple(out)


def _lineup(teams: tuple[tuple[str, tuple[str, ...]], ...], seating: str) -> tuple[str, ...]:
    if seating == "together":
        return tuple(p for _, members in teams for p in members)
    out: list[str] = []
    for i in range(max(len(m) for _, m in teams)):
        out.extend(members[i] for _, members in teams if i < len(members))
    return tuple(out)


def _lock_round(state: State, *, complete: bool) -> State:
    points = [0] * len(state.teams)
    for rec in state.this_round:
        if rec.status == "banked":
            points[_team_index(state, rec.team)] += rec.points
    locked = tuple(a + b for a, b in zip(state.locked, points, strict=True))
    record = RoundRecord(state.round, state.this_round, tuple(points), locked, complete)
    return replace(state, locked=locked, this_round=(), rounds=(*state.rounds, record))


def _decide(state: State, why: str) -> State | None:
    """Game over with the leaders as winners, or ``None`` when Y12 says play on."""
    totals = provisional(state)
    best = max(totals)
    leaders = tuple(n for n, t in zip(state.team_names, totals, strict=True) if t == best)
    if len(leaders) > 1 and state.rules.tie_rule == "extra_round":
        return None
    score = " v ".join(map(str, totals))
    return replace(state, over=True, winners=leaders, reason=f"{why}: {score}")


def _finish_turn(state: State, record: TurnRecord) -> State:
    """Write the turn on the sheet, pass the dice, close the round, check the end."""
    this_round = state.this_round
    from_zero = state.final_turns is not None and state.rules.final_turns_from == "zero"
    if record.status == "blown" and not from_zero:  # YBI-8 / Y8: earlier teammates lose theirs
        this_round = tuple(
            replace(r, status="wiped", wiped_by=record.player)
            if r.team == record.team and r.status == "banked"
            else r
            for r in this_round
        )
    state = replace(state, this_round=(*this_round, record), turn_no=state.turn_no + 1, turn=Turn())
    rules = state.rules
    if state.turn_no == len(state.order):
        order = state.order[1:] + state.order[:1] if rules.rotate_start else state.order
        number = state.round
        state = replace(_lock_round(state, complete=True), round=number + 1, turn_no=0, order=order)
        if rules.end_rule == "end_of_round" and max(state.locked) >= rules.target:
            done = _decide(state, f"a team reached {rules.target} at the end of round {number}")
            if done is not None:
                return done
    if rules.end_rule == "one_more_turn_each":
        if state.final_turns is None:
            if max(provisional(state)) >= rules.target:
                state = replace(state, final_turns=len(state.order) - 1)
        else:
            state = replace(state, final_turns=state.final_turns - 1)
        if state.final_turns == 0:
            why = f"a team reached {rules.target} and every other player had one more turn"
            done = _decide(state, why)
            if done is None:  # Y12 tie: one more full round of turns
                return replace(state, final_turns=len(state.order))
            return _lock_round(done, complete=False) if done.this_round else done
    return state


def _settle(state: State) -> State:
    """Apply a pending blow (the roll stood until the next action; see scoring.farkle.turn)."""
    if state.turn.phase != "blown" or state.over:
        return state
    record = TurnRecord(
        state.player, state.team_of(state.player), state.turn.points, "blown", state.turn.steps
    )
    return _finish_turn(state, record)


def _bank(state: State) -> State:
    turn = state.turn
    player = state.player
    team = state.team_of(player)
    status: TurnStatus = "banked"
    on_board = state.on_board
    minimum = state.rules.on_board_min
    key = team if state.rules.on_board_scope == "team" else player
    if minimum and key not in on_board:
        if turn.points >= minimum:
            on_board = (*on_board, key)
        else:
            status = "not_on_board"
    record = TurnRecord(player, team, turn.points, status, turn.steps)
    return _finish_turn(replace(state, on_board=on_board), record)


class YouBlewIt(FarkleGame[State, HouseRules]):
    """The You Blew It rules (stateless; see :data:`GAME`)."""

    name = "you-blew-it"
    title = "You Blew It"
    rules_prefix = "ybi"
    rules_type = HouseRules
    uses_teams = True
    all_dice_word = "all six"

    # -- setup ---------------------------------------------------------------------------
    def new(
        self,
        *,
        players: Sequence[str] | None = None,
        teams: Mapping[str, Sequence[str]] | None = None,
        rules: Mapping[str, object] | HouseRules | None = None,
    ) -> State:
        parsed = self.parse_rules(rules)
        if teams is None:
            if players is None:
                raise ValueError("You Blew It is played by teams: give teams {name: [players]}")
            teams = {p: [p] for p in players}  # one-player teams: the plain game (Y14)
        line = tuple((str(t).strip(), tuple(str(p).strip() for p in m)) for t, m in teams.items())
        if len(line) != parsed.teams:
            raise ValueError(f"Y14: this game has {parsed.teams} teams, got {len(line)}")
        names = [p for _, m in line for p in m]
        if any(not m for _, m in line) or any(not n for n in names) or any(not t for t, _ in line):
            raise ValueError("YBI-1: every team needs a name and at least one player")
        if len(set(names)) != len(names) or len({t for t, _ in line}) != len(line):
            raise ValueError("YBI-1: team and player names must be unique")
        if len({len(m) for _, m in line}) > 1 and parsed.unequal_teams == "forbid":
            raise ValueError("Y14 (unequal_teams=forbid): teams must have the same size")
        return State(
            rules=parsed,
            teams=line,
            order=_lineup(line, parsed.seating),
            locked=(0,) * len(line),
        )

    # -- play ----------------------------------------------------------------------------
    def apply(self, state: State, action: Action) -> State:
        if isinstance(action, Reroll) and state.turn.phase in ("keep", "blown"):
            turn = apply_reroll(state.turn, action.dice, _cocked(state.rules), IDS)
            return replace(state, turn=turn)
        state = _settle(state)
        if state.over:
            raise IllegalActionError("YBI-11: the game is over")
        turn = state.turn
        tbl = table(state.rules)
        if type(action) is Roll:  # a Reveal is Gords' (a Roll subclass)
            return replace(state, turn=apply_roll(turn, action.dice, DICE, tbl, IDS))
        if type(action) is Keep:  # Reroll and Fix are Keep subclasses
            return replace(state, turn=apply_keep(turn, action.dice, DICE, tbl, IDS))
        if isinstance(action, Bank):
            return self._apply_bank(state, tbl)
        if isinstance(action, Reroll):
            raise IllegalActionError(f"{IDS.cocked}: a re-roll follows a roll, before any keep")
        if isinstance(action, Lineup):
            return self._apply_lineup(state, action)
        if isinstance(action, End):
            why = "ended by the scorekeeper"
            return replace(state, over=True, winners=(), reason=why, turn=Turn())
        if isinstance(action, SetRule):
            raise IllegalActionError("C6: You Blew It house rules are fixed at game start")
        if action.type in ("undo", "fix"):
            raise IllegalActionError(f"{action.type} replays the log: use scoring.history")
        raise IllegalActionError(f"You Blew It has no {action.type!r} action")

    def _apply_bank(self, state: State, tbl: ComboTable) -> State:
        why = "YBI-7: choose which dice to keep before banking"
        turn = keep_sole_option(state.turn, tbl, DICE, why)
        state = replace(state, turn=turn)
        if turn.phase != "decide":
            raise IllegalActionError("YBI-7: bank after keeping dice from a roll")
        if turn.hot:
            raise IllegalActionError(
                "YBI-6: all six dice scored: gather them up and roll again (no banking now)"
            )
        return _bank(state)

    def _apply_lineup(self, state: State, action: Lineup) -> State:
        if state.turn_no or state.turn.started:
            raise IllegalActionError(
                "YBI-2: the line-up changes only before the first roll or between rounds"
            )
        if sorted(action.order) != sorted(state.order):
            raise IllegalActionError(
                f"YBI-2: the line-up must name every player once: {', '.join(state.order)}"
            )
        return replace(state, order=tuple(action.order))

    def legal_actions(self, state: State) -> list[Action]:
        out: list[Action] = []
        turn = state.turn
        if turn.phase in ("keep", "blown"):
            out.append(Reroll(()))
        settled = _settle(state)
        if settled.over:
            return out
        turn = settled.turn
        tbl = table(state.rules)
        if turn.phase == "keep":
            options = roll_score(turn, tbl).options
            out.extend(Keep(o.keep) for o in options)
            if len(options) == 1 and options[0].may_stop:
                out.append(Bank())
        elif turn.phase == "decide" and not turn.hot:
            out.append(Bank())
        if settled.turn_no == 0 and not turn.started:
            out.append(Lineup(settled.order))
        out.append(End())
        return out

    def expecting(self, state: State) -> Expecting:
        settled = _settle(state)
        if settled.over:
            return Expecting(None, "none", 0, f"Game over: {settled.reason}")
        player = settled.player
        team = settled.team_of(player)
        turn = settled.turn
        n = turn.dice_wanted(DICE)
        dice = n_dice(n)
        if turn.phase == "keep":
            count = len(roll_score(turn, table(state.rules)).options)
            text = f"{player}: keep scoring dice ({count} choice{'' if count == 1 else 's'})"
            return Expecting(player, "keep", 0, text, team)
        if turn.phase == "decide" and not turn.hot:
            return Expecting(
                player, "roll_or_bank", n, f"{player}: roll {dice} or bank {turn.points}", team
            )
        if turn.phase == "reroll":
            return Expecting(player, "roll", n, f"{player}: re-roll {dice}", team)
        if turn.hot:
            text = f"{player}: hot dice! roll all six again ({turn.points} so far)"
        else:
            text = f"{player}: roll {dice}"
        return Expecting(player, "roll", n, text, team)

    def highlights(self, before: State, action: Action, after: State) -> tuple[Highlight, ...]:
        """A roll worth >= HIGHLIGHT_MIN kept, a banked turn worth >= HIGHLIGHT_MIN."""
        if not isinstance(action, Keep | Bank) or isinstance(action, Reroll):
            return ()
        prior = _settle(before).turn.steps
        record = _last_record(after) if isinstance(action, Bank) else None
        steps = record.steps if record is not None else after.turn.steps
        player = record.player if record is not None else after.player
        out: list[Highlight] = []
        if len(steps) > len(prior) and steps[-1].points >= HIGHLIGHT_MIN:
            step = steps[-1]
            text = f"{player}: {step.points} in one roll ({words(step.roll)})"
            out.append(Highlight("roll", player, step.points, step.roll, text))
        if record is not None and record.status == "banked" and record.points >= HIGHLIGHT_MIN:
            text = f"{player} banked {record.points} in one turn"
            out.append(Highlight("turn", player, record.points, (), text))
        return tuple(out)

    # -- the hooks of FarkleGame ----------------------------------------------------------
    _settled = staticmethod(_settle)
    _table = staticmethod(table)

    def _scores(self, settled: State) -> dict[str, int]:
        return dict(zip(settled.team_names, provisional(settled), strict=True))

    def _board(self, state: State, settled: State) -> dict[str, Any]:
        """The turn (a blow shown settled), the keeps, and a warning for unequal teams."""
        sizes = {len(m) for _, m in state.teams}
        warnings = []
        if len(sizes) > 1 and state.rules.unequal_teams == "allow_with_warning":
            warnings.append("Y14: teams of different sizes: the bigger team gets more turns")
        return {
            **turn_view(state.turn, settled.turn, DICE),
            "options": options_view(state.turn, table(state.rules)),
            "warnings": warnings,
        }

    def _fields(self, state: State) -> dict[str, Any]:
        """Everything :meth:`_decode` needs, plus the team and turn sheets."""
        names = state.team_names
        return {
            "rules": rules_to_json(state.rules),
            "teams": {name: list(m) for name, m in state.teams},
            "round": state.round,
            "order": list(state.order),
            "turn_no": state.turn_no,
            "turn": state.turn.to_json(),
            "locked": dict(zip(names, state.locked, strict=True)),
            "on_board": list(state.on_board),
            "this_round": [r.to_json() for r in state.this_round],
            "rounds": [r.to_json(names) for r in state.rounds],
            "final_turns": state.final_turns,
            "state_over": state.over,
            "state_winners": list(state.winners),
            "state_reason": state.reason,
        }

    def _decode(self, src: Mapping[str, Any]) -> State:
        teams = tuple((str(t), tuple(map(str, m))) for t, m in src["teams"].items())
        names = [t for t, _ in teams]
        final = src["final_turns"]
        return State(
            rules=self.parse_rules(src["rules"]),
            teams=teams,
            order=tuple(src["order"]),
            locked=tuple(int(src["locked"][t]) for t in names),
            round=int(src["round"]),
            turn_no=int(src["turn_no"]),
            turn=Turn.from_json(src["turn"]),
            this_round=tuple(TurnRecord.from_json(r) for r in src["this_round"]),
            rounds=tuple(RoundRecord.from_json(r, names) for r in src["rounds"]),
            on_board=tuple(src["on_board"]),
            final_turns=None if final is None else int(final),
            over=bool(src["state_over"]),
            winners=tuple(src["state_winners"]),
            reason=str(src["state_reason"]),
        )


def _cocked(rules: HouseRules) -> Literal["reroll_offending", "reroll_all_just_rolled"]:
    return (
        "reroll_all_just_rolled"
        if rules.cocked_dice == "reroll_all_just_rolled"
        else ("reroll_offending")
    )


def _last_record(state: State) -> TurnRecord | None:
    if state.this_round:
        return state.this_round[-1]
    if state.rounds and state.rounds[-1].turns:
        return state.rounds[-1].turns[-1]
    return None


GAME = YouBlewIt()
_PROTOCOL_CHECK: Game[State] = GAME  # mypy proves YouBlewIt implements the Game protocol

__all__ = [
    "DICE",
    "GAME",
    "HouseRules",
    "RoundRecord",
    "State",
    "TurnRecord",
    "YouBlewIt",
    "provisional",
    "table",
]
