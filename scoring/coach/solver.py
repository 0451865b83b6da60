"""Farkle-family coach: exact single-roll odds and the turn policy that maximises expected points.

Both games score rolls with :mod:`scoring.farkle.combos` (``keeps``), so the coach never
re-implements scoring: it only asks which keeps are legal and what they are worth.

The turn model (Busche & Neller's value iteration, specialised to one turn). A decision state
is ``(at_risk, n, may_stop, clause)``:

- ``at_risk``: every point a blow would lose. In Bolo that is the turn's points; in You Blew It
  it is the turn's points **plus the points the blower's teammates banked earlier this round**
  (YBI-8/Y8: the blow wipes them too), so a team that already banked 800 plays the turn as if
  it started with 800 at risk. Banking keeps ``at_risk`` (the team's round points), a blow
  leaves 0. The coach maximises the expected ``at_risk`` left after this turn; it does not
  model the risk that a *later* teammate's blow wipes this turn (that player decides then).
- ``n``: dice about to be rolled (after hot dice: all of them, and no banking).
- ``may_stop``: the last keep allows banking (YBI hot dice, Bolo's B-4 non-scoring-die rule).
- ``clause``: Bolo's Yahtzee clause (B13) is live: the cycle's first keep was three or four of
  one face 2/3/4/6, so a following roll showing only that face is re-rolled, not a BOLO.

A bank is worth ``at_risk`` when it reaches ``minimum`` (Bolo's board: 650 / 350 / 750 / 1000,
YBI's optional on-board minimum), otherwise ``floor`` (0: the turn is not tallied; allowed only
when ``may_pass``, RULES.md B9). Every combination is a multiple of 50, so ``at_risk`` lives on
a grid of 50-point steps; every keep adds at least 50, so one backward sweep from the cap down
to 0 solves the turn exactly, no iteration needed. Values never decrease with ``at_risk``, so of
the keeps of one roll that lead to the same state only the one with the most points matters.

Finishing mode (``goal``): a bank is worth 1 if it reaches ``goal``, else 0, so the values are
P(this turn banks at least ``goal``) under the policy that maximises it (Bolo's endgame; the
"on board" figures of RULES.md 1.4). A pass is never better than playing on there, so the value
depends only on the points still needed: one solve with a large goal serves every need.

The cap: above ``cap`` the policy banks whenever it may. Argument: if ``V(t) - t <= M`` for every
state (``M`` is the largest expected gain of playing on, read off the solved grid, where it peaks
at small ``t`` since more points at risk only make playing on worse), then rolling ``n`` dice from
``t`` is worth at most ``(1 - b_n)(t + M) + e_n`` (``b_n`` = P(blow), ``e_n`` = mean best points
of the roll), which is below ``t`` once ``t > ((1 - b_n) M + e_n) / b_n``. The solver computes
that bound after solving and re-solves with a larger cap if the bound exceeds it
(:attr:`Policy.bank_always_above`). Above the cap, values are affine in ``t``
(``a t + b``: a forced roll keeps a fraction ``a`` of the points), solved as a small fixed point.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from scoring.farkle.combos import ComboTable, KeepOption, counts_of, dice_of, keeps

STEP = 50  #: every combination of both games is a multiple of 50 points
CLAUSE_FACES = (2, 3, 4, 6)  #: B13: faces whose kept triple/quad can trigger the clause
DEFAULT_CAP = 10000  #: first cap tried; raised automatically when the bound needs it


# -- exact single-roll figures ----------------------------------------------------------------


def multisets(n: int) -> Iterator[tuple[tuple[int, ...], int]]:
    """Every roll of ``n`` dice as (sorted dice, number of ordered outcomes of 6**n)."""
    fact = math.factorial(n)
    for dice in itertools.combinations_with_replacement(range(1, 7), n):
        ways = fact
        for c in counts_of(dice):
            ways //= math.factorial(c)
        yield dice, ways


@dataclass(frozen=True)
class RollStats:
    """Exact figures for one roll of ``dice`` dice (RULES.md 1.4 / 2.4 columns)."""

    dice: int
    blow_outcomes: int  #: ordered outcomes of 6**dice that score nothing
    p_blow: Fraction
    p_all_score: Fraction  #: some legal keep uses every die
    mean_points: Fraction  #: mean of the best keep's points (0 for a blow)

    def to_json(self) -> dict[str, Any]:
        return {
            "dice": self.dice,
            "blow_outcomes": self.blow_outcomes,
            "outcomes": 6**self.dice,
            "p_blow": float(self.p_blow),
            "p_all_score": float(self.p_all_score),
            "mean_points": float(self.mean_points),
        }


@lru_cache(maxsize=64)
def roll_stats(n: int, table: ComboTable) -> RollStats:
    """P(blow), P(all dice score) and the mean best points of ``n`` dice, exactly, by
    enumerating the 6**n outcomes grouped by multiset (multinomial weights)."""
    if not 1 <= n <= table.dice:
        raise ValueError(f"{table.name}: a roll has 1 to {table.dice} dice, got {n}")
    total = 6**n
    blow = all_score = points = 0
    for dice, ways in multisets(n):
        options = keeps(dice, table)
        if not options:
            blow += ways
            continue
        points += ways * options[0].points
        if any(o.uses_all for o in options):
            all_score += ways
    return RollStats(
        n, blow, Fraction(blow, total), Fraction(all_score, total), Fraction(points, total)
    )


def p_blow(n: int, table: ComboTable) -> float:
    """P(no scoring die) for a roll of ``n`` dice under ``table``."""
    return float(roll_stats(n, table).p_blow)


# -- the turn model -----------------------------------------------------------------------------


@dataclass(frozen=True)
class FarkleSpec:
    """Everything the turn policy depends on (the memo and file key of a solved policy)."""

    game: str
    table: ComboTable
    minimum: int = 0  #: least ``at_risk`` a bank needs to count
    floor: int = 0  #: what a bank below ``minimum`` is worth (0: not tallied)
    may_pass: bool = True  #: a bank below ``minimum`` is allowed (B9)
    clause_rerolls: int | None = None  #: Bolo B13: None = off, 0 = unlimited, k per chance
    five_ones_win: bool = False  #: Bolo B3: keeping five 1s ends the turn as a bank
    cap: int = 0  #: 0: automatic (see the module docstring)
    goal: int = 0  #: finishing mode: maximise P(banking at least ``goal``), not points

    def __post_init__(self) -> None:
        if any(c.points % STEP for c in self.table.combos):
            raise ValueError(f"the coach needs combinations worth multiples of {STEP}")
        if min(self.minimum, self.floor, self.cap, self.goal) < 0:
            raise ValueError("minimum, floor, cap and goal are not negative")

    def bank(self, at_risk: int) -> float | None:
        """What banking ``at_risk`` is worth now, or ``None`` when the rules forbid it
        (finishing mode: 1 for reaching the goal, else 0)."""
        if at_risk >= self.minimum:
            if self.goal:
                return 1.0 if at_risk >= self.goal else 0.0
            return float(at_risk)
        return float(self.floor) if self.may_pass else None

    def win_value(self, at_risk: int) -> float:
        """Value of a keep that ends the turn as a win (Bolo B3, five 1s)."""
        return 1.0 if self.goal else float(at_risk)

    def key(self) -> str:
        """A stable text naming this spec (the cache file key)."""
        return repr(self)


# Successor kinds after a keep: (dice to roll next, may stop, clause live) or "win".
_State = tuple[int, bool, bool]
_WIN: _State = (0, True, False)


def _clause_after(spec: FarkleSpec, n: int, keep: Sequence[int]) -> bool:
    """B13 becomes live after the cycle's first keep of 3 or 4 of one face 2/3/4/6."""
    return (
        spec.clause_rerolls is not None
        and n == spec.table.dice
        and len(keep) in (3, 4)
        and len(set(keep)) == 1
        and keep[0] in CLAUSE_FACES
    )


def successor(spec: FarkleSpec, n: int, option: KeepOption) -> _State:
    """The decision state after keeping ``option`` from a roll of ``n`` dice."""
    if spec.five_ones_win and "five 1s" in option.combos:
        return _WIN
    left = n - len(option.keep)
    if left == 0:  # hot dice: pick up all of them, no banking (YBI-6, B-4)
        return (spec.table.dice, False, False)
    return (left, option.may_stop, _clause_after(spec, n, option.keep))


def _clause_multiplier(spec: FarkleSpec, n: int) -> float:
    """Value of rolling with the clause live / without: the all-face BOLO (one outcome of
    6**n) is rolled again, up to ``clause_rerolls`` times (0 = unlimited)."""
    p = 6.0**-n
    if spec.clause_rerolls == 0:
        return 1.0 / (1.0 - p)
    return sum(p**j for j in range((spec.clause_rerolls or 0) + 1))


@lru_cache(maxsize=64)
def _transitions(
    spec: FarkleSpec, n: int
) -> tuple[tuple[float, tuple[tuple[int, _State], ...]], ...]:
    """Per scoring roll of ``n`` dice: (probability, best grid step per successor state)."""
    out = []
    for dice, ways in multisets(n):
        best: dict[_State, int] = {}
        for option in keeps(dice, spec.table):
            s = successor(spec, n, option)
            steps = option.points // STEP
            if steps > best.get(s, -1):
                best[s] = steps
        if best:
            out.append((ways / 6**n, tuple((d, s) for s, d in sorted(best.items()))))
    return tuple(out)


def _clause_sizes(spec: FarkleSpec) -> tuple[int, ...]:
    d = spec.table.dice
    return tuple(n for n in (d - 3, d - 4) if n >= 1) if spec.clause_rerolls is not None else ()


def _roll_states(spec: FarkleSpec) -> list[tuple[int, bool]]:
    clause = _clause_sizes(spec)
    return [
        (n, f) for n in range(1, spec.table.dice + 1) for f in (False, True) if not f or n in clause
    ]


def _asymptote(spec: FarkleSpec) -> dict[tuple[int, bool], tuple[float, float]]:
    """Roll values for large ``at_risk`` as ``a * t + b``, banking whenever allowed: the
    best keep maximises ``a`` first (the share of points kept), then the offset."""
    states = _roll_states(spec)
    ab = dict.fromkeys(states, (0.0, 0.0))

    banked = (0.0, 1.0) if spec.goal else (1.0, 0.0)  # above the cap a bank is worth this

    def after(s: _State) -> tuple[float, float]:
        n, stop, flag = s
        if s == _WIN or stop:
            return banked
        return ab[(n, flag)]

    for _ in range(1000):
        new = {}
        for n, flag in states:
            a = b = 0.0
            for p, opts in _transitions(spec, n):
                best = max(
                    ((after(s)[0], after(s)[0] * d * STEP + after(s)[1]) for d, s in opts),
                    key=lambda v: (round(v[0], 12), v[1]),
                )
                a += p * best[0]
                b += p * best[1]
            m = _clause_multiplier(spec, n) if flag else 1.0
            new[(n, flag)] = (a * m, b * m)
        change = max(abs(new[s][0] - ab[s][0]) + abs(new[s][1] - ab[s][1]) for s in states)
        ab = new
        if change < 1e-12:
            break
    return ab


@dataclass(frozen=True)
class Policy:
    """A solved turn: roll values on the 50-point grid up to ``cap``, affine above it.

    ``roll[(n, clause)][i]`` is the expected ``at_risk`` kept at the end of the turn when
    ``n`` dice are about to be rolled with ``i * 50`` points at risk, under best play.
    """

    spec: FarkleSpec
    cap: int
    roll: Mapping[tuple[int, bool], tuple[float, ...]]
    asymptote: Mapping[tuple[int, bool], tuple[float, float]]
    bank_always_above: int  #: the proven bound: banking is best whenever allowed above it
    max_gain: float  #: M = max over states of V - at_risk
    _last: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_last", self.cap // STEP)

    # -- values ----------------------------------------------------------------------------
    def roll_value(self, at_risk: int, n: int, clause: bool = False) -> float:
        """Expected ``at_risk`` kept after rolling ``n`` dice now and playing on optimally."""
        i = _index(at_risk)
        key = (n, clause and n in _clause_sizes(self.spec))
        if key not in self.roll:
            raise ValueError(f"{self.spec.game}: cannot roll {n} dice")
        if i <= self._last:
            return self.roll[key][i]
        a, b = self.asymptote[key]
        return a * at_risk + b

    def value(self, at_risk: int, n: int, may_stop: bool, clause: bool = False) -> float:
        """The value of a decision state: the better of banking (if allowed) and rolling."""
        roll = self.roll_value(at_risk, n, clause)
        bank = self.spec.bank(at_risk) if may_stop else None
        return roll if bank is None else max(bank, roll)

    def state_value(self, at_risk: int, state: _State) -> float:
        if state == _WIN:
            return self.spec.win_value(at_risk)
        return self.value(at_risk, *state)

    def keep_values(
        self, roll: Iterable[int], at_risk: int
    ) -> list[tuple[KeepOption, float, _State]]:
        """Every legal keep of ``roll`` with its value under best play afterwards, best first
        (``at_risk``: the points at risk before this roll's points)."""
        dice = tuple(sorted(roll))
        out = []
        for option in keeps(dice, self.spec.table):
            s = successor(self.spec, len(dice), option)
            out.append((option, self.state_value(at_risk + option.points, s), s))
        out.sort(key=lambda x: (-x[1], -x[0].points, x[0].keep))
        return out

    def expected_turn(self, start: int = 0) -> float:
        """Expected points a fresh turn adds to ``start`` already at risk (team points)."""
        return self.roll_value(start, self.spec.table.dice) - start

    def bank_threshold(self, n: int, clause: bool = False) -> int | None:
        """The least ``at_risk`` from which banking beats rolling ``n`` dice for good
        (a may-stop state), or ``None`` if banking never wins below the cap."""
        last = None
        for i in range(self._last, -1, -1):
            t = i * STEP
            bank = self.spec.bank(t)
            if bank is None or bank < self.roll_value(t, n, clause):
                break
            last = t
        return last

    # -- JSON (the on-disk cache) ----------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "spec": self.spec.key(),
            "cap": self.cap,
            "bank_always_above": self.bank_always_above,
            "max_gain": self.max_gain,
            "roll": {f"{n},{int(f)}": list(v) for (n, f), v in self.roll.items()},
            "asymptote": {f"{n},{int(f)}": list(v) for (n, f), v in self.asymptote.items()},
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any], spec: FarkleSpec) -> Policy:
        """Rebuild a saved policy; ``ValueError`` unless it was solved for exactly ``spec``."""
        if obj.get("version") != 1 or obj.get("spec") != spec.key():
            raise ValueError("the saved policy was solved for other rules")
        cap = int(obj["cap"])

        def key(k: str) -> tuple[int, bool]:
            n, f = k.split(",")
            return int(n), f == "1"

        roll = {key(k): tuple(float(x) for x in v) for k, v in obj["roll"].items()}
        if set(roll) != set(_roll_states(spec)) or any(
            len(v) != cap // STEP + 1 for v in roll.values()
        ):
            raise ValueError("the saved policy is incomplete")
        asym = {key(k): (float(v[0]), float(v[1])) for k, v in obj["asymptote"].items()}
        return Policy(spec, cap, roll, asym, int(obj["bank_always_above"]), float(obj["max_gain"]))


def _index(at_risk: int) -> int:
    if at_risk < 0 or at_risk % STEP:
        raise ValueError(f"points at risk are a multiple of {STEP} and not negative: {at_risk}")
    return at_risk // STEP


def _solve_grid(spec: FarkleSpec, cap: int) -> Policy:
    last = cap // STEP
    asym = _asymptote(spec)
    states = _roll_states(spec)
    trans = {n: _transitions(spec, n) for n in range(1, spec.table.dice + 1)}
    pad = max((d for n in trans for _, opts in trans[n] for d, _ in opts), default=1)
    size = last + pad + 1
    roll = {s: [0.0] * size for s in states}
    # Decision-state arrays: a list per successor state, shared by every transition.
    decide: dict[_State, list[float]] = {}
    succ: set[_State] = {s for n in trans for _, opts in trans[n] for _, s in opts}
    for s in succ:
        decide[s] = [0.0] * size
    bank = [spec.bank(i * STEP) for i in range(size)]
    clause_sizes = _clause_sizes(spec)

    def fill_decide(i: int) -> None:
        b = bank[i]
        for s, arr in decide.items():
            if s == _WIN:
                arr[i] = spec.win_value(i * STEP)
                continue
            r = roll[(s[0], s[2] and s[0] in clause_sizes)][i]
            arr[i] = r if not s[1] or b is None or b < r else b

    for i in range(size - 1, last, -1):  # above the cap: affine, banking when allowed
        t = i * STEP
        for rs in states:
            a, b = asym[rs]
            roll[rs][i] = a * t + b
        fill_decide(i)
    mult = {n: _clause_multiplier(spec, n) for n in _clause_sizes(spec)}
    plans = {n: [(p, [(decide[s], d) for d, s in opts]) for p, opts in trans[n]] for n in trans}
    for i in range(last, -1, -1):
        for n, plan in plans.items():
            total = 0.0
            for p, opts in plan:
                if len(opts) == 1:
                    arr, d = opts[0]
                    total += p * arr[i + d]
                else:
                    total += p * max(arr[i + d] for arr, d in opts)
            roll[(n, False)][i] = total
            if n in mult:
                roll[(n, True)][i] = total * mult[n]
        fill_decide(i)
    gain = max(
        max(arr[i] - i * STEP for i in range(last + 1))
        for arr in (*roll.values(), *decide.values())
    )
    gain = max(gain, 0.0)
    bound = spec.minimum
    if spec.goal:  # P(finish) is at most 1, which a bank at the goal already has
        bound, gain = max(spec.goal, spec.minimum), 0.0
    for n in range(1, spec.table.dice if not spec.goal else 1):  # may-stop: <= d - 1 dice
        st = roll_stats(n, spec.table)
        b, e = float(st.p_blow), float(st.mean_points)
        m = mult.get(n, 1.0)
        if m * (1 - b) >= 1:
            raise ValueError("playing on never loses: no banking threshold exists")
        bound = max(bound, math.ceil(m * ((1 - b) * gain + e) / (1 - m * (1 - b))))
    return Policy(
        spec,
        cap,
        {s: tuple(v[: last + 1]) for s, v in roll.items()},
        asym,
        bound,
        gain,
    )


_MEMO: dict[FarkleSpec, Policy] = {}


def solve(spec: FarkleSpec) -> Policy:
    """Solve (or recall) the policy of ``spec``; the cap grows until the bound fits under it."""
    found = _MEMO.get(spec)
    if found is not None:
        return found
    cap = spec.cap or (max(spec.goal, spec.minimum) if spec.goal else DEFAULT_CAP)
    while True:
        cap = -(-cap // STEP) * STEP
        policy = _solve_grid(spec, cap)
        if spec.cap or policy.bank_always_above <= cap:
            break
        cap = policy.bank_always_above + 2000
    _MEMO[spec] = policy
    return policy


def remember(policy: Policy) -> None:
    """Make a policy loaded from disk the memoised answer for its spec."""
    _MEMO[policy.spec] = policy


def forget() -> None:
    """Drop every memoised policy (benchmarks time a cold solve with this)."""
    _MEMO.clear()
    _transitions.cache_clear()


def dice_text(dice: Iterable[int]) -> str:
    d = dice_of(counts_of(dice))
    return " ".join(map(str, d)) if d else "nothing"
