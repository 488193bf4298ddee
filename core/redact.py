"""Keeping secrets out of trajectories and logs (SPEC §9.4).

Two rules:
- by name: a value whose key has a word KEY, TOKEN, SECRET or PASSWORD (`api_key`,
  `OPENAI_API_KEY`, `GITHUB_TOKEN`, `db_password`) is written as `***`. Words, not
  substrings, so `max_tokens`, `tokens_per_second` and `keymap` keep their values;
- by value: the values of such secrets (from the config and from forwarded environment
  variables) are replaced by `***` wherever they appear in text, so a command that echoes
  `$OPENAI_API_KEY` does not leak it into an observation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "***"
_SECRET_WORDS = {"key", "apikey", "token", "secret", "password", "passwd", "credentials"}
_WORD_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z0-9])(?=[A-Z])")
_MIN_SECRET_LENGTH = 6


def is_secret_name(name: str) -> bool:
    return any(word.lower() in _SECRET_WORDS for word in _WORD_SPLIT.split(str(name)) if word)


def redact_mapping(data: Any) -> Any:
    """A copy of nested mappings/lists with every secret-named value masked."""
    if isinstance(data, Mapping):
        return {
            key: (MASK if is_secret_name(key) and value not in (None, "") else redact_mapping(value))
            for key, value in data.items()
        }
    if isinstance(data, list | tuple):
        return [redact_mapping(item) for item in data]
    return data


def secret_values(data: Any) -> set[str]:
    """The string values of secret-named keys anywhere in nested mappings."""
    found: set[str] = set()
    if isinstance(data, Mapping):
        for key, value in data.items():
            if is_secret_name(key) and isinstance(value, str | int) and len(str(value)) >= _MIN_SECRET_LENGTH:
                found.add(str(value))
            else:
                found |= secret_values(value)
    elif isinstance(data, list | tuple):
        for item in data:
            found |= secret_values(item)
    return found


class Redactor:
    """Masks known secret values in text and secret-named keys in records."""

    def __init__(self, values: Iterable[str] = ()):
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.add(values)

    def add(self, values: Iterable[str]) -> None:
        self._values |= {value for value in values if value and len(value) >= _MIN_SECRET_LENGTH}
        if self._values:
            ordered = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(value) for value in ordered))

    def text(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(MASK, text)

    def record(self, data: Any) -> Any:
        """A JSON-like record with secret-named keys masked and secret values scrubbed from text."""
        data = redact_mapping(data)
        if self._pattern is None:
            return data
        return self._scrub(data)

    def _scrub(self, data: Any) -> Any:
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, Mapping):
            return {key: self._scrub(value) for key, value in data.items()}
        if isinstance(data, list):
            return [self._scrub(item) for item in data]
        return data
