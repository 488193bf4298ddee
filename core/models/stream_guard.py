"""The stream guard (SPEC §4.4): stop a response that loops on closing tags.

Some models, once they emit `</final>`-style tags, repeat them until the token limit.
After each chunk the guard counts closing tags in the last `window` characters; at the
threshold the stream is stopped and the content cut where the repetition began.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CLOSING_TAG = re.compile(r"</[^<>\s/]{1,64}>")


@dataclass
class StreamGuard:
    window: int
    threshold: int

    def may_trip(self, added: str) -> bool:
        """Only text that closes a tag can bring the count up (saves a scan per token)."""
        return ">" in added

    def tripped(self, content: str) -> bool:
        tail = content[-self.window :]
        return len(_CLOSING_TAG.findall(tail)) >= self.threshold

    def cut(self, content: str) -> str:
        """`content` without its repeating tail."""
        tags = list(_CLOSING_TAG.finditer(content))
        if len(tags) < 2:
            return content
        # The repeating unit: from the end of the second-to-last tag to the end of the last one.
        unit = content[tags[-2].end() : tags[-1].end()]
        end = tags[-1].end()
        start = end
        while unit and content[:start].endswith(unit):
            start -= len(unit)
        # The first occurrence of the unit's tag is the model's own; keep it, cut the rest.
        return content[: start + len(unit)] if start < end - len(unit) else content[:start]
