"""Farkle-family roll scoring, shared by You Blew It and Bolo (and the coach).

A game's roll scoring is *data*: a :class:`ComboTable` lists the scoring combinations (each a
count of dice per face and its points) plus the per-roll keep rules of that game. For a roll,
:func:`keeps` returns every legal keep, i.e. every sub-multiset of the roll that splits
entirely into combinations, once, with the best points for that keep, the combinations that
give them, whether it uses every die of the roll (``uses_all``: all dice score, roll them all
again) and whether the player may stop after it (``may_stop``).

Everything works on counts per face, so the order of the dice never matters, and results are
memoised per multiset (there are only 924 multisets of 0-6 dice).

Public API (stable, used by the games and the coach): :class:`Combo`, :class:`ComboTable`,
:class:`KeepOption`, :class:`RollScore`, :func:`keeps`, :func:`score_roll`,
:func:`best_points`, :func:`partition`, :func:`counts_of`, :func:`dice_of`.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, TypeAlias

Counts: TypeAlias = tuple[int, int, int, int, int, int]
Dice: TypeAlias = tuple[int, ...]

#: How the stop rule of a game reads a keep (see :attr:`ComboTable.stop_rule`).
StopRule: TypeAlias = Literal["dice_left", "non_scoring_left"]
#: Which dice count as "non-scoring" for Bolo's stop rule (RULES.md B4).
NonScoring: TypeAlias = Literal["face_count_lt_3", "player_choice"]

_ORDINAL = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def counts_of(dice: Iterable[int]) -> Counts:
    """Dice (pip values 1-6, any order) -> number of dice per face."""
    c = [0] * 6
    for d in dice:
        if not 1 <= d <= 6:
            raise ValueError(f"a die shows 1-6, got {d!r}")
        c[d - 1] += 1
    return (c[0], c[1], c[2], c[3], c[4], c[5])


def dice_of(counts: Sequence[int]) -> Dice:
    """Counts per face -> sorted dice."""
    return _dice_of(tuple(counts))


@lru_cache(maxsize=1024)
def _dice_of(counts: tuple[int, ...]) -> Dice:
    return tuple(
        itertools.chain.from_iterable(itertools.repeat(f, n) for f, n in enumerate(counts, 1))
    )


def _contains(big: Sequence[int], small: Sequence[int], times: int = 1) -> bool:
    if times == 1:
        return all(map(operator.ge, big, small))
    return all(b >= s * times for b, s in zip(big, small, strict=True))


@dataclass(frozen=True)
class Combo:
    """One scoring combination: ``counts`` dice per face worth ``points``.

    ``repeatable``: may be used more than once in one keep (two triples of one face).
    ``binding``: a multi-die combo that must be kept whole when rolled, if the table says
    so (:attr:`ComboTable.must_keep_combos`, You Blew It rule c).
    """

    name: str
    counts: Counts
    points: int
    repeatable: bool = True
    binding: bool = False

    @property
    def size(self) -> int:
        return sum(self.counts)

    @staticmethod
    def single(face: int, points: int) -> Combo:
        return Combo(f"single {face}", counts_of([face]), points)

    @staticmethod
    def of_a_kind(face: int, n: int, points: int, *, repeatable: bool = True) -> Combo:
        return Combo(
            f"{_ORDINAL[n]} {face}s", counts_of([face] * n), points, repeatable, binding=True
        )

    @staticmethod
    def made_of(name: str, dice: Sequence[int], points: int) -> Combo:
        """A combination of mixed faces (straight, full house); binding, used once."""
        return Combo(name, counts_of(dice), points, repeatable=False, binding=True)


@dataclass(frozen=True)
class ComboTable:
    """A game's roll scoring: its combinations and per-roll keep rules.

    - ``must_keep_combos``: every binding combo that the roll contains must be kept whole
      (as many disjoint copies as the roll holds), e.g. You Blew It rule c / Y1.
    - ``keep_all_scoring``: only the keeps with the most dice are legal (YBI Y2 = true).
    - ``all_scoring_takes_all``: when every rolled die is a scoring die (per ``non_scoring``)
      the only legal keep is the whole roll (Bolo B-4 / B5).
    - ``stop_rule``: ``dice_left`` (may stop unless the keep uses every die: YBI hot dice)
      or ``non_scoring_left`` (may stop only if a non-scoring die is left: Bolo B-4).
    - ``non_scoring``: ``face_count_lt_3`` (a 2/3/4/6 whose face shows fewer than three times
      in the roll, or beyond the dice of that face the table counts alone: the fourth 3 of
      four under Bolo's ``triple_plus_single``) or ``player_choice`` (any 2/3/4/6 not kept);
      RULES.md B4.
    """

    name: str
    dice: int
    combos: tuple[Combo, ...]
    must_keep_combos: bool = False
    keep_all_scoring: bool = False
    all_scoring_takes_all: bool = False
    stop_rule: StopRule = "dice_left"
    non_scoring: NonScoring = "face_count_lt_3"
    _hash: int = field(default=0, init=False, repr=False, compare=False)
    _by_face: tuple[tuple[int, ...], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The table is the memo key of every lookup: hash it once, not per call.
        key = (
            self.name,
            self.dice,
            self.combos,
            self.must_keep_combos,
            self.keep_all_scoring,
            self.all_scoring_takes_all,
            self.stop_rule,
            self.non_scoring,
        )
        object.__setattr__(self, "_hash", hash(key))
        by_face = tuple(
            tuple(i for i, c in enumerate(self.combos) if c.counts[f] > 0) for f in range(6)
        )
        object.__setattr__(self, "_by_face", by_face)
        if not all(c.points > 0 and c.size > 0 for c in self.combos):
            raise ValueError("every combination needs dice and positive points")

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True)
class KeepOption:
    """One legal keep of a roll: the dice (sorted), their best points and the combos used."""

    keep: Dice
    points: int
    combos: tuple[str, ...]
    uses_all: bool  #: keeps every die of the roll: all dice score, roll them all again
    may_stop: bool  #: the player may bank after this keep (hot dice / B-4 say no)

    def to_json(self) -> dict[str, Any]:
        return {
            "keep": list(self.keep),
            "points": self.points,
            "combos": list(self.combos),
            "uses_all": self.uses_all,
            "may_stop": self.may_stop,
        }


@dataclass(frozen=True)
class RollScore:
    """A roll's scoring: every legal keep (best first), the best points, blown, all-score."""

    dice: Dice
    options: tuple[KeepOption, ...]

    @property
    def points(self) -> int:
        return self.options[0].points if self.options else 0

    @property
    def blown(self) -> bool:
        return not self.options

    @property
    def all_score(self) -> bool:
        """Some legal keep uses every die: the player may (or must) pick them all up."""
        return any(o.uses_all for o in self.options)

    def option(self, keep: Iterable[int]) -> KeepOption | None:
        """The option keeping exactly ``keep`` (any order), or ``None`` if it is not legal."""
        wanted = tuple(sorted(keep))
        return next((o for o in self.options if o.keep == wanted), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "dice": list(self.dice),
            "points": self.points,
            "blown": self.blown,
            "all_score": self.all_score,
            "options": [o.to_json() for o in self.options],
        }


@lru_cache(maxsize=65536)
def _best(table: ComboTable, counts: Counts, used: int) -> tuple[int, tuple[int, ...]] | None:
    """Best exact partition of ``counts`` into combos: (points, combo indices) or None.

    The lowest face present must belong to some combo, which makes each partition appear
    once; ``used`` is a bit mask of the non-repeatable combos already taken.
    """
    face = next((f for f in range(6) if counts[f]), None)
    if face is None:
        return (0, ())
    best: tuple[int, tuple[int, ...]] | None = None
    for i in table._by_face[face]:
        combo = table.combos[i]
        if not _contains(counts, combo.counts):
            continue
        bit = 0 if combo.repeatable else 1 << i
        if used & bit:
            continue
        rest = tuple(a - b for a, b in zip(counts, combo.counts, strict=True))
        sub = _best(table, rest, used | bit)
        if sub is None:
            continue
        points = sub[0] + combo.points
        if best is None or points > best[0]:
            used_combos = sorted((i, *sub[1]), key=lambda j: (-table.combos[j].size, j))
            best = (points, tuple(used_combos))
    return best


def partition(dice: Iterable[int], table: ComboTable) -> tuple[int, tuple[Combo, ...]] | None:
    """The best split of exactly these dice into combinations, or ``None`` if some die
    cannot score."""
    found = _best(table, counts_of(dice), 0)
    if found is None:
        return None
    return found[0], tuple(table.combos[i] for i in found[1])


def _required(table: ComboTable, roll: Counts) -> Counts:
    """Dice per face that every keep must hold (binding combos the roll contains)."""
    need = [0] * 6
    if table.must_keep_combos:
        for combo in table.combos:
            if not combo.binding or not _contains(roll, combo.counts):
                continue
            times = 1
            if combo.repeatable:
                while _contains(roll, combo.counts, times + 1):
                    times += 1
            for f in range(6):
                need[f] = max(need[f], combo.counts[f] * times)
    return (need[0], need[1], need[2], need[3], need[4], need[5])


def _scoring_dice(table: ComboTable, roll: Counts) -> Counts:
    """Dice per face of ``roll`` that are scoring dice for Bolo's stop rule (RULES.md B4):
    every 1 and 5; under ``face_count_lt_3`` also a 2/3/4/6 showing three times or more, as
    many of them as the table counts alone. Four 3s under ``four_of_a_kind =
    triple_plus_single`` are a triple and a dead single: calling all four scoring made the
    all-scoring rule (B5) demand a keep of every die that no keep can be, so the roll BOLOed."""
    out = [0] * 6
    for f, n in enumerate(roll):
        if f + 1 in (1, 5):
            out[f] = n
        elif table.non_scoring == "face_count_lt_3":
            alone = (counts_of([f + 1] * k) for k in range(n, 2, -1))
            out[f] = next((sum(c) for c in alone if _best(table, c, 0) is not None), 0)
    return (out[0], out[1], out[2], out[3], out[4], out[5])


@lru_cache(maxsize=4096)
def _keeps(table: ComboTable, roll: Counts) -> tuple[KeepOption, ...]:
    n_roll = sum(roll)
    need = _required(table, roll)
    scoring = _scoring_dice(table, roll)
    found: list[KeepOption] = []
    for sub in itertools.product(*(range(need[f], roll[f] + 1) for f in range(6))):
        if not any(sub):
            continue
        best = _best(table, sub, 0)
        if best is None:
            continue
        size = sum(sub)
        uses_all = size == n_roll
        if table.stop_rule == "dice_left":
            may_stop = not uses_all
        else:
            # a non-scoring die is left: more dice of a face stay than its scoring dice
            # not kept (kept dice count as scoring ones first)
            may_stop = any(roll[f] > max(sub[f], scoring[f]) for f in range(6))
        found.append(
            KeepOption(
                keep=dice_of(sub),
                points=best[0],
                combos=tuple(table.combos[i].name for i in best[1]),
                uses_all=uses_all,
                may_stop=may_stop,
            )
        )
    if table.keep_all_scoring and found:
        most = max(len(o.keep) for o in found)
        found = [o for o in found if len(o.keep) == most]
    if table.all_scoring_takes_all and scoring == roll:
        found = [o for o in found if o.uses_all]
    found.sort(key=lambda o: (-o.points, -len(o.keep), o.keep))
    return tuple(found)


def keeps(roll: Iterable[int], table: ComboTable) -> tuple[KeepOption, ...]:
    """Every legal keep of ``roll`` once, best points first (ties: more dice first)."""
    return _keeps(table, counts_of(roll))


def score_roll(roll: Iterable[int], table: ComboTable) -> RollScore:
    """The whole scoring of one roll; ``blown`` when no die can be kept."""
    counts = counts_of(roll)
    return RollScore(dice_of(counts), _keeps(table, counts))


def best_points(roll: Iterable[int], table: ComboTable) -> int:
    """Points of the best legal keep (0 for a blown or empty roll): Greed's ``score()``."""
    options = keeps(roll, table)
    return options[0].points if options else 0


def clear_caches() -> None:
    """Forget memoised results (benchmarks measure a cold start with this)."""
    _best.cache_clear()
    _keeps.cache_clear()
    _dice_of.cache_clear()
