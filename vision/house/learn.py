"""Examples from labelled photos (``dicepad dice learn``) and how well a house model reads the
examples it was not fitted on (what the teaching page and ``dicepad dice show`` report)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from vision.house.examples import NOT_A_DIE, Example, HouseSet
from vision.house.model import (
    MIN_EXAMPLES,
    HouseModel,
    cross_fit,
    look,
)
from vision.house.views import die_view
from vision.nets import U8, Net
from vision.params import DetectorParams
from vision.reading import DieReading

MATCH_FRACTION = 0.6
"""A detection is a labelled die when its centre lies within this share of the larger of the
label's box and the die's size (labels may box the die or only its pips)."""

CLEAR_OF_LABELS = 1.2
"""A detection this many die sizes from every label is not a die of the photo: a not-a-die
example (one between is neither, and is not kept)."""


def learning_params(params: DetectorParams) -> DetectorParams:
    """``params`` for reading a photo to teach: every located peak the value network cuts is
    kept, even one it takes for no die (a logo ace is nothing it knows), so that each labelled
    die has its detection and the peaks off the dice become not-a-die examples."""
    return replace(params, reject_not_die=1.0, strong_peak_not_die=1.0)


@dataclass(frozen=True)
class Label:
    """One labelled die of a photo (the format of ``../shared/datasets``: value and box)."""

    value: int
    bbox: tuple[float, float, float, float]  # x, y, w, h, frame px

    @property
    def center(self) -> tuple[float, float]:
        x, y, w, h = self.bbox
        return (x + w / 2, y + h / 2)


def parse_labels(entry: object) -> tuple[Label, ...]:
    """A photo's labels from its ``{"dice": [{"value", "bbox"}]}`` entry; a clear ValueError
    for anything else."""
    if not isinstance(entry, dict) or not isinstance(entry.get("dice"), list):
        raise ValueError('a photo\'s labels are {"dice": [{"value": 1-6, "bbox": [x, y, w, h]}]}')
    out = []
    for d in entry["dice"]:
        try:
            value, box = int(d["value"]), tuple(float(v) for v in d["bbox"])
        except (TypeError, KeyError, ValueError) as exc:
            raise ValueError(f"bad die label {d!r}: {exc}") from exc
        if not 1 <= value <= 6 or len(box) != 4:
            raise ValueError(f"bad die label {d!r}: value 1-6 and a box [x, y, w, h]")
        out.append(Label(value, (box[0], box[1], box[2], box[3])))
    return tuple(out)


def labelled_examples(
    image: U8,
    dice: Sequence[DieReading],
    labels: Sequence[Label],
    *,
    ref: str,
    added: float,
    params: DetectorParams,
) -> list[Example]:
    """The dice the base reader found in ``image``, each with its label's value (closest pairs
    first, one to one), and the detections clear of every label as not-a-die examples."""
    options = []
    for li, label in enumerate(labels):
        for di, die in enumerate(dice):
            d = math.dist(die.center_xy, label.center)
            if d <= MATCH_FRACTION * max(label.bbox[2], label.bbox[3], die.size_px):
                options.append((d, li, di))
    options.sort()
    value_of: dict[int, int] = {}
    used: set[int] = set()
    for _, li, di in options:
        if li not in used and di not in value_of:
            used.add(li)
            value_of[di] = labels[li].value
    for di, die in enumerate(dice):
        if di not in value_of and all(
            math.dist(die.center_xy, label.center)
            > CLEAR_OF_LABELS * max(die.size_px, label.bbox[2], label.bbox[3])
            for label in labels
        ):
            value_of[di] = NOT_A_DIE
    return [
        Example(die_view(image, dice[di], params), value, "learn", ref, added)
        for di, value in sorted(value_of.items())
    ]


@dataclass(frozen=True)
class HeldBack:
    """The house model's reading of examples it was not fitted on (whole photos held back)."""

    right: int
    wrong: int
    asked: int
    floor: float  # the house model's probability a value needed

    @property
    def dice(self) -> int:
        return self.right + self.wrong + self.asked


def held_back(
    house: HouseSet, net: Net, *, floor: float | None = None, model: HouseModel | None = None
) -> HeldBack | None:
    """Each die example read by a house model fitted without its photo's fold
    (``vision.house.model.cross_fit``): right or wrong when the model is sure at
    ``floor`` (None: the floor fitted on those very guesses, as the house model is) and it is
    like the examples fitted on, else asked. None when the set is too small to split. With no
    ``floor`` and the ``model`` fitted on this very set, its own figure: those fits were made
    when it was."""
    if len(house) < 2 * MIN_EXAMPLES:
        return None
    if floor is None and model is not None and model.digest == house.digest():
        return None if model.held is None else HeldBack(*model.held, model.floor)
    logits, emb = look(net, [e.view for e in house.examples])
    values = np.array([e.value for e in house.examples])
    chosen = cross_fit(logits, emb, values, [e.ref for e in house.examples], floor=floor)
    figure = chosen.tally()
    return None if figure is None else HeldBack(*figure, chosen.floor)
