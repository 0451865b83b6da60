"""Issue 35's scale benchmark end to end: real table servers ship to a real house while
phones watch the house feed, and what shipping costs a table's actions.

    .venv/bin/python bench/house_servers.py [--servers 20] [--phones 200] [--seconds 60]
                                            [--baseline interleaved|phase]
                                            [--schedule random|fixed] [--seed 1]

All on loopback: a throwaway PostgreSQL cluster (tests/pg_cluster.py), one ``dicepad house``
and N ``dicepad serve --camera none --house URL --house-name pi-NN`` children, each with its
own data folder and PIN, and a Bolo or You Blew It table. A driver process posts one legal
action a second to each server (the dice ``expecting`` asks for, else a random keep, bank or
reroll from ``legal``; a finished game is followed by a new table), each at a random moment of
each second, and notes when each answer came (CLOCK_MONOTONIC, system-wide); the phones are raw
SSE connections in this process's asyncio loop (house_bench_util.Phone). Why random: with a
fixed stagger (``--schedule fixed``, server i at i/N of each second) each plain server posted
just as its shipping neighbour's event reached the house and 200 phones, on the same 2 cores,
and came out 70 % slower than the shipping ones; at random moments both kinds meet the house's
bursts equally often.

Measured, with the targets of issue 35:

- POST answer at the table -> the ``table`` message at a phone, and at every phone (p99 <=
  500 ms); the fan-out alone (first phone to last) says how much of it is the house's.
- The action's round trip (``POST /api/tables/<t>/actions``) with shipping and without (<= 5 %
  more). ``interleaved`` (default): N more servers without ``--house`` run at the same time,
  their posts among the shipping ones', so both see the same machine (on a bar's Pis the house
  runs elsewhere: this isolates what shipping costs the table server itself); ``phase``: the
  same N servers restarted on the same data without ``--house`` for another ``--seconds``,
  while the house and the phones idle, so that it also counts the house's fan-out competing
  for these cores. Each server's CPU per action (/proc) says what shipping costs whatever the
  scheduler did.
- Exactly once: each table's ``/log`` against the house's copy, once shipping has settled.

The coach's policies are solved once and copied into every data folder (else 40 servers would
each solve them at start), and the figures start only once every server is warm and shipping.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from house_bench_util import (  # noqa: E402
    Key,
    Phone,
    child_env,
    cpu_seconds,
    listening,
    pct,
    rss_mb,
    spawn,
    spread,
    start_house,
    stop_all,
)
from pg_cluster import PgCluster  # noqa: E402  (tests/)

GAMES = ("bolo", "you-blew-it")
#: live-feed slots per table server: nobody watches them here, and each slot is a thread
SERVER_CLIENTS = 2


def new_table_body(game: str) -> dict[str, Any]:
    if game == "bolo":
        return {"game": "bolo", "players": ["Ann", "Bob"]}
    return {"game": "you-blew-it", "teams": {"A": ["Ann"], "B": ["Bob"]}}


def choose(view: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """A legal action for the table ``view``: chance is not enumerated in ``legal``, so a
    roll is the dice ``expecting`` asks for; else a keep, bank or reroll (never end or undo,
    nor a new line-up, which would keep the game from moving). None: start a new table."""
    if view.get("over"):
        return None
    expecting = view.get("expecting") or {}
    if expecting.get("action") == "roll":
        return {"type": "roll", "dice": [rng.randint(1, 6) for _ in range(expecting["dice"])]}
    moves = [a for a in view.get("legal", []) if a["type"] not in ("end", "undo", "lineup")]
    return rng.choice(moves) if moves else None


# -- the table servers ----------------------------------------------------------------------


@dataclass
class TableServer:
    """One ``dicepad serve`` child: ``ships`` to the house as ``name``, or not."""

    name: str
    ships: bool
    game: str
    root: Path
    pin: str
    proc: subprocess.Popen[bytes] | None = None
    url: str = ""
    shipping: bool = False  #: started with ``--house`` (``phase`` restarts them without)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "serve.log"

    def start(self, house_url: str | None) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        self.shipping = house_url is not None
        args = ["serve", "--host", "127.0.0.1", "--port", "0", "--data", str(self.data),
                "--camera", "none", "--max-clients", str(SERVER_CLIENTS)]  # fmt: skip
        if house_url is not None:
            args += ["--house", house_url, "--house-name", self.name,
                     "--public-url", f"http://{self.name}.local:8080/"]  # fmt: skip
        self.proc = spawn(args, child_env(DICEPAD_PIN=self.pin), self.log)

    def wait_listening(self) -> None:
        assert self.proc is not None
        self.url = listening(self.proc, self.log)

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=30) as response:
            return json.loads(response.read())

    def health(self) -> dict[str, Any]:
        try:
            return dict(self.get("/api/health"))
        except urllib.error.HTTPError as exc:  # 503 still carries the JSON
            return dict(json.loads(exc.read()))

    def warm(self) -> bool:
        """The coach's policies loaded, and (shipping) the house connection up."""
        h = self.health()
        coach = h.get("components", {}).get("coach", {}).get("detail", "queued")
        if "queued" in coach:
            return False
        return not self.shipping or bool((h.get("house") or {}).get("online"))


@dataclass(frozen=True)
class Target:
    """What the driver needs of one server (picklable: the driver is another process)."""

    name: str
    ships: bool
    game: str
    url: str
    pin: str


#: (server name, ships, table, seq, answer's monotonic time, round trip)
Post = tuple[str, bool, str, int, float, float]


def seed_coach(root: Path) -> Path:
    """A data folder whose ``coach/`` holds the solved policies of both games' default
    rules: copied into every server's folder, so none of them solves at start."""
    seed = TableServer("seed", False, "bolo", root / "seed", "1357")
    seed.start(None)
    try:
        seed.wait_listening()
        deadline = time.monotonic() + 300
        while not seed.warm():
            if time.monotonic() > deadline:
                raise SystemExit("the coach's policies were not solved in 5 minutes")
            time.sleep(0.2)
    finally:
        stop_all([seed.proc] if seed.proc else [])
    return seed.data / "coach"


def wait_warm(servers: list[TableServer], timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    for s in servers:
        while not s.warm():
            if time.monotonic() > deadline:
                raise SystemExit(f"{s.name} not ready: {s.health()}")
            time.sleep(0.2)


# -- the driver (its own process) -----------------------------------------------------------


def _call(conn: http.client.HTTPConnection, method: str, path: str, pin: str,
          body: Any = None) -> tuple[int, Any]:  # fmt: skip
    data = json.dumps(body).encode() if body is not None else None
    headers = {"X-Dicepad-Pin": pin, "Content-Type": "application/json"}
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    return response.status, json.loads(response.read())


def _drive_one(t: Target, start: float, offset: float | None, seconds: float, seed: int,
               posts: list[Post], errors: list[str]) -> None:  # fmt: skip
    """One server, one action in each second after ``start``: at ``offset`` into it, or
    (None) at a random moment of it."""
    rng = random.Random(seed)
    parts = urlsplit(t.url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    status, view = _call(conn, "POST", "/api/tables", t.pin, new_table_body(t.game))
    if status != 201:
        errors.append(f"{t.name}: creating a table: {status} {view}")
        return
    for second in range(int(seconds)):
        due = start + second + (rng.random() if offset is None else offset)
        time.sleep(max(0.0, due - time.monotonic()))
        try:
            action = choose(view, rng)
            if action is None:  # the game is over: the next one (not timed)
                status, view = _call(conn, "POST", "/api/tables", t.pin, new_table_body(t.game))
                continue
            path = f"/api/tables/{view['table']}/actions"
            t0 = time.monotonic()
            status, answer = _call(conn, "POST", path, t.pin, action)
            t1 = time.monotonic()
            if status != 201:
                errors.append(f"{t.name}: {action} -> {status} {answer}")
                _, view = _call(conn, "GET", f"/api/tables/{view['table']}", t.pin)
                continue
            posts.append((t.name, t.ships, view["table"], int(answer["seq"]), t1, t1 - t0))
            view = answer["table"]
        except (OSError, http.client.HTTPException, ValueError) as exc:
            errors.append(f"{t.name}: {type(exc).__name__}: {exc}")
            conn.close()
            conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    conn.close()


def drive(targets: list[Target], seconds: float, seed: int, fixed: bool, out: Connection) -> None:
    """Every target one action a second for ``seconds``, one thread each (their posts overlap
    as they would from 20 bars): target i at i/len(targets) into each second (``fixed``), or
    each at a random moment of each second. Sends back ``(posts, errors)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the bench's Ctrl-C ends this process
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (with a SIGTERM, quietly)
    start = time.monotonic() + 1.0
    step = 1.0 / len(targets)
    posts: list[list[Post]] = [[] for _ in targets]
    errors: list[str] = []
    threads = [
        threading.Thread(
            target=_drive_one,
            args=(
                t,
                start,
                i * step if fixed else None,
                seconds,
                seed * 1000 + i,
                posts[i],
                errors,
            ),
            daemon=True,
        )
        for i, t in enumerate(targets)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.send(([p for each in posts for p in each], errors))


def start_driver(
    targets: list[Target], seconds: float, seed: int, fixed: bool
) -> tuple[multiprocessing.Process, Connection]:
    here, there = multiprocessing.Pipe(duplex=False)
    driver = multiprocessing.Process(target=drive, args=(targets, seconds, seed, fixed, there))
    driver.start()
    there.close()
    return driver, here


def end_driver(driver: multiprocessing.Process) -> None:
    """Stopped if still running (an interrupted run): its threads are daemons."""
    if driver.is_alive():
        driver.terminate()
    driver.join(5)


def run_driver(
    targets: list[Target], seconds: float, seed: int, fixed: bool
) -> tuple[list[Post], list[str]]:
    driver, here = start_driver(targets, seconds, seed, fixed)
    try:
        result: tuple[list[Post], list[str]] = here.recv()
        return result
    finally:
        end_driver(driver)


async def await_driver(
    targets: list[Target], seconds: float, seed: int, fixed: bool
) -> tuple[list[Post], list[str]]:
    """:func:`run_driver` without a thread: the pipe is watched by the loop, so that an
    interrupted run stops the driver at once (a thread blocked in ``recv`` would hold
    ``asyncio.run``'s exit until the driver ended by itself)."""
    driver, here = start_driver(targets, seconds, seed, fixed)
    loop = asyncio.get_running_loop()
    ready = asyncio.Event()
    loop.add_reader(here.fileno(), ready.set)
    try:
        await ready.wait()
        result: tuple[list[Post], list[str]] = here.recv()
        return result
    finally:
        loop.remove_reader(here.fileno())
        end_driver(driver)


# -- the phones and the run -----------------------------------------------------------------


@dataclass
class Run:
    posts: list[Post]
    errors: list[str]
    phones: list[Phone]
    cpu: dict[str, float] = field(default_factory=dict)  #: CPU seconds during the run
    busy: float = 0.0  #: the machine's share of CPU time busy (all processes, any user)


def _machine() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine (/proc/stat)."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = f[3] + f[4]
    return sum(f) - idle, sum(f)


def _postgres_pids(cluster: Any) -> list[int]:
    """The postmaster and its children (backends, writers)."""
    try:
        pm = int((Path(cluster.data) / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return []
    pids = [pm]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pm:
                pids.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return pids


def _cpu(groups: dict[str, list[int]]) -> dict[str, float]:
    return {name: sum(cpu_seconds(p) for p in pids) for name, pids in groups.items()}


async def measure(port: int, phones_n: int, targets: list[Target], seconds: float, seed: int,
                  fixed: bool, groups: dict[str, list[int]]) -> Run:  # fmt: skip
    """The phones connect, the driver runs, then the phones get until every shipped event
    has reached all of them (or 15 s)."""
    stop = asyncio.Event()
    phones = [Phone() for _ in range(phones_n)]
    tasks = [asyncio.create_task(p.run(port, stop)) for p in phones]
    try:
        await asyncio.wait_for(asyncio.gather(*(p.ready.wait() for p in phones)), timeout=120)
        failed = [p.error for p in phones if p.error]
        if failed:
            raise SystemExit(f"{len(failed)} phones failed to connect: {failed[0]}")
        cpu0, m0, t0 = _cpu(groups), _machine(), time.process_time()
        posts, errors = await await_driver(targets, seconds, seed, fixed)
        cpu1, m1, t1 = _cpu(groups), _machine(), time.process_time()
        keys = [(name, table, seq) for name, ships, table, seq, _, _ in posts if ships]
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if all(k in p.arrivals for p in phones for k in keys):
                break
            await asyncio.sleep(0.25)
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    cpu = {name: cpu1[name] - cpu0[name] for name in groups} | {"phones (bench)": t1 - t0}
    busy = (m1[0] - m0[0]) / max(1, m1[1] - m0[1])
    return Run(posts, errors, phones, cpu, busy)


# -- exactly once ---------------------------------------------------------------------------


def compare_logs(servers: list[TableServer], house: str, timeout: float = 60.0) -> dict[str, int]:
    """Each shipping server's tables, its ``/log`` against the house's copy; retried until
    they agree or ``timeout`` (the last events may still be on their way)."""
    deadline = time.monotonic() + timeout
    while True:
        counts = {"tables": 0, "events": 0, "house": 0, "missing": 0, "duplicated": 0,
                  "different": 0, "extra": 0}  # fmt: skip
        for s in servers:
            for line in s.get("/api/tables"):
                t = line["table"]
                local = s.get(f"/api/tables/{t}/log")
                try:
                    with urllib.request.urlopen(
                        f"{house}/api/house/tables/{s.name}/{t}/log", timeout=30
                    ) as response:
                        there = json.loads(response.read())
                except urllib.error.HTTPError as exc:
                    if exc.code != 404:
                        raise
                    there = []
                held = {e["seq"]: e for e in there}
                counts["tables"] += 1
                counts["events"] += len(local)
                counts["house"] += len(there)
                counts["duplicated"] += len(there) - len(held)
                counts["missing"] += sum(1 for e in local if e["seq"] not in held)
                counts["different"] += sum(
                    1 for e in local if e["seq"] in held and held[e["seq"]] != e
                )
                counts["extra"] += len(set(held) - {e["seq"] for e in local})
        bad = counts["missing"] + counts["duplicated"] + counts["different"] + counts["extra"]
        if not bad or time.monotonic() > deadline:
            return counts
        time.sleep(1.0)


# -- the report -----------------------------------------------------------------------------


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=20)
    parser.add_argument("--phones", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--baseline", choices=("interleaved", "phase"), default="interleaved")
    parser.add_argument(
        "--schedule",
        choices=("random", "fixed"),
        default="random",
        help="each server's action at a random moment of each second (default), or "
        "staggered by 1/N of a second",
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    def interrupted(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # SIGTERM cleans up as Ctrl-C does

    signal.signal(signal.SIGTERM, interrupted)
    root = Path(tempfile.mkdtemp(prefix="house-servers-"))
    cluster: Any = None
    house: subprocess.Popen[bytes] | None = None
    servers: list[TableServer] = []
    try:
        cluster = PgCluster()
        url = cluster.new_database()
        coach = seed_coach(root)
        house, base = start_house(url, args.phones, root / "house.log")
        for i in range(args.servers):
            game = GAMES[i % 2]
            servers.append(
                TableServer(f"pi-{i:02d}", True, game, root / f"pi-{i:02d}", f"{2000 + i}")
            )
            if args.baseline == "interleaved":
                servers.append(
                    TableServer(f"solo-{i:02d}", False, game, root / f"solo-{i:02d}", f"{5000 + i}")
                )
        for s in servers:
            shutil.copytree(coach, s.data / "coach")
            s.start(url if s.ships else None)
        for s in servers:
            s.wait_listening()
        wait_warm(servers)
        rss = sum(rss_mb(s.proc.pid) for s in servers if s.proc)
        print(
            f"{len(servers)} table servers ({sum(s.ships for s in servers)} shipping), "
            f"{rss:.0f} MB resident in all; house {rss_mb(house.pid):.0f} MB"
        )
        shipping = [s for s in servers if s.ships]
        groups = {
            "house": [house.pid],
            "postgresql": _postgres_pids(cluster),
            "table servers shipping": [s.proc.pid for s in shipping if s.proc],
            "table servers plain": [s.proc.pid for s in servers if s.proc and not s.ships],
        }
        targets = [Target(s.name, s.ships, s.game, s.url, s.pin) for s in servers]
        port = int(base.rsplit(":", 1)[1])
        fixed = args.schedule == "fixed"
        run = asyncio.run(
            measure(port, args.phones, targets, args.seconds, args.seed, fixed, groups)
        )
        for line in run.errors[:10]:
            print("  driver:", line)
        n_ship = sum(1 for p in run.posts if p[1])
        print(
            f"{len(targets)} servers x 1 action/s for {args.seconds:.0f} s: {len(run.posts)} "
            f"actions answered, {len(run.errors)} errors"
        )
        report_feed(run, args.phones)
        counts = compare_logs(shipping, base)
        print(
            f"exactly once: {counts['tables']} tables, {counts['events']} events at the tables, "
            f"{counts['house']} at the house; {counts['missing']} missing, "
            f"{counts['duplicated']} duplicated, {counts['different']} different, "
            f"{counts['extra']} extra"
        )
        dup = cluster.psql(
            "SELECT count(*) - count(DISTINCT (house_name, table_id, seq)) FROM events",
            url.rsplit("/", 1)[1],
        ).strip()
        print(f"  the house's events table: {dup} rows repeating a (house name, table, seq)")
        ship_rtt = [p[5] for p in run.posts if p[1]]
        plain_rtt = [p[5] for p in run.posts if not p[1]]
        per_group = {"house": n_ship, "table servers shipping": n_ship,
                     "table servers plain": len(run.posts) - n_ship}  # fmt: skip
        if args.baseline == "phase":
            procs = [s.proc for s in shipping if s.proc]
            stop_all(procs)
            for s in shipping:
                s.start(None)
            for s in shipping:
                s.wait_listening()
            wait_warm(shipping)
            plain_targets = [Target(s.name, False, s.game, s.url, s.pin) for s in shipping]
            plain_pids = [s.proc.pid for s in shipping if s.proc]
            c0 = sum(cpu_seconds(p) for p in plain_pids)
            posts, errors = run_driver(plain_targets, args.seconds, args.seed + 1, fixed)
            run.cpu["table servers plain"] = sum(cpu_seconds(p) for p in plain_pids) - c0
            per_group["table servers plain"] = len(posts)
            plain_rtt = [p[5] for p in posts]
            print(f"second phase without --house: {len(posts)} actions, {len(errors)} errors")
        report_actions(ship_rtt, plain_rtt, args.baseline)
        report_cpu(run, per_group, args.seconds)
    except KeyboardInterrupt:
        print("interrupted: cleaning up", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not strand a child
        stop_all([s.proc for s in servers if s.proc] + ([house] if house else []))
        if cluster is not None:
            cluster.close()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
