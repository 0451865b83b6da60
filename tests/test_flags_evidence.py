"""The flag rules on given evidence: reach, thresholds, leans, sizes and confidences."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vision.flags import Cue, DieView, Evidence, FlagParams, judge, load_model
from vision.reading import DieFlag, DieReading


def test_reach_is_measured_between_distinct_dice() -> None:
    frame = np.full((200, 200, 3), 90, np.uint8)
    a = DieView((100.0, 100.0), 30.0, 0.0)
    over = DieView((100.0 + 0.7 * 30, 100.0), 30.0, 0.0)  # overlapping, not the same die
    beside = DieView((100.0, 100.0 + 1.3 * 30), 30.0, 0.0)  # touching
    far = DieView((100.0, 100.0 - 3 * 30), 30.0, 0.0)
    twin = DieView((100.0 - 3 * 30 + 0.3 * 30, 100.0 - 3 * 30), 30.0, 0.0)  # far, seen twice
    ev = judge(frame, [a, over, beside, far, twin])
    assert [e.touching for e in ev] == [True, True, True, False, False]
    assert judge(frame, []) == ()


def test_reach_is_counted_in_sides_of_the_larger_die() -> None:
    """Whether two dice touch does not depend on which of them is asked: the gap is counted in
    sides of the larger, so a die read small beside a large one touches it as the large one
    touches it (1.25 sides of the large die here, 2.5 of the small one's)."""
    frame = np.full((200, 200, 3), 90, np.uint8)
    big = DieView((70.0, 100.0), 40.0, 0.0)
    small = DieView((120.0, 100.0), 20.0, 0.0)
    assert [e.touching for e in judge(frame, [big, small])] == [True, True]
    assert [e.touching for e in judge(frame, [small, big])] == [True, True]


def test_a_lone_die_needs_a_surer_verdict_to_be_stacked() -> None:
    # a die squarely on another hides it, so a stack can be one detection; but with no other
    # die in reach the model must be surer than beside one
    p = FlagParams()
    between = (p.stacked_threshold + p.stacked_alone_threshold) / 2
    touching = Evidence(cocked=0.0, stacked=between, touching=True)
    alone = Evidence(cocked=0.0, stacked=between, touching=False)
    sure = Evidence(cocked=0.0, stacked=p.stacked_alone_threshold, touching=False)
    assert touching.flags() == {DieFlag.STACKED}
    assert alone.flags() == frozenset()
    assert sure.flags() == {DieFlag.STACKED}


def test_thresholds_and_errors() -> None:
    ev = Evidence(cocked=0.995, stacked=0.2, touching=False)
    assert ev.flags() == {DieFlag.COCKED}
    assert ev.flags(FlagParams(cocked_threshold=0.999)) == frozenset()
    with pytest.raises(ValueError, match="focal_frac"):
        FlagParams(focal_frac=0)
    with pytest.raises(ValueError, match="cocked_threshold"):
        FlagParams(cocked_threshold=1.5)
    with pytest.raises(ValueError, match="duplicate"):
        FlagParams(duplicate=1.7, stack_reach=1.6)
    with pytest.raises(ValueError, match="stacked_alone_threshold"):
        FlagParams(stacked_threshold=0.7, stacked_alone_threshold=0.6)
    with pytest.raises(ValueError, match="cocked_sure"):
        FlagParams(cocked_sure=0.0)


def test_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="train_flags"):
        load_model(tmp_path / "nope.npz")


def test_a_cocked_die_touching_another_leans_on_it() -> None:
    """STACKED is "on or against another die": tilt plus a die in reach is a lean on it, whatever
    the stacked head says; alone, or not tilted, it is not."""
    p = FlagParams()
    leaning = Evidence(cocked=p.cocked_threshold, stacked=0.0, touching=True)
    on_rail = Evidence(cocked=p.cocked_threshold, stacked=0.0, touching=False)
    beside = Evidence(cocked=p.cocked_threshold - 0.01, stacked=0.0, touching=True)
    assert leaning.flags() == {DieFlag.COCKED, DieFlag.STACKED}
    assert leaning.flags(FlagParams(lean_is_stack=False)) == {DieFlag.COCKED}
    assert on_rail.flags() == {DieFlag.COCKED}
    assert beside.flags() == frozenset()


def test_a_die_with_squeezed_pips_touching_another_leans_on_it() -> None:
    """COCKED by its squeezed pips is COCKED like the model's: with another die in reach the
    die leans on it, so it is STACKED as well (by the lean, at the lean's confidence)."""
    p = FlagParams()
    squeezed = Evidence(cocked=0.3, stacked=0.1, touching=True, squeezed=True)
    assert squeezed.flags(p) == {DieFlag.COCKED, DieFlag.STACKED}
    assert [(d.flag, d.cue) for d in squeezed.decisions(p)] == [
        (DieFlag.COCKED, Cue.SQUEEZE),
        (DieFlag.STACKED, Cue.LEAN),
    ]
    assert squeezed.flags(FlagParams(lean_is_stack=False)) == {DieFlag.COCKED}
    alone = Evidence(cocked=0.3, stacked=0.1, touching=False, squeezed=True)
    assert alone.flags(p) == {DieFlag.COCKED}


def test_a_learnt_size_turned_off_judges_nothing() -> None:
    """``size_ratio_learnt`` 0 turns the learnt-size cue off: a die measured against the pad's
    learnt flat size is not STACKED by it, however large it measured; the cue against the flat
    dice beside it is not affected."""
    learnt = Evidence(0.0, 0.0, touching=True, size_ratio=1.06, size_learnt=True)
    assert learnt.flags() == {DieFlag.STACKED}
    assert learnt.flags(FlagParams(size_ratio_learnt=0.0)) == frozenset()
    beside = Evidence(0.0, 0.5, touching=False, size_ratio=1.06)
    assert beside.flags(FlagParams(size_ratio_learnt=0.0)) == {DieFlag.STACKED}


def test_a_flag_confidence_is_a_probability() -> None:
    """A reading cannot say a flag is more than certain, or less than not at all."""
    cocked = frozenset({DieFlag.COCKED})
    for sure in (-0.1, 1.5):
        with pytest.raises(ValueError, match="flag confidence"):
            DieReading(
                4, (0.0, 0.0), (), 20.0, "white", 0.9, cocked, None, ((DieFlag.COCKED, sure),)
            )
    die = DieReading(4, (0.0, 0.0), (), 20.0, "white", 0.9, cocked, None, ((DieFlag.COCKED, 1.0),))
    assert die.flag_sure(DieFlag.COCKED) == 1.0


def test_each_flag_is_as_sure_as_the_surest_cue_raising_it() -> None:
    """The model's flags carry its probability; a rule's flags its configured precision; a
    flag raised twice the larger of the two; a flag not raised no confidence."""
    p = FlagParams(
        squeeze_confidence=0.71,
        lean_confidence=0.72,
        size_confidence=0.73,
        size_learnt_confidence=0.74,
    )
    by_model = Evidence(cocked=0.93, stacked=0.1, touching=False)
    assert by_model.confidence(DieFlag.COCKED, p) == pytest.approx(0.93)
    assert by_model.confidence(DieFlag.STACKED, p) is None
    squeezed = Evidence(cocked=0.3, stacked=0.1, touching=False, squeezed=True)
    assert squeezed.confidence(DieFlag.COCKED, p) == pytest.approx(0.71)
    both = Evidence(cocked=0.85, stacked=0.1, touching=False, squeezed=True)
    assert both.confidence(DieFlag.COCKED, p) == pytest.approx(0.85)
    assert [(d.flag, d.cue) for d in both.decisions(p)] == [
        (DieFlag.COCKED, Cue.MODEL),
        (DieFlag.COCKED, Cue.SQUEEZE),
    ]
    leaning = Evidence(cocked=0.9, stacked=0.2, touching=True)
    assert leaning.confidence(DieFlag.STACKED, p) == pytest.approx(0.72)
    sure_stack = Evidence(cocked=0.9, stacked=0.97, touching=True)
    assert sure_stack.confidence(DieFlag.STACKED, p) == pytest.approx(0.97)
    alone = Evidence(cocked=0.0, stacked=0.999, touching=False)
    assert alone.confidence(DieFlag.STACKED, FlagParams(alone_confidence=0.7)) == 0.7
    larger = Evidence(cocked=0.0, stacked=0.5, touching=False, size_ratio=1.06)
    assert larger.confidence(DieFlag.STACKED, p) == pytest.approx(0.73)
    learnt = Evidence(0.0, 0.0, touching=True, size_ratio=1.06, size_learnt=True)
    assert learnt.confidence(DieFlag.STACKED, p) == pytest.approx(0.74)
    with pytest.raises(ValueError, match="lean_confidence"):
        FlagParams(lean_confidence=1.2)


def test_the_cues_raise_exactly_the_flags_the_rules_state() -> None:
    """``Evidence.flags`` (read off ``decisions``) against the rules as the module states them,
    on every combination of a grid of probabilities (thresholds, their edges, NaN), neighbours,
    sizes, a learnt size and squeezed pips, under several operating points; and every flag
    raised has a confidence in [0, 1]."""

    def stated(e: Evidence, p: FlagParams) -> frozenset[DieFlag]:
        cocked = e.cocked >= p.cocked_threshold or e.squeezed
        stacked = (
            (e.touching and e.stacked >= p.stacked_threshold)
            or (e.alone_stack(p) and not e.squeezed)
            or (p.lean_is_stack and e.touching and cocked)
            or e.larger(p)
        )
        return frozenset({DieFlag.COCKED} if cocked else set()) | (
            {DieFlag.STACKED} if stacked else set()
        )

    probs = [0.0, 0.05, 0.3, 0.79, 0.8, 0.95, 0.99, 1.0, float("nan")]
    ratios = [None, 1.0, 1.03, 1.035, 1.06, 1.2, float("nan")]
    points = [
        FlagParams(),
        FlagParams(lean_is_stack=False),
        FlagParams(size_ratio=0.0, size_ratio_learnt=0.0),
        FlagParams(size_gate=0.0),
    ]
    n = 0
    for p in points:
        for c, st, touching, r, learnt, squeezed in itertools.product(
            probs, probs, (False, True), ratios, (False, True), (False, True)
        ):
            e = Evidence(
                c, st, touching=touching, size_ratio=r, size_learnt=learnt, squeezed=squeezed
            )
            flagged = e.flags(p)
            assert flagged == stated(e, p), (e, p)
            for flag in flagged:
                sure = e.confidence(flag, p)
                assert sure is not None, (e, flag)
                assert 0.0 <= sure <= 1.0, (e, flag, sure)
            n += 1
    assert n == 4 * 9 * 9 * 2 * 7 * 2 * 2


def test_a_reading_names_each_judged_flag_once_and_never_rounds_up_to_certain() -> None:
    cocked = frozenset({DieFlag.COCKED, DieFlag.OFF_PAD})
    base = DieReading(4, (0.0, 0.0), (), 20.0, "white", 0.9, cocked)
    for bad in (
        ((DieFlag.COCKED, 0.6), (DieFlag.COCKED, 0.1)),  # named twice
        ((DieFlag.OFF_PAD, 1.0),),  # measured, not judged
        ((DieFlag.STACKED, 0.9),),  # not carried
    ):
        with pytest.raises(ValueError, match="flag confidence"):
            replace(base, flag_confidence=bad)
    near = replace(base, flag_confidence=((DieFlag.COCKED, 0.9996),))
    assert near.to_json()["flag_confidence"] == {"cocked": 0.999}
    sure = replace(base, flag_confidence=((DieFlag.COCKED, 1.0),))
    assert sure.to_json()["flag_confidence"] == {"cocked": 1.0}
