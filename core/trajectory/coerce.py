"""How the readers take a recorded value as the type they need, in one place: a field of the
wrong type reads as missing (or is said, for a list that must hold objects), never as an
exception deep in a reader."""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from .outline import Part, RawRecords


def optional_str(value: object) -> str | None:
    """A recorded field as text; missing stays missing (a number or a list is shown as written)."""
    return None if value is None else str(value)


_OBJECTS = (dict, Part)
"""A tuple, made once: `dict | Part` would build a union at each call (a million records' worth)."""


def mapping(value: object) -> Mapping[str, Any]:
    """`value` where it is a JSON object, else an empty one: a field of the wrong type reads as missing."""
    if isinstance(value, _OBJECTS):  # what JSON gives, or a head: checked first, as `isinstance` of the ABC is slow
        return cast(Mapping[str, Any], value)  # a `Part` is a `Mapping` (registered)
    return value if value is not None and isinstance(value, Mapping) else {}


def listed(value: object) -> list[Any]:
    """`value` where it is a JSON list, else an empty one: a field of the wrong type reads as missing."""
    return value if isinstance(value, list) else []


def as_mapping_list(value: object, what: str) -> Sequence[Mapping[str, Any]]:
    if isinstance(value, RawRecords):  # objects all, checked when it was read
        return value
    if not isinstance(value, list):
        raise ValueError(f"{what} is {type(value).__name__}, not a list")
    if set(map(type, value)) <= {dict}:  # parsed JSON: no per-item `isinstance` of an ABC
        return value
    bad = [i for i, item in enumerate(value) if not isinstance(item, Mapping)]
    if bad:
        raise ValueError(f"{what}[{bad[0]}] is {type(value[bad[0]]).__name__}, not an object")
    return value


def maybe_parsed(value: Any) -> Any:
    """A value that may have been saved as a JSON string (or a Python repr, as SWE-agent's
    `state` sometimes is); the parsed value, or the string when it is neither."""
    if not isinstance(value, str):
        return value
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return value


def as_number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return None
