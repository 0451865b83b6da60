"""The house's live feed: ONE ``LISTEN dicepad_house`` connection, fanned out to every phone
and TV on ``/api/house/events`` through the table server's feed (:mod:`server.feed`: each
message encoded once, written to every phone by its one writer thread under waitress; built
and measured for 200 phones).

A shipped batch's NOTIFY (``{"house_name", "table", "seq"}``, delivered once its transaction
commits) becomes one ``table`` event carrying that and the table's fresh line, read once for
every phone (a burst of notifications is read in one query). A hide on the house wall
(``{"records": true}``) becomes a ``records`` event. Notifications sent while the LISTEN
connection was down are lost, so after every reconnection each phone gets the whole board
again (``tables``), the same event a phone starts with. The tables notified are also handed
to the house's players' worker (:mod:`server.house.players`), which derives them again.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from server.feed.hub import Feed
from server.feed.messages import sse
from server.house.pool import HouseUnavailableError
from server.house.reads import HouseReads
from server.house.schema import CHANNEL
from server.house.values import TableLine

log = logging.getLogger(__name__)

TOPIC = "house"  #: the feed's one topic: every house phone watches every table
POLL_SECONDS = 0.5  #: how often the listening thread looks whether it should stop
RETRY_SECONDS = 2.0


def tables_message(lines: list[TableLine]) -> bytes:
    """The whole board: what a phone starts with, and gets again after a lost notification."""
    return sse("tables", {"tables": [line.to_json() for line in lines]})


def table_message(line: TableLine) -> bytes:
    return sse(
        "table",
        {"house_name": line.house_name, "table": line.table, "seq": line.seq}
        | {"line": line.to_json()},
    )


RECORDS_MESSAGE = sse("records", {"records": True})


class HouseListener:
    """The LISTEN thread; :attr:`problem` is None while it listens."""

    def __init__(
        self,
        url: str,
        reads: HouseReads,
        feed: Feed,
        *,
        retry_seconds: float = RETRY_SECONDS,
        poll_seconds: float = POLL_SECONDS,
        on_tables: Callable[[list[tuple[str, str]]], None] = lambda _: None,
        on_listening: Callable[[], None] = lambda: None,
    ) -> None:
        """``on_tables``: the tables a burst of notifications named (the players' worker
        derives them again); ``on_listening``: each time LISTEN is (re)made, since what was
        notified while it was down is lost."""
        self._url = url
        self._on_tables = on_tables
        self._on_listening = on_listening
        self._reads = reads
        self._feed = feed
        self._retry = retry_seconds
        self._poll = poll_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="house-listen", daemon=True)
        self.problem: str | None = "not listening yet"
        self.notified = 0  #: notifications taken (health, tests)
        self.resyncs = 0  #: whole boards sent after a reconnection

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self._poll + 3)

    def _run(self) -> None:
        first = True
        while not self._stop.is_set():
            try:
                conn = psycopg.connect(self._url, autocommit=True, connect_timeout=5)
            except psycopg.Error as exc:
                self._down(exc)
                continue
            try:
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
                self.problem = None
                self._on_listening()
                if not first:
                    self._resync()
                first = False
                self._listen(conn)
            except psycopg.Error as exc:
                self._down(exc)
            finally:
                conn.close()

    def _down(self, exc: BaseException) -> None:
        problem = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if problem != self.problem:
            log.warning("house feed: not listening (%s); retrying", problem)
        self.problem = problem
        self._stop.wait(self._retry)

    def _listen(self, conn: psycopg.Connection[Any]) -> None:
        while not self._stop.is_set():
            batch = list(conn.notifies(timeout=self._poll, stop_after=1))
            if not batch:
                continue
            batch.extend(conn.notifies(timeout=0.001))  # the rest of a burst, read at once
            self.notified += len(batch)
            self._publish([n.payload for n in batch])

    def _publish(self, payloads: list[str]) -> None:
        keys: dict[tuple[str, str], None] = {}
        records = False
        for text in payloads:
            try:
                got = json.loads(text)
            except ValueError:
                continue
            if not isinstance(got, dict):
                continue
            if got.get("records"):
                records = True
            name, table = got.get("house_name"), got.get("table")
            if isinstance(name, str) and isinstance(table, str):
                keys[(name, table)] = None
        if keys:
            self._on_tables(list(keys))
        try:
            lines = self._reads.lines(list(keys))
        except HouseUnavailableError as exc:  # its reconnection resyncs every phone
            log.warning("house feed: %s", exc)
            return
        for line in lines:
            self._feed.publish(TOPIC, table_message(line))
        if records:
            self._feed.publish(TOPIC, RECORDS_MESSAGE)

    def _resync(self) -> None:
        try:
            board = self._reads.board()
        except HouseUnavailableError as exc:
            log.warning("house feed: %s", exc)
            return
        self.resyncs += 1
        self._feed.publish(TOPIC, tables_message(board))
