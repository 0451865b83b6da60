"""The pages' pure parts: kept and matching dice, rounds, line-ups, QR links, the optional coach."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient
from pages_rig import html, new_table

from server.pages import board, coach, forms, links

# -- the pure parts -------------------------------------------------------------------------


def test_kept_dice_are_marked_as_a_multiset() -> None:
    assert board.mark_kept([1, 1, 1, 5, 2], [1, 1, 5]) == [
        (1, True),
        (1, True),
        (1, False),
        (5, True),
        (2, False),
    ]
    assert board.mark_kept([3, 4], []) == [(3, False), (4, False)]


def test_matching_gords_dice_follow_the_engines_count() -> None:
    dice = [1, 5, 1, 5, 2]
    assert [hit for _, hit in board.mark_matching(dice, 5, 4)] == [True] * 4 + [False]
    assert [hit for _, hit in board.mark_matching(dice, 5, 2)] == [False, True, False, True, False]
    assert [hit for _, hit in board.mark_matching(dice, 1, 2)] == [True, False, True, False, False]


def test_bolo_turns_group_into_rounds_newest_first() -> None:
    turns = [{"n": i} for i in range(5)]
    assert board.rounds(turns, 2) == [
        (3, [{"n": 4}]),
        (2, [{"n": 2}, {"n": 3}]),
        (1, [{"n": 0}, {"n": 1}]),
    ]
    assert board.rounds([], 3) == []


def test_line_ups_from_the_form() -> None:
    assert forms.parse_players(" Ann \n\nBob, Cy\r\n") == ["Ann", "Bob", "Cy"]
    assert forms.parse_teams("Reds: Ann, Al\nBob\n: Cy") == {
        "Reds": ["Ann", "Al"],
        "Team 2": ["Bob"],
        "Team 3": ["Cy"],
    }
    with pytest.raises(ValueError, match="two teams"):
        forms.parse_teams("A: x\nA: y")


def test_qr_links_point_phones_at_the_network_address() -> None:
    assert links.public_url("http://127.0.0.1:8080/", "/t/x", lan="10.0.0.5") == (
        "http://10.0.0.5:8080/t/x"
    )
    assert links.public_url("http://localhost/", "/t/x", lan="10.0.0.5") == "http://10.0.0.5/t/x"
    assert links.public_url("http://bar.lan:80/", "/t/x", lan="10.0.0.5") == "http://bar.lan:80/t/x"
    assert links.public_url("http://127.0.0.1:8080/", "/t/x", lan=None) == (
        "http://127.0.0.1:8080/t/x"
    )
    assert links.qr_svg("http://10.0.0.5/t/x").startswith(b"<svg")


def test_the_coach_is_optional_and_never_breaks_the_board(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = new_table(client, "bolo", players=["Ann", "Bob"])
    monkeypatch.setattr(coach, "_hint_function", lambda: None)
    assert 'class="hint"' not in html(client.get(f"/t/{table}"))

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("no policy for these rules")

    monkeypatch.setattr(coach, "_hint_function", lambda: broken)
    assert 'class="hint"' not in html(client.get(f"/t/{table}"))
    monkeypatch.setattr(coach, "_hint_function", lambda: lambda game, state: {"text": "Roll."})
    assert "<b>Coach</b> Roll." in html(client.get(f"/t/{table}"))
