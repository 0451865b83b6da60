"""Time to score every multiset of six dice (462) with all legal keeps, from a cold cache.

Run on demand: ``./run bench bench_scoring [--runs N]``. Prints the median of N cold runs
(caches cleared before each) and of N warm runs, per table, in milliseconds; the target is
all 462 six-dice multisets in under 50 ms.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

from scoring.farkle import bolo, you_blew_it
from scoring.farkle.combos import ComboTable, clear_caches, score_roll


def score_all(table: ComboTable, n: int) -> int:
    options = 0
    for roll in itertools.combinations_with_replacement(range(1, 7), n):
        options += len(score_roll(roll, table).options)
    return options


def timed(table: ComboTable, n: int, *, cold: bool) -> float:
    if cold:
        clear_caches()
    t0 = time.perf_counter()
    score_all(table, n)
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    cases = [("you-blew-it", you_blew_it.table(), 6), ("bolo", bolo.table(), 5)]
    for name, table, n in cases:
        count = sum(1 for _ in itertools.combinations_with_replacement(range(1, 7), n))
        options = score_all(table, n)
        cold = statistics.median(timed(table, n, cold=True) for _ in range(args.runs))
        warm = statistics.median(timed(table, n, cold=False) for _ in range(args.runs))
        print(
            f"{name}: {count} multisets of {n} dice, {options} keep options: "
            f"cold median {cold:.1f} ms ({cold / 50:.2f} x the 50 ms target), "
            f"warm median {warm:.2f} ms, over {args.runs} runs"
        )


if __name__ == "__main__":
    main()
