"""The live feed's one writer thread: it owns every handed-over phone connection.

Why: with a thread per phone, every action woke every phone's thread, and each took the GIL in
turn to push a few bytes through the WSGI server (a convoy that also starved the thread
answering the POST: p99 200-300 ms at 200 phones), and the server's I/O loop walked every
held connection on each turn. Here a request thread, once its catch-up has gone out, lends its
socket to this thread (the server stops polling it, see
:class:`server.feed.subscription.Sink`) and sleeps.
An action is one command on a queue; this thread sends the message to each socket with one
non-blocking ``send``, keeps what a socket did not take and sends it when the socket is
writable, notices a phone hanging up, writes keep-alive comments to quiet connections, and
ends the stream of a phone whose unsent bytes pass the feed's bound. It never blocks on a
phone. When a stream ends its request thread takes the socket back with whatever is unsent
(:meth:`FeedWriter.release`) and the server finishes the response as usual.

Sending from the publishing thread itself (no hand-off at all) was tried and measured worse:
at 200 phones POST p50 25 ms against 17 ms here, the fan-out no faster, since the request's
own answer then waits behind the 200 sends; here the two run side by side.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import selectors
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from server.feed.messages import KEEPALIVE
from server.feed.subscription import Sink, Subscription

log = logging.getLogger(__name__)

#: how long a request thread waits for the writer to give its socket back
RELEASE_TIMEOUT = 5.0
_READ_CHUNK = 4096


@dataclass(frozen=True)
class _Send:
    subs: tuple[Subscription, ...]
    message: bytes


@dataclass(frozen=True)
class _Attach:
    sub: Subscription
    sink: Sink
    sock: socket.socket
    pending: tuple[bytes, ...]
    keepalive_seconds: float


@dataclass
class _Release:
    sub: Subscription
    done: threading.Event = field(default_factory=threading.Event)
    unsent: bytes = b""


@dataclass
class _Conn:
    sink: Sink
    sock: socket.socket
    keepalive_seconds: float
    last_write: float
    unsent: bytearray = field(default_factory=bytearray)


_Command = _Send | _Attach | _Release | None


class FeedWriter:
    """Writes live messages and keep-alives to every lent connection, in the order they were
    sent (one FIFO queue of commands), from one daemon thread."""

    def __init__(
        self, *, max_backlog: int, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_backlog = max_backlog
        self._monotonic = monotonic
        self._commands: queue.SimpleQueue[_Command] = queue.SimpleQueue()
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._conns: dict[Subscription, _Conn] = {}  # only the writer thread touches it
        self._thread = threading.Thread(target=self._run, name="dicepad-feed", daemon=True)
        self._release_lock = threading.Lock()
        self._stopped = False  #: the thread has ended (guarded by ``_release_lock``)
        self._next_keepalive = float("inf")

    # -- any thread -----------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = RELEASE_TIMEOUT) -> None:
        """Finish the commands already queued, give back what is still held, end the thread."""
        self._put(None)
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def attach(
        self,
        sub: Subscription,
        sink: Sink,
        sock: socket.socket,
        pending: Sequence[bytes],
        keepalive_seconds: float,
    ) -> bool:
        """Take over ``sock`` (``sub``'s lent connection): ``pending`` first, then what
        follows. ``False`` if the thread has ended (nothing is taken)."""
        with self._release_lock:
            if self._stopped:
                return False
            self._put(_Attach(sub, sink, sock, tuple(pending), keepalive_seconds))
        return True

    def send(self, subs: Sequence[Subscription], message: bytes) -> None:
        """Write ``message`` to each of ``subs`` (returns at once)."""
        self._put(_Send(tuple(subs), message))

    def release(self, sub: Subscription) -> bytes:
        """Stop writing to ``sub``'s connection; returns the bytes it has not sent yet (they
        go out before the response ends). Waits for the writer, at most ``RELEASE_TIMEOUT``."""
        command = _Release(sub)
        with self._release_lock:
            if self._stopped:
                self._release(command)
                return command.unsent
            self._put(command)
        if not command.done.wait(RELEASE_TIMEOUT):  # pragma: no cover - a dead writer
            log.error("live feed writer did not give a connection back")
        return command.unsent

    @property
    def alive(self) -> bool:
        """The thread runs (it ends when stopped, or on a bug: logged, streams ended)."""
        with self._release_lock:
            return not self._stopped

    @property
    def connections(self) -> int:
        """Connections held now (read outside the thread: for tests and health)."""
        return len(self._conns)

    def _put(self, command: _Command) -> None:
        self._commands.put(command)
        with contextlib.suppress(OSError):  # full: a wake-up is pending; closed: stopped
            self._wake_w.send(b"\0")

    # -- the writer thread ----------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                wait = self._next_keepalive - self._monotonic()
                timeout = None if wait == float("inf") else max(0.0, wait)
                for key, events in self._selector.select(timeout):
                    if key.data is None:
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(_READ_CHUNK)
                    else:
                        self._socket_ready(key.data, events)
                if not self._commands_ready():
                    return
                if self._monotonic() >= self._next_keepalive:
                    self._next_keepalive = self._keepalives()
        except Exception:  # a bug here must not leave phones hanging: end every stream
            log.exception("live feed writer failed")
        finally:
            self._shutdown()

    def _commands_ready(self) -> bool:
        """Carry out every queued command; ``False`` once told to stop."""
        while True:
            try:
                command = self._commands.get_nowait()
            except queue.Empty:
                return True
            if command is None:
                return False
            if isinstance(command, _Send):
                for sub in command.subs:
                    conn = self._conns.get(sub)
                    if conn is not None:
                        self._write(sub, conn, command.message)
            elif isinstance(command, _Attach):
                self._attach(command)
            else:
                self._release(command)

    def _attach(self, command: _Attach) -> None:
        now = self._monotonic()
        conn = _Conn(command.sink, command.sock, command.keepalive_seconds, now)
        self._conns[command.sub] = conn
        self._next_keepalive = min(self._next_keepalive, now + command.keepalive_seconds)
        self._selector.register(command.sock, selectors.EVENT_READ, command.sub)
        for message in command.pending:
            if command.sub not in self._conns:
                break
            self._write(command.sub, conn, message)

    def _release(self, command: _Release) -> None:
        conn = self._conns.pop(command.sub, None)
        if conn is not None:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._selector.unregister(conn.sock)
            command.unsent = bytes(conn.unsent)
        command.done.set()

    def _write(self, sub: Subscription, conn: _Conn, message: bytes) -> None:
        """Send one message (framed for its connection), or keep it after what is unsent."""
        if sub.ended:
            return
        data = conn.sink.frame(message)
        if conn.unsent:
            if len(conn.unsent) + len(data) > self.max_backlog:
                self._end(sub, conn, lagging=True)
            else:
                conn.unsent += data
            return
        try:
            sent = conn.sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            self._end(sub, conn, lagging=False)
            return
        conn.last_write = self._monotonic()
        if sent < len(data):
            conn.unsent += data[sent:]
            self._selector.modify(conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, sub)

    def _socket_ready(self, sub: Subscription, events: int) -> None:
        conn = self._conns.get(sub)
        if conn is None:
            return
        if events & selectors.EVENT_READ:
            try:
                if not conn.sock.recv(_READ_CHUNK):  # the phone hung up
                    self._end(sub, conn, lagging=False)
                    return
            except BlockingIOError:
                pass
            except OSError:
                self._end(sub, conn, lagging=False)
                return
        if events & selectors.EVENT_WRITE and conn.unsent:
            try:
                sent = conn.sock.send(conn.unsent)
            except BlockingIOError:
                sent = 0
            except OSError:
                self._end(sub, conn, lagging=False)
                return
            del conn.unsent[:sent]
            if not conn.unsent:
                self._selector.modify(conn.sock, selectors.EVENT_READ, sub)

    def _end(self, sub: Subscription, conn: _Conn, *, lagging: bool) -> None:
        """End this stream: its request thread then takes the connection back (with what is
        unsent, so a laggard's last message stays whole; a dead socket gets nothing)."""
        if not lagging:
            conn.unsent.clear()
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._selector.unregister(conn.sock)
        if lagging:
            sub.feed.drop(sub)
        else:
            sub.close()

    def _keepalives(self) -> float:
        """Write a keep-alive to every connection quiet for its interval; returns when the
        next one is due."""
        now = self._monotonic()
        next_due = float("inf")
        for sub, conn in list(self._conns.items()):
            if sub.ended:
                continue
            due = conn.last_write + conn.keepalive_seconds
            if due <= now:
                self._write(sub, conn, KEEPALIVE)
                due = now + conn.keepalive_seconds
            next_due = min(next_due, due)
        return next_due

    def _shutdown(self) -> None:
        """Stopped (or failed): end every stream still held; from now on a release is done
        by the releasing thread itself, and the ones already queued are answered here."""
        for sub in list(self._conns):
            sub.close()
        with self._release_lock:
            self._stopped = True
        while True:
            try:
                command = self._commands.get_nowait()
            except queue.Empty:
                break
            if isinstance(command, _Release):
                self._release(command)
            elif isinstance(command, _Attach):  # never taken over: end it, give it back
                command.sub.close()
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()
