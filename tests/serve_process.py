"""``dicepad serve`` as a real child process, for the tests that need the whole server.

Started on a free loopback port (``--port 0``) with manual entry only and a known PIN, and
without the caller's systemd variables (a test that wants them passes them in ``env``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PIN = "8642"
SERVE = "import sys; from server.cli import main; sys.exit(main())"


class Server:
    """One ``dicepad serve`` child; ``url`` once it listens (it logs the address)."""

    def __init__(
        self,
        data: Path,
        log: Path,
        env: dict[str, str] | None = None,
        args: list[str] | None = None,
        *,
        max_clients: int = 8,
    ) -> None:
        self.log = log
        full_env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFY_", "WATCH"))}
        full_env |= {"DICEPAD_PIN": PIN} | (env or {})
        with log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", SERVE, "serve", "--host", "127.0.0.1", "--port", "0",
                 "--data", str(data), "--camera", "none", "--max-clients", str(max_clients),
                 *(args or [])],
                cwd=REPO, env=full_env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        self.url = self._wait_listening()

    def _wait_listening(self) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            # stdout and stderr share the log, so a line may run on into a log message
            found = re.search(r"listening on (http://[\w.\[\]:-]+:\d+)", self.log.read_text())
            if found:
                return found.group(1)
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited: {self.log.read_text()}")
            time.sleep(0.05)
        raise AssertionError(f"serve did not start: {self.log.read_text()}")

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """One API request with the PIN; the JSON answer (an HTTP error raises)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("X-Dicepad-Pin", PIN)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def stop(self, sig: int) -> int:
        """Send ``sig`` and wait: the exit status."""
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=20)

    def terminate(self) -> None:
        """SIGTERM if still running, SIGKILL if that does not stop it."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill_if_running()

    def kill_if_running(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
