"""The value classifier's extra views: only an unsure first look buys a second one."""

from __future__ import annotations

import numpy as np
import pytest
from vision_drawing import draw_die, table

from vision.classify import ValueGuess, classify, die_patch
from vision.nets import load_nets


def _patches() -> list[np.ndarray]:
    """Six clear dice, a die cut off-centre (an unsure look) and a patch of bare table."""
    img = table(480, 160, (70, 110, 60))
    centres = []
    for i, value in enumerate((3, 6, 1, 5, 2, 4)):
        centre = (40.0 + 75 * i, 60.0)
        draw_die(img, centre, 40, value, angle_deg=13 * i - 20, body=(235, 235, 235), pip=(20,) * 3)
        centres.append(centre)
    out = [die_patch(img, c, 44, 32) for c in centres]
    out.append(die_patch(img, (centres[2][0] + 19, 60.0), 44, 32))
    out.append(die_patch(img, (250.0, 135.0), 44, 32))
    return out


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
