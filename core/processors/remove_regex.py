"""`remove_regex`: cut patterns (e.g. long diffs) out of older messages."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field, field_validator

from ..messages import Message
from .base import Processor, derived


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.DOTALL)


class RemoveRegex(Processor):
    type: Literal["remove_regex"] = "remove_regex"
    remove: tuple[str, ...] = ("<diff>.*</diff>",)
    """Patterns removed from message text (DOTALL: they match across lines)."""
    keep_last: int = Field(default=0, ge=0)
    """The last `keep_last` messages are left as they are."""

    @field_validator("remove")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                _compiled(pattern)
            except re.error as exc:
                raise ValueError(f"remove pattern {pattern!r} is not a valid regular expression: {exc}") from None
        return patterns

    def _clean(self, text: str) -> str:
        for pattern in self.remove:
            text = _compiled(pattern).sub("", text)
        return text

    def _cleaned(self, message: Message) -> Message:
        content = message.content
        if isinstance(content, str):
            cleaned: str | list[dict[str, Any]] | None = self._clean(content)
        elif isinstance(content, list):
            cleaned = [
                {**part, "text": self._clean(part["text"])} if isinstance(part.get("text"), str) else part
                for part in content
            ]
        else:
            return message
        return message if cleaned == content else message.updated(content=cleaned)

    def __call__(self, history: list[Message]) -> list[Message]:
        out = list(history)
        key = ("remove_regex", self.remove)
        for index in range(len(history) - self.keep_last):
            out[index] = derived(key, history[index], self._cleaned)
        return out
