"""Bar Dice: whole games, scripted through every phase and played at random to the end."""

from __future__ import annotations

import random

from bar_dice_rig import news, play, roll, roundtrip
from game_scripts import load
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.actions import Action, Lineup, Roll, Stand
from scoring.bar_dice import GAME
from scoring.history import apply_logged, replay

# -- scripted whole games ---------------------------------------------------------------------


def test_four_players_through_every_phase() -> None:
    """Order roll with a tie, eliminations with a one-tie-all-tie reset and a nobody-counts
    re-roll, a cocked and a dropped die, too lucky, then a sponsor phase decided 2-1 with a
    roll-off; an undo and a fix on the way (tests/data/bardice_four_players.jsonl)."""
    log = load("bardice_four_players.jsonl")
    start = GAME.new(players=["Ann", "Bob", "Cy", "Dee"])
    s = start
    seen: list[str] = []
    for i, action in enumerate(log):
        s = apply_logged(GAME, start, log[:i], action)
        seen.append(news(s))
        if i == 5:
            assert s.phase == "elimination"
            assert s.round is not None
            assert s.round.roster == ("Cy", "Dee", "Ann", "Bob")
    text = "\n".join(seen)
    assert "D1: Bob and Cy tie on 5 and roll again" in text
    assert "one tie all tie (D-12): Dee and Ann match on thirty six" in text
    assert "Bob is out with forty six" in text
    assert "Ann is the hammer" in text
    assert "D5: nobody's flop counted" in text
    assert "Dee is out with thirty six" in text
    assert "sponsor phase: Cy v Ann, Cy is the hammer" in text
    assert "44 in two v 44 in two: a roll-off, Cy first" in text
    assert "turn 1: Ann wins the roll-off; a horse on Cy" in text
    assert "a horse a piece" in text
    assert s == replay(GAME, start, log)
    assert s.phase == "over"
    assert s.sponsor == "Ann"
    assert [(t.winner, t.loser) for t in s.turns] == [("Ann", "Cy"), ("Cy", "Ann"), ("Cy", "Ann")]
    assert [(x.player, x.round, x.value) for x in s.safe] == [("Bob", 1, 46), ("Dee", 2, 36)]
    assert [(p.player, p.kind) for p in s.penalties] == [("Cy", "gin"), ("Dee", "too_lucky")]
    out = GAME.outcome(s)
    assert out is not None
    assert out.winners == ("Bob", "Cy", "Dee")
    assert "Ann is the sponsor" in (out.reason)
    j = GAME.state_to_json(s)
    assert j["over"]
    assert j["winner"] is None
    assert j["horses"] == "two horses on Ann, a horse on Cy"
    assert j["scores"]["Ann"]["status"] == "sponsor"
    assert j["scores"]["Bob"]["status"] == "safe"
    assert GAME.expecting(s).action == "none"
    assert GAME.legal_actions(s) == []
    # without the fix, Cy's misread (no ace) would have ended the game 2-0 in turn 2
    fix_at = next(i for i, a in enumerate(log) if a.type == "fix")
    early = replay(GAME, start, log[:fix_at])
    assert early.phase == "over"
    assert len(early.turns) == 2


def test_all_day_elimination_top_tie_rolloff_fewer_rolls_and_too_lucky() -> None:
    rules = {"all_day_elimination": True, "one_tie_all_tie": "off"}
    start = GAME.new(players=["Ann", "Bob", "Cy"], rules=rules)
    log = load("bardice_all_day.jsonl")
    states = [start]
    for a in log:
        states.append(GAME.apply(states[-1], a))
    text = "\n".join(news(s) for s in states)
    assert "Bob goes first (lineup)" in text
    assert "D6: Bob and Cy tie for the top and roll off" in text
    assert "Cy is out with thirty three" in text
    assert "43 in one beats 43 in three" in text
    assert "Bob is too lucky" in text
    assert "roll off again" in text
    s = states[-1]
    assert s.sponsor == "Ann"
    assert dict(zip(s.players, s.turns_won, strict=True)) == {"Bob": 2, "Cy": 0, "Ann": 1}
    assert GAME.state_to_json(s)["winners"] == ["Bob", "Cy"]
    # the pace: in all-day elimination everyone after Bob had at most his two rolls
    after_bob = states[5]
    assert GAME.expecting(after_bob).text.startswith("Cy: roll 5 dice, up to 2 rolls to beat 54")


def test_all_day_elimination_stays_all_day_after_a_rolloff_puts_a_player_out() -> None:
    """D16: the round after a top-tie roll-off (D6 = off) was built from the roll-off's one
    roll, so with four players the rest of the elimination became one flop each."""
    rules = {"all_day_elimination": True, "one_tie_all_tie": "off"}
    s = GAME.new(players=["Ann", "Bob", "Cy", "Dee"], rules=rules)
    s = play(s, [Lineup(("Ann", "Bob", "Cy", "Dee"))])
    s = play(s, [roll(1, 2, 2, 2, 5), Stand(), roll(1, 2, 2, 2, 6), Stand()])  # 42 v 42
    s = play(s, [roll(2, 3, 4, 5, 6), Stand(), roll(2, 3, 4, 5, 6), Stand()])
    s = play(s, [roll(1, 6, 6, 6, 2), roll(1, 2, 3, 4, 5)])  # the roll-off: Ann is out
    assert [x.player for x in s.safe] == ["Ann"]
    assert s.round is not None
    assert (s.round.kind, s.round.roster, s.round.max_rolls) == (
        "elimination",
        ("Bob", "Cy", "Dee"),
        3,
    )
    assert GAME.expecting(s).text == "Bob: roll 5 dice, up to 3 rolls setting the pace"


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), st.integers(2, 5), st.sampled_from([None, "all_day"]))
def test_random_games_played_through_expecting_end_with_one_sponsor(
    seed: int, players: int, variant: str | None
) -> None:
    """Play whole games by what ``expecting`` asks and ``legal_actions`` offers, with random
    dice: every game ends with exactly one sponsor, who lost ``best_of // 2 + 1`` turns."""
    rnd = random.Random(seed)
    rules = {"all_day_elimination": True} if variant else None
    names = [f"P{i}" for i in range(players)]
    s = GAME.new(players=names, rules=rules)
    for _ in range(3000):
        if s.phase == "over":
            break
        want = GAME.expecting(s)
        legal = GAME.legal_actions(s)
        if want.action == "roll" or (want.dice and legal and rnd.random() < 0.5):
            action: Action = Roll(tuple(rnd.randint(1, 6) for _ in range(want.dice)))
        else:
            assert legal, want
            action = rnd.choice(legal)
        s = GAME.apply(s, action)
    assert s.phase == "over"
    assert s.sponsor in names
    lost = sum(t.loser == s.sponsor for t in s.turns)
    assert lost == 2
    won = s.turns_won[s.players.index(s.sponsor)]
    assert f"lost 2 turns to {won}" in GAME.state_to_json(s)["expecting"]["text"]
    assert len(s.safe) == players - 2
    assert roundtrip(s) == s
