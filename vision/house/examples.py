"""The house set: dice of this house, each as the value network sees it, with the value a person
gave it. Pure values here; reading and writing the folder is :mod:`vision.house.store`.

Why a set of patches and not a trained model: the examples are what a player vouched for (a
label from ``dicepad dice learn``, a fix, a one-tap answer), so they are kept as they were
given and the house model is fitted again from them in seconds whenever they change (or the
value network does). One bad example can then simply be removed.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from vision.nets import U8

NOT_A_DIE = 0
"""The value of an example that is not a die (a detection the labels did not name): the house
learns its own mat, props and side faces as well as its dice."""

ORIGINS = ("learn", "fix", "answer")
"""Where an example came from: labelled photos (``dicepad dice learn``), a player's fix of a
camera roll, a one-tap answer to an asked die."""

MAX_EXAMPLES = 3000
"""The most examples a house keeps (the oldest go first): about 9 MB on disk and a few
seconds to fit on a Pi; a house's dice are a handful of styles, and more examples of the same
ones teach little."""


@dataclass(frozen=True)
class Example:
    """One die (or not-a-die) of the house, as the value network is shown it."""

    view: U8  # crop_px x crop_px BGR: the top face squared up (``vision.classify.cut_die``)
    value: int  # 1-6, or NOT_A_DIE
    origin: str  # one of ORIGINS
    ref: str  # where from: a photo's name, or "table/seq" of the fix or answer that gave it
    added: float  # unix time

    def __post_init__(self) -> None:
        if not NOT_A_DIE <= self.value <= 6:
            raise ValueError(f"an example's value is 0 (not a die) or 1-6, not {self.value}")
        if self.origin not in ORIGINS:
            raise ValueError(f"unknown origin {self.origin!r} (one of {', '.join(ORIGINS)})")
        if self.view.ndim != 3 or self.view.shape[2] != 3 or self.view.dtype != np.uint8:
            raise ValueError(f"an example's view is an HxWx3 uint8 patch, got {self.view.shape}")

    @property
    def id(self) -> str:
        """Stable name of the example: its pixels, value and where it came from."""
        h = hashlib.sha1(self.view.tobytes())
        h.update(f"{self.value}|{self.origin}|{self.ref}".encode())
        return h.hexdigest()[:12]


@dataclass(frozen=True)
class HouseSet:
    """Every example of a house, oldest first."""

    examples: tuple[Example, ...] = ()

    def __len__(self) -> int:
        return len(self.examples)

    def added(self, new: Iterable[Example], *, limit: int = MAX_EXAMPLES) -> HouseSet:
        """This set with ``new`` appended (an example already held is not held twice); past
        ``limit`` the oldest go."""
        have = {e.id for e in self.examples}
        fresh: list[Example] = []
        for e in new:
            if e.id not in have:
                have.add(e.id)
                fresh.append(e)
        kept = (*self.examples, *fresh)
        return HouseSet(kept[max(0, len(kept) - limit) :])

    def without(self, *, ids: Iterable[str] = (), ref: str | None = None) -> HouseSet:
        """This set less the examples named by ``ids`` and those from ``ref`` (an undone fix
        takes its dice back out)."""
        drop = set(ids)
        return HouseSet(
            tuple(e for e in self.examples if e.id not in drop and (ref is None or e.ref != ref))
        )

    def counts(self) -> dict[int, int]:
        """Examples per value (0: not a die), every value present."""
        c = Counter(e.value for e in self.examples)
        return {v: c.get(v, 0) for v in range(NOT_A_DIE, 7)}

    def digest(self) -> str:
        """A name for exactly this set (the fitted model's cache key)."""
        h = hashlib.sha1()
        for e in self.examples:
            h.update(e.id.encode())
        return h.hexdigest()[:16]
