"""The on-disk cache of solved Farkle policies: the only I/O of the coach, called by the server.

A policy is solved once per rule set (well under a second here, seconds on a Pi) and kept as
one JSON file per spec in a directory the caller owns (the server's data directory). A file
is named by a digest of the spec and also holds the spec's full text, so a file solved for
other rules, or a damaged one, is never used: it is solved again and rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from scoring.coach.solver import FarkleSpec, Policy, remember, solve


def path_for(directory: Path, spec: FarkleSpec) -> Path:
    digest = hashlib.sha256(spec.key().encode()).hexdigest()[:20]
    return Path(directory) / f"coach-{spec.game}-{digest}.json"


def save(directory: Path, policy: Policy) -> Path:
    """Write ``policy`` atomically (temporary file + rename) and return its path."""
    target = path_for(directory, policy.spec)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".coach-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(policy.to_json(), f, separators=(",", ":"))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def load(directory: Path, spec: FarkleSpec) -> Policy | None:
    """The saved policy of ``spec`` (now also memoised), or ``None`` if there is none or the
    file does not hold exactly this spec's policy."""
    target = path_for(directory, spec)
    try:
        obj = json.loads(target.read_text(encoding="utf-8"))
        policy = Policy.from_json(obj, spec)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    remember(policy)
    return policy


def warm(directory: Path, specs: Iterable[FarkleSpec]) -> list[Policy]:
    """Load each spec's policy from ``directory``, solving and saving the missing ones."""
    out = []
    for spec in specs:
        policy = load(directory, spec)
        if policy is None:
            policy = solve(spec)
            save(directory, policy)
        out.append(policy)
    return out
