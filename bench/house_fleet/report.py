"""The figures ``bench/house_servers.py`` prints: the feed's latencies, the action round trip
shipping and not (with a bootstrap interval of their ratio), the CPU per group."""

from __future__ import annotations

import os
import random

from house_bench_util import Key, pct, spread

from house_fleet.measure import Run


def report_feed(run: Run, phones: int) -> None:
    shipped = [(n, t, s, at) for n, ships, t, s, at, _ in run.posts if ships]
    single: list[float] = []
    first_phone: list[float] = []
    every: list[float] = []
    fanout: list[float] = []
    lost = 0
    for name, table, seq, at in shipped:
        key: Key = (name, table, seq)
        got = [p.arrivals.get(key) for p in run.phones]
        arrived = [g - at for g in got if g is not None]
        lost += len(got) - len(arrived)
        single.extend(arrived)
        if got[0] is not None:
            first_phone.append(got[0] - at)
        if arrived and len(arrived) == len(got):
            every.append(max(arrived))
            fanout.append(max(arrived) - min(arrived))
    print(f"house feed: {phones} phones, {len(shipped)} actions shipped, {lost} deliveries lost")
    print(f"  POST answer -> a phone (all deliveries): {spread(single)}")
    print(f"  POST answer -> phone #0 alone:           {spread(first_phone)}")
    print(f"  POST answer -> every phone:              {spread(every)}   (target p99 <= 500 ms)")
    print(f"  fan-out, first phone to last:            {spread(fanout)}")


def bootstrap_ratio(a: list[float], b: list[float], n: int = 1000) -> tuple[float, float]:
    """A 95 % interval of median(a) / median(b) by resampling both: on a shared machine the
    ratio of two noisy medians needs its error bar before it passes or fails 5 %."""
    rng = random.Random(0)
    ratios = sorted(
        pct(rng.choices(a, k=len(a)), 0.5) / pct(rng.choices(b, k=len(b)), 0.5) for _ in range(n)
    )
    return ratios[int(0.025 * n)], ratios[int(0.975 * n) - 1]


def report_actions(ship: list[float], plain: list[float], how: str) -> None:
    print(f"action round trip (POST /actions), baseline {how}:")
    print(f"  shipping:     {spread(ship)}  ({len(ship)} actions)")
    print(f"  not shipping: {spread(plain)}  ({len(plain)} actions)")
    if ship and plain:
        med = pct(ship, 0.5) / pct(plain, 0.5)
        p99 = pct(ship, 0.99) / pct(plain, 0.99)
        mean = (sum(ship) / len(ship)) / (sum(plain) / len(plain))
        lo, hi = bootstrap_ratio(ship, plain)
        print(
            f"  shipping / not: median x{med:.3f} (95 % interval x{lo:.3f}-x{hi:.3f}), "
            f"p99 x{p99:.3f}, mean x{mean:.3f}  (target <= x1.05)"
        )


def report_cpu(run: Run, counts: dict[str, int], seconds: float) -> None:
    cores = os.cpu_count() or 1
    print(
        f"CPU during the run ({cores} cores, {run.busy * 100:.0f} % busy, every process of "
        f"the machine, other users' too):"
    )
    for name, used in run.cpu.items():
        n = counts.get(name, 0)
        each = f", {used / n * 1000:.1f} ms per action" if n else ""
        print(f"  {name:24} {used:6.1f} s ({used / seconds * 100:4.0f} % of a core){each}")
