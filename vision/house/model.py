"""The house model: the reader adapted to a house's own dice, fitted in seconds with NumPy on a
Raspberry Pi (no training framework there).

The value network exports, beside its verdict, the features its last layer reads
(``vision.nets.EMBEDDING``). A softmax head of the house's own -- over those features and the
network's log-probabilities, every example seen in its four quarter turns -- learns what the
network's general head cannot: this house's dice, pips, lamp and mat, a logo on the ace, and
what on its pad is *not* a die. A die unlike every example taught (its features' nearest
example less similar than nearly all taught examples are to their own nearest) is not the
house's to judge: the base reader alone reads it, so dice nobody taught read exactly as they
did without a house model.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from vision.classify import softmax
from vision.house.examples import NOT_A_DIE, HouseSet
from vision.nets import F32, U8, Net, embed, to_blob

CLASSES = 7  # not a die, 1-6
TURNS = 4
MIN_EXAMPLES = 12
"""Fewer examples than this fit no model: a house model from a handful of dice would mostly
say that the rest are unlike it."""

MIN_PER_VALUE = 8
"""The house judges a value only once it holds this many examples of it: a head fitted on
three dice of a face is sure of things it has barely seen (three photos taught gave 18
wrong dice of 733 where none taught gave 2, ``bench/house_vision.py``)."""

FLOORS = (0.8, 0.85, 0.9, 0.95, 0.98, 0.99)
"""The floors :func:`fitted_floor` chooses among (the house model's probability of a value)."""

WRONG_BUDGET = 0.002
"""The share of held-back dice a house model may read wrong at its floor: Vision IV's target
for a taught source is 0.3 % wrong per die, and held-back figures are a little kinder than a
new evening's."""

MIN_HELD_BACK = math.ceil(1 / WRONG_BUDGET)
"""Fewer held-back dice than this (500) cannot show a wrong rate within
:data:`WRONG_BUDGET` -- none wrong of 289 says as little about 0.2 % as about 1 % -- so the
highest floor is used. (It was 50: a third of matteop65_d6 taught, 289 dice held back, none
wrong at 0.8, so 0.8 was chosen, and the rest of the source read 3 wrong of 538.)"""

L2S = (1e-3, 1e-2)
"""The head's L2 penalties tried; the one whose held-back fits read the most of the house's
dice right within :data:`WRONG_BUDGET` is fitted. Chosen per house on its own examples: a
house of one set of dice wants a looser head than one of eight (held out of training, a third
of each DEV source taught, the head alone reading the rest: matteop65_d6 89.1 -> 94.2 % of
them right, 2 wrong either way; nellbyler_d6 keeps 1e-3)."""

NEIGHBOURS = 5
"""How many nearest taught examples vote as the house's prototypes (:attr:`HouseGuess.voted`):
a second look at the house's examples, beside its head, that must be unanimous. Not fitted:
fewer than :data:`MIN_PER_VALUE`, so a value the house judges can fill the vote."""

NEAR_QUANTILE = 0.05
"""A die is one of the house's when its nearest example is at least as similar as this share
of the examples are to their own nearest (leave one out): 95 % of the house's dice pass."""

NEAR_VOTED_QUANTILE = 0.01
"""The same share for a die whose ``NEIGHBOURS`` nearest examples all are of the value the
head gives it (:attr:`HouseGuess.voted`): 99 % of the house's dice pass. Two signs that it is
one of the house's agree, so the similarity alone need not exclude one in twenty by
construction (a house taught twenty-odd logo aces left aces asked at similarities 0.001-0.01
under the 95 % floor, their head at 1.00 and all five nearest examples aces)."""


@dataclass(frozen=True)
class HouseGuess:
    """The house model's verdict on one die."""

    probs: tuple[float, ...]  # P(not a die), P(1) ... P(6)
    near: bool  # like the taught examples of its best value: the house may judge it
    similarity: float  # cosine similarity to the nearest taught example of that value
    voted: int | None = None  # the value all NEIGHBOURS nearest taught examples share, if any
    vote_near: bool = False  # as similar to an example as ``HouseModel.near_voted`` asks, and
    # ``voted`` taught ``MIN_PER_VALUE`` times: the vote may be heard against the head

    @property
    def best(self) -> int:
        return int(np.argmax(self.probs))

    @property
    def sure(self) -> float:
        return float(max(self.probs))

    def judges(self, floor: float) -> bool:
        """The house may give its best (a value, or not a die): the die is like the examples
        taught of it (``near``) and its best is at least ``floor`` probable -- never at 1.0,
        which means "never judge" (a float32 softmax gives exactly 1.0 well short of
        certainty)."""
        return self.near and floor < 1.0 and self.sure >= floor

    def face(self, value: int) -> float:
        """P(``value`` | a die)."""
        faces = self.probs[1:]
        return float(faces[value - 1] / max(sum(faces), 1e-9))

    def candidates(self) -> tuple[tuple[int, float], ...]:
        """Its two most probable values given that it is a die, best first."""
        faces = np.asarray(self.probs[1:], dtype=np.float64)
        faces = faces / max(float(faces.sum()), 1e-9)
        order = np.argsort(-faces)[:2]
        return tuple((int(k) + 1, float(faces[k])) for k in order)


@dataclass(frozen=True, eq=False)
class HouseModel:
    """A fitted house head and the examples' features that tell near from far."""

    mean: F32
    scale: F32
    weights: F32  # (features, CLASSES)
    bias: F32  # (CLASSES,)
    bank: F32  # (examples, embedding): unit-length, turn-averaged
    bank_values: npt.NDArray[np.int8]  # the value of each example of ``bank``
    near: float  # the similarity to its nearest example a die needs to be the house's
    network: str  # digest of the value network it was fitted on
    digest: str  # of the set it was fitted from
    floor: float = FLOORS[-1]  # how sure it must be to judge a die (:func:`fitted_floor`)
    held: tuple[int, int, int] | None = None  # (right, wrong, asked) of the held-back dice
    # at ``floor``, from the very fits that chose it (None: too few to hold any back)
    near_voted: float | None = None  # ``near`` for a die its nearest examples vote for
    # (:data:`NEAR_VOTED_QUANTILE`; None: ``near``)

    def judge(self, logits: F32, embedding: F32) -> list[HouseGuess]:
        """One :class:`HouseGuess` per die from :func:`look`'s arrays."""
        if logits.shape[1] == 0:
            return []
        z = (features(logits, embedding) - self.mean) / self.scale
        probs = softmax((z.reshape(-1, z.shape[-1]) @ self.weights + self.bias).astype(np.float32))
        probs = probs.reshape(TURNS, -1, CLASSES).mean(axis=0)
        sims = unit(embedding.mean(axis=0)) @ self.bank.T
        taught = np.bincount(self.bank_values.astype(np.intp), minlength=CLASSES)
        # the gate for a die its nearest examples vote for (``near_voted``, never above ``near``)
        loose = self.near if self.near_voted is None else min(self.near, self.near_voted)
        out = []
        for p, row in zip(probs, sims, strict=True):
            best = int(np.argmax(p))
            # near the examples of the very value it would give: a die of another set that
            # merely lies near some example is not judged by what that example taught
            same = row[self.bank_values == best]
            s = float(same.max()) if same.size else -1.0
            nearest = set(self.bank_values[np.argsort(-row)[:NEIGHBOURS]].tolist())
            voted = int(nearest.pop()) if len(nearest) == 1 and row.size >= NEIGHBOURS else None
            near = s >= (loose if voted == best else self.near) and taught[best] >= MIN_PER_VALUE
            vote_near = (
                voted is not None and float(row.max()) >= loose and taught[voted] >= MIN_PER_VALUE
            )
            out.append(HouseGuess(tuple(float(x) for x in p), near, s, voted, vote_near))
        return out


def held_back_guesses(
    logits: F32,
    emb: F32,
    values: npt.NDArray[np.int_],
    refs: Sequence[str],
    *,
    folds: int = 5,
    l2: float = L2S[0],
) -> tuple[list[HouseGuess], npt.NDArray[np.int_]]:
    """Each die example judged by a house model fitted without its fold, the examples of one
    ``ref`` (a photo, a fix) kept together -- a house model is judged on throws it never saw --
    and the values they truly have. Nothing when the examples come from fewer than two refs."""
    names = sorted(set(refs))
    if len(names) < 2:
        return [], np.zeros(0, dtype=np.int_)
    fold_of = {r: i % min(folds, len(names)) for i, r in enumerate(names)}
    fold = np.array([fold_of[r] for r in refs])
    guesses: list[HouseGuess] = []
    truths: list[int] = []
    for k in sorted(set(fold.tolist())):
        fit_on, test = fold != k, (fold == k) & (values != NOT_A_DIE)
        if not test.any() or (values[fit_on] == NOT_A_DIE).all():
            continue
        model = fit_arrays(
            logits[:, fit_on], emb[:, fit_on], values[fit_on], network="", digest="", l2=l2
        )
        guesses += model.judge(logits[:, test], emb[:, test])
        truths += values[test].tolist()
    return guesses, np.array(truths, dtype=np.int_)


@dataclass(frozen=True)
class CrossFit:
    """The held-back fits of the chosen head: its L2 penalty, its floor and its guesses."""

    l2: float
    floor: float
    guesses: list[HouseGuess]
    truths: npt.NDArray[np.int_]

    def tally(self) -> tuple[int, int, int] | None:
        return tally(self.guesses, self.truths, self.floor) if len(self.truths) else None


def cross_fit(
    logits: F32,
    emb: F32,
    values: npt.NDArray[np.int_],
    refs: Sequence[str],
    *,
    floor: float | None = None,
    l2s: Sequence[float] = L2S,
) -> CrossFit:
    """Of the heads with the penalties ``l2s``, the one whose held-back fits read the most
    dice right at their :func:`fitted_floor` (or at ``floor``), the first on a tie."""
    best: tuple[int, CrossFit] | None = None
    for l2 in l2s:
        guesses, truths = held_back_guesses(logits, emb, values, refs, l2=l2)
        at = fitted_floor(guesses, truths) if floor is None else floor
        right = tally(guesses, truths, at)[0]
        if best is None or right > best[0]:
            best = (right, CrossFit(l2, at, guesses, truths))
    assert best is not None
    return best[1]


def fitted_floor(guesses: Sequence[HouseGuess], truths: npt.NDArray[np.int_]) -> float:
    """The lowest of :data:`FLOORS` at which the house model, judging the dice it was not
    fitted on, gives at most :data:`WRONG_BUDGET` of them a wrong value: how sure it must be
    is measured on this house's own examples, not set for every house alike (the highest
    floor when too few were held back to tell)."""
    if len(truths) < MIN_HELD_BACK:
        return FLOORS[-1]
    for floor in FLOORS:
        wrong = sum(
            g.judges(floor) and g.best != NOT_A_DIE and g.best != t
            for g, t in zip(guesses, truths.tolist(), strict=True)
        )
        if wrong <= WRONG_BUDGET * len(truths):
            return floor
    return FLOORS[-1]


def unit(x: F32) -> F32:
    return np.asarray(x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-9), dtype=np.float32)


def features(logits: F32, embedding: F32) -> F32:
    """What the house head reads per die and turn: the network's features and its
    log-probabilities (its own verdict is a good start the head only corrects)."""
    z = logits - logits.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return np.asarray(np.concatenate([embedding, logp], axis=-1), dtype=np.float32)


def look(net: Net, views: Sequence[U8]) -> tuple[F32, F32]:
    """The value network's logits and embedding of every view in its four quarter turns:
    arrays (TURNS, n, 7) and (TURNS, n, features), one batched pass."""
    if not views:
        return np.zeros((TURNS, 0, CLASSES), np.float32), np.zeros((TURNS, 0, 1), np.float32)
    batch = [np.ascontiguousarray(np.rot90(v, k)) for k in range(TURNS) for v in views]
    logits, emb = embed(net, to_blob(batch))
    n = len(views)
    return logits.reshape(TURNS, n, -1), emb.reshape(TURNS, n, -1)


@functools.lru_cache(maxsize=8)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    return hashlib.sha1(Path(path).read_bytes()).hexdigest()[:16]


def network_digest(net: Net) -> str:
    """Names the value network's file as it is now: a house model fitted on another network
    is fitted again."""
    st = net.path.stat()
    return _file_digest(str(net.path), st.st_mtime_ns, st.st_size)


def fit(house: HouseSet, net: Net) -> HouseModel | None:
    """Fit the house head on every example of ``house`` as ``net`` sees it (None: too few
    examples, or no die among them)."""
    if len(house) < MIN_EXAMPLES or all(e.value == NOT_A_DIE for e in house.examples):
        return None
    logits, emb = look(net, [e.view for e in house.examples])
    values = np.array([e.value for e in house.examples])
    chosen = cross_fit(logits, emb, values, [e.ref for e in house.examples])
    model = fit_arrays(
        logits,
        emb,
        values,
        network=network_digest(net),
        digest=house.digest(),
        floor=chosen.floor,
        l2=chosen.l2,
    )
    return replace(model, held=chosen.tally())


def tally(
    guesses: Sequence[HouseGuess], truths: npt.NDArray[np.int_], floor: float
) -> tuple[int, int, int]:
    """(right, wrong, asked) of held-back dice: a die is given a value when the model is sure
    at ``floor`` of a value and it is like the examples fitted on, else asked."""
    right = wrong = asked = 0
    for guess, truth in zip(guesses, truths.tolist(), strict=True):
        if guess.judges(floor) and guess.best != NOT_A_DIE:
            right += int(guess.best == truth)
            wrong += int(guess.best != truth)
        else:
            asked += 1
    return right, wrong, asked


def fit_arrays(
    logits: F32,
    emb: F32,
    values: npt.NDArray[np.int_],
    *,
    network: str,
    digest: str,
    floor: float = FLOORS[-1],
    l2: float = 1e-3,
    steps: int = 300,
    rate: float = 0.5,
) -> HouseModel:
    """The house head for examples seen as :func:`look` gives them, of ``values``.
    Full-batch gradient descent with momentum on the softmax loss: a convex fit, the same
    answer on every machine, a second or two for thousands of examples. The step shrinks for
    a stiff penalty (``l2`` over 2): with momentum 0.9 the descent diverges once ``rate * l2``
    nears 3.8 (``L2S`` are far below that)."""
    rate = min(rate, 1.0 / l2) if l2 > 0 else rate
    x = features(logits, emb).reshape(-1, logits.shape[-1] + emb.shape[-1])
    y = np.tile(values, TURNS)
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-6
    z = ((x - mean) / scale).astype(np.float64)
    target = np.eye(CLASSES)[y]
    w = np.zeros((z.shape[1], CLASSES))
    b = np.zeros(CLASSES)
    vw, vb = np.zeros_like(w), np.zeros_like(b)
    for _ in range(steps):
        p = softmax((z @ w + b).astype(np.float32)).astype(np.float64)
        g = (p - target) / len(z)
        vw = 0.9 * vw - rate * (z.T @ g + l2 * w)
        vb = 0.9 * vb - rate * g.sum(axis=0)
        w += vw
        b += vb
    bank = unit(emb.mean(axis=0))
    return HouseModel(
        mean=mean.astype(np.float32),
        scale=scale.astype(np.float32),
        weights=w.astype(np.float32),
        bias=b.astype(np.float32),
        bank=bank,
        bank_values=values.astype(np.int8),
        near=_near_floor(bank, values),
        near_voted=_near_floor(bank, values, NEAR_VOTED_QUANTILE),
        network=network,
        digest=digest,
        floor=floor,
    )


def _near_floor(bank: F32, values: npt.NDArray[np.int_], quantile: float = NEAR_QUANTILE) -> float:
    """The similarity to its nearest other example of the same value that all but
    ``quantile`` of the examples reach (leave one out). An example alone of its value has no
    nearest to measure (a house judges no value taught fewer than ``MIN_PER_VALUE`` times):
    counted, its -1 dragged the floor to nothing (a set with one not-a-die example)."""
    sims = bank @ bank.T
    np.fill_diagonal(sims, -2.0)
    sims[values[:, None] != values[None, :]] = -2.0
    nearest = sims.max(axis=1)
    nearest = nearest[nearest > -2.0]
    return float(np.quantile(nearest, quantile)) if nearest.size else 1.0
