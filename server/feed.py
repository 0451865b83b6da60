"""The live feed: server-sent events fanned out to every phone watching a table.

The writer formats each message once and offers the same bytes to every subscriber's bounded
queue without waiting: a phone that falls behind (its queue is full) is dropped, never waited
for, and reconnects with ``Last-Event-ID`` to catch up from the log. The number of
subscribers is bounded because each one holds a server thread.

A live ``state`` message is the table's view with the game's history lists cut to their last
round (:func:`live_view`): its size stays bounded however long the game runs, while the full
history stays in ``GET /api/tables/<t>`` and in the snapshot every (re)connect starts with.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

RETRY_MS = 2000  #: how soon EventSource reconnects after the stream ends
_CLOSE = b""  #: queue sentinel: end this stream (dropped, or the server is stopping)


class FeedFullError(RuntimeError):
    """Every live-feed slot is taken; the client should poll or retry later."""


def sse(event: str, data: Any, event_id: int | None = None) -> bytes:
    """One server-sent event; ``data`` is JSON-encoded on a single line."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return f"{head}event: {event}\ndata: {body}\n\n".encode()


KEEPALIVE = b": keep-alive\n\n"


@dataclass(frozen=True)
class History:
    """A list in a game's state JSON that grows for as long as the game is played."""

    path: tuple[str, ...]  #: keys from ``view["state"]`` down to the list
    #: its entries are turns, so the last round is the last one per seat (else the last one)
    per_seat: bool = False


#: Every game's growing lists (see each game's ``state_to_json``). A live message keeps the
#: last round of each: You Blew It's last finished round (the round in play is ``this_round``),
#: Bolo's last turn of every player, Bar Dice's last turn (a horse) and penalty, Gords' last
#: call. ``pending`` / ``throw.before`` are the exact unsettled states that some positions keep.
HISTORY: Mapping[str, tuple[History, ...]] = {
    "you-blew-it": (History(("rounds",)), History(("pending", "rounds"))),
    "bolo": (History(("turns",), per_seat=True), History(("pending", "turns"), per_seat=True)),
    "bar-dice": (
        History(("turns",)),
        History(("penalties",)),
        History(("throw", "before", "turns")),
        History(("throw", "before", "penalties")),
    ),
    "gords": (History(("results",)),),
}


def _cut(node: Any, path: tuple[str, ...], keep: int) -> tuple[Any, bool]:
    """``node`` with the list at ``path`` cut to its last ``keep`` entries, and whether
    anything was cut; copies only what it changes (the view it reads is shared)."""
    if not path:
        if isinstance(node, list) and len(node) > keep:
            return node[len(node) - keep :], True
        return node, False
    if not isinstance(node, dict) or path[0] not in node:
        return node, False
    inner, cut = _cut(node[path[0]], path[1:], keep)
    return ({**node, path[0]: inner}, True) if cut else (node, False)


def live_view(view: Mapping[str, Any]) -> dict[str, Any]:
    """The view a live ``state`` message carries: every key of ``view``, with the game's
    :data:`HISTORY` lists in ``state`` cut to their last round and ``history_truncated``
    saying whether anything was cut (the full view is ``GET /api/tables/<t>``)."""
    state = view.get("state")
    truncated = False
    if isinstance(state, dict):
        seats = len(state.get("players") or state.get("teams") or ()) or 1
        for history in HISTORY.get(str(view.get("game")), ()):
            state, cut = _cut(state, history.path, seats if history.per_seat else 1)
            truncated = truncated or cut
    out = dict(view)
    if truncated:
        out["state"] = state
    out["history_truncated"] = truncated
    return out


class Subscription:
    """One connected client: a bounded queue the writer never blocks on.

    ``queue.SimpleQueue`` (implemented in C) rather than ``queue.Queue``: with 200 phones
    every action wakes 200 threads, and the lighter wake-up is measurable.
    """

    def __init__(self, feed: Feed, table_id: str, size: int) -> None:
        self.feed = feed
        self.table_id = table_id
        self.size = size
        self._queue: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self.dropped = False

    def offer(self, message: bytes) -> bool:
        """Queue ``message``; ``False`` (and the stream is ended) when the client lags."""
        if self.dropped:
            return False
        if self._queue.qsize() >= self.size:
            self.close(dropped=True)
            return False
        self._queue.put(message)
        return True

    def close(self, *, dropped: bool = False) -> None:
        """End the stream: whatever is queued is discarded, the reader sees the sentinel."""
        self.dropped = self.dropped or dropped
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        self._queue.put(_CLOSE)

    def get(self, timeout: float) -> bytes | None:
        """The next message, ``None`` after ``timeout`` seconds (time for a keep-alive),
        or ``_CLOSE``."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None


@dataclass(frozen=True)
class FeedStats:
    clients: int
    max_clients: int
    dropped: int
    published: int

    def to_json(self) -> dict[str, int]:
        return {
            "clients": self.clients,
            "max_clients": self.max_clients,
            "dropped": self.dropped,
            "published": self.published,
        }


class Feed:
    """Subscribers per table, bounded in total."""

    def __init__(self, *, max_clients: int = 200, queue_size: int = 64) -> None:
        self.max_clients = max_clients
        self.queue_size = queue_size
        self._lock = threading.Lock()
        self._subs: dict[str, set[Subscription]] = {}
        self._count = 0
        self._dropped = 0
        self._published = 0
        self._closed = False

    def subscribe(self, table_id: str) -> Subscription:
        """A new subscriber; raises :class:`FeedFullError` past ``max_clients``."""
        with self._lock:
            if self._closed:
                raise FeedFullError("the server is stopping")
            if self._count >= self.max_clients:
                raise FeedFullError(
                    f"the live feed is full ({self.max_clients} clients); poll or retry later"
                )
            sub = Subscription(self, table_id, self.queue_size)
            self._subs.setdefault(table_id, set()).add(sub)
            self._count += 1
            return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            subs = self._subs.get(sub.table_id)
            if subs is not None and sub in subs:
                subs.remove(sub)
                self._count -= 1
                if not subs:
                    del self._subs[sub.table_id]

    def publish(self, table_id: str, message: bytes) -> int:
        """Offer ``message`` to every subscriber of the table; returns how many took it.

        Never blocks: a subscriber whose queue is full is dropped (it reconnects).
        """
        with self._lock:
            subs = [s for s in self._subs.get(table_id, ()) if not s.dropped]
            self._published += 1
        taken = 0
        for sub in subs:
            if sub.offer(message):
                taken += 1
        if taken < len(subs):
            with self._lock:
                self._dropped += len(subs) - taken
        return taken

    def close(self) -> None:
        """End every stream and refuse new ones (server shutdown)."""
        with self._lock:
            self._closed = True
            subs = [s for group in self._subs.values() for s in group]
        for sub in subs:
            sub.close()

    def stats(self) -> FeedStats:
        with self._lock:
            return FeedStats(self._count, self.max_clients, self._dropped, self._published)


class Stream:
    """The body of one SSE response: ``initial`` (catch-up and snapshot), then live
    messages, a keep-alive comment whenever the table is quiet.

    A class rather than a bare generator so that ``close()`` (called by the WSGI server when
    the client goes away, even before the first byte) always frees the feed slot.
    """

    def __init__(
        self, sub: Subscription, initial: Iterable[bytes], *, keepalive_seconds: float
    ) -> None:
        self._sub = sub
        self._initial = list(initial)
        self._keepalive = keepalive_seconds
        self._gen = self._run()

    def _run(self) -> Generator[bytes, None, None]:
        yield f"retry: {RETRY_MS}\n\n".encode()
        yield from self._initial
        while True:
            live = self._sub.get(self._keepalive)
            if live is None:
                yield KEEPALIVE
            elif live == _CLOSE:
                return
            else:
                yield live

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._gen)
        except StopIteration:
            self.close()
            raise

    def close(self) -> None:
        self._gen.close()
        self._sub.feed.unsubscribe(self._sub)
