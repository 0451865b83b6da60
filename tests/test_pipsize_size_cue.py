"""The size cue: a die on a die measured against the flat dice beside it, and its flag."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pipsize_rig import on_top_scene as _on_top_scene

from vision import synth
from vision.detect import read_roll
from vision.flags import DieView, Evidence, FlagParams
from vision.flags.size import size_cues
from vision.params import DetectorParams
from vision.pipsize import face_size, square_on
from vision.reading import DieFlag


def size_ratios(*args: Any, **kwargs: Any) -> list[float | None]:
    """The ratios of ``size_cues`` (leaving out whether each was against a learnt size)."""
    return [None if c is None else c[0] for c in size_cues(*args, **kwargs)]


NO_SIZE = DetectorParams(flags=FlagParams(size_ratio=0.0))


def test_a_die_on_a_die_looks_larger_than_the_flat_dice() -> None:
    shot = _on_top_scene()
    seen = [d for d in shot.truth.dice if d.visible >= 0.5]
    sizes = [face_size(shot.image, d.center_xy, d.size_px * 1.1, d.value) for d in seen]
    flat = [m.side_px for m, d in zip(sizes, seen, strict=False) if m is not None and not d.stacked]
    top = [m.side_px for m, d in zip(sizes, seen, strict=False) if m is not None and d.stacked]
    assert len(flat) == 4
    assert len(top) == 1
    assert max(flat) / min(flat) < 1.02
    assert top[0] / float(np.median(flat)) > 1.05  # truly 1.070; FlagParams.size_ratio 1.03


def test_the_size_cue_flags_a_die_the_model_leaves_unsure() -> None:
    """``size_ratios`` measures the gated die against the unflagged ones (the pad shows the
    camera square on); the flag needs both the size and the model's gate, and
    ``size_ratio=0`` turns the cue off."""
    shot = _on_top_scene()
    seen = [d for d in shot.truth.dice if d.visible >= 0.5]
    views = [DieView(d.center_xy, d.size_px, 0.0) for d in seen]
    unsure = [Evidence(0.0, 0.5 if d.stacked else 0.0, touching=False) for d in seen]
    ratios = size_ratios(shot.image, views, [d.value for d in seen], unsure, pad=shot.truth.pad)
    i = next(k for k, d in enumerate(seen) if d.stacked)
    ratio = ratios[i]
    assert ratio is not None
    assert ratio > FlagParams().size_ratio
    assert all(r is None for k, r in enumerate(ratios) if k != i)  # only the gated die measured
    e = Evidence(0.0, 0.5, touching=False, size_ratio=ratio)
    assert DieFlag.STACKED in e.flags()
    assert DieFlag.STACKED not in e.flags(FlagParams(size_ratio=0.0))
    assert DieFlag.STACKED not in Evidence(0.0, 0.2, touching=False, size_ratio=ratios[i]).flags()
    assert DieFlag.STACKED not in Evidence(0.0, 0.5, touching=False, size_ratio=1.01).flags()
    assert (
        DieFlag.STACKED not in Evidence(0.0, 0.5, touching=False, size_ratio=1.25).flags()
    )  # see larger


def test_size_cue_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="size_ratio"):
        FlagParams(size_ratio=0.99)
    with pytest.raises(ValueError, match="size_ratio_max"):
        FlagParams(size_ratio_max=1.02)
    with pytest.raises(ValueError, match="size_gate"):
        FlagParams(size_gate=1.0)
    with pytest.raises(ValueError, match="size_agree"):
        FlagParams(size_agree=0.0)
    with pytest.raises(ValueError, match="size_refs"):
        FlagParams(size_refs=0)
    # the learnt size's ratio lies between the neighbours' ratio and the misjudged-die limit
    with pytest.raises(ValueError, match="size_ratio_learnt"):
        FlagParams(size_ratio_learnt=1.01)
    with pytest.raises(ValueError, match="size_ratio_learnt"):
        FlagParams(size_ratio_learnt=1.2)
    assert FlagParams(size_ratio_learnt=0.0).size_ratio_learnt == 0.0
    with pytest.raises(ValueError, match="squeeze"):
        FlagParams(squeeze=0.5)
    with pytest.raises(ValueError, match="squeeze_gate"):
        FlagParams(squeeze_gate=1.0)
    assert FlagParams(size_ratio=0.0).size_ratio == 0.0


def test_one_flat_die_to_compare_with_is_enough_only_with_the_camera_square_on() -> None:
    """A slanted camera's perspective cannot be told from a stack: the flat dice beside a die
    are compared with only when the pad shows the camera square above it (the renders'
    overhead camera does), or when asked for (``references``, ``FlagParams.size_refs``)."""
    shot = _on_top_scene(flat=1)
    seen = [d for d in shot.truth.dice if d.visible >= 0.5]
    assert len(seen) == 2
    views = [DieView(d.center_xy, d.size_px, 0.0) for d in seen]
    unsure = [Evidence(0.0, 0.5 if d.stacked else 0.0, touching=False) for d in seen]
    values = [d.value for d in seen]
    i = next(k for k, d in enumerate(seen) if d.stacked)
    assert size_ratios(shot.image, views, values, unsure)[i] is None
    one = size_ratios(shot.image, views, values, unsure, references=1)[i]
    assert one is not None
    assert one > FlagParams().size_ratio
    assert square_on(shot.truth.pad)


def test_at_a_slant_the_flat_dice_beside_a_die_are_not_compared_with_by_default() -> None:
    """Two flat dice that agree in size can both lie farther from a slanted camera than the
    die compared with them: with no pad showing the camera square on, only an install that
    asks for it (``FlagParams.size_refs``) compares them (on the slanted photo sets the cue
    flagged 6 dice, none of them on a die)."""
    shot = _on_top_scene(flat=2)
    seen = [d for d in shot.truth.dice if d.visible >= 0.5]
    views = [DieView(d.center_xy, d.size_px, 0.0) for d in seen]
    unsure = [Evidence(0.0, 0.5 if d.stacked else 0.0, touching=False) for d in seen]
    values = [d.value for d in seen]
    i = next(k for k, d in enumerate(seen) if d.stacked)
    assert size_ratios(shot.image, views, values, unsure)[i] is None
    asked = size_ratios(shot.image, views, values, unsure, FlagParams(size_refs=2))[i]
    assert asked is not None
    assert size_ratios(shot.image, views, values, unsure, pad=shot.truth.pad)[i] == asked


def test_read_roll_flags_the_die_on_a_die_by_its_size() -> None:
    """End to end: the die squarely on another is STACKED through the size cue (the model
    alone leaves it unflagged), nothing else is; with one flat die to compare with, only a
    pad seen square on lets the cue speak."""

    def stacked(shot: synth.SceneImage, **kw: Any) -> list[int | None]:
        reading = read_roll(shot.image, **kw)
        return [d.value for d in reading.dice if DieFlag.STACKED in d.flags]

    shot = _on_top_scene(flat=2)
    assert stacked(shot, pad=shot.truth.pad) == [5]
    assert stacked(shot, pad=shot.truth.pad, params=NO_SIZE) == []
    lone = _on_top_scene(flat=1)
    assert stacked(lone, pad=lone.truth.pad) == [5]
    assert stacked(lone) == []  # no pad: the camera may be at a slant
