"""The house server's hold on the database: migrated once at start, then a few pooled
connections; while the database does not answer, a thread keeps trying.

Why keep serving rather than exit when PostgreSQL is away: the house server is a display (a
TV over the bar, phones). A crash loop shows nothing, while a page saying "the house database
is not answering, retrying" tells the bar owner what to look at, and everything comes back by
itself once PostgreSQL does (it often starts after us at boot). Every use while it is away
raises :class:`HouseUnavailableError` (503 with that sentence).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator

import psycopg

from server.house.migrate import HouseError, connect

log = logging.getLogger(__name__)

RETRY_SECONDS = 5.0
#: connections held at most; the rest of the request threads wait their turn (a query here
#: takes milliseconds, and 200 phones on the feed hold no connection)
POOL_SIZE = 8


class HouseUnavailableError(RuntimeError):
    """The house database cannot be used now (HTTP 503); the message says why."""


def unreachable(problem: str) -> str:
    return f"the house database is not answering ({problem}); retrying every few seconds"


class HouseDb:
    """Connections to the house database at ``url`` for request threads (:meth:`connection`),
    after :meth:`start` has migrated it (or, failing, keeps trying in the background)."""

    def __init__(
        self,
        url: str,
        *,
        size: int = POOL_SIZE,
        retry_seconds: float = RETRY_SECONDS,
        timeout: float = 5.0,
        on_ready: Callable[[], None] | None = None,
    ) -> None:
        self.url = url
        self._size = size
        self._retry = retry_seconds
        self._timeout = timeout
        self._on_ready = on_ready
        self._idle: queue.LifoQueue[psycopg.Connection] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.migrated = False
        self.problem: str | None = "not connected yet"

    def start(self) -> bool:
        """Connect and migrate now; when that fails, say why once and retry in a thread.
        Whether the database is ready."""
        if self._try():
            return True
        log.error("%s", unreachable(self.problem or "?"))
        self._thread = threading.Thread(target=self._retrying, name="house-db", daemon=True)
        self._thread.start()
        return False

    def _try(self) -> bool:
        try:
            conn = connect(self.url, timeout=self._timeout, autocommit=True)
        except HouseError as exc:
            self._failed(str(exc))
            return False
        with self._lock:
            self.migrated, self.problem = True, None
        self._give_back(conn)
        if self._on_ready is not None:
            try:
                self._on_ready()
            except (HouseUnavailableError, psycopg.Error) as exc:  # gone again: retry it all
                with self._lock:
                    self.migrated, self.problem = False, _first_line(exc)
                return False
        return True

    def _retrying(self) -> None:
        while not self._stop.wait(self._retry):
            if self._try():
                log.info("the house database answers again")
                return

    def _failed(self, problem: str) -> None:
        with self._lock:
            self.problem = problem

    @property
    def ready(self) -> bool:
        with self._lock:
            return self.migrated and self.problem is None

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """An autocommit connection for one request (writes open a transaction on it);
        :class:`HouseUnavailableError` when the database cannot be used."""
        with self._lock:
            migrated, problem = self.migrated, self.problem
        if not migrated:
            raise HouseUnavailableError(unreachable(problem or "not connected yet"))
        if not self._slots.acquire(timeout=10):
            raise HouseUnavailableError("the house database is busy; try again in a moment")
        conn: psycopg.Connection | None = None
        try:
            conn = self._borrow()
            yield conn
        except psycopg.OperationalError as exc:  # the server went away mid-query
            self._failed(_first_line(exc))
            self._discard(conn)
            conn = None
            raise HouseUnavailableError(unreachable(_first_line(exc))) from exc
        except BaseException:
            self._discard(conn)
            conn = None
            raise
        finally:
            if conn is not None:
                self._give_back(conn)
            self._slots.release()

    def _borrow(self) -> psycopg.Connection:
        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                break
            if not conn.closed and not conn.broken:
                return conn
        try:
            conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=max(1, round(self._timeout))
            )
        except psycopg.Error as exc:
            self._failed(_first_line(exc))
            raise HouseUnavailableError(unreachable(_first_line(exc))) from exc
        with self._lock:
            self.problem = None
        return conn

    def _give_back(self, conn: psycopg.Connection) -> None:
        if conn.closed or conn.broken or self._stop.is_set():
            conn.close()
            return
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            self._discard(conn)  # never hand on a connection in the middle of something
            return
        self._idle.put(conn)
        while self._idle.qsize() > self._size:
            with contextlib.suppress(queue.Empty):
                self._idle.get_nowait().close()

    @staticmethod
    def _discard(conn: psycopg.Connection | None) -> None:
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                conn.close()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
