"""Rules of the bar dice games as pure functions over frozen state (imports nothing of ours)."""

from scoring.actions import Action, action_from_json, action_to_json
from scoring.errors import IllegalActionError, MalformedActionError, RulesError
from scoring.game import Expecting, Game, Highlight, Outcome

__all__ = [
    "Action",
    "Expecting",
    "Game",
    "Highlight",
    "IllegalActionError",
    "MalformedActionError",
    "Outcome",
    "RulesError",
    "action_from_json",
    "action_to_json",
]
