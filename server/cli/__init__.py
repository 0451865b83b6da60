"""``dicepad`` command line: one module per sub-command, loaded on demand.

Each module in :data:`COMMANDS` defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``. Heavy imports (Flask, OpenCV) stay inside ``run`` so that
``dicepad score`` starts instantly on a Pi.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

COMMANDS: dict[str, str] = {
    "serve": "server.cli.serve",
    "score": "server.cli.score",
    "replay": "server.cli.replay",
    "odds": "server.cli.odds",
    "detect": "server.cli.detect",
    "dice": "server.cli.dice",
    "calibrate": "server.cli.calibrate",
    "markers": "server.cli.markers",
    "pin": "server.cli.pin",
    "house": "server.cli.house",
}


def _load(name: str) -> ModuleType:
    return importlib.import_module(COMMANDS[name])


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only`` just that sub-command's module is imported."""
    parser = argparse.ArgumentParser(
        prog="dicepad",
        description="Camera scorekeeper for bar dice games.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        if only is not None and name != only:
            sub.add_parser(name)
            continue
        module = _load(name)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    only = argv[0] if argv and argv[0] in COMMANDS else None
    args = build_parser(only).parse_args(argv)
    try:
        code: int = _load(args.command).run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
