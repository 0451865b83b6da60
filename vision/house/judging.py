"""The house model's say in a read beyond each die's verdict (``vision.trust.overrule``): how
sure it must be, the located peaks it keeps that the base network took for no die, and the
engulfed lone pips it holds as a 1 seen whole.

Why here: both are what a house taught its own dice -- a logo ace above all, which the base
network never saw -- knows that the base reader cannot; ``vision.detect`` only calls them."""

from __future__ import annotations

from collections.abc import Sequence

from vision.classify import DieCut, ValueGuess
from vision.house.model import HouseModel, look
from vision.house.views import view_at
from vision.locate import Candidate
from vision.nets import U8, Nets
from vision.params import DetectorParams


def house_floor(house: HouseModel | None, params: DetectorParams) -> float:
    """How sure the house model must be to judge a die: ``params.house_confidence``, or the
    floor fitted on the house's own examples."""
    if params.house_confidence is not None:
        return params.house_confidence
    return 1.0 if house is None else house.floor


def rescued(
    found: Sequence[Candidate],
    cuts: Sequence[DieCut],
    guesses: list[ValueGuess],
    nets: Nets,
    params: DetectorParams,
    house: HouseModel,
) -> list[ValueGuess]:
    """``guesses`` with the house model's for the candidates the base network rejects (a
    located peak it takes for no die) that the house is sure are a die it was taught: a die
    whose ace is a logo is nothing the base network knows. Short of its floor, an ace all of
    whose nearest examples are aces (``HouseGuess.voted``) is kept too: a head fitted on
    twenty-odd logo aces splits its mass with the values the logo's blobs resemble. Over ten
    seeds of the logo bench (``bench/house_vision.py --logos``) taught crown aces lost 11 -> 2
    of 876, star 3 -> 0, for 4 more readings where no die lay over those 1800 tables."""
    out = list(guesses)
    rejected = [
        i
        for i, (c, g) in enumerate(zip(found, guesses, strict=True))
        if g.not_die > params.not_die_limit(c.score) and c.score >= params.peak_threshold
    ]
    if not rejected:
        return out
    judged = house.judge(*look(nets.value, [cuts[i].view for i in rejected]))
    floor = house_floor(house, params)
    for i, g in zip(rejected, judged, strict=True):
        voted = floor < 1.0 and g.near and g.best == g.voted == 1  # a logo ace it was taught
        if g.best != 0 and (g.judges(floor) or voted):
            faces = tuple(g.face(v) for v in range(1, 7))
            out[i] = ValueGuess(g.best, faces[g.best - 1], g.probs[0], faces)
    return out


def held_whole(
    image: U8,
    dice: Sequence[tuple[Candidate, float]],
    whole: list[bool],
    nets: Nets,
    params: DetectorParams,
    house: HouseModel,
) -> list[bool]:
    """``whole`` (for each ``(candidate, face turn)`` of an engulfed lone pip read as 1,
    whether it holds seen whole: ``vision.relook.seen_whole``) with each not yet held there
    held when the house model judges a 1 in every cut ``DetectorParams.whole_scales`` times
    its located size (the caller holds the networks' lock). Why: a ring logo is one blob with
    the body all round it -- a lone pip engulfed, to the pip count -- that the value network,
    never shown it, does not read as 1 seen whole; the house taught it does, while around a
    pip of a bigger die its cuts take in the die's other pips and the house reads them. Over
    ten seeds of the logo bench, taught ring-l aces read as 1 98.3 -> 99.3 %."""
    todo = [i for i, ok in enumerate(whole) if not ok]
    scales = params.whole_scales
    if not todo or not scales:
        return whole
    views = [
        view_at(image, dice[i][0].center_xy, dice[i][0].size_px * s, dice[i][1], params)
        for i in todo
        for s in scales
    ]
    judged = house.judge(*look(nets.value, views))
    floor = house_floor(house, params)
    out = list(whole)
    k = len(scales)
    for n, i in enumerate(todo):
        out[i] = all(g.best == 1 and g.judges(floor) for g in judged[n * k : (n + 1) * k])
    return out
