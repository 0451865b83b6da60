"""``dicepad score`` and ``dicepad replay`` in-process, plus one installed-script smoke test."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from server.cli import main
from server.cli.replay import parse_teams
from server.cli.score import parse_bid, parse_dice

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "ybi_sample_game.jsonl"
TEAM_ARGS = ["--team", "DJS=Dick,Spot,Jane", "--team", "THS=Tom,Harry,Stanley"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- score --------------------------------------------------------------------------------------


def test_score_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "score", "--game", "you-blew-it", "--json", "1", "4", "4", "4", "5", "5"
    )
    assert code == 0
    report = json.loads(out)
    assert report["dice"] == [1, 4, 4, 4, 5, 5]
    assert report["points"] == 600
    assert report["blown"] is False
    assert report["all_score"] is True
    keeps = [o["keep"] for o in report["options"]]
    assert len(keeps) == len({tuple(k) for k in keeps})
    assert report["options"][0] == {
        "keep": [1, 4, 4, 4, 5, 5],
        "points": 600,
        "combos": ["three 4s", "single 1", "single 5", "single 5"],
        "uses_all": True,
        "may_stop": False,
    }


def test_score_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "score", "--game", "bolo", "1", "1", "1", "2", "2")
    assert code == 0
    assert "keep 1 1 1: 1000 (three 1s) — may stop" in out
    assert "keep 1 1 1 2 2: 500 (full house 1 1 1 2 2) — must roll all five" in out
    code, out, _ = run(capsys, "score", "--game", "you-blew-it", "2", "2", "3", "3", "4", "4")
    assert "blown" in out


def test_score_rules_with_and_without_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("four_of_a_kind", "bolo.four_of_a_kind"):
        code, out, _ = run(
            capsys, "score", "--game", "bolo", "--json", "--rule", f"{name}=triple_plus_single",
            "4", "4", "4", "4", "2",
        )  # fmt: skip
        assert code == 0
        assert json.loads(out)["points"] == 400
    code, out, _ = run(capsys, "score", "--game", "bolo", "--json", "4", "4", "4", "4", "2")
    assert json.loads(out)["points"] == 800


def test_score_reads_stdin_one_roll_per_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("1 1 1\n\n2 2 3 3 4 4\n7 1\n5,5\n"))
    code, out, err = run(capsys, "score", "--game", "you-blew-it")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line.get("points") for line in lines] == [1000, 0, None, 100]
    assert lines[1]["blown"] is True
    assert lines[2] == {"line": 4, "error": "a die shows 1-6, got '7'"}
    assert code == 1
    assert "line 4" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rule", "nonsense=1", "1"], "unknown house rule"),
        (["--rule", "target", "1"], "NAME=VALUE"),
        (["1", "2", "3", "4", "5", "6", "1"], "1 to 6 dice"),
        (["9"], "1-6"),
        (["--bid", "4x6", "1"], "gords"),
        (["--bid", "four sixes", "1"], "COUNTxFACE"),
    ],
)
def test_score_bad_input_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, "score", "--game", "you-blew-it", *argv)
    assert code == 2
    assert message in err
    assert out == ""


def test_parse_helpers() -> None:
    assert parse_dice("1 1 5") == parse_dice("1,1,5") == parse_dice("115") == (1, 1, 5)
    assert parse_bid("4x6") == (4, 6)
    assert parse_bid("10 × 2") == (10, 2)
    with pytest.raises(ValueError, match="COUNTxFACE"):
        parse_bid("0x6")
    assert parse_teams(["A=Ann, Al", "B=Bob"]) == {"A": ["Ann", "Al"], "B": ["Bob"]}
    with pytest.raises(ValueError, match="twice"):
        parse_teams(["A=Ann", "A=Al"])


def test_score_passes_the_bid_to_gords(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("scoring.gords")
    code, out, _ = run(
        capsys, "score", "--game", "gords", "--json", "--bid", "4x6",
        "6", "6", "1", "3", "2", "4", "5", "1",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out)  # the gords report itself is tested with the game


# -- replay -------------------------------------------------------------------------------------


def test_replay_the_sample_game(capsys: pytest.CaptureFixture[str]) -> None:
    for rule in ("target=5000", "ybi.target=5000"):
        code, out, _ = run(
            capsys, "replay", "--game", "you-blew-it", *TEAM_ARGS, "--rule", rule, str(SAMPLE)
        )
        assert code == 0
        state = json.loads(out)
        assert state["scores"] == {"DJS": 6200, "THS": 4250}
        assert state["over"] is True
        assert state["winner"] == "DJS"


def test_replay_bolo_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (DATA / "bolo_board_game.jsonl").read_text()
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    code, out, _ = run(capsys, "replay", "--game", "bolo", "--players", "Ann,Bob", "-")
    assert code == 0
    state = json.loads(out)
    assert state["scores"] == {"Ann": 10300, "Bob": 0}
    assert state["winner"] == "Ann"


def test_replay_with_undo_and_fix_lines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = tmp_path / "game.jsonl"
    script.write_text(
        '{"type": "roll", "dice": [2, 2, 3, 3, 4, 6]}\n'
        '{"type": "fix", "dice": [1, 2, 3, 3, 4, 6]}\n'
        '{"type": "keep", "dice": [1]}\n'
        '{"type": "bank"}\n'
        '{"type": "undo"}\n'
    )
    code, out, _ = run(capsys, "replay", "--game", "you-blew-it", *TEAM_ARGS, str(script))
    assert code == 0
    state = json.loads(out)
    assert state["turn_points"] == 100
    assert state["expecting"]["action"] == "roll_or_bank"
    assert state["over"] is False
    assert state["winner"] is None


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"type": "roll", "dice": [1, 2, 3, 3, 4, 6]}', '{"type": "keep", "dice": [2]}'],
         "game.jsonl:2: illegal keep: YBI-4"),
        (['{"type": "roll", "dice": [1, 2, 3]}'], "game.jsonl:1: illegal roll: C3"),
        (["", '{"type": "roll", "dice": [1, 2, 3, 3, 4, 6]', ""], "game.jsonl:2: not valid JSON"),
        (['{"type": "roll", "dice": [7, 2, 3, 3, 4, 6]}'], "game.jsonl:1: malformed action"),
        (['{"type": "jump"}'], "game.jsonl:1: malformed action: unknown action type"),
    ],
)  # fmt: skip
def test_replay_stops_at_a_bad_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lines: list[str], message: str
) -> None:
    script = tmp_path / "game.jsonl"
    script.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "replay", "--game", "you-blew-it", *TEAM_ARGS, str(script))
    assert code == 1
    assert message in err
    assert out == ""


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--game", "bolo", "--team", "A=Ann", "-"], "players"),
        (["--game", "you-blew-it", "--team", "A", "-"], "NAME=P1,P2"),
        (["--game", "you-blew-it", "--players", "Ann,Bob", "--rule", "x=1", "-"], "unknown"),
        (["--game", "you-blew-it", "--players", "Ann,Bob", "/nonexistent/g.jsonl"], "cannot read"),
    ],
)  # fmt: skip
def test_replay_bad_setup(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run(capsys, "replay", *argv)
    assert code == 2
    assert message in err


def test_installed_dicepad_script_scores_a_roll() -> None:
    script = Path(sys.executable).with_name("dicepad")
    if not script.exists():
        pytest.skip("the dicepad console script is not installed in this environment")
    done = subprocess.run(
        [str(script), "score", "--game", "you-blew-it", "--json", "1", "1", "1", "1", "1", "5"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["points"] == 1250
