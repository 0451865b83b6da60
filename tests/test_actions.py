"""The shared action vocabulary: strict parsing and an exact JSON round trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.actions import (
    ACTION_TYPES,
    Bank,
    Bid,
    Fix,
    Keep,
    Lineup,
    Reroll,
    Roll,
    Undo,
    action_from_json,
)
from scoring.errors import MalformedActionError

dice = st.lists(st.integers(1, 6), min_size=1, max_size=6).map(tuple)

actions = st.one_of(
    dice.map(Roll),
    dice.map(Keep),
    dice.map(Fix),
    st.builds(
        Reroll, st.lists(st.integers(1, 6), max_size=6).map(tuple), st.sampled_from(["", "cocked"])
    ),
    st.builds(Bid, st.integers(1, 30), st.integers(1, 6)),
    st.just(Bank()),
    st.just(Undo()),
    st.lists(st.text("abcdefg", min_size=1, max_size=5), min_size=1, max_size=4).map(
        lambda names: Lineup(tuple(names))
    ),
)


@given(actions)
def test_every_action_round_trips_through_json(action: object) -> None:
    assert action_from_json(action.to_json()) == action  # type: ignore[attr-defined]


def test_every_type_is_registered_once() -> None:
    assert set(ACTION_TYPES) >= {
        "roll",
        "keep",
        "bank",
        "reroll",
        "bid",
        "call",
        "reveal",
        "stand",
        "fix",
        "undo",
        "lineup",
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([1, 2], "JSON object"),
        ({"dice": [1]}, "unknown action type"),
        ({"type": "explode"}, "unknown action type"),
        ({"type": "roll", "dice": [1, 7]}, "pip values 1-6"),
        ({"type": "roll", "dice": [True]}, "pip values 1-6"),
        ({"type": "roll", "dice": []}, "must not be empty"),
        ({"type": "roll", "dice": "12345"}, "list of pip values"),
        ({"type": "roll", "dice": [1] * 31}, "at most"),
        ({"type": "bid", "count": 0, "face": 3}, "count"),
        ({"type": "bid", "count": 3, "face": 7}, "face"),
        ({"type": "lineup", "order": []}, "non-empty"),
        ({"type": "roll", "dice": [1, 2], "owners": ["a"]}, "one owner per die"),
    ],
)
def test_malformed_actions_are_refused_with_a_reason(body: object, message: str) -> None:
    with pytest.raises(MalformedActionError, match=message):
        action_from_json(body)
