"""What the scoreboard shows beyond the table's view: pure functions over the view JSON and
the event log, so the templates stay declarative and every rule here is tested directly.

The view (``TableService.view``) already carries the game's ``state_to_json``; the log adds
what the state does not keep: which roll is the latest one standing (the one a fix
corrects, with its snapshot) and why dice must be thrown again.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scoring.actions import Reroll, Roll, action_from_json
from server.standing import Standing, resolve

#: Expecting.action values for which the table waits for dice (entered by tapping faces)
DICE_ENTRY = {"roll", "roll_or_bank", "roll_or_stand", "farm_or_roll", "reveal"}


@dataclass(frozen=True)
class LastRoll:
    """The latest roll (or reveal) that still stands: what a fix corrects."""

    seq: int
    dice: tuple[int, ...]
    kind: str  #: ``roll`` or ``reveal``
    snapshot: bool


@dataclass(frozen=True)
class RerollRequest:
    """Dice the table must throw again (cocked, sloppy, a house clause)."""

    count: int
    reason: str
    snapshot_seq: int | None  #: the roll whose photo shows why


def standing(log: Sequence[Mapping[str, Any]]) -> list[Standing]:
    """The log entries that still stand after every undo and fix."""
    return resolve(
        Standing(e["seq"], e["at"], action_from_json(e["action"]), bool(e.get("snapshot")))
        for e in log
    )


def last_roll(entries: Sequence[Standing]) -> LastRoll | None:
    for entry in reversed(entries):
        action = entry.action
        if isinstance(action, Roll):
            return LastRoll(entry.seq, tuple(action.dice), action.type, entry.snapshot)
    return None


def reroll_request(state: Mapping[str, Any], entries: Sequence[Standing]) -> RerollRequest | None:
    """The pending re-roll, if the table waits for one: Farkle games keep it in the turn
    (``phase == "reroll"``), Bar Dice in ``rethrow``; the reason comes from the log."""
    count = 0
    reason = ""
    rethrow = state.get("rethrow")
    turn = state.get("turn")
    if isinstance(rethrow, Mapping):
        count = int(rethrow.get("count", 0))
        reason = str(rethrow.get("reason") or "")
    elif isinstance(turn, Mapping) and turn.get("phase") == "reroll":
        count = int(turn.get("rerolling", 0))
    if count <= 0:
        return None
    if not reason and entries and isinstance(entries[-1].action, Reroll):
        reason = entries[-1].action.reason
    roll = last_roll(entries)
    snap = roll.seq if roll is not None and roll.snapshot else None
    return RerollRequest(count, reason or "cocked or off the pad", snap)


#: what the scoreboard says about the camera in each ``CameraStatus.state``: (css class, the
#: sentence; ``{message}`` is the supervisor's, which names the likely cause)
CAMERA_TEXT = {
    "live": ("ok", "Camera live: rolls are read from the pad"),
    "starting": ("wait", "Camera starting: {message}"),
    "offline": ("off", "{message}. Enter rolls on a phone meanwhile."),
    "manual": ("off", "{message}. Enter rolls on a phone meanwhile."),
    "disabled": ("off", "No camera: enter rolls on a phone"),
    "ended": ("off", "The camera replay has ended: enter rolls on a phone"),
    "closed": ("off", "The camera is stopped: enter rolls on a phone"),
}
NO_CAMERA = "No camera at this pad: the scorekeeper enters the rolls"


@dataclass(frozen=True)
class PadPanel:
    """What the scoreboard shows about the camera over the pad and its last throw (the pad
    service's ``view["pad"]``): a sentence and style for the camera, whether this table is
    the one on the pad (``None``: no camera service), and the notice about the last throw
    with the dice read (``None`` for a die that could not be read) and whether a photo of
    that throw waits at ``/api/pad/snapshot/<table>``."""

    camera: str
    camera_class: str
    on_pad: bool | None
    notice: str | None = None
    notice_kind: str = ""
    notice_dice: tuple[int | None, ...] = ()
    photo: bool = False
    key: str = ""  #: a digest of ``view["pad"]``: busts the photo's URL when it changes


def pad_key(view: Mapping[str, Any]) -> str:
    """A short digest of the pad state: it changes the board without a new log entry."""
    text = json.dumps(view.get("pad") or {}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def pad_panel(view: Mapping[str, Any], *, camera_configured: bool) -> PadPanel | None:
    """The panel for ``view`` (None for a finished game, which no camera reads)."""
    if view.get("over"):
        return None
    pad = view.get("pad") or {}
    camera = pad.get("camera")
    if isinstance(camera, Mapping):
        style, text = CAMERA_TEXT.get(str(camera.get("state")), ("off", "{message}"))
        sentence = text.format(message=str(camera.get("message") or "").rstrip(". "))
        on_pad = bool(pad.get("on_pad"))
    elif camera_configured:
        style, sentence, on_pad = "wait", "Camera starting", False
    else:
        return PadPanel(NO_CAMERA, "off", None)
    notice = pad.get("notice")
    if not isinstance(notice, Mapping):
        return PadPanel(sentence, style, on_pad, key=pad_key(view))
    dice = tuple(None if d is None else int(d) for d in notice.get("dice") or ())
    return PadPanel(
        sentence,
        style,
        on_pad,
        str(notice.get("text") or ""),
        str(notice.get("kind") or ""),
        dice,
        bool(notice.get("snapshot")),
        pad_key(view),
    )


def rounds(turns: Sequence[Mapping[str, Any]], seats: int) -> list[tuple[int, list[Any]]]:
    """Bolo keeps one flat list of turns; a round is one turn per seat. Newest first."""
    seats = max(1, seats)
    out = [(n // seats + 1, list(turns[n : n + seats])) for n in range(0, len(turns), seats)]
    return out[::-1]


def keep_choices(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Farkle keep options (points and combinations) that are legal now, best first."""
    legal = {tuple(a["dice"]) for a in view.get("legal", ()) if a.get("type") == "keep"}
    options = view.get("state", {}).get("options") or []
    chosen = [o for o in options if tuple(o.get("keep", ())) in legal]
    return sorted(chosen, key=lambda o: -int(o.get("points", 0)))


def legal_types(view: Mapping[str, Any]) -> set[str]:
    return {str(a.get("type")) for a in view.get("legal", ())}


def can_farm(view: Mapping[str, Any]) -> bool:
    """Bar Dice farming: keeps are legal but there is no Farkle options list to pick from."""
    return "keep" in legal_types(view) and not view.get("state", {}).get("options")


def bid_floor(view: Mapping[str, Any]) -> tuple[int, int]:
    """The lowest legal Gords bid ``(count, face)``, to preset the bid form."""
    bids = [(int(a["count"]), int(a["face"])) for a in view.get("legal", ()) if a["type"] == "bid"]
    return min(bids) if bids else (1, 2)


def max_bid(view: Mapping[str, Any]) -> int:
    bids = [int(a["count"]) for a in view.get("legal", ()) if a["type"] == "bid"]
    return max(bids, default=1)


def dice_wanted(view: Mapping[str, Any]) -> int:
    """How many dice the table waits for (0 when it waits for a decision)."""
    expecting = view.get("expecting", {})
    if view.get("over") or expecting.get("action") not in DICE_ENTRY:
        return 0
    return int(expecting.get("dice") or 0)


def mark_kept(roll: Sequence[int], keep: Sequence[int]) -> list[tuple[int, bool]]:
    """Each die of ``roll`` with whether it is one of the dice set aside (as a multiset:
    a roll of three 1s of which two were kept marks two)."""
    left = Counter(keep)
    out = []
    for die in roll:
        kept = left[die] > 0
        if kept:
            left[die] -= 1
        out.append((die, kept))
    return out


def mark_matching(dice: Sequence[int], face: int, matching: int) -> list[tuple[int, bool]]:
    """Each revealed Gords die with whether it counted for the bid on ``face``. The engine
    says how many matched; ones counted too exactly when that is what makes the number
    (wild ones depend on house rules and palifico rounds, so the count decides)."""
    exact = sum(1 for d in dice if d == face)
    wild = face != 1 and exact != matching and exact + dice.count(1) == matching
    return [(d, d == face or (wild and d == 1)) for d in dice]
