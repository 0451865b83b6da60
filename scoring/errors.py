"""Named errors of the rules engine.

Both are ``ValueError`` subclasses (as python-chess's ``IllegalMoveError``), so callers that
only care that input was bad can catch ``ValueError``; the server maps them to 400 and 409.
"""

from __future__ import annotations


class MalformedActionError(ValueError):
    """The action's shape is wrong (unknown type, a die of 7, a missing field)."""


class IllegalActionError(ValueError):
    """A well-formed action that the rules forbid now; the message names the rule."""


class RulesError(ValueError):
    """A house-rule name or value that the game does not know or accept."""
