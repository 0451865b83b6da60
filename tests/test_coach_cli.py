"""``dicepad odds``: the coach from the command line, in words and as JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from server.cli import main

FARKLE_KEYS = {"p_blow", "expected_turn", "roll_value", "bank_value", "advice"}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["odds", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def odds_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    obj: dict[str, Any] = json.loads(out)
    return obj


def test_start_of_a_you_blew_it_turn(capsys: pytest.CaptureFixture[str]) -> None:
    h = odds_json(capsys, "--game", "you-blew-it")
    assert set(h) >= FARKLE_KEYS
    assert h["p_blow"] == pytest.approx(1440 / 46656, abs=1e-4)
    assert h["advice"] == "roll"
    assert h["roll_value"] == h["expected_turn"]
    assert h["bank_value"] is None


def test_bank_with_one_die_and_a_thousand(capsys: pytest.CaptureFixture[str]) -> None:
    h = odds_json(capsys, "--game", "you-blew-it", "--turn-points", "1000", "--dice-left", "1")
    assert h["advice"] == "bank"
    assert h["bank_value"] == 1000
    code, out, _ = run(capsys, "--game", "you-blew-it", "--turn-points", "1000", "--dice-left", "1")
    assert code == 0
    assert "66.7 % to blow it" in out
    assert "Bank." in out


def test_hot_dice_must_roll(capsys: pytest.CaptureFixture[str]) -> None:
    h = odds_json(capsys, "--game", "you-blew-it", "--turn-points", "1500", "--dice-left", "6")
    assert h["advice"] == "roll"
    assert h["bank_value"] is None


def test_bolo_board_sets_the_minimum(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--game", "bolo", "--turn-points", "400", "--dice-left", "2")
    assert odds_json(capsys, *args)["minimum"] == 650
    assert odds_json(capsys, *args, "--board", "3000")["minimum"] == 350
    assert odds_json(capsys, *args, "--board", "3000")["advice"] == "bank"
    assert odds_json(capsys, *args, "--board", "9100")["minimum"] == 1000
    custom = odds_json(capsys, *args, "--board", "3000", "--rule", "take_min=500")
    assert custom["minimum"] == 500


def test_best_keep_of_a_roll(capsys: pytest.CaptureFixture[str]) -> None:
    h = odds_json(capsys, "--game", "you-blew-it", "--roll", "1", "1", "5", "2", "3", "4")
    assert h["advice"] == "keep"
    assert h["keep"] == [1]
    assert h["then"] == "roll"
    straight = odds_json(capsys, "--game", "you-blew-it", "--roll", "123456")
    assert straight["keep"] == [1, 2, 3, 4, 5, 6]
    assert straight["dice_left"] == 6


def test_teammates_points_at_risk(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--game", "you-blew-it", "--turn-points", "300", "--dice-left", "3")
    assert odds_json(capsys, *args)["advice"] == "roll"
    assert odds_json(capsys, *args, "--teammates", "800")["advice"] == "bank"


def test_bar_dice(capsys: pytest.CaptureFixture[str]) -> None:
    h = odds_json(capsys, "--game", "bar-dice", "--beat", "nothing", "--rolls-left", "3")
    assert h["p_goal"] == pytest.approx(1 - (5 / 6) ** 15, abs=1e-4)
    farm = odds_json(
        capsys, "--game", "bar-dice", "--beat", "43", "--rolls-left", "2", "--roll", "16634"
    )
    assert farm["farm"] == [1, 6, 6]
    code, out, _ = run(capsys, "--game", "bar-dice", "--farmed", "1", "--roll", "6", "6", "6", "6")
    assert code == 0
    assert "Stand on fifty six" in out


def test_gords(capsys: pytest.CaptureFixture[str]) -> None:
    h = odds_json(capsys, "--game", "gords", "--bid", "8x4", "--own", "14426", "--unknown", "20")
    assert h["p_bid"] == pytest.approx(0.8485, abs=1e-4)
    assert h["advice"] in ("raise", "call")
    code, out, _ = run(capsys, "--game", "gords", "--bid", "10x4", "--unknown", "25")
    assert code == 0
    assert "30.4 %" in out
    # the house rules count: spot on allowed, 4 2 against two unseen dice and 2 x fours
    bid = ("--game", "gords", "--bid", "2x4", "--own", "4", "2", "--unknown", "2")
    assert odds_json(capsys, *bid)["advice"] == "call"
    assert odds_json(capsys, *bid, "--rule", "spot_on=true")["advice"] == "spot_on"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--game", "bolo", "--turn-points", "75"), "multiple of 50"),
        (("--game", "bolo", "--dice-left", "6"), "1 to 5"),
        (("--game", "bolo", "--teammates", "100"), "you-blew-it"),
        (("--game", "you-blew-it", "--board", "100"), "bolo"),
        (("--game", "you-blew-it", "--rule", "nonsense=1"), "unknown house rule"),
        (("--game", "bar-dice", "--beat", "lots"), "hand value"),
        (("--game", "gords", "--bid", "8x4"), "--unknown"),
        (("--game", "gords", "--bid", "8y4", "--unknown", "3"), "COUNTxFACE"),
        (("--game", "you-blew-it", "--roll", "1", "7"), "1-6"),
    ],
)
def test_bad_input_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert message in err


def test_bolo_endgame_from_the_board(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--game", "bolo", "--board", "9400", "--turn-points", "1000", "--dice-left", "3")
    h = odds_json(capsys, *args)
    assert h["endgame"] == {
        "need": 1000,  # 600 to 10 000, but the minimum take from 9000 is 1000
        "p_finish": 1.0,
        "finish_advice": "bank",
        "finish_keep": None,
    }
    assert h["advice"] == "bank"
    code, out, _ = run(capsys, *args)
    assert code == 0
    assert "wins the game" in out


def test_bar_dice_pace_rolls(capsys: pytest.CaptureFixture[str]) -> None:
    h = odds_json(capsys, "--game", "bar-dice", "--beat", "43", "--pace-rolls", "2")
    assert h["goal"] == "beat_pace"
    assert h["p_beat"] <= h["p_win"] <= h["p_goal"]
