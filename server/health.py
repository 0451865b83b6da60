"""What the server knows about its own health: the store, the live feed, the camera.

Parts report into :class:`Health` (the pad service reports the camera, issue 8); ``GET
/api/health`` shows it and the systemd watchdog is only fed while every *critical* part is
well. The camera is not critical: without it the tables run on manual entry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from server.feed.hub import Feed
from server.store import Store


@dataclass(frozen=True)
class Component:
    ok: bool
    detail: str
    critical: bool
    at: float  #: monotonic time of the report
    ttl: float | None = None  #: a report older than this many seconds counts as failing

    def to_json(self, now: float) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "detail": self.detail,
            "critical": self.critical,
            "age_s": round(max(0.0, now - self.at), 1),
        }


class Health:
    """A board of components, each ok or not with a sentence saying why."""

    def __init__(self, store: Store, feed: Feed, *, monotonic: Callable[[], float]) -> None:
        self._store = store
        self._feed = feed
        self._now = monotonic
        self._lock = threading.Lock()
        self._parts: dict[str, Component] = {}
        self._probes: dict[str, tuple[Callable[[], tuple[bool, str]], bool]] = {}
        self._extras: dict[str, Callable[[], Any]] = {}

    def report(
        self,
        name: str,
        ok: bool,
        detail: str = "",
        *,
        critical: bool = False,
        ttl: float | None = None,
    ) -> None:
        """Record the state of ``name`` (``camera``, ``pad``...); the latest report wins.
        With ``ttl`` the part must report again within ``ttl`` seconds or count as failing
        (a heartbeat: a hung loop stops feeding the watchdog)."""
        with self._lock:
            self._parts[name] = Component(ok, detail, critical, self._now(), ttl)

    def probe(
        self, name: str, check: Callable[[], tuple[bool, str]], *, critical: bool = False
    ) -> None:
        """Ask ``check()`` for ``(ok, detail)`` of ``name`` at every check, for a part whose
        state changes without a report (the house's waiting count grows with each action)."""
        with self._lock:
            self._probes[name] = (check, critical)

    def attach(self, name: str, describe: Callable[[], Any]) -> None:
        """Add ``describe()`` to :meth:`to_json` under ``name`` (the house's status)."""
        with self._lock:
            self._extras[name] = describe

    def _store_ok(self) -> Component:
        try:
            self._store.ping()
        except Exception as exc:  # any failure of the database means unhealthy
            return Component(False, f"database error: {exc}", True, self._now())
        return Component(True, "database answers", True, self._now())

    def check(self) -> dict[str, Component]:
        """Every component now, the store probed live."""
        with self._lock:
            parts = dict(self._parts)
            probes = dict(self._probes)
        now = self._now()
        for name, (probe, critical) in probes.items():
            ok, detail = probe()
            parts[name] = Component(ok, detail, critical, now)
        for name, c in parts.items():
            if c.ttl is not None and now - c.at > c.ttl:
                stale = f"no report for {now - c.at:.0f} s (last: {c.detail})"
                parts[name] = Component(False, stale, c.critical, c.at, c.ttl)
        parts["store"] = self._store_ok()
        stats = self._feed.stats()
        parts["feed"] = Component(
            True, f"{stats.clients} of {stats.max_clients} live clients", False, self._now()
        )
        return parts

    def healthy(self) -> bool:
        """True when no critical component is failing (the watchdog's question)."""
        return all(c.ok for c in self.check().values() if c.critical)

    def to_json(self) -> dict[str, Any]:
        parts = self.check()
        now = self._now()
        with self._lock:
            extras = dict(self._extras)
        return {
            "ok": all(c.ok for c in parts.values() if c.critical),
            "components": {name: c.to_json(now) for name, c in sorted(parts.items())},
            "feed": self._feed.stats().to_json(),
        } | {name: describe() for name, describe in extras.items()}
