"""The systemd notify protocol (``sd_notify(3)``): readiness, status and watchdog pings.

A few lines over a Unix datagram socket, so no dependency is needed. When the service does not
run under systemd (``NOTIFY_SOCKET`` unset) every call is a no-op, so the same code runs on a
laptop, in the tests and on the Pi.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping


class Notifier:
    """Sends ``READY=1``, ``STATUS=...``, ``WATCHDOG=1`` and ``STOPPING=1`` to systemd."""

    def __init__(self, address: str | None, watchdog_usec: int | None = None) -> None:
        self._address = address
        self._watchdog_usec = watchdog_usec

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Notifier:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET") or None
        usec: int | None = None
        raw = env.get("WATCHDOG_USEC")
        pid = env.get("WATCHDOG_PID")
        if raw and raw.isdigit() and (pid is None or pid == str(os.getpid())):
            usec = int(raw) or None
        return cls(address, usec)

    @property
    def enabled(self) -> bool:
        return self._address is not None

    @property
    def watchdog_interval(self) -> float | None:
        """Seconds between pings (half systemd's ``WatchdogSec``), ``None`` without a watchdog."""
        if self._address is None or self._watchdog_usec is None:
            return None
        return self._watchdog_usec / 2_000_000

    def _send(self, message: str) -> bool:
        if self._address is None:
            return False
        address = self._address
        if address.startswith("@"):  # abstract namespace socket
            address = "\0" + address[1:]
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(address)
                sock.sendall(message.encode())
        except OSError:
            return False  # systemd gone or socket unreachable: never take the service down
        return True

    def ready(self, status: str = "") -> bool:
        return self._send("READY=1" + (f"\nSTATUS={_one_line(status)}" if status else ""))

    def status(self, text: str) -> bool:
        return self._send(f"STATUS={_one_line(text)}")

    def watchdog(self) -> bool:
        return self._send("WATCHDOG=1")

    def stopping(self) -> bool:
        return self._send("STOPPING=1")


def _one_line(text: str) -> str:
    """A multi-line message (an exception's) must not add assignments such as ``READY=1``."""
    return " ".join(text.splitlines())
