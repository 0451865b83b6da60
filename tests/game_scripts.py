"""What the rules tests share: the recorded games of ``tests/data`` and the table shorthand."""

from __future__ import annotations

import json
from pathlib import Path

from scoring.actions import Action, Bank, Keep, Roll, action_from_json

DATA = Path(__file__).parent / "data"


def load(name: str) -> list[Action]:
    """The actions of ``tests/data/<name>``: one JSON action a line, as the event log has them."""
    lines = (DATA / name).read_text().splitlines()
    return [action_from_json(json.loads(line)) for line in lines if line.strip()]


def R(*dice: int) -> Roll:  # noqa: N802 - reads like the table: R(1, 5), K(1), B
    return Roll(dice)


def K(*dice: int) -> Keep:  # noqa: N802
    return Keep(dice)


B = Bank()
