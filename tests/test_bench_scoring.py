"""The vision benchmark's scoring: labels matched to readings, and disputed labels kept apart.

No photographs needed: the labels and readings are made up here with known truth.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import pytest
from bench_vision import (
    DISPUTED_LABELS,
    LabelledDie,
    LabelledImage,
    Score,
    parse_overrides,
    why_line,
)

from vision.flags import FlagParams
from vision.reading import DieReading, Why


def reading(value: int | None, x: float, y: float) -> DieReading:
    corners = ((x - 10, y - 10), (x + 10, y - 10), (x + 10, y + 10), (x - 10, y + 10))
    return DieReading(value, (x, y), corners, 20.0, "green", 0.9)


def test_a_disputed_label_counts_against_the_label_and_for_the_photo() -> None:
    (dataset, name, (x, y)), shown = next(iter(DISPUTED_LABELS.items()))
    disputed = LabelledDie(2 if shown != 2 else 3, (x, y, 40.0, 40.0))
    plain = LabelledDie(5, (x + 200, y, 40.0, 40.0))
    image = LabelledImage(dataset, Path("/nowhere") / name, (disputed, plain))
    score = Score()
    score.add(image, [reading(shown, x + 20, y + 20), reading(5, x + 220, y + 20)], 1.0)
    assert (score.right, score.exact) == (1, 0)  # the headline keeps the label as given
    assert (score.right_shown, score.exact_shown, score.disputed) == (2, 1, 1)
    # given as the photo shows it: wrong against the label, and the roll silently wrong there
    assert (score.wrong, score.photo_silent) == (1, 1)
    assert (score.wrong_shown, score.photo_silent_shown) == (0, 0)  # right against the photo
    score.add(
        image, [reading(2 if shown != 2 else 3, x + 20, y + 20), reading(5, x + 220, y + 20)], 1.0
    )
    assert (score.wrong_shown, score.photo_silent_shown) == (1, 1)  # the label's value: wrong


def test_an_undisputed_die_scores_alike_both_ways() -> None:
    image = LabelledImage(
        "nellbyler_d6", Path("/nowhere/x.jpg"), (LabelledDie(4, (10.0, 10.0, 40.0, 40.0)),)
    )
    score = Score()
    score.add(image, [reading(3, 30, 30), reading(6, 300, 300)], 1.0)
    assert (score.right, score.right_shown, score.exact, score.exact_shown) == (0, 0, 0, 0)
    assert (score.extra, score.disputed) == (1, 0)


def test_asked_dice_are_tallied_by_why_with_the_answer_that_settles_them() -> None:
    labels = tuple(LabelledDie(v, (100.0 * k, 0.0, 40.0, 40.0)) for k, v in enumerate((4, 2, 6)))
    image = LabelledImage("nellbyler_d6", Path("/nowhere/x.jpg"), labels)

    def asked(k: int, why: Why, candidates: tuple[tuple[int, float], ...]) -> DieReading:
        x = 100.0 * k + 20
        corners = ((x - 10, 10.0), (x + 10, 10.0), (x + 10, 30.0), (x - 10, 30.0))
        return DieReading(
            None, (x, 20.0), corners, 20.0, "red", 0.5, candidates=candidates, why=why
        )

    score = Score()
    dice = [
        asked(0, Why.UNSURE, ((4, 0.6), (5, 0.3))),  # the first answer is the truth
        asked(1, Why.UNSURE, ((3, 0.5), (2, 0.4))),  # the second is
        asked(2, Why.DISAGREED, ((5, 0.7), (3, 0.2))),  # neither: the other faces
    ]
    score.add(image, dice, 1.0)
    assert score.asked == 3
    assert score.asked_why == {"unsure": [2, 1, 1], "disagreed": [1, 0, 0]}
    assert why_line(score).endswith("unsure 2 (1 / 1), disagreed 1 (0 / 0)")


def test_overrides_are_typed_and_reach_the_flags() -> None:
    kw = parse_overrides(["value_views=2", "turned_patches=false", "flags.cocked_threshold=0.81"])
    assert kw == {
        "value_views": 2,
        "turned_patches": False,
        "flags": FlagParams(cocked_threshold=0.81),
    }
    for bad in ("flags=1", "flags.nope=1", "models_dir=x", "nope=1", "value_views.x=1"):
        with pytest.raises(SystemExit, match="unknown parameter"):
            parse_overrides([bad])
