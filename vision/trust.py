"""When to give a die's value and when to ask: the reader never scores a number it doubts.

Why: at a bar a wrong number scored without a word is the worst failure there is (nobody
checks a roll the scoreboard took), while a die the reader asks about costs one tap on the
phone. The value network alone is sure of itself on dice unlike its training photos, so its
confidence is not enough: a second opinion that fails differently -- the pips counted on the
squared-up face (``vision.pipcount``) -- must not contradict it. A die gets a value when

- its pips counted agree with the network, and the network's confidence is at least
  ``DetectorParams.agreed_value_confidence`` (not for a 1: one round blob is the layout a
  pip of a die taken for a die also has, so a 1 must be sure on the network's word); or
- its pips could not be counted cleanly (glare, a logo, marbling, blur), and the network's
  confidence alone reaches ``DetectorParams.min_value_confidence``.

A clean count that disagrees always asks, whatever the network says; its value is then among
the die's ``candidates`` for the one-tap answer. So does a lone pip whose "face" goes on past
the located size in the body's colour (``PipCount.engulfed``): a locator that never saw dice
this big takes their pips for dice (a 2 read as a sure 1, held out of a source: 42 of its 48
wrong dice) -- unless the 1 holds seen whole (``vision.relook.seen_whole``: a real 1 the locator
sized small looks engulfed too), when the reader counts it a clean 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from vision.classify import ValueGuess
from vision.house.model import HouseGuess
from vision.pipcount import PipCount
from vision.reading import Why as Why  # where the readings carry it; named here as before


@dataclass(frozen=True)
class Verdict:
    value: int | None  # None: ask
    candidates: tuple[tuple[int, float], ...]  # the one-tap answers, best first
    why: Why


def verdict(
    guess: ValueGuess,
    count: PipCount | None,
    *,
    alone: float,
    agreed: float,
) -> Verdict:
    """The value to report for a die the network read as ``guess`` and whose pips were counted
    as ``count`` (None: not counted), with the confidence floors ``alone`` (no clean count)
    and ``agreed`` (a clean count agrees)."""
    confidence = guess.confidence
    candidates = guess.candidates
    counted = None if count is None else count.value
    if count is not None and count.engulfed:
        return Verdict(None, candidates, Why.PART)
    if counted is not None and counted != guess.value:
        return Verdict(None, _with(candidates, counted, guess), Why.DISAGREED)
    if counted is not None and counted > 1 and confidence >= agreed:
        return Verdict(guess.value, candidates, Why.AGREED)
    if (counted is None or counted == 1) and confidence >= alone:
        return Verdict(guess.value, candidates, Why.SURE)
    return Verdict(None, candidates, Why.UNSURE)


def _with(
    candidates: tuple[tuple[int, float], ...], value: int, guess: ValueGuess
) -> tuple[tuple[int, float], ...]:
    """``candidates`` with ``value`` (the pips' count) among the two offered: the network's
    best and the count's, the count's probability as the network gives it."""
    if any(v == value for v, _ in candidates):
        return candidates
    p = guess.faces[value - 1] if len(guess.faces) == 6 else 0.0
    return (candidates[0], (value, float(p)))


DOUBT = 0.5
"""A value the base reader gave is asked about when the house model, short of its floor, still
finds another value more likely than not (``HouseGuess.face`` of its best above this): taught
this house's dice, it knows them better than the base reader, and asking costs a tap. A
natural point, not fitted: with a third of a source taught, it asked 3 more of 725 held-out
dice (nellbyler_d6) and caught one of its 4 wrong; matteop65_d6 unchanged."""


AGREE = 0.9
"""An ace the base reader asked about as unsure is read as 1 when the house model, short of its
floor, still gives 1 this much and the value network's best guess is 1 as well: two opinions
that fail differently agree. A fitted floor of a small set (fewer than ``MIN_HELD_BACK``
held-back dice) is 0.99, short of which a house taught twenty logo aces left 60 of 2670 of
them asked (2.2 %). Over five seeds of the logo bench (``bench/house_vision.py --logos
--seeds 0,1,2,3,7``) it reads 13 more of those 2670 as 1, none as another number; held out of
training with a third of each DEV source taught, nellbyler_d6 is unchanged and matteop65_d6
reads 1 more of 538 right, none wrong. Only the 1: the same rule for every value gave
nellbyler_d6 3 more wrong of 733."""


NOT_DIE = 0.05
"""A die the base reader asked about as unsure is given the house model's value only when the
value network finds it this unlikely (or less) not to be a die centred in its cut: the house
model knows the values of this house's dice, but whether a cut shows a die's top face at all
stays the value network's call (the limit a faint locator peak must meet,
``DetectorParams.faint_peak_not_die``, not fitted). Except a 1: a logo ace is the one face a
network that never saw the logo rightly doubts is a die, and teaching it is what the house
model is for (``vision.synth.logos``). A house taught nellbyler_d6 gave a 5 at
0.999 to a matteop65_d6 die's side face at a slant (its top face missed), which the network
had asked about at "not a die" 0.08: one photo of 274 silently wrong, none with this limit;
with a third of each source taught, 86.2 -> 85.8 % and 92.0 -> 91.8 % of the rest right, one
fewer photo silently wrong on nellbyler_d6 (``bench/house_vision.py``)."""


def overrule(
    told: Verdict,
    house: HouseGuess | None,
    count: PipCount | None,
    *,
    floor: float,
    not_die: float = 0.0,
    net_sure_of: int | None = None,
) -> Verdict:
    """``told`` as the house model (``vision.house``) changes it, for a die it may judge
    (``house.near``: like the dice it was taught; any other die keeps the base reader's
    verdict). Sure at ``floor`` of a value, it gives that value -- unless a clean pip count
    contradicts it, which asks as always -- and a value the base reader gave that the house
    model is sure is another asks, offering both; so does one it only doubts (:data:`DOUBT`).
    A lone pip engulfed by a die's body (``Why.PART``) stays asked: the house model, shown a
    cut centred on a pip, sees a 1 as surely as the value network does (held out of matteop65_d6,
    30 photos taught: 4 of its 7 wrong dice were 2s given as 1 this way); so does a die asked as
    unsure that the value network doubts is a die at all (``not_die`` over :data:`NOT_DIE`),
    unless the house reads it as 1 (a logo ace).

    A clean count that disagrees is outvoted, not asked about, when the value network was sure
    of the house's value on its word alone (``net_sure_of``: its value when its confidence
    reached ``DetectorParams.min_value_confidence``): three opinions, two of them sure and
    agreeing, and the count the one that fails most on a house's dice (glare beside a 1's
    pip, or a 6's middle pips merged into its rim, make a clean layout of the wrong value).
    Chosen on matteop65_d6 with a third of it taught (networks trained without it): all 5
    dice asked for a count the other two outvoted were right; on nellbyler_d6 it gives 7 more
    of 733 right, none wrong (looked at when the rule was made). So is one on a house ace the
    network doubts is a die at all (``not_die`` over :data:`NOT_DIE`): blobs on a logo are no
    count (a diamond logo counts as a clean 2; over five seeds of the logo bench 7 more of
    2670 taught aces read as 1, photo figures unchanged). An ace both the house (at
    :data:`AGREE`, short of its floor) and the network's best guess call 1 is read as 1.
    Without a house model a clean count that disagrees always asks. An ace asked as unsure
    whose ``NEIGHBOURS`` nearest examples are aces and near (``HouseGuess.vote_near``) and
    that the network's best guess calls 1 is read as 1 even when the head, short of its floor,
    gives it to another value: the network and the examples fail differently, and a head fitted
    on twenty-odd star aces gives some of them to the 3s (over ten seeds of the logo bench,
    taught star aces asked 9 -> 2 of 876, ring-b 6 -> 2; plain dice on renders
    (``--plain``) and photos with a third taught read exactly as before).
    At ``floor`` 1.0 it changes nothing."""
    if house is None or floor >= 1.0:
        return told
    net_best = told.candidates[0][0] if told.candidates else None
    if (
        told.why is Why.UNSURE
        and house.voted == net_best == 1
        and house.vote_near
        and not house.judges(floor)
    ):
        return Verdict(1, house.candidates(), Why.HOUSE)  # the network's guess and the vote
    if not house.near or house.best == 0:
        return told
    if not house.judges(floor):
        given = told.value
        if told.why is Why.UNSURE and house.best == net_best == 1 and house.sure >= AGREE:
            return Verdict(1, house.candidates(), Why.HOUSE)  # two opinions, agreeing
        if _voted_ace(told, house, not_die, net_best):
            return Verdict(1, house.candidates(), Why.HOUSE)  # head and examples agree
        if given is not None and given != house.best and house.face(house.best) > DOUBT:
            return Verdict(None, _pair(house, given), Why.HOUSE_DOUBTS)
        return told
    value = house.best
    if told.why is Why.PART and value == 1:
        return told  # the cut is centred on a pip of a bigger die: its house look is a 1 too
    if told.why is Why.UNSURE and not_die > NOT_DIE and value != 1:
        return told  # maybe no die's top face at all (a side face, a key): not the house's call
    counted = None if count is None else count.value
    # an ace the network doubts is a die at all is a picture (a logo): blobs on it are no count
    logo = value == 1 and not_die > NOT_DIE
    if counted is not None and counted != value and net_sure_of != value and not logo:
        return Verdict(None, _pair(house, counted), Why.DISAGREED)
    if told.value is not None and told.value != value:
        return Verdict(None, _pair(house, told.value), Why.HOUSE_DOUBTS)
    return Verdict(value, house.candidates(), Why.HOUSE)


def _voted_ace(told: Verdict, house: HouseGuess, not_die: float, net_best: int | None) -> bool:
    """An ace asked about that the house model, short of its floor, still reads as 1 and whose
    ``NEIGHBOURS`` nearest taught examples are all aces (``HouseGuess.voted``): its head and
    its examples agree, with a third sign that it is an ace -- the value network's best guess
    is 1 too, or the network doubts it is a die at all (the logo's signature; then a clean
    count that disagrees is outvoted as in :func:`overrule`: blobs on a logo are no count).

    Why: a head fitted on twenty-odd aces of a logo splits its mass with the value whose
    blobs the logo resembles (a star as 1 at 0.75, 3 at 0.24) while the examples taught
    are far nearer (0.99 against at most 0.96). Over five seeds of the logo bench
    (``bench/house_vision.py --logos``), taught aces asked 81 -> 32 of 2670 with the value
    network shown logo aces as no die, 43 -> 16 with the one shipped before it; none read as
    another number. Only for aces: the same vote for every value read 10 more of
    nellbyler_d6's held-out dice right and 2 wrong (a third taught, networks trained without
    it); this rule changed one of its dice (right) and none of matteop65_d6's."""
    if not (house.voted == house.best == 1):
        return False
    if told.why is Why.UNSURE:
        return not_die > NOT_DIE or net_best == 1
    return told.why is Why.DISAGREED and not_die > NOT_DIE


def _pair(house: HouseGuess, value: int) -> tuple[tuple[int, float], ...]:
    """The house's best and ``value`` (the other opinion) as the two one-tap answers."""
    candidates = house.candidates()
    if any(v == value for v, _ in candidates):
        return candidates
    return (candidates[0], (value, house.face(value)))
