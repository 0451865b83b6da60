"""Bar Dice and Gords engine costs on the paths the table server takes.

Run on demand: ``./run bench bench_bar_dice_gords [--runs N]``. Prints medians over N runs, in
milliseconds, for: every 5-dice multiset's hand value (252) and the 7776-flop table; one
action applied to the live state (the server's incremental path), and the worst case of the
undo/fix path, which replays the whole standing log, for the scripted games in tests/data;
the scoreboard JSON and its exact read-back; and Gords' ``legal_actions`` at an opening
(every bid up to 15 dice). Target: any single action under 5 ms on a Raspberry Pi 4, i.e.
well under 1 ms here.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scoring import bar_dice, gords
from scoring.actions import Action, action_from_json
from scoring.bar_dice.hand import hand_value
from scoring.bar_dice.odds import flop_counts
from scoring.history import effective_actions, replay

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
GAMES: list[tuple[str, Any, list[str], dict[str, object] | None]] = [
    ("bardice_four_players.jsonl", bar_dice.GAME, ["Ann", "Bob", "Cy", "Dee"], None),
    (
        "bardice_all_day.jsonl",
        bar_dice.GAME,
        ["Ann", "Bob", "Cy"],
        {"all_day_elimination": True, "one_tie_all_tie": "off"},
    ),
    ("gords_three_players.jsonl", gords.GAME, ["Ann", "Bob", "Cy"], None),
]


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def load(name: str) -> list[Action]:
    lines = (DATA / name).read_text().splitlines()
    return effective_actions(action_from_json(json.loads(x)) for x in lines if x.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    runs = args.runs

    multisets = list(itertools.combinations_with_replacement(range(1, 7), 5))
    t = median_ms(lambda: [hand_value(d) for d in multisets], runs)
    print(f"bar-dice: hand value of all 252 multisets: median {t:.2f} ms")

    def flops() -> None:
        flop_counts.cache_clear()
        flop_counts()

    print(f"bar-dice: 7776-flop value table (cold): median {median_ms(flops, runs):.1f} ms")

    for name, game, players, rules in GAMES:
        start = game.new(players=players, rules=rules)
        log = load(name)
        states = [start]
        for a in log:
            states.append(game.apply(states[-1], a))

        def live(game: Any = game, states: list[Any] = states, log: list[Action] = log) -> None:
            for s, a in zip(states, log, strict=False):
                game.apply(s, a)

        per_action = median_ms(live, runs) / len(log)

        def full_replay(game: Any = game, start: Any = start, log: list[Action] = log) -> Any:
            return replay(game, start, log)

        full = median_ms(full_replay, runs)
        final = states[-1]

        def dump(g: Any = game, s: Any = final) -> str:
            return json.dumps(g.state_to_json(s))

        to_json = median_ms(dump, runs)
        text = json.dumps(game.state_to_json(final))

        def read_back(g: Any = game, t: str = text) -> Any:
            return g.state_from_json(json.loads(t))

        back = median_ms(read_back, runs)
        print(
            f"{game.name}: {name}: {len(log)} actions; apply median {per_action * 1000:.0f} µs "
            f"per action; full replay (undo/fix path) {full:.2f} ms; scoreboard JSON "
            f"{to_json:.2f} ms ({len(text)} bytes), read back {back:.2f} ms"
        )

    opening = gords.GAME.new(players=["Ann", "Bob", "Cy"])
    t = median_ms(lambda: gords.GAME.legal_actions(opening), runs)
    print(f"gords: legal_actions at an opening (15 dice, 90 bids): median {t:.2f} ms")


if __name__ == "__main__":
    main()
