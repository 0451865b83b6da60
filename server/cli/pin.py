"""``dicepad pin``: rotate the table PIN (the admin's way to lock out someone who learned it).

Makes up a new 6-digit PIN and prints it, or takes one from standard input (``--stdin``, so it
never shows in ``ps`` or the shell history). Only its salted scrypt hash is stored. A running
server picks the change up on its next request: the old PIN stops working and every phone
that was logged in has to log in again. Run it as the service's user on a Pi:
``sudo -u dicepad dicepad pin --data /var/lib/dicepad``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HELP = "rotate the table PIN: a new one is made up (or read from stdin); sessions end"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        metavar="DIR",
        help="the server's data directory (default: $DICEPAD_DATA, else the per-user one)",
    )
    parser.add_argument(
        "--stdin",
        action="store_true",
        help="read the new PIN (4-64 characters) from the first line of standard input",
    )


def run(args: argparse.Namespace) -> int:
    import secrets

    from server.auth import GENERATED_DIGITS, PinAuth, validate_pin
    from server.config import Config
    from server.limiter import FailureLimiter
    from server.store import Store, StoreError

    try:
        config = Config.from_environ(data_dir=args.data)
    except ValueError as exc:  # a DICEPAD_ setting that does not parse
        print(f"dicepad pin: {exc}", file=sys.stderr)
        return 2
    if not config.database_path.exists():
        print(
            f"dicepad pin: no dicepad database in {config.data_dir} "
            "(give --data, or start dicepad serve once)",
            file=sys.stderr,
        )
        return 1
    if args.stdin:
        new = sys.stdin.readline().rstrip("\r\n")
        try:
            validate_pin(new)
        except ValueError as exc:
            print(f"dicepad pin: {exc}", file=sys.stderr)
            return 2
    else:
        new = "".join(secrets.choice("0123456789") for _ in range(GENERATED_DIGITS))
    try:
        store = Store(config.database_path)
    except StoreError as exc:
        print(f"dicepad pin: {exc}", file=sys.stderr)
        return 1
    try:
        limiter = FailureLimiter(max_failures=1, window=1, lockout=1, monotonic=config.monotonic)
        PinAuth(store, limiter, scrypt_n=config.pin_scrypt_n).change(new)
    finally:
        store.close()
    if args.stdin:
        print("dicepad: the table PIN is changed; phones must log in again", flush=True)
    else:
        print(
            f"dicepad: the new table PIN is {new} - phones must log in again with it",
            flush=True,
        )
    if os.environ.get("DICEPAD_PIN"):
        print(
            "dicepad pin: note DICEPAD_PIN is set here; a server started with DICEPAD_PIN "
            "puts that PIN back when it starts (unset it in /etc/dicepad/dicepad.env)",
            file=sys.stderr,
        )
    return 0
