"""Bar Dice: JSON round trips, replay and undo, random input, and the CLI."""

from __future__ import annotations

import json

import pytest
from bar_dice_rig import roundtrip, sponsor
from game_scripts import DATA, load
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.actions import Action, Keep, Reroll, Roll, Stand, Undo
from scoring.bar_dice import GAME
from scoring.errors import IllegalActionError
from scoring.history import apply_logged, replay

# -- JSON, history, robustness ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "players", "rules"),
    [
        ("bardice_four_players.jsonl", ["Ann", "Bob", "Cy", "Dee"], None),
        (
            "bardice_all_day.jsonl",
            ["Ann", "Bob", "Cy"],
            {"all_day_elimination": True, "one_tie_all_tie": "off"},
        ),
    ],
)
def test_json_round_trip_and_replay_at_every_step(
    script: str, players: list[str], rules: dict[str, object] | None
) -> None:
    start = GAME.new(players=players, rules=rules)
    log = list(replay_log(load(script)))
    live = start
    for i, action in enumerate(log):
        before = live
        live = GAME.apply(live, action)
        assert roundtrip(live) == live
        j = GAME.state_to_json(live)
        for key in ("game", "rules", "scores", "over", "winner", "expecting", "phase", "hammer"):
            assert key in j
        assert replay(GAME, start, log[: i + 1]) == live
        assert apply_logged(GAME, start, log[: i + 1], Undo()) == before


def replay_log(actions: list[Action]) -> list[Action]:
    from scoring.history import effective_actions

    return effective_actions(actions)


def test_state_from_json_rejects_garbage() -> None:
    j = GAME.state_to_json(sponsor())
    with pytest.raises(ValueError, match="not a bar-dice state"):
        GAME.state_from_json({**j, "game": "bolo"})
    with pytest.raises(ValueError, match="bad"):
        GAME.state_from_json({k: v for k, v in j.items() if k != "round"})
    with pytest.raises(ValueError, match="bad phase"):
        GAME.state_from_json({**j, "phase": "party"})


decisions = st.one_of(
    st.lists(st.integers(1, 6), min_size=1, max_size=5).map(lambda d: Roll(tuple(d))),
    st.lists(st.integers(1, 6), min_size=1, max_size=5).map(lambda d: Keep(tuple(d))),
    st.just(Stand()),
    st.lists(st.integers(1, 6), max_size=2).map(lambda d: Reroll(tuple(d), "cocked")),
    st.lists(st.integers(1, 6), min_size=1, max_size=1).map(lambda d: Reroll(tuple(d), "dropped")),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(decisions, max_size=60), st.integers(2, 4), st.data())
def test_any_input_is_applied_or_refused_cleanly(
    actions: list[Action], players: int, data: st.DataObject
) -> None:
    """Random input: every action either applies or raises IllegalActionError; the JSON
    always round-trips; what expecting asks for is accepted."""
    s = GAME.new(players=[f"P{i}" for i in range(players)])
    for action in actions:
        want = GAME.expecting(s)
        if want.action == "roll" and data.draw(st.booleans()):
            action = Roll(
                tuple(
                    data.draw(st.lists(st.integers(1, 6), min_size=want.dice, max_size=want.dice))
                )
            )
        try:
            s = GAME.apply(s, action)
        except IllegalActionError:
            continue
        assert roundtrip(s) == s
        for legal in GAME.legal_actions(s):
            GAME.apply(s, legal)


# -- the CLI ----------------------------------------------------------------------------------


def test_cli_score_and_replay(capsys: pytest.CaptureFixture[str]) -> None:
    from server.cli import main

    assert main(["score", "--game", "bar-dice", "--json", "1", "2", "2", "2", "5"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "dice": [1, 2, 2, 2, 5],
        "counts": True,
        "count": 4,
        "face": 2,
        "value": 42,
    }
    path = str(DATA / "bardice_four_players.jsonl")
    assert main(["replay", "--game", "bar-dice", "--players", "Ann,Bob,Cy,Dee", path]) == 0
    final = json.loads(capsys.readouterr().out)
    assert final["sponsor"] == "Ann"
    assert final["over"] is True
    assert final["winners"] == ["Bob", "Cy", "Dee"]
