"""The live feed: server-sent events fanned out to every phone watching a table.

Each message is formatted once and its bytes shared by every phone. A new subscriber starts
with a bounded queue that its request thread drains. Under ``dicepad serve`` (waitress), once
the request thread has sent the catch-up and the snapshot it lends its connection's socket (a
:class:`~server.feed.subscription.Sink`) to the feed's ONE writer thread
(:mod:`server.feed.writer`) and sleeps until the stream ends: an action then wakes that one
thread, which sends the bytes to every phone. (A thread per phone woken per action was a GIL
convoy: with 200 phones the action-to-every-phone p99 was 200-300 ms; ``bench/bench_feed.py``.)
Under a WSGI server that cannot lend its connection (Flask's test client, a HEAD) the request
thread keeps draining its queue.

A phone that falls behind (its queue full before the hand-over, or more than ``max_backlog``
bytes its socket has not taken) is dropped, never waited for, and reconnects with
``Last-Event-ID`` to catch up from the log. The number of subscribers is bounded because each
one holds a server thread.

This module owns the fan-out: :class:`Feed` (the subscribers per table, publishing, the
hand-over to the writer) and :class:`Stream` (one SSE response). What is sent is
:mod:`server.feed.messages`; a subscriber and its connection :mod:`server.feed.subscription`.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass

from server.feed.messages import KEEPALIVE
from server.feed.subscription import CLOSE, Sink, Subscription
from server.feed.writer import FeedWriter

RETRY_MS = 2000  #: how soon EventSource reconnects after the stream ends


class FeedFullError(RuntimeError):
    """Every live-feed slot is taken; the client should poll or retry later."""


#: default bound on a lent connection's bytes that the socket did not take yet (beyond what
#: the kernel buffers): about 25 live messages behind, past it the phone is dropped
MAX_BACKLOG = 64 * 1024
#: how often a request thread looks whether its catch-up has gone out before handing over
DRAIN_POLL_SECONDS = 0.01


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
            elif live == CLOSE:
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
            while sub.get(self._keepalive) != CLOSE and not sub.ended:
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
