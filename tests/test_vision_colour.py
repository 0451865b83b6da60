"""Body-colour names of drawn dice, pips of any colour."""

from __future__ import annotations

import pytest
from vision_drawing import draw_die, table

from vision.colour import body_colour, colour_name

BODIES = {
    "white": (235, 235, 235),
    "black": (25, 25, 25),
    "red": (40, 40, 200),
    "green": (60, 160, 40),
    "blue": (190, 80, 30),
    "yellow": (40, 210, 230),
    "purple": (140, 40, 120),
}


@pytest.mark.parametrize("name", sorted(BODIES))
@pytest.mark.parametrize("pip", [(15, 15, 15), (245, 245, 245), (30, 30, 210)])
@pytest.mark.parametrize("value", [1, 6])
def test_body_colour_names_the_body_not_the_pips(
    name: str, pip: tuple[int, int, int], value: int
) -> None:
    patch = table(32, 32, (128, 128, 128))
    draw_die(patch, (15.5, 15.5), 30, value, angle_deg=10, body=BODIES[name], pip=pip)
    assert body_colour(patch) == name


@pytest.mark.parametrize(
    ("hsv", "name"),
    [
        ((0, 0, 20), "black"),
        ((0, 10, 240), "white"),
        ((0, 10, 120), "grey"),
        ((175, 200, 200), "red"),
        ((15, 200, 80), "brown"),
        ((3, 200, 80), "red"),  # a dark red stays red: only a dark orange is brown
        ((100, 200, 50), "black"),  # too dark for any hue to show
        ((100, 200, 200), "blue"),
    ],
)
def test_colour_name_boundaries(hsv: tuple[int, int, int], name: str) -> None:
    assert colour_name(*hsv) == name
