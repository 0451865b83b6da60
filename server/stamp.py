"""The stamp of the rules code: what a table's digest is checked against at start.

A digest (:class:`server.rows.Digest`) saves a start from replaying a finished table. It may
only stand for a replay if the code that would replay it is the code that made it, so each
digest carries this stamp: a SHA-256 over the source of everything that derives a table from
its log (the ``scoring`` package, the standing actions, the records, the table's view). Any
change to that code, an upgrade included, gives a new stamp, and the next start replays every
table once and derives its records again.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import secrets
from pathlib import Path

import scoring

log = logging.getLogger(__name__)

SERVER = Path(__file__).resolve().parent
#: what turns a log into a table's state, records and summary, besides ``scoring``
DERIVING = ("records.py", "standing.py", "table_memory.py", "table_values.py", "tables.py")


def source_files() -> list[tuple[str, Path]]:
    """The files the stamp covers, each with its name in the package tree, in a fixed order."""
    rules = Path(scoring.__file__).resolve().parent
    return [
        *((p.relative_to(rules.parent).as_posix(), p) for p in sorted(rules.rglob("*.py"))),
        *((f"{SERVER.name}/{name}", SERVER / name) for name in DERIVING),
    ]


@functools.cache
def engine_stamp() -> str:
    """The stamp of the rules code this process runs (computed once: a few dozen files).

    When a source file cannot be read (an install without sources), the stamp is random:
    no digest then matches, and every start replays every table, which is always right.
    """
    digest = hashlib.sha256()
    try:
        for name, path in source_files():
            data = path.read_bytes()
            label = name.encode()
            digest.update(len(label).to_bytes(4, "big") + label)
            digest.update(len(data).to_bytes(8, "big") + data)
    except OSError as exc:
        log.warning("cannot stamp the rules code (%s): every table will be replayed", exc)
        return "unstamped-" + secrets.token_hex(16)
    return digest.hexdigest()
