"""House rules: one frozen dataclass per game, every ambiguity a named field with a default.

Fields carry ``metadata={"help": ..., "choices": (...)}``; :func:`parse_rules` turns loose
input (a JSON object from a phone, ``NAME=VALUE`` strings from the CLI, with or without the
game's prefix such as ``ybi.``) into a validated instance, so a typo is an error, never a
silently ignored rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from scoring.errors import RulesError

R = TypeVar("R")

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def house_rule(default: Any, help: str, choices: tuple[Any, ...] | None = None, **more: Any) -> Any:
    """A house-rule field with the metadata :func:`parse_rules` reads (``help``, ``choices``,
    and any extra such as ``range=(lo, hi)``), so every game declares its rules one way."""
    meta: dict[str, Any] = {"help": help, **more}
    if choices is not None:
        meta["choices"] = choices
    return dataclasses.field(default=default, metadata=meta)


def _coerce(f: dataclasses.Field[Any], raw: object, label: str) -> Any:
    default = f.default
    choices = f.metadata.get("choices")
    if isinstance(default, bool):
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.lower() in _TRUE | _FALSE:
            return raw.lower() in _TRUE
        raise RulesError(f"{label} must be true or false, got {raw!r}")
    if isinstance(default, int):
        if isinstance(raw, bool):
            raise RulesError(f"{label} must be a whole number, got {raw!r}")
        try:
            value = int(raw)  # type: ignore[call-overload]
        except (TypeError, ValueError):
            raise RulesError(f"{label} must be a whole number, got {raw!r}") from None
        lo, hi = f.metadata.get("range", (0, 1_000_000))
        if not lo <= value <= hi:
            raise RulesError(f"{label} must be between {lo} and {hi}, got {value}")
        if choices and value not in choices:
            raise RulesError(f"{label} must be one of {', '.join(map(str, choices))}")
        return value
    if isinstance(default, str):
        if not isinstance(raw, str):
            raise RulesError(f"{label} must be one of {', '.join(choices or ())}, got {raw!r}")
        if choices and raw not in choices:
            raise RulesError(f"{label} must be one of {', '.join(choices)}, got {raw!r}")
        return raw
    raise RulesError(f"{label} cannot be set")  # pragma: no cover - no such field today


def parse_rules(rules_type: type[R], given: Mapping[str, object] | None, prefix: str) -> R:
    """Build ``rules_type`` from ``given``; names may carry ``prefix + '.'``."""
    if given is None:
        return rules_type()
    if dataclasses.is_dataclass(given) and isinstance(given, rules_type):
        return given
    fields = {f.name: f for f in dataclasses.fields(rules_type)}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for name, raw in given.items():
        if not isinstance(name, str):
            raise RulesError("house-rule names must be strings")
        short = name.removeprefix(prefix + ".")
        if short not in fields:
            known = ", ".join(sorted(fields))
            raise RulesError(f"unknown house rule {name!r} for this game; known: {known}")
        values[short] = _coerce(fields[short], raw, f"{prefix}.{short}")
    return rules_type(**values)


def parse_assignments(pairs: Iterable[str]) -> dict[str, str]:
    """``["target=5000", "ybi.rotate_start=true"]`` -> a mapping (CLI ``--rule``)."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise RulesError(f"--rule takes NAME=VALUE, got {pair!r}")
        out[name.strip()] = value.strip()
    return out


def rules_to_json(rules: object) -> dict[str, Any]:
    return dataclasses.asdict(rules)  # type: ignore[call-overload, no-any-return]


def describe_rules(rules_type: type[Any], prefix: str) -> list[dict[str, Any]]:
    """Every house rule with its default, choices and help: for the new-game form and docs."""
    out = []
    for f in dataclasses.fields(rules_type):
        entry: dict[str, Any] = {
            "name": f"{prefix}.{f.name}",
            "default": f.default,
            "help": f.metadata.get("help", ""),
        }
        if "choices" in f.metadata:
            entry["choices"] = list(f.metadata["choices"])
        out.append(entry)
    return out
