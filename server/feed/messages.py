"""What the live feed sends: each event formatted once, and the view a live message carries.

A message is formatted once and its bytes shared by every phone (:func:`sse`). A live
``state`` message is the table's view with the game's history lists cut to their last round
(:func:`live_view`): its size stays bounded however long the game runs, while the full
history stays in ``GET /api/tables/<t>`` and in the snapshot every (re)connect starts with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: the comment written to a quiet stream, so proxies and phones keep the connection open
KEEPALIVE = b": keep-alive\n\n"


def sse(event: str, data: Any, event_id: int | None = None) -> bytes:
    """One server-sent event; ``data`` is JSON-encoded on a single line."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return f"{head}event: {event}\ndata: {body}\n\n".encode()


@dataclass(frozen=True)
class History:
    """A list in a game's state JSON that grows for as long as the game is played."""

    path: tuple[str, ...]  #: keys from ``view["state"]`` down to the list
    #: its entries are turns, so the last round is the last one per seat (else the last one)
    per_seat: bool = False


#: Every game's growing lists (see each game's ``state_to_json``). A live message keeps the
#: last round of each: You Blew It's last finished round (the round in play is ``this_round``),
#: Bolo's last turn of every player, Bar Dice's last turn (a horse) and penalty, Gords' last
#: call. ``pending`` / ``throw.before`` are the exact unsettled states that some positions keep.
HISTORY: Mapping[str, tuple[History, ...]] = {
    "you-blew-it": (History(("rounds",)), History(("pending", "rounds"))),
    "bolo": (History(("turns",), per_seat=True), History(("pending", "turns"), per_seat=True)),
    "bar-dice": (
        History(("turns",)),
        History(("penalties",)),
        History(("throw", "before", "turns")),
        History(("throw", "before", "penalties")),
    ),
    "gords": (History(("results",)),),
}


def _cut(node: Any, path: tuple[str, ...], keep: int) -> tuple[Any, bool]:
    """``node`` with the list at ``path`` cut to its last ``keep`` entries, and whether
    anything was cut; copies only what it changes (the view it reads is shared)."""
    if not path:
        if isinstance(node, list) and len(node) > keep:
            return node[len(node) - keep :], True
        return node, False
    if not isinstance(node, dict) or path[0] not in node:
        return node, False
    inner, cut = _cut(node[path[0]], path[1:], keep)
    return ({**node, path[0]: inner}, True) if cut else (node, False)


def live_view(view: Mapping[str, Any]) -> dict[str, Any]:
    """The view a live ``state`` message carries: every key of ``view``, with the game's
    :data:`HISTORY` lists in ``state`` cut to their last round and ``history_truncated``
    saying whether anything was cut (the full view is ``GET /api/tables/<t>``)."""
    state = view.get("state")
    truncated = False
    if isinstance(state, dict):
        seats = len(state.get("players") or state.get("teams") or ()) or 1
        for history in HISTORY.get(str(view.get("game")), ()):
            state, cut = _cut(state, history.path, seats if history.per_seat else 1)
            truncated = truncated or cut
    out = dict(view)
    if truncated:
        out["state"] = state
    out["history_truncated"] = truncated
    return out
