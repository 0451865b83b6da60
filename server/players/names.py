"""One player per name, however it was typed.

A name is matched after Unicode normalisation (NFC, so a composed and a decomposed "é" are
one letter), trimming, collapsing runs of white space and case folding: "Ann", "ann " and
"ANN" are one player. The *key* is what is stored and put in URLs; the name shown is the
spelling of the player's latest game.
"""

from __future__ import annotations

import unicodedata

NAME_MAX = 80  #: longest name looked up (a seat holds at most 40 characters)


def display(name: str) -> str:
    """The name as shown: NFC, trimmed, inner white space collapsed to single spaces."""
    return " ".join(unicodedata.normalize("NFC", name).split())


def player_key(name: str) -> str:
    """The key every spelling of one player shares (case folding can leave a string that
    is not NFC, so it is normalised again after)."""
    return unicodedata.normalize("NFC", display(name).casefold())


def valid_key(name: str) -> str | None:
    """The key of a name given in a URL, or ``None`` when it names nobody (empty, too long,
    control characters)."""
    if len(name) > NAME_MAX or not name.isprintable():
        return None
    key = player_key(name)
    return key or None
