"""The live feed: server-sent events fanned out to every phone watching a table.

Each message is formatted once and its bytes shared by every phone. A new subscriber starts
with a bounded queue that its request thread drains. Under ``dicepad serve`` (waitress), once
the request thread has sent the catch-up and the snapshot it lends its connection's socket (a
:class:`Sink`) to the feed's ONE writer thread (:mod:`server.feed.writer`) and sleeps until
the stream ends: an action then wakes that one thread, which sends the bytes to every phone.
(A thread per phone woken per action was a GIL convoy: with 200 phones the
action-to-every-phone p99 was 200-300 ms; ``bench/bench_feed.py``.) Under a WSGI server that
cannot lend its connection (Flask's test client, a HEAD) the request thread keeps draining
its queue.

A phone that falls behind (its queue full before the hand-over, or more than ``max_backlog``
bytes its socket has not taken) is dropped, never waited for, and reconnects with
``Last-Event-ID`` to catch up from the log. The number of subscribers is bounded because each
one holds a server thread.

A live ``state`` message is the table's view with the game's history lists cut to their last
round (:func:`live_view`): its size stays bounded however long the game runs, while the full
history stays in ``GET /api/tables/<t>`` and in the snapshot every (re)connect starts with.
"""

from __future__ import annotations

import json
import queue
import socket
import threading
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from server.feed.writer import KEEPALIVE as KEEPALIVE  # re-exported: part of the feed's API
from server.feed.writer import FeedWriter

RETRY_MS = 2000  #: how soon EventSource reconnects after the stream ends
_CLOSE = b""  #: queue sentinel: end this stream (dropped, or the server is stopping)


class FeedFullError(RuntimeError):
    """Every live-feed slot is taken; the client should poll or retry later."""


def sse(event: str, data: Any, event_id: int | None = None) -> bytes:
    """One server-sent event; ``data`` is JSON-encoded on a single line."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return f"{head}event: {event}\ndata: {body}\n\n".encode()


#: default bound on a lent connection's bytes that the socket did not take yet (beyond what
#: the kernel buffers): about 25 live messages behind, past it the phone is dropped
MAX_BACKLOG = 64 * 1024
#: how often a request thread looks whether its catch-up has gone out before handing over
DRAIN_POLL_SECONDS = 0.01


class Sink(Protocol):
    """A phone's connection that the server can lend to the feed's writer thread.

    The request thread sends the response head, catch-up and snapshot the server's usual
    way; once the server has none of it left to send (``backlog() == 0``) the connection's
    socket is borrowed: the server stops polling and writing it until it is given back,
    with the bytes the writer had not sent yet, to end the response as usual.
    """

    @property
    def closed(self) -> bool:
        """The server knows the client has gone."""
        ...

    def backlog(self) -> int:
        """Bytes of the response the server still has to send."""
        ...

    def frame(self, message: bytes) -> bytes:
        """``message`` as it goes on the wire (e.g. one HTTP/1.1 chunk)."""
        ...

    def borrow(self) -> socket.socket:
        """Take the connection from the server's I/O loop; its non-blocking socket."""
        ...

    def give_back(self, unsent: bytes) -> None:
        """Return the connection to the server, ``unsent`` to go out first."""
        ...


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
    """One connected client: a bounded queue the publisher never blocks on, until the
    connection is handed to the writer thread (then ``sink`` is set).

    ``queue.SimpleQueue`` (implemented in C) rather than ``queue.Queue``: the lighter
    wake-up is measurable when many phones are drained by their own threads.
    """

    def __init__(self, feed: Feed, table_id: str, size: int) -> None:
        self.feed = feed
        self.table_id = table_id
        self.size = size
        self._queue: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._ended = threading.Event()
        self.dropped = False
        #: makes ending the stream and handing its queue over to the writer exclusive
        self.lock = threading.Lock()
        #: the connection lent to the writer thread (set under the feed's lock by
        #: :meth:`Feed.attach`, cleared by :meth:`Feed.release`) and that writer
        self.sink: Sink | None = None
        self.writer: FeedWriter | None = None

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    def offer(self, message: bytes) -> bool:
        """Queue ``message``; ``False`` (and the stream is ended) when the client lags."""
        if self.dropped or self.ended:
            return False
        if self._queue.qsize() >= self.size:
            self.close(dropped=True)
            return False
        self._queue.put(message)
        return True

    def close(self, *, dropped: bool = False) -> None:
        """End the stream: whatever is queued is discarded, the reader sees the sentinel."""
        with self.lock:
            self.dropped = self.dropped or dropped
            self._ended.set()
            self._drain()
            self._queue.put(_CLOSE)

    def take_queued(self) -> list[bytes]:
        """Empty the queue into a list, in order (the hand-over to the writer thread)."""
        with self.lock:
            return [] if self.ended else self._drain()

    def _drain(self) -> list[bytes]:
        out = []
        while True:
            try:
                out.append(self._queue.get_nowait())
            except queue.Empty:
                return out

    def get(self, timeout: float) -> bytes | None:
        """The next message, ``None`` after ``timeout`` seconds (time for a keep-alive),
        or ``_CLOSE``."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def wait_ended(self, timeout: float) -> bool:
        """Sleep until the stream is ended (``True``) or ``timeout`` seconds pass."""
        return self._ended.wait(timeout)


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
    """Subscribers per table, bounded in total; the writer thread starts with the first
    connection handed over and stops with :meth:`close`."""

    def __init__(
        self, *, max_clients: int = 200, queue_size: int = 64, max_backlog: int = MAX_BACKLOG
    ) -> None:
        self.max_clients = max_clients
        self.queue_size = queue_size
        self.max_backlog = max_backlog
        self._lock = threading.Lock()
        self._subs: dict[str, set[Subscription]] = {}
        self._count = 0
        self._dropped = 0
        self._published = 0
        self._closed = False
        self._writer: FeedWriter | None = None

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

    def attach(
        self, sub: Subscription, sink: Sink, *, keepalive_seconds: float
    ) -> socket.socket | None:
        """Lend ``sub``'s connection to the writer thread: what is queued is written first,
        then every message published from now on. Returns the borrowed socket, ``None`` (and
        nothing is borrowed) if the stream has ended."""
        with self._lock:
            if self._closed or sub.ended:
                return None
            if self._writer is None or not self._writer.alive:  # first, or after a crash
                self._writer = FeedWriter(max_backlog=self.max_backlog)
                self._writer.start()
            pending = sub.take_queued()
            sock = sink.borrow()
            if not self._writer.attach(sub, sink, sock, pending, keepalive_seconds):
                sink.give_back(b"")  # it crashed just now: the phone reconnects, catches up
                return None
            sub.sink, sub.writer = sink, self._writer  # publish() routes by it, under the lock
        return sock

    def release(self, sub: Subscription) -> None:
        """Take ``sub``'s connection back from the writer thread and give it back to the
        server with the bytes not yet sent; the writer never touches it again."""
        writer, sink = sub.writer, sub.sink
        if writer is None or sink is None:
            return
        unsent = writer.release(sub)
        sub.sink = sub.writer = None
        sink.give_back(unsent)

    def publish(self, table_id: str, message: bytes) -> int:
        """Offer ``message`` to every subscriber of the table; returns how many took it.

        Never blocks: a queue is filled or the writer thread is handed the message (one
        wake-up whatever the number of phones); a subscriber whose queue is full is dropped.
        Under the lock, so a hand-over (:meth:`attach`) never reorders messages.
        """
        with self._lock:
            self._published += 1
            handed: list[Subscription] = []
            taken = lagging = 0
            for sub in self._subs.get(table_id, ()):
                if sub.dropped or sub.ended:
                    continue
                if sub.sink is not None:
                    handed.append(sub)
                elif sub.offer(message):
                    taken += 1
                else:
                    lagging += 1
            if handed and self._writer is not None:
                self._writer.send(handed, message)  # one wake-up for every phone
                taken += len(handed)
            self._dropped += lagging
        return taken

    def drop(self, sub: Subscription) -> None:
        """End a subscriber that fell behind and count it (the writer thread's verdict)."""
        sub.close(dropped=True)
        with self._lock:
            self._dropped += 1

    def close(self) -> None:
        """End every stream and refuse new ones (server shutdown)."""
        with self._lock:
            self._closed = True
            subs = [s for group in self._subs.values() for s in group]
            writer, self._writer = self._writer, None
        for sub in subs:
            sub.close()
        if writer is not None:
            writer.stop()

    @property
    def lent(self) -> int:
        """Connections the writer thread holds now (the others drain their own queue)."""
        with self._lock:
            writer = self._writer
        return 0 if writer is None else writer.connections

    def stats(self) -> FeedStats:
        with self._lock:
            return FeedStats(self._count, self.max_clients, self._dropped, self._published)


class Stream:
    """The body of one SSE response: ``initial`` (catch-up and snapshot), then live
    messages, a keep-alive comment whenever the table is quiet.

    With a ``sink`` (the server's connection, see :class:`Sink`) the live part is written by
    the feed's writer thread: this stream's thread only waits for the catch-up to go out,
    hands the connection over and sleeps until the stream ends. Without one it reads its
    subscription's queue itself.

    A class rather than a bare generator so that ``close()`` (called by the WSGI server when
    the client goes away, even before the first byte) always frees the feed slot.
    """

    def __init__(
        self,
        sub: Subscription,
        initial: Iterable[bytes],
        *,
        keepalive_seconds: float,
        sink: Sink | None = None,
    ) -> None:
        self._sub = sub
        self._initial = list(initial)
        self._keepalive = keepalive_seconds
        self._sink = sink
        self._gen = self._run()

    def _run(self) -> Generator[bytes, None, None]:
        yield f"retry: {RETRY_MS}\n\n".encode()
        yield from self._initial
        if self._sink is not None:
            self._handed_over(self._sink)
            return
        while True:
            live = self._sub.get(self._keepalive)
            if live is None:
                yield KEEPALIVE
            elif live == _CLOSE:
                return
            else:
                yield live

    def _handed_over(self, sink: Sink) -> None:
        """Lend the connection to the writer thread once the server has sent the initial
        bytes (all in its buffer by now), sleep until the stream ends, take it back."""
        sub, feed = self._sub, self._sub.feed
        while sink.backlog() > 0:  # a long catch-up to a slow phone: messages queue
            if sink.closed or sub.wait_ended(DRAIN_POLL_SECONDS):
                return
        if feed.attach(sub, sink, keepalive_seconds=self._keepalive) is None:
            return
        try:
            while sub.get(self._keepalive) != _CLOSE and not sub.ended:
                pass  # the writer ends the stream (a phone gone, lagging) or the feed closes
        finally:
            feed.release(sub)

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
