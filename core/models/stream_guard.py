"""The stream guard (SPEC §4.4): stop a response that loops.

Some models, once they emit `</final>`-style tags, repeat them until the token limit.
After each chunk the guard counts closing tags in the last `window` characters; at the
threshold the stream is stopped and the content cut where the repetition began.

Others repeat any text verbatim (a paragraph, a code block, 25 times). Every
`REPEAT_CHECK_EVERY` new characters the guard looks for a period `p` (`REPEAT_MIN_UNIT` or
more characters) with which the last `REPEAT_COPIES * p` characters are that many copies
of the same text; the content is then cut after the first copy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CLOSING_TAG = re.compile(r"</[^<>\s/]{1,64}>")
REPEAT_MIN_UNIT = 64
"""Shorter repeats are ordinary text (a table's rows, a list)."""
REPEAT_MIN_DISTINCT = 8
REPEAT_COPIES = 4
REPEAT_CHECK_EVERY = 512


@dataclass
class StreamGuard:
    window: int
    threshold: int
    _since_check: int = 0
    _period: int = 0

    def may_trip(self, added: str) -> bool:
        """Only text that closes a tag can bring the tag count up, and a repetition is looked
        for every `REPEAT_CHECK_EVERY` characters (saves a scan per token)."""
        self._since_check += len(added)
        return ">" in added or self._since_check >= REPEAT_CHECK_EVERY

    def tripped(self, content: str) -> bool:
        tail = content[-self.window :]
        if len(_CLOSING_TAG.findall(tail)) >= self.threshold:
            self._period = 0
            return True
        if self._since_check >= REPEAT_CHECK_EVERY:
            self._since_check = 0
            self._period = _repeat_period(tail)
            return self._period > 0
        return False

    def cut(self, content: str) -> str:
        """`content` without its repeating tail."""
        if self._period:
            return _after_first_copy(content, self._period)
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


def _repeat_period(tail: str) -> int:
    """The shortest period with which `tail` ends in `REPEAT_COPIES` copies of one text; 0: none."""
    n = len(tail)
    last = tail[-1:]
    for period in range(REPEAT_MIN_UNIT, n // REPEAT_COPIES + 1):
        if tail[n - 1 - period] != last:  # most periods fail here, before any slice is made
            continue
        unit = tail[n - period:]
        if len(set(unit)) < REPEAT_MIN_DISTINCT:  # a rule of "====" is not a loop
            continue
        if all(tail[n - (k + 1) * period: n - k * period] == unit for k in range(1, REPEAT_COPIES)):
            return period
    return 0


def _after_first_copy(content: str, period: int) -> str:
    """`content` cut after the first copy of its periodic tail."""
    start = len(content) - period
    while start - period >= 0 and content[start - period:start] == content[start:start + period]:
        start -= period
    # The periodic run may begin inside the earliest whole copy: back up character by character.
    while start > 0 and content[start - 1] == content[start - 1 + period]:
        start -= 1
    return content[: start + period]
