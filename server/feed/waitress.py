"""The live feed's :class:`~server.feed.subscription.Sink` for a connection served by waitress.

Waitress gives each request a worker thread and the WSGI app no handle on its connection; but
its channel (the connection) is what ``environ["waitress.client_disconnected"]`` is bound to.
While a response is being produced waitress neither reads the channel nor, once its output
buffer is empty, writes it: lending the socket is taking the channel out of waitress's socket
map (its I/O loop then stops polling it, which also keeps that loop's per-turn walk over the
map short with 200 phones held) and putting it back before the response ends. The bytes the
feed's writer had not sent go back through ``write_soon``, waitress's own write path, so the
end of the response (HTTP/1.1: the last chunk) follows them.

Messages are framed as waitress frames this response: under HTTP/1.1 a body without a
Content-Length is chunked, under HTTP/1.0 it is the bytes as they are, ended by closing.
Tested against the waitress version in use (tests/test_feed_waitress.py).
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Mapping
from typing import Any

from waitress.channel import ClientDisconnected

ENVIRON_KEY = "waitress.client_disconnected"
_CHANNEL_ATTRIBUTES = ("socket", "_map", "_fileno", "connected", "total_outbufs_len", "write_soon")


class WaitressSink:
    """A waitress connection lent to the feed's writer thread (see the module docstring)."""

    def __init__(self, channel: Any, *, chunked: bool) -> None:
        self._channel = channel
        self._chunked = chunked
        self._fileno: int | None = None

    @property
    def closed(self) -> bool:
        return not self._channel.connected

    def backlog(self) -> int:
        return int(self._channel.total_outbufs_len)

    def frame(self, message: bytes) -> bytes:
        return b"%X\r\n%s\r\n" % (len(message), message) if self._chunked else message

    def borrow(self) -> socket.socket:
        channel = self._channel
        self._fileno = channel._fileno
        channel._map.pop(self._fileno, None)  # waitress's I/O loop stops polling it
        sock: socket.socket = channel.socket
        return sock

    def give_back(self, unsent: bytes) -> None:
        channel = self._channel
        if self._fileno is not None and channel._fileno == self._fileno and channel.connected:
            channel._map[self._fileno] = channel
        self._fileno = None
        if unsent:
            with contextlib.suppress(ClientDisconnected):  # the response then ends at once
                channel.write_soon(unsent)


def waitress_sink(environ: Mapping[str, Any]) -> WaitressSink | None:
    """The connection of this request when waitress serves it, else ``None`` (another WSGI
    server, Flask's test client). Only for a GET: a HEAD response has no body to write."""
    if environ.get("REQUEST_METHOD") != "GET":
        return None
    channel = getattr(environ.get(ENVIRON_KEY), "__self__", None)
    if channel is None or not all(hasattr(channel, name) for name in _CHANNEL_ATTRIBUTES):
        return None
    # waitress's own rule (task.build_response_header): a body without Content-Length is
    # chunked under HTTP/1.1, delimited by closing the connection under HTTP/1.0
    return WaitressSink(channel, chunked=environ.get("SERVER_PROTOCOL") == "HTTP/1.1")
