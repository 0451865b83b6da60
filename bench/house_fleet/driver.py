"""The driver, its own process: one legal action a second to each server, each answer's
time noted (CLOCK_MONOTONIC, system-wide)."""

from __future__ import annotations

import asyncio
import http.client
import json
import multiprocessing
import random
import signal
import threading
import time
from multiprocessing.connection import Connection
from typing import Any
from urllib.parse import urlsplit

from house_fleet.servers import Target

#: (server name, ships, table, seq, answer's monotonic time, round trip)
Post = tuple[str, bool, str, int, float, float]


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
