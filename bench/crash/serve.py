"""The ``dicepad serve`` child the harness kills, and its API (the PIN, the actions it posts)."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent.parent

PIN = "24680"

SERVE = "import sys; from server.cli import main; sys.exit(main())"

DB_NAME = "dicepad.sqlite3"

NEW_TABLE = {"game": "you-blew-it", "teams": {"A": ["Ann"], "B": ["Bob"]}}

#: A cycle that is legal from the start of team A's turn and comes back to it: A scores and
#: banks, B blows, A rolls and takes it back. The next action follows from the table's seq.
CYCLE: tuple[dict[str, Any], ...] = (
    {"type": "roll", "dice": [1, 1, 1, 5, 2, 3]},
    {"type": "keep", "dice": [1, 1, 1, 5]},
    {"type": "bank"},
    {"type": "roll", "dice": [2, 3, 4, 6, 2, 3]},
    {"type": "roll", "dice": [5, 2, 3, 4, 6, 2]},
    {"type": "undo"},
)

#: a server's "listening on URL" line; its URL and port (the line may run on into a log line)
LISTENING = r"listening on (http://[\w.\[\]:-]+:(\d+))"


class HarnessError(AssertionError):
    """An acknowledged action went missing, a state differs from its replay, or the database
    is damaged: what this harness exists to catch."""


class Serve:
    """One ``dicepad serve`` child on a free loopback port (no camera unless asked)."""

    def __init__(
        self,
        data: Path,
        log: Path,
        *,
        wait: bool = True,
        camera: str = "none",
        max_clients: int = 4,
    ) -> None:
        self.log = log
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFY_", "WATCHDOG_"))}
        with log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", SERVE, "serve", "--host", "127.0.0.1", "--port", "0",
                 "--data", str(data), "--camera", camera, "--max-clients", str(max_clients)],
                cwd=REPO, env=env | {"DICEPAD_PIN": PIN}, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        self.port = self._wait_listening() if wait else 0

    def _wait_listening(self) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # stdout and stderr share the log: a line may run on into a log message
            found = re.search(LISTENING, self.log.read_text())
            if found:
                return int(found.group(2))
            if self.proc.poll() is not None:
                raise HarnessError(f"serve exited:\n{self.log.read_text()}")
            time.sleep(0.02)
        self.kill()
        raise HarnessError(f"serve did not start:\n{self.log.read_text()}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)


def request(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """(status, decoded JSON); connection errors propagate (the server may be dead)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"X-Dicepad-Pin": PIN}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        return resp.status, json.loads(payload) if payload else None
    finally:
        conn.close()


def get(port: int, path: str) -> Any:
    status, body = request(port, "GET", path)
    if status != 200:
        raise HarnessError(f"GET {path}: {status} {body}")
    return body
