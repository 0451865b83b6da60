"""``dicepad house``: the house server, every table of every Pi on one page, from the house
database (PostgreSQL) the table servers ship to.

Waitress, as ``dicepad serve``: a thread per live-feed client (asleep once its socket is lent
to the feed's one writer thread) and bounded output buffers. The database is migrated at
start; when it does not answer, one line says so and the server serves "the house database
is not answering" while it keeps trying (:mod:`server.house.pool` says why), rather than
exiting into a restart loop that shows the bar nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import signal
import sys
import threading
from types import FrameType

from server.cli.serve import _port, waitress_server
from server.sdnotify import Notifier

HELP = "run the house server: every table of every Pi, and the house wall (PostgreSQL)"

DEFAULT_PORT = 8090


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=os.environ.get("DICEPAD_HOUSE_DB"),
        help="the house database, postgresql://USER:PASSWORD@HOST/DB (or DICEPAD_HOUSE_DB)",
    )
    parser.add_argument(
        "--host",
        default=os.environ.get("DICEPAD_HOUSE_HOST", "0.0.0.0"),
        help="address to listen on (default 0.0.0.0: every interface)",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=_port(os.environ.get("DICEPAD_HOUSE_PORT") or str(DEFAULT_PORT)),
        help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one and prints it)",
    )
    parser.add_argument(
        "--release",
        metavar="NAME",
        help="free the house name NAME for a new table server (a Pi replaced), then exit",
    )
    parser.add_argument(
        "--max-clients",
        type=int,
        default=200,
        help="phones and TVs on the live feed at once (default 200); past it, 503",
    )
    parser.add_argument(
        "--stall-timeout",
        type=float,
        default=30.0,
        help="seconds a phone may leave sent data unacknowledged before it is cut off",
    )


def run(args: argparse.Namespace) -> int:
    from server.house.app import HouseConfig, create_house_app, house

    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    if not args.db:
        print(
            "dicepad house: give the house database: --db postgresql://... or DICEPAD_HOUSE_DB "
            "(systemd/install.sh --house prints it)",
            file=sys.stderr,
        )
        return 2
    if not args.db.startswith(("postgresql://", "postgres://")):
        print("dicepad house: --db must be a postgresql:// URL", file=sys.stderr)
        return 2
    if args.release is not None:
        return _release(args.db, args.release)
    if args.max_clients < 1:
        print("dicepad house: --max-clients must be at least 1", file=sys.stderr)
        return 2
    config = HouseConfig(db_url=args.db, pin=os.environ.get("DICEPAD_HOUSE_PIN") or None)
    config = dataclasses.replace(config, max_feed_clients=args.max_clients)
    try:
        app = create_house_app(config)
    except ValueError as exc:  # a DICEPAD_HOUSE_PIN that is no PIN
        print(f"dicepad house: DICEPAD_HOUSE_PIN: {exc}", file=sys.stderr)
        return 2
    parts = house(app)
    if not parts.db.ready:
        print(
            f"dicepad house: {parts.db.problem}; serving 'house database unreachable' and retrying",
            file=sys.stderr,
            flush=True,
        )
    try:
        server = waitress_server(
            app,
            host=args.host,
            port=args.port,
            max_clients=args.max_clients,
            max_body=config.max_content_length,
            stall_timeout=args.stall_timeout,
        )
    except OSError as exc:
        parts.close()
        print(f"dicepad house: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    url = f"http://{args.host}:{server.effective_port}"
    notifier = Notifier.from_environ()
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            return
        stop.set()
        notifier.stopping()
        parts.feed.close()  # live streams end, so their worker threads come back
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        print(f"dicepad house: listening on {url}", flush=True)
        notifier.ready(f"listening on {url}")
        server.run()
    finally:
        stop.set()
        server.close()
        parts.close()
        print("dicepad house: stopped", flush=True)
    return 0


def _release(url: str, house_name: str) -> int:
    """``--release NAME``: free a house name held by a table server that is gone."""
    from server.house.migrate import HouseError, connect
    from server.house.ship import release

    try:
        conn = connect(url, autocommit=True)
    except HouseError as exc:
        print(f"dicepad house: {exc}", file=sys.stderr)
        return 1
    try:
        known = release(conn, house_name)
    finally:
        conn.close()
    if not known:
        print(f"dicepad house: no table server is called {house_name!r} here", file=sys.stderr)
        return 1
    print(
        f"dicepad house: {house_name!r} is free; the next table server started with "
        f"--house-name {house_name} takes it over (with its tables' history at the house)"
    )
    return 0
