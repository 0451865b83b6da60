"""One phone's subscription, and the connection it may lend: what the feed and its writer share.

A new subscriber starts with a bounded queue that its request thread drains. Under ``dicepad
serve`` (waitress) the request thread then lends its connection (a :class:`Sink`) to the
feed's writer thread (:mod:`server.feed.writer`). Both the feed (:mod:`server.feed.hub`) and
the writer hold subscriptions, so they live here, below both: a subscription knows its feed
and its writer only by the little it asks of them (:class:`Owner`, :class:`Lender`), and
neither module imports the other's.
"""

from __future__ import annotations

import queue
import socket
import threading
from typing import Protocol

CLOSE = b""  #: queue sentinel: end this stream (dropped, or the server is stopping)


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


class Owner(Protocol):
    """What a subscription (its stream, and the writer thread) asks of its feed
    (:class:`server.feed.hub.Feed`)."""

    def attach(
        self, sub: Subscription, sink: Sink, *, keepalive_seconds: float
    ) -> socket.socket | None: ...

    def release(self, sub: Subscription) -> None: ...

    def unsubscribe(self, sub: Subscription) -> None: ...

    def drop(self, sub: Subscription) -> None: ...


class Lender(Protocol):
    """What the feed asks of the writer thread holding a lent connection
    (:class:`server.feed.writer.FeedWriter`)."""

    def release(self, sub: Subscription) -> bytes: ...


class Subscription:
    """One connected client: a bounded queue the publisher never blocks on, until the
    connection is handed to the writer thread (then ``sink`` is set).

    ``queue.SimpleQueue`` (implemented in C) rather than ``queue.Queue``: the lighter
    wake-up is measurable when many phones are drained by their own threads.
    """

    def __init__(self, feed: Owner, table_id: str, size: int) -> None:
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
        self.writer: Lender | None = None

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
            self._queue.put(CLOSE)

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
        or :data:`CLOSE`."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def wait_ended(self, timeout: float) -> bool:
        """Sleep until the stream is ended (``True``) or ``timeout`` seconds pass."""
        return self._ended.wait(timeout)
