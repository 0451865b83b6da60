"""The pad's questions answered on the phone: which value an unsure die shows, and which die
to take away or add when the camera counted one too many or one too few.

The pad service's notice (``view["pad"]["notice"]``, :class:`server.pad.decide.Notice`)
carries the dice read, each asked die's best guesses and its place in the photo, and
``wanted``, the size of the roll the phone may log. :func:`question` turns it into what the
scoreboard draws; :func:`answer` turns the PIN holder's picks into that roll. board.js does
the same arithmetic in the page and posts the roll to the API; the form route uses
:func:`answer` when the phone runs no script. Both pure.

Picks arrive as form fields: ``d<i>`` the value of asked die ``i``, ``drop`` the index of the
die the camera saw by mistake, ``add`` the face of the die it missed, and ``question``
(:attr:`Question.key`), so that an answer to an earlier throw is never logged for this one.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from server.pages.board import dice_wanted

FACES = (1, 2, 3, 4, 5, 6)


class AnswerError(ValueError):
    """The picks do not make the roll asked for (a die left unanswered, nothing removed)."""


@dataclass(frozen=True)
class Guess:
    """One of a die's best guesses: its value and how sure the camera is, in whole percent
    (floored: a guess is never shown as certain)."""

    value: int
    percent: int


@dataclass(frozen=True)
class Slot:
    """One die read: ``value`` (None: the camera asks), and for an asked die its guesses,
    the other faces, and the crop of the photo as an SVG ``viewBox`` over the photo drawn
    as a 1 x 1 square ("" when there is no crop)."""

    index: int
    value: int | None
    guesses: tuple[Guess, ...] = ()
    others: tuple[int, ...] = ()
    view_box: str = ""

    @property
    def asked(self) -> bool:
        return self.value is None


@dataclass(frozen=True)
class Question:
    """What the phone asks the PIN holder about the last throw (see the module docstring)."""

    key: str  #: a digest of the notice: picks kept across redraws only for the same question
    kind: str  #: ``roll`` or ``reveal``: the action the answer is logged as
    slots: tuple[Slot, ...]
    wanted: int  #: dice in the roll to log

    @property
    def change(self) -> int:
        """+1: a die to add (the camera missed one); -1: one to remove; 0: only to answer."""
        return self.wanted - len(self.slots)

    @property
    def asked(self) -> tuple[Slot, ...]:
        return tuple(s for s in self.slots if s.asked)

    @property
    def one_tap(self) -> bool:
        """One die to answer and nothing to add or remove: a tap on a guess logs the roll."""
        return self.change == 0 and len(self.asked) == 1

    @property
    def dice(self) -> list[int | None]:
        return [s.value for s in self.slots]


def _die(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value in FACES:
        return value
    raise ValueError(f"not a die: {value!r}")


def _guesses(raw: Any) -> tuple[Guess, ...]:
    out: list[Guess] = []
    for pair in raw if isinstance(raw, list) else ():
        value, p = _die(pair[0]), float(pair[1])
        if value is None or not 0.0 <= p <= 1.0 or value in (g.value for g in out):
            raise ValueError(f"not a guess: {pair!r}")
        out.append(Guess(value, min(99, math.floor(round(100 * p, 6)))))
    return tuple(out[:2])


def _view_box(raw: Any) -> str:
    """The crop's viewBox, or "" (no crop, the faces are still offered) for a bad box."""
    try:
        x, y, w, h = (float(v) for v in raw)
    except (TypeError, ValueError):
        return ""
    if not (0.0 <= x < 1.0 and 0.0 <= y < 1.0 and 0.0 < w <= 1.0 and 0.0 < h <= 1.0):
        return ""
    return f"{x:.4f} {y:.4f} {w:.4f} {h:.4f}"


def _slots(dice: Sequence[int | None], asked: Any, photo: bool) -> tuple[Slot, ...]:
    about: dict[int, Mapping[str, Any]] = {}
    for a in asked if isinstance(asked, list) else ():
        index = a.get("index") if isinstance(a, Mapping) else None
        if isinstance(index, int) and 0 <= index < len(dice) and dice[index] is None:
            about[index] = a
    slots = []
    for i, value in enumerate(dice):
        if value is not None:
            slots.append(Slot(i, value))
            continue
        a = about.get(i, {})
        guesses = _guesses(a.get("candidates"))
        others = tuple(f for f in FACES if f not in {g.value for g in guesses})
        box = _view_box(a.get("box")) if photo else ""
        slots.append(Slot(i, None, guesses, others, box))
    return tuple(slots)


def question_key(notice: Mapping[str, Any]) -> str:
    text = json.dumps(notice, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


ANSWERED_ELSEWHERE = "the camera has seen another throw since, or the roll was entered: look again"


def asked(view: Mapping[str, Any], key: object) -> Question | None:
    """The question ``key`` names, if it is still the one ``view``'s table is asked (None:
    the camera has asked another since, or the roll was entered): an answer to an earlier
    throw is never logged for this one."""
    q = question(view)
    return q if q is not None and key == q.key else None


def question(view: Mapping[str, Any]) -> Question | None:
    """The question the pad's notice asks of ``view``'s table, or None: no notice that a
    roll answers, or the table no longer waits for a roll of that size (it moved on)."""
    notice = (view.get("pad") or {}).get("notice")
    if not isinstance(notice, Mapping):
        return None
    try:
        wanted = int(notice.get("wanted") or 0)
        dice = [_die(d) for d in notice.get("dice") or ()]
        if wanted <= 0 or abs(len(dice) - wanted) > 1 or dice_wanted(view) != wanted:
            return None
        slots = _slots(dice, notice.get("asked"), bool(notice.get("snapshot")))
    except (TypeError, ValueError, IndexError):  # not a notice this code wrote: no question
        return None
    if len(slots) == wanted and not any(s.asked for s in slots):
        return None
    action = (view.get("expecting") or {}).get("action")
    kind = "reveal" if action == "reveal" else "roll"
    return Question(question_key(notice), kind, slots, wanted)


def _pick(picks: Mapping[str, str], name: str, choices: Sequence[int], missing: str) -> int:
    raw = str(picks.get(name) or "").strip()
    if not raw.isdigit() or int(raw) not in choices:
        raise AnswerError(missing)
    return int(raw)


def answer(q: Question, picks: Mapping[str, str]) -> tuple[int, ...]:
    """The roll ``picks`` make of ``q``'s dice; :class:`AnswerError` says what is missing."""
    drop = None
    if q.change < 0:
        where = [s.index for s in q.slots]
        drop = _pick(picks, "drop", where, "tap the die the camera counted by mistake")
    dice = []
    for slot in q.slots:
        if slot.index == drop:
            continue
        if slot.value is not None:
            dice.append(slot.value)
        else:
            missing = f"choose what die {slot.index + 1} shows"
            dice.append(_pick(picks, f"d{slot.index}", FACES, missing))
    if q.change > 0:
        dice.append(_pick(picks, "add", FACES, "tap the face of the die the camera missed"))
    return tuple(dice)
