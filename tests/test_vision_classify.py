"""What the value network is shown (a die cut square to its face) and its extra views: only an
unsure first look buys a second one."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from vision_drawing import draw_die, table

from vision.classify import ValueGuess, classify, cut_die
from vision.face import face_angle
from vision.nets import load_nets
from vision.params import DetectorParams
from vision.synth import SceneImage


def _patches() -> list[np.ndarray]:
    """Six clear dice, a die cut off-centre (an unsure look) and a patch of bare table, cut as
    the reader cuts them."""
    img = table(480, 160, (70, 110, 60))
    centres = []
    for i, value in enumerate((3, 6, 1, 5, 2, 4)):
        centre = (40.0 + 75 * i, 60.0)
        draw_die(img, centre, 40, value, angle_deg=13 * i - 20, body=(235, 235, 235), pip=(20,) * 3)
        centres.append(centre)
    centres += [(centres[2][0] + 19, 60.0), (250.0, 135.0)]
    p = DetectorParams()
    return [
        cut_die(img, c, 50, p.crop_px, turned=p.turned_patches, margin=p.turned_margin).view
        for c in centres
    ]


def _same(a: ValueGuess, b: ValueGuess) -> bool:
    return (
        a.value == b.value
        and a.probability == pytest.approx(b.probability, abs=1e-5)
        and a.not_die == pytest.approx(b.not_die, abs=1e-5)
    )


def test_every_view_makes_the_verdict_independent_of_the_turn() -> None:
    net = load_nets().value
    patches = _patches()
    turned = [np.ascontiguousarray(np.rot90(p)) for p in patches]
    full = classify(net, patches, views=4, sure=1.0)
    assert all(
        _same(a, b) for a, b in zip(full, classify(net, turned, views=4, sure=1.0), strict=True)
    )
    one = classify(net, patches, views=1)
    assert not all(_same(a, b) for a, b in zip(one, classify(net, turned, views=1), strict=True)), (
        "one view is not turn-invariant, so the check above would prove nothing"
    )


def test_only_unsure_patches_get_the_extra_views() -> None:
    net = load_nets().value
    patches = _patches()
    one = classify(net, patches, views=1)
    full = classify(net, patches, views=4, sure=1.0)
    assert [g.value for g in full[:6]] == [3, 6, 1, 5, 2, 4]
    first = [max(g.probability * (1 - g.not_die), g.not_die) for g in one]
    assert min(first) < 0.9 < max(first), "the patches must include sure and unsure looks"
    mixed = classify(net, patches, views=4, sure=0.9)
    for m, o, f, p in zip(mixed, one, full, first, strict=True):
        assert _same(m, o if p >= 0.9 else f)
    never = classify(net, patches, views=4, sure=0.0)
    assert all(_same(m, o) for m, o in zip(never, one, strict=True))


def test_a_patch_reads_the_same_alone_or_in_a_batch() -> None:
    net = load_nets().value
    patches = _patches()
    together = classify(net, patches, views=4, sure=0.9)
    alone = [classify(net, [p], views=4, sure=0.9)[0] for p in patches]
    assert all(_same(a, b) for a, b in zip(together, alone, strict=True))
    assert classify(net, [], views=4) == []
    with pytest.raises(ValueError, match="views"):
        classify(net, patches, views=3)


@pytest.mark.parametrize("turn", [0.0, 12.0, 30.0, 44.0, -20.0])
def test_a_turned_cut_squares_the_face_up_and_fills_the_patch(turn: float) -> None:
    img = table(160, 160, (70, 110, 60))
    draw_die(img, (80, 80), 40, 5, angle_deg=turn, body=(235, 235, 235), pip=(20, 20, 20))
    extent = 40 * (abs(math.cos(math.radians(turn))) + abs(math.sin(math.radians(turn))))
    plain = cut_die(img, (80.0, 80.0), extent, 32, turned=False)
    cut = cut_die(img, (80.0, 80.0), extent, 32, turned=True)
    assert plain.view is plain.patch
    assert np.array_equal(cut.patch, plain.patch)
    assert abs((cut.angle_deg - turn + 45) % 90 - 45) < 3
    wide = cut_die(img, (80.0, 80.0), extent * 1.5, 32, turned=True).view  # face and table
    assert abs(face_angle(wide)) < 3
    body = cv2.cvtColor(cut.view, cv2.COLOR_BGR2GRAY) > 150
    assert body.mean() > 0.75, "the face fills the squared-up patch, whatever the turn"
    if abs(turn) > 20:
        assert (cv2.cvtColor(plain.view, cv2.COLOR_BGR2GRAY) > 150).mean() < 0.6


def test_a_two_cut_off_centre_reads_as_one_until_looked_at_again() -> None:
    """The locator's peak on a 2 can sit a quarter of a side off its centre, towards a corner;
    the cut then loses a pip and reads as a 1, unsure. Looking again with the cut shifted
    towards each corner finds the 2; a real 1 looked at again (every 1, here) stays a 1."""
    from vision.locate import Candidate
    from vision.relook import unsure_ones

    nets = load_nets()

    def looks(
        value: int, turn: float, off: tuple[float, float], p: DetectorParams
    ) -> tuple[ValueGuess, ValueGuess]:
        shot = _green_scene((value, (0.0, 0.0), turn))
        (truth,) = shot.truth.dice
        side = truth.size_px
        centre = (truth.center_xy[0] + off[0] * side, truth.center_xy[1] + off[1] * side)
        cut = cut_die(
            shot.image, centre, 1.15 * side, p.crop_px, turned=True, margin=p.turned_margin
        )
        first = classify(nets.value, [cut.view], views=p.value_views, sure=p.value_sure)
        found = [Candidate(centre, 1.15 * side, 1.0)]
        (again,) = unsure_ones(shot.image, found, [cut], first, nets, p)
        return first[0], again

    p = DetectorParams()
    # (the value network shown logo aces as no die takes most 2s cut this far off for no die
    # at all, which the looks around them read (``recentred``); cut 0.35 sides off at a 35
    # degree turn it still reads a 1 and a die; found by a search over turns and offsets)
    for turn, off in ((35.0, (-0.35, 0.0)),):
        first, again = looks(2, turn, off, p)
        assert first.value == 1
        assert first.probability < p.ones_unsure
        assert again.value == 2
    every_one = DetectorParams(ones_unsure=1.0)
    for turn, off in ((0.0, (0.0, 0.0)), (35.0, (0.1, 0.1))):
        first, again = looks(1, turn, off, every_one)
        assert first.value == 1
        assert again.value == 1
    no_relook = DetectorParams(ones_unsure=0.0)
    assert looks(2, 35.0, (-0.35, 0.0), no_relook)[1].value == 1
    with pytest.raises(ValueError, match="relook_shifts"):
        DetectorParams(relook_shifts=(0.6,))
    with pytest.raises(ValueError, match="relook_accept"):
        DetectorParams(relook_accept=1.5)


def _green_scene(
    *specs: tuple[int, tuple[float, float], float], style: str = "green", height_mm: float = 200.0
) -> SceneImage:
    """A flat overhead render of dice ``(value, (x, y) mm, turn)`` (green unless ``style``)
    on plain felt, from ``height_mm`` above it."""
    from vision import synth
    from vision.synth import Camera, DieSpec, Lighting, PadStyle, Scene

    dice = tuple(
        DieSpec(v, xy, yaw_deg=turn, size_mm=20.0, style=synth.STYLES[style])
        for v, xy, turn in specs
    )
    pad = PadStyle(colour=(40, 110, 30), texture=0.0)
    light = Lighting(azimuth_deg=0, elevation_deg=90, shadow=0.0, ambient=0.6)
    return synth.render(Scene(dice, pad, Camera(height_mm=height_mm), light))


def test_a_die_cut_off_its_centre_is_read_from_the_best_look_around() -> None:
    """A cut 0.35 of a side off a 5 loses pips: it misreads, or reads without conviction (the
    value network on ImageNet's Lite0 reads a cut a quarter of a side off as the 5 it is, or
    sees nothing off about it, and at 0.4 sides off takes it for no die at all; a 1 cut a
    fifth of a side towards its neighbour read as a 2 before the networks trained mostly on
    renders). Both look off-centre to the value
    network ("not a die" above ``recentre_not_die``), so the looks around them are taken and
    the one most surely a centred die reads them right. Without the looks (``recentre_step``
    0) they stay wrong; a die whose cut is centred keeps its first reading as it is."""
    from vision.locate import Candidate
    from vision.relook import recentred

    nets = load_nets()
    p = DetectorParams()

    def read(
        value: int, turn: float, off: tuple[float, float], params: DetectorParams
    ) -> tuple[ValueGuess, ValueGuess]:
        shot = _green_scene((value, (0.0, 0.0), turn), (6, (23.0, 0.0), 0.0))
        truth = shot.truth.dice[0]
        side = truth.size_px
        centre = (truth.center_xy[0] + off[0] * side, truth.center_xy[1] + off[1] * side)
        cut = cut_die(
            shot.image, centre, 1.15 * side, p.crop_px, turned=True, margin=p.turned_margin
        )
        first = classify(nets.value, [cut.view], views=p.value_views, sure=p.value_sure)
        found = [Candidate(centre, 1.15 * side, 1.0)]
        (again,) = recentred(shot.image, found, [cut], first, nets, params)
        return first[0], again

    for value, turn, off in ((5, 10.0, (-0.35, 0.0)), (5, 10.0, (0.0, 0.35))):
        first, again = read(value, turn, off, p)
        # off its centre the cut misreads the 5, or reads it without conviction (the 8-bit
        # value network's first look is a near tie between 5, 3 and 4 here, which OpenCV 4.11
        # and 5.0 cut differently: cut 0.35 sides up instead of down, the value network shown
        # logo aces reads 5 at 0.52 on 4.11; both offsets found by a search on both pins)
        assert first.value != value or first.probability < 0.5
        assert p.recentre_not_die < first.not_die <= p.reject_not_die
        assert again.value == value
        assert again.probability >= 0.5
        assert again.not_die < first.not_die
        without = read(value, turn, off, DetectorParams(recentre_step=0.0))[1]
        assert without.value != value or without.probability < 0.5
    first, again = read(3, 10.0, (0.0, 0.0), p)
    assert first.not_die <= p.recentre_not_die
    assert again is first
    with pytest.raises(ValueError, match="recentre_step"):
        DetectorParams(recentre_step=0.8)


def test_a_stronger_peak_off_the_face_does_not_hide_the_die_under_a_weaker_one() -> None:
    """Two locator peaks on one die: the stronger half a side off the face's centre, which the
    value network takes for "not a die", the weaker on the centre. Duplicates are settled
    among dice only, so the weaker peak is the die; settled among peaks, the stronger one
    would hide it and then be dropped, and the die would be missed."""
    from vision.detect import dice_at
    from vision.locate import Candidate

    nets = load_nets()
    p = DetectorParams()
    for value in (2, 3, 5):
        shot = _green_scene((value, (0.0, 0.0), 10.0))
        (truth,) = shot.truth.dice
        side = truth.size_px
        strong = Candidate((truth.center_xy[0] + 0.5 * side, truth.center_xy[1]), 1.15 * side, 0.9)
        weak = Candidate(truth.center_xy, 1.15 * side, 0.5)
        assert math.dist(strong.center_xy, weak.center_xy) < p.min_center_distance * weak.size_px
        cut = cut_die(
            shot.image,
            strong.center_xy,
            strong.size_px,
            p.crop_px,
            turned=True,
            margin=p.turned_margin,
        )
        (alone,) = classify(nets.value, [cut.view], views=p.value_views, sure=p.value_sure)
        assert alone.not_die > p.reject_not_die
        (die,) = dice_at(shot.image, [strong, weak], nets, p)
        assert die.candidate.center_xy == weak.center_xy
        assert die.guess.value == value


def test_a_peak_on_a_pip_of_a_close_die_is_not_a_die() -> None:
    """Seen close, a die's pips are die-sized blobs to the locator, and a pip cut out with
    its die around it reads as a die (here a 5's corner pip, looked at again, as the 5). A
    detection whose
    centre lies inside a stronger one's face (``inside_face``) is dropped; without the rule
    it is reported as a second die."""
    from vision.detect import dice_at
    from vision.locate import Candidate

    nets = load_nets()
    shot = _green_scene((5, (0.0, 0.0), 0.0), style="white", height_mm=120.0)
    (truth,) = shot.truth.dice
    side = truth.size_px
    die = Candidate(truth.center_xy, 1.05 * side, 0.9)
    pip = Candidate(
        (truth.center_xy[0] + 0.25 * side, truth.center_xy[1] + 0.25 * side), 0.7 * side, 0.6
    )
    without = dice_at(shot.image, [die, pip], nets, DetectorParams(inside_face=0.0))
    assert [d.candidate for d in without] == [die, pip]
    assert without[1].guess.not_die <= DetectorParams().reject_not_die
    (only,) = dice_at(shot.image, [die, pip], nets, DetectorParams())
    assert only.candidate is die
    assert only.guess.value == 5
    with pytest.raises(ValueError, match="inside_face"):
        DetectorParams(inside_face=1.5)


def test_a_faint_peak_is_a_die_only_when_the_value_network_is_all_but_sure() -> None:
    """A locator peak below ``peak_threshold`` (a die the locator half misses) is kept when
    its cut is surely a centred die, and dropped when the cut is off the die's centre, which a
    strong peak's cut may be; and never within ``faint_peak_reach`` of a stronger die."""
    from vision.detect import dice_at
    from vision.locate import Candidate

    nets = load_nets()
    p = DetectorParams()
    shot = _green_scene((6, (0.0, 0.0), 10.0))
    (six,) = shot.truth.dice
    side = six.size_px
    faint = p.faint_peak_threshold + 0.01
    (read,) = dice_at(shot.image, [Candidate(six.center_xy, 1.1 * side, faint)], nets, p)
    assert read.guess.value == 6
    assert read.guess.not_die <= p.faint_peak_not_die
    off = (six.center_xy[0], six.center_xy[1] + 0.35 * side)
    cut = cut_die(shot.image, off, 1.1 * side, p.crop_px, turned=True, margin=p.turned_margin)
    (first,) = classify(nets.value, [cut.view], views=p.value_views, sure=p.value_sure)
    assert p.faint_peak_not_die < first.not_die <= p.reject_not_die
    assert len(dice_at(shot.image, [Candidate(off, 1.1 * side, 0.9)], nets, p)) == 1
    assert dice_at(shot.image, [Candidate(off, 1.1 * side, faint)], nets, p) == []
    # a close die's pip as a faint peak, sure of itself; the face rule is off to see the reach
    close = _green_scene((3, (0.0, 0.0), 0.0), style="green", height_mm=120.0)
    (three,) = close.truth.dice
    side = three.size_px
    pip = (three.center_xy[0] + 0.25 * side, three.center_xy[1] + 0.25 * side)
    found = [Candidate(three.center_xy, 1.05 * side, 0.9), Candidate(pip, 0.7 * side, faint)]
    reach_off = DetectorParams(inside_face=0.0, faint_peak_reach=0.0)
    assert len(dice_at(close.image, found, nets, reach_off)) == 2
    (only,) = dice_at(close.image, found, nets, DetectorParams(inside_face=0.0))
    assert only.guess.value == 3


def test_a_shifted_look_moves_along_the_faces_own_axes() -> None:
    """A shift towards a corner of the face, in face sides, lands in the turned patch that
    ``die_patch`` cuts exactly that far towards that corner of the patch: the shift turns with
    the face as the patch does (a shift turned the wrong way lands off the diagonals, where a
    2's far pip is not)."""
    from vision.relook import CORNERS, shifted_centre

    centre, side, out = (120.0, 90.0), 40.0, 32
    for turn in (-40.0, -20.0, 0.0, 15.0, 35.0):
        # die_patch's map from the frame to the patch of a face turned by ``turn``
        m = cv2.getRotationMatrix2D(centre, turn, out / side)
        m[0, 2] += out / 2.0 - centre[0]
        m[1, 2] += out / 2.0 - centre[1]
        for direction in CORNERS:
            moved = shifted_centre(centre, side, turn, direction, 0.3)
            px, py = m @ np.array([moved[0], moved[1], 1.0])
            want = (out / 2.0 + direction[0] * 0.3 * out, out / 2.0 + direction[1] * 0.3 * out)
            assert math.dist((px, py), want) < 1e-6


def test_a_die_sized_as_one_of_its_pips_is_read_again_at_the_others_size() -> None:
    """A render where the locator sizes a purple die small (a big pip and some): the small cut
    is unsure. The other five dice say how big a die is, and the looks at that size around the
    peak read it; without them (``undersized`` 0) it is asked. (``synth.random_scene`` at
    seed 2430, written out; found by a search over seeds.)"""
    from vision import synth
    from vision.detect import read_roll
    from vision.synth import Camera, DieSpec, Lighting, PadStyle, Scene

    dice = tuple(
        DieSpec(v, xy, yaw_deg=yaw, size_mm=14.994916229780662, style=synth.STYLES["purple"])
        for v, xy, yaw in (
            (1, (-54.70930704297511, 37.715651030641155), 62.62646468896033),
            (2, (6.955475799018922, -31.691064225725384), 87.40045569068985),
            (3, (83.18617520509865, 39.4621849643384), 34.61315886757015),
            (5, (4.609356236384647, -70.16173686914773), 10.140217917530663),
            (6, (58.78245811101276, -56.114283426335774), 57.830050342532395),
            (4, (-39.176743900878215, -8.852790633791397), 6.048091758233435),
        )
    )
    pad = PadStyle(
        size_mm=(237.8346503798346, 167.6519465891296),
        centre_mm=(-7.216078002913658, -4.2525929199819705),
        angle_deg=0.717768480801614,
        colour=(35, 35, 150),
        texture=1.1167953358809177,
        rail_mm=6.958502725254597,
        rail_colour=(25, 25, 40),
        table_colour=(70, 100, 140),
        seed=849248675,
    )
    light = Lighting(
        azimuth_deg=178.99191506886294,
        elevation_deg=60.48691335585206,
        ambient=0.43336063164972694,
        gain=0.9490859166740393,
        cast=(1.044968353761233, 0.9614435015820533, 1.0493148184611023),
        gradient=0.0810512446855759,
        gradient_dir_deg=178.49766195693854,
        shadow=0.31138183053840535,
    )
    shot = synth.render(Scene(dice, pad, Camera(height_mm=311.91864944910884), light))
    truth = sorted(d.value for d in shot.truth.dice)
    assert sorted(d.value or 0 for d in read_roll(shot.image).dice) == truth
    without = read_roll(shot.image, params=DetectorParams(undersized=0.0))
    assert sorted(d.value or 0 for d in without.dice) == [0, 2, 3, 4, 5, 6]


def test_the_size_relook_leaves_sure_dice_and_other_dice_s_pips_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A smaller die among bigger ones, read surely at its own size, is not looked at again
    (nellbyler_d6 mixes dice sets). A peak a fifth of a side off a 2's centre, sized as 0.6
    of a die, is looked at: the look at the others' size lands on that die, so the peak is not
    read as it (with that die not located, the same look is taken and reads the 2)."""
    from vision import synth
    from vision.locate import Candidate
    from vision.relook import undersized
    from vision.synth import Camera, DieSpec, Lighting, PadStyle, Scene

    nets = load_nets()
    p = DetectorParams()
    green = synth.STYLES["green"]
    scene = Scene(
        (
            DieSpec(2, (0.0, 0.0), yaw_deg=10.0, size_mm=20.0, style=green),
            DieSpec(3, (30.0, 0.0), size_mm=20.0, style=green),
            DieSpec(6, (0.0, 30.0), size_mm=20.0, style=green),
            DieSpec(4, (30.0, 30.0), size_mm=13.0, style=green),
        ),
        PadStyle(colour=(40, 110, 30), texture=0.0),
        Camera(height_mm=200.0),
        Lighting(azimuth_deg=0, elevation_deg=90, shadow=0.0, ambient=0.6),
    )
    shot = synth.render(scene)
    found = [Candidate(d.center_xy, 1.05 * d.size_px, 1.0) for d in shot.truth.dice]
    two = shot.truth.dice[0]
    side = two.size_px
    assert shot.truth.dice[3].size_px < p.undersized * side

    def read(found: list[Candidate]) -> tuple[list[ValueGuess], list[ValueGuess]]:
        cuts = [
            cut_die(
                shot.image, c.center_xy, c.size_px, p.crop_px, turned=True, margin=p.turned_margin
            )
            for c in found
        ]
        first = classify(nets.value, [c.view for c in cuts], views=p.value_views, sure=p.value_sure)
        return first, undersized(shot.image, found, cuts, first, nets, p)

    cuts = [
        cut_die(shot.image, c.center_xy, c.size_px, p.crop_px, turned=True, margin=p.turned_margin)
        for c in found
    ]
    first = classify(nets.value, [c.view for c in cuts], views=p.value_views, sure=p.value_sure)
    assert [g.value for g in first] == [2, 3, 6, 4]
    assert first[3].probability >= p.value_sure

    def no_look(*args: object, **kwargs: object) -> list[ValueGuess]:
        raise AssertionError("a die read surely was looked at again")

    with monkeypatch.context() as m:  # held out, such looks misread a crowded photo's die
        m.setattr("vision.relook.classify", no_look)
        assert undersized(shot.image, found, cuts, first, nets, p) == first
    pip = Candidate((two.center_xy[0] - 0.2 * side, two.center_xy[1] - 0.2 * side), 0.6 * side, 0.5)
    first, again = read([*found, pip])
    assert first[4].probability < p.value_sure
    assert again[4] is first[4]
    first, again = read([*found[1:], pip])
    assert again[3].value == 2
    assert again[3] is not first[3]
    with pytest.raises(ValueError, match="undersized"):
        DetectorParams(undersized=1.0)
    with pytest.raises(ValueError, match="undersized"):
        DetectorParams(undersized_step=0.7)
