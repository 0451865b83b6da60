"""``dicepad serve``: the scoreboard server on embedded defaults.

Waitress, never Flask's debug server, with a thread per live-feed client (each phone holds
one, asleep once its socket is lent to the feed's writer thread: an action wakes that one
thread, not one per phone) and bounded per-connection output buffers so a stalled phone
cannot pile up memory.
systemd is told when we are ready, is pinged by a watchdog thread only while the app reports
healthy, and is told when we stop; SIGTERM and SIGINT stop cleanly (live streams are ended
first so worker threads finish, then the database is closed).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from server.config import Config
from server.sdnotify import Notifier

HELP = "run the scoreboard: JSON API, live feed and pad service on one port"

DEFAULT_PORT = 8080
EXTRA_THREADS = 16  #: for API requests beyond the live-feed clients
EXTRA_CONNECTIONS = 100  #: pollers, API clients and requests in flight beyond the feed
#: Per connection. Past it the connection's thread waits, and waitress starts a fresh buffer.
#: A live-feed phone's thread waits here only while its catch-up goes out (its feed queue
#: then fills and the phone is dropped); after that its socket is lent to the feed's writer
#: thread, whose own bound is ``server.feed.hub.MAX_BACKLOG`` (server/feed/writer.py).
OUTBUF_HIGH_WATERMARK = 64 * 1024


def _port(text: str) -> int:
    """A TCP port from ``--port`` or ``DICEPAD_PORT``: a clear error, not a traceback."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is no TCP port (--port or DICEPAD_PORT: a whole number 0-65535)"
        )
    return port


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default=os.environ.get("DICEPAD_HOST", "0.0.0.0"),
        help="address to listen on (default 0.0.0.0 so phones on the bar's Wi-Fi can join; "
        "127.0.0.1 for this machine only)",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=os.environ.get("DICEPAD_PORT", str(DEFAULT_PORT)),  # argparse applies _port
        help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one and prints it)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the database and secrets live (default: $DICEPAD_DATA, else the per-user "
        "data directory)",
    )
    parser.add_argument(
        "--camera",
        default=None,
        metavar="SPEC",
        help="demo | none | picamera2[?mains=60] | opencv:N | /dev/videoN | files:DIR | VIDEO "
        "| faulty:FAULTS:SPEC, options after ? (docs/cameras.md; default: $DICEPAD_CAMERA or "
        "demo); none = manual entry only",
    )
    parser.add_argument(
        "--camera-view",
        default=None,
        choices=("overhead", "slanted"),
        help="how the camera looks at the pad (default: $DICEPAD_CAMERA_VIEW or overhead): "
        "slanted raises the cocked / stacked thresholds, as flat dice then show side faces",
    )
    parser.add_argument(
        "--stall-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="cut a connection whose phone has not taken any data for S seconds (default 60; "
        "frees its thread and live-feed slot)",
    )
    parser.add_argument(
        "--house",
        default=None,
        metavar="URL",
        help="ship every table's log to the house's PostgreSQL database "
        "(postgresql://USER:PASSWORD@HOST/DB; default: $DICEPAD_HOUSE; none: no house)",
    )
    parser.add_argument(
        "--house-name",
        default=None,
        metavar="NAME",
        help="this table server's name in the house (default: $DICEPAD_HOUSE_NAME, else the "
        "host name); each Pi of a house needs its own",
    )
    parser.add_argument(
        "--public-url",
        default=None,
        metavar="URL",
        help="this scoreboard's address for the house's links (default: $DICEPAD_PUBLIC_URL, "
        "else http://HOSTNAME.local:PORT/)",
    )
    parser.add_argument(
        "--max-clients",
        type=int,
        default=200,
        metavar="N",
        help="live-feed connections held at once (default 200); more get 503 and poll",
    )


def run(args: argparse.Namespace) -> int:
    from hardware.buttons import ButtonConfig
    from hardware.sources import SpecError, parse_spec, validate_spec
    from server.app import create_app
    from server.services import dicepad
    from server.store import StoreError

    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    if args.max_clients < 1:
        print("dicepad serve: --max-clients must be at least 1", file=sys.stderr)
        return 2
    try:
        config = Config.from_environ(
            data_dir=args.data,
            camera=args.camera,
            camera_view=args.camera_view,
            house=args.house,
            house_name=args.house_name,
            public_url=args.public_url,
        )
    except ValueError as exc:  # DICEPAD_CAMERA_VIEW names no view, DICEPAD_IDLE_HOURS no hours
        print(f"dicepad serve: {exc}", file=sys.stderr)
        return 2
    try:  # read again by the pad service; a typo must stop us here, not after "listening"
        ButtonConfig.from_env()
    except ValueError as exc:
        print(f"dicepad serve: DICEPAD_BUTTONS: {exc}", file=sys.stderr)
        return 2
    try:
        validate_spec(parse_spec(config.camera))
    except SpecError as exc:
        print(f"dicepad serve: camera {config.camera!r}: {exc}", file=sys.stderr)
        return 2
    config = dataclasses.replace(config, max_feed_clients=args.max_clients)
    if config.house_url is not None and not config.public_url:
        public = f"http://{socket.gethostname()}.local:{args.port}/"
        config = dataclasses.replace(config, public_url=public)
    try:
        app = create_app(config)
    except (StoreError, RuntimeError, ValueError, OSError) as exc:
        print(f"dicepad serve: {exc}", file=sys.stderr)
        return 1
    parts = dicepad(app)
    if parts.auth.generated_pin is not None:
        print(
            f"dicepad: the table PIN is {parts.auth.generated_pin} - write it down, it is shown "
            "only this once (set DICEPAD_PIN to choose your own)",
            flush=True,
        )
    try:
        server = waitress_server(
            app,
            host=args.host,
            port=args.port,
            max_clients=config.max_feed_clients,
            max_body=config.max_content_length,
            stall_timeout=args.stall_timeout,
        )
    except OSError as exc:
        parts.close()
        print(f"dicepad serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
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
        raise SystemExit(0)  # waitress's loop turns this into an orderly shutdown

    # Installed before we say we listen: a SIGTERM from then on always stops cleanly.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    pad: Any = None
    coach: Any = None
    try:
        print(f"dicepad: data in {config.data_dir}; camera {config.camera}", flush=True)
        print(f"dicepad: listening on {url}", flush=True)
        if args.host in ("0.0.0.0", "::"):  # every interface: say where to point a browser
            port = server.effective_port
            print(
                f"dicepad: open http://localhost:{port}/ here; phones on the same network:"
                f" http://<this machine's address>:{port}/",
                flush=True,
            )
        from server.coach_warm import start_coach_warmup
        from server.pad.api import start_pad_service

        coach = start_coach_warmup(app)  # background: the first hints need no solve

        try:
            pad = start_pad_service(app)  # None with --camera none: manual entry only
        except SpecError as exc:
            print(f"dicepad serve: {exc}", file=sys.stderr)
            return 2
        watchdog = threading.Thread(
            target=_watchdog, args=(notifier, parts.health.healthy, stop), daemon=True
        )
        watchdog.start()
        notifier.ready(f"listening on {url}")
        server.run()
    finally:
        stop.set()
        if pad is not None:
            pad.stop()
        if coach is not None:
            coach.stop(timeout=1.0)
        server.close()
        parts.close()
        print("dicepad: stopped", flush=True)
    return 0


def waitress_server(
    app: Any, *, host: str, port: int, max_clients: int, max_body: int, stall_timeout: float
) -> Any:
    """Waitress as every dicepad server runs it (``serve`` and ``house``): a thread per
    live-feed client plus :data:`EXTRA_THREADS`, bounded output buffers, bodies over
    ``max_body`` refused with 413 before spooling to disk, and :func:`_socket_options`;
    ``OSError`` when it cannot listen."""
    from waitress.server import create_server

    server: Any = create_server(
        app,
        host=host,
        port=port,
        threads=max_clients + EXTRA_THREADS,
        connection_limit=max_clients + EXTRA_CONNECTIONS,
        outbuf_high_watermark=OUTBUF_HIGH_WATERMARK,
        max_request_body_size=max_body,
        asyncore_use_poll=True,
        ident="dicepad",
    )
    # Not a create_server() keyword: applied to each accepted connection from here on.
    server.adj.socket_options = _socket_options(stall_timeout)
    return server


def _socket_options(stall_timeout: float) -> list[tuple[int, int, int]]:
    """Waitress's TCP_NODELAY plus, on Linux, TCP_USER_TIMEOUT: the kernel aborts a connection
    whose sent data stays unacknowledged (or whose window stays shut) that long, so a phone
    that stopped reading cannot hold a server thread forever."""
    options = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    user_timeout = getattr(socket, "TCP_USER_TIMEOUT", None)
    if user_timeout is not None and stall_timeout > 0:
        options.append((socket.IPPROTO_TCP, user_timeout, int(stall_timeout * 1000)))
    return options


def _watchdog(notifier: Notifier, healthy: Callable[[], bool], stop: threading.Event) -> None:
    """Ping systemd's watchdog every ``watchdog_interval`` s while the app is healthy; a
    silent watchdog makes systemd restart us."""
    interval = notifier.watchdog_interval
    if interval is None:
        return
    while not stop.wait(interval):
        try:
            ok = healthy()
        except Exception:  # a crashing health check is an unhealthy app
            ok = False
        if ok:
            notifier.watchdog()
