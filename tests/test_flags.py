"""COCKED and STACKED on rendered dice whose tilt and support are known exactly.

Flags force re-rolls in a bar, so the first tests are the safety ones: flat dice lying apart
are never flagged, neither from their true geometry nor end to end through ``read_roll``; two
detections of one die are never a stack. The rules on given evidence are in
``test_flags_evidence.py``, the model's inputs in ``test_flags_features.py``; the shared
helpers in :mod:`flags_rig`."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from flags_rig import ALARMS, view_of

from vision import synth
from vision.detect import read_roll
from vision.flags import DieView, Evidence, FlagParams, judge
from vision.params import DetectorParams
from vision.reading import DieFlag
from vision.synth import DieTruth

# Recall floors a little under what the shipped model and thresholds give on these seeds: the
# operating points favour no false flags, so recall is below 1 (bench_synth prints it).
COCKED_RECALL = 0.85  # measured 0.98 from the true geometry (seed 101; trained on the reader's)
COCKED_RECALL_READ = 0.9  # measured 1.0 (39 dice, off-face ones included) end to end (seed 105)
STACKED_RECALL = 0.75  # measured 0.90 from the true geometry (seed 102)


def shots(seed: int, n: int, **kinds: float) -> list[synth.SceneImage]:
    rng = np.random.default_rng(seed)
    return [
        synth.render(synth.random_scene(rng, n_dice=4, **kinds), rng=rng)  # type: ignore[arg-type]
        for _ in range(n)
    ]


def judged(seed: int, n: int, **kinds: float) -> list[tuple[DieTruth, Evidence]]:
    """Render ``n`` scenes and judge every visible die from its true geometry."""
    out = []
    for shot in shots(seed, n, **kinds):
        seen = [d for d in shot.truth.dice if d.visible >= 0.5]
        out += list(zip(seen, judge(shot.image, [view_of(d) for d in seen]), strict=True))
    return out


SIDE_FACE_REACH = 1.1
"""A tilted die the reader centred up to this many sides off its top face (on the side face it
shows) is still that die: its detection must carry the flag too."""


def read(seed: int, n: int, **kinds: float) -> list[tuple[DieTruth, frozenset[DieFlag]]]:
    """Render ``n`` scenes and read them with ``read_roll``: each true die with the flags of the
    detection on it (within half a side; for a tilted or stacked die, the nearest within
    ``SIDE_FACE_REACH`` sides), dice the reader missed left out."""
    out = []
    for shot in shots(seed, n, **kinds):
        dice = read_roll(shot.image).dice
        for d in shot.truth.dice:
            reach = SIDE_FACE_REACH if d.tilt_deg >= 10 or d.stacked else 0.5
            near = sorted(
                (math.dist(r.center_xy, d.center_xy), k)
                for k, r in enumerate(dice)
                if math.dist(r.center_xy, d.center_xy) < reach * d.size_px
            )
            if near:
                out.append((d, dice[near[0][1]].flags))
    return out


def test_flat_dice_apart_are_never_flagged() -> None:
    results = judged(100, 12)
    assert len(results) >= 40
    assert all(d.tilt_deg == 0 and not d.stacked for d, _ in results)
    assert [e for _, e in results if e.flags()] == []


def test_read_roll_flags_at_most_one_percent_of_flat_dice() -> None:
    # the operating point: flat dice near a wide-angle frame's corner show big side faces and
    # are the rare false COCKED (0-1 % on bench_synth's scenes, 2 of these 360)
    results = [r for seed in (104, 107, 108) for r in read(seed, 30)]
    assert len(results) >= 300
    assert all(d.tilt_deg == 0 and not d.stacked for d, _ in results)
    assert sum(bool(f & ALARMS) for _, f in results) <= 0.01 * len(results)


def test_dice_tilted_25_degrees_or_more_are_cocked() -> None:
    results = judged(101, 12, cocked=1.0, min_tilt_deg=25.0)
    tilted = [e for d, e in results if d.tilt_deg >= 25 and not d.stacked]
    assert len(tilted) >= 30
    assert sum(DieFlag.COCKED in e.flags() for e in tilted) >= COCKED_RECALL * len(tilted)


def test_dice_tilted_25_degrees_or_more_are_cocked_by_read_roll() -> None:
    results = read(105, 12, cocked=1.0, min_tilt_deg=25.0)
    tilted = [f for d, f in results if d.tilt_deg >= 25 and not d.stacked]
    assert len(tilted) >= 25
    assert sum(DieFlag.COCKED in f for f in tilted) >= COCKED_RECALL_READ * len(tilted)


def test_dice_tilted_in_the_open_are_cocked_by_their_squeezed_pips() -> None:
    """The model learnt tilted dice on the rail or on a die and misses many tilted in the open;
    a 4-6 it finds somewhat tilted whose pips' layout is squeezed one way is COCKED (the
    squeeze cue), only where the pad shows the camera square on, and never a flat die."""
    without = DetectorParams(flags=FlagParams(squeeze=0.0))
    gained = at_a_slant = 0
    for shot in shots(311, 10, cocked=1.0, cocked_anywhere=1.0, min_tilt_deg=20.0):
        pad = shot.truth.pad
        on, off = read_roll(shot.image, pad=pad), read_roll(shot.image, pad=pad, params=without)
        unknown = read_roll(shot.image)  # no pad: the camera may be at a slant
        assert [d.center_xy for d in on.dice] == [d.center_xy for d in off.dice]
        for a, b, c in zip(on.dice, off.dice, unknown.dice, strict=True):
            assert b.flags - {DieFlag.STACKED} <= a.flags  # the cue adds COCKED ...
            assert a.flags & ALARMS or not b.flags & ALARMS  # ... and unflags no die
            gained += DieFlag.COCKED in a.flags and DieFlag.COCKED not in b.flags
            at_a_slant += DieFlag.COCKED in c.flags and DieFlag.COCKED not in b.flags
    assert gained >= 2
    assert at_a_slant == 0
    for shot in shots(312, 8, cocked=0.0, stacked=0.0):
        views = [view_of(d) for d in shot.truth.dice if d.visible >= 0.5]
        values = [d.value for d in shot.truth.dice if d.visible >= 0.5]
        evidence = judge(shot.image, views, values=values, pad=shot.truth.pad)
        assert not any(e.squeezed for e in evidence)


def test_a_lone_die_taken_for_a_stack_with_squeezed_pips_is_cocked() -> None:
    """With no other die in reach, the model cannot tell a die squarely on a die it hides
    from a die tilted alone; a die on a die lies flat on it, so a 4-6 whose pips are squeezed
    one way is the tilted one: COCKED, not STACKED (the same re-roll, the right word for it).
    A die really on a die keeps its STACKED."""
    without = DetectorParams(flags=FlagParams(squeeze=0.0))
    switched = 0
    for shot in shots(314, 16, cocked=1.0, cocked_anywhere=1.0, min_tilt_deg=20.0):
        pad = shot.truth.pad
        on, off = read_roll(shot.image, pad=pad), read_roll(shot.image, pad=pad, params=without)
        for a, b in zip(on.dice, off.dice, strict=True):
            if DieFlag.STACKED in b.flags and DieFlag.STACKED not in a.flags:
                truth = min(shot.truth.dice, key=lambda d: math.dist(d.center_xy, a.center_xy))
                assert DieFlag.COCKED in a.flags
                assert truth.tilt_deg >= 20
                assert not truth.stacked
                switched += 1
    assert switched >= 2
    kept = 0
    for shot in shots(320, 8, stacked=1.0):
        pad = shot.truth.pad
        on, off = read_roll(shot.image, pad=pad), read_roll(shot.image, pad=pad, params=without)
        for a, b in zip(on.dice, off.dice, strict=True):
            truth = min(shot.truth.dice, key=lambda d: math.dist(d.center_xy, a.center_xy))
            if truth.stacked and DieFlag.STACKED in b.flags:
                assert DieFlag.STACKED in a.flags
                kept += 1
    assert kept >= 5


def test_read_roll_judges_with_the_operating_points_of_its_params() -> None:
    # an install whose camera looks in at a slant raises the thresholds (DetectorParams.flags)
    strict = DetectorParams(
        flags=FlagParams(
            cocked_threshold=0.999999,
            stacked_threshold=0.999999,
            stacked_alone_threshold=0.999999,
        )
    )
    usual = strict_count = 0
    for shot in shots(105, 4, cocked=1.0, min_tilt_deg=25.0):
        plain, wary = read_roll(shot.image), read_roll(shot.image, params=strict)
        assert [(d.value, d.center_xy) for d in plain.dice] == [
            (d.value, d.center_xy) for d in wary.dice
        ]
        usual += sum(DieFlag.COCKED in d.flags for d in plain.dice)
        strict_count += sum(DieFlag.COCKED in d.flags for d in wary.dice)
    assert usual >= 6
    assert strict_count < usual  # (many a die tilted 25 degrees is past any threshold: p = 1.0)


def test_dice_on_other_dice_are_stacked() -> None:
    results = judged(102, 16, stacked=0.6)
    stacked = [e for d, e in results if d.stacked]
    assert len(stacked) >= 10
    assert sum(DieFlag.STACKED in e.flags() for e in stacked) >= STACKED_RECALL * len(stacked)
    # and the model ranks them above nearly every flat die apart
    flat = judged(100, 12)
    assert np.median([e.stacked for e in stacked]) > np.quantile([e.stacked for _, e in flat], 0.9)


def test_two_detections_of_one_die_are_not_a_stack() -> None:
    # the reader often finds a die twice (a tilted die's top and side face): closer than half a
    # side, the pair is one die, not a die on a die, and neither is the other's neighbour
    for shot in shots(106, 6):
        for d in shot.truth.dice:
            v = view_of(d)
            for du, dv, grow in ((0.3, 0.1, 1.15), (-0.2, -0.35, 0.9), (0.0, 0.0, 1.0)):
                twin = DieView(
                    (v.center_xy[0] + du * v.side_px, v.center_xy[1] + dv * v.side_px),
                    v.side_px * grow,
                    v.angle_deg,
                )
                pair = judge(shot.image, [v, twin])
                assert DieFlag.STACKED not in pair[0].flags()
                assert not any(e.touching for e in pair)
                # each is judged as if the other were not there: the pair adds no evidence
                assert pair[0] == judge(shot.image, [v])[0]
                assert pair[1] == judge(shot.image, [twin])[0]


RAIL = (-126.0, 0.0)
"""Where a 17 mm die leaning 36 degrees outwards rests on the rail of a 280 mm pad (its left
edge at x = -140 mm): the spot of ``vision.synth.random_scene``'s cocked dice."""


def test_a_tilted_die_read_off_its_top_face_is_still_flagged() -> None:
    """A die leaning 36 degrees on the rail shows a big side face, and the reader centres it
    there and reads that face's value: the detection is still the tilted die, and a re-roll is
    owed. (The model once learnt such detections as flat dice and passed every one of these
    five; on bench_synth's random scenes it now flags 96-100 % of them. Not all: a 1, or a die
    turned square to the rail, can still pass, and so can a die tilted as much in the open pad,
    50 mm from the rail: there the model passes the 3 and the 5.) The networks trained mostly
    on renders centre one of the five on its top face: flagged as well."""
    pad = synth.PadStyle(size_mm=(280.0, 200.0))
    off_face = 0
    for value in (2, 3, 4, 5, 6):
        style = synth.STYLES["white"]
        spec = synth.DieSpec(value, RAIL, 25.0, 36.0, 180.0, 0.0, 17.0, style)
        shot = synth.render(synth.Scene((spec,), pad, synth.Camera(), synth.Lighting()))
        (truth,) = shot.truth.dice
        (die,) = read_roll(shot.image, pad=shot.truth.pad).dice
        off_face += math.dist(die.center_xy, truth.center_xy) >= 0.5 * truth.size_px
        assert die.flags & ALARMS
    assert off_face >= 4  # the case in point: read off its top face


def test_read_roll_says_how_sure_each_flag_is() -> None:
    """A reading's COCKED / STACKED carry a confidence in the reading and its JSON; a die
    flagged neither carries none, and a reading cannot claim a confidence for a flag it lacks."""
    sure: list[float] = []
    for shot in shots(105, 6, cocked=1.0, min_tilt_deg=25.0):
        for die in read_roll(shot.image).dice:
            judged = die.flags & ALARMS
            assert {f for f, _ in die.flag_confidence} == judged
            assert set(die.to_json()["flag_confidence"]) == {f.value for f in judged}
            sure += [c for _, c in die.flag_confidence]
            if DieFlag.COCKED in judged:
                assert die.flag_sure(DieFlag.COCKED) is not None
    assert len(sure) >= 5
    assert all(0.5 <= c <= 1.0 for c in sure)
    die = read_roll(shots(105, 1, cocked=1.0, min_tilt_deg=25.0)[0].image).dice[0]
    with pytest.raises(ValueError, match="flag confidence"):
        replace(die, flags=frozenset(), flag_confidence=((DieFlag.COCKED, 0.9),))
