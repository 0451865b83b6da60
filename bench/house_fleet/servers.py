"""The table servers: ``dicepad serve`` children that ship to the house or not, warmed with
the coach's policies solved once."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from house_bench_util import child_env, listening, spawn, stop_all

GAMES = ("bolo", "you-blew-it")

#: live-feed slots per table server: nobody watches them here, and each slot is a thread
SERVER_CLIENTS = 2


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
