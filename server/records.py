"""The high-roll wall: records derived from the games' highlights over the standing actions.

Records are derived data. They are written in the same transaction as the event that made
them, re-derived for the whole table when an undo, a fix or a re-roll changes what stands (so
an undone roll never stays on the wall), and derived again at start for every table replayed:
a finished table whose digest still stands keeps its records, which the same rules code
derived from the same log (:mod:`server.tables`). A roll taken
back by the ``reroll`` right after it (cocked, stacked or sloppy dice) never happened as far
as the wall is concerned: every engine models that re-roll as replacing the throw just made.
Hiding a record is the PIN holder's decision and is stored apart, so it survives every rebuild.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from scoring.actions import Reroll, Roll
from scoring.errors import IllegalActionError
from scoring.game import Game, Highlight
from server.rows import RecordRow
from server.standing import Standing, last_roll
from server.store import Store

HIGH_ROLLER = "high_roller"  #: Bolo's pad honours (a roll of 5,000 or better)


def record_rows(
    game: str,
    table_id: str,
    entry: Standing,
    highlights: Sequence[Highlight],
    roll: Standing | None,
) -> list[RecordRow]:
    """The records ``highlights`` of one standing ``entry`` make; ``roll`` is the standing
    roll they refer to (its snapshot is the proof)."""
    snap = roll.seq if roll is not None and roll.snapshot else None
    return [
        RecordRow(
            id=f"{table_id}.{entry.seq}.{n}",
            table_id=table_id,
            seq=entry.seq,
            game=game,
            kind=h.kind,
            player=h.player,
            points=h.points,
            dice=tuple(h.dice),
            text=h.text,
            at=entry.at,
            snapshot_seq=snap,
        )
        for n, h in enumerate(highlights)
    ]


def replay_with_records(
    game: Game[Any], table_id: str, start: Any, standing: Sequence[Standing]
) -> tuple[Any, list[RecordRow]]:
    """Fold the standing actions through ``game`` (the replay) collecting their records.

    Raises ``IllegalActionError`` naming the first entry that no longer applies.
    """
    state = start
    rows: list[RecordRow] = []
    done: list[Standing] = []
    for entry in standing:
        try:
            after = game.apply(state, entry.action)
        except IllegalActionError as exc:
            raise IllegalActionError(f"event {entry.seq} ({entry.action.type}): {exc}") from None
        taken_back = taken_back_by(done, entry)
        if taken_back is not None:
            rows = [r for r in rows if r.seq != taken_back]
        done.append(entry)
        found = game.highlights(state, entry.action, after)
        if found:
            rows.extend(record_rows(game.name, table_id, entry, found, last_roll(done)))
        state = after
    return state, rows


def taken_back_by(done: Sequence[Standing], entry: Standing) -> int | None:
    """The log seq of the roll ``entry`` takes back: a ``reroll`` right after a standing roll
    (the dice are thrown again, so nothing that roll made may stand), else ``None``."""
    if isinstance(entry.action, Reroll) and done and isinstance(done[-1].action, Roll):
        return done[-1].seq
    return None


class RecordNotFoundError(LookupError):
    """No record has that id."""


class Records:
    """Queries over the wall, and hiding a bogus entry."""

    def __init__(self, store: Store, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock

    def wall(
        self,
        *,
        game: str | None = None,
        kind: str | None = None,
        table_id: str | None = None,
        include_hidden: bool = False,
        limit: int = 50,
    ) -> list[RecordRow]:
        """Records biggest first, filtered by game, kind and table."""
        return self._store.records(
            game=game, kind=kind, table_id=table_id, include_hidden=include_hidden, limit=limit
        )

    def high_rollers(self, limit: int = 50) -> list[RecordRow]:
        """Bolo's 5,000+ rolls: the players who would sign the pad."""
        return self.wall(game="bolo", kind=HIGH_ROLLER, limit=limit)

    def set_hidden(self, record_id: str, hidden: bool = True) -> None:
        """Hide (or show again) a record; it is kept either way."""
        if not self._store.record_exists(record_id):
            raise RecordNotFoundError(f"no record {record_id!r}")
        self._store.set_hidden(record_id, hidden, self._clock().isoformat(timespec="milliseconds"))
