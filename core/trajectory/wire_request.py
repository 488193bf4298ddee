"""A step's request as the agent sent it (`swedeck prompt PATH --step N --wire`, SPEC §18).

- A record of `swedeck record` (or `--acp`) keeps each request's body as it passed (its JSON,
  secret values masked by swedeck's redaction, credential headers never taken): printed as
  recorded.
- Claude Code 2.1's own `api-request*` records rebuild a request (`claude_code._wire_body`):
  printed with what those records do not give.
- Any other file has no request body: swedeck's messages are what `prompt` prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .model import Trajectory
from .readers.api_requests import EXCHANGE

CLAUDE_CODE_GAPS = ("the system prompt's first block (x-anthropic-billing-header), which Claude Code adds as it sends",
                    "the request's metadata", "whether it streamed (stream)",
                    "the headers (betas are in the anthropic-beta header)")
"""Checked against what a scripted server received from the real Claude Code 2.1.332 (tests/test_record.py)."""


@dataclass
class WireRequest:
    body: Any
    wire: str
    """`anthropic`, `chat`, `responses`, or `raw`."""
    source: str
    notes: list[str] = field(default_factory=list)

    @property
    def tools(self) -> list[Any] | None:
        tools = self.body.get("tools") if isinstance(self.body, Mapping) else None
        return list(tools) if isinstance(tools, list) else None


def wire_request(trajectory: Trajectory, step: int) -> WireRequest | None:
    """Step `step`'s request body as sent, where the file holds or rebuilds it; else None."""
    for event in trajectory.meta_events:
        if event.event == EXCHANGE and event.data.get("step") == step:
            number = event.data.get("number")
            return WireRequest(event.data.get("request"), str(event.data.get("wire") or "raw"),
                               f"recorded by swedeck record (exchange {number}, {event.data.get('path')})",
                               ["secret values are masked as swedeck masks every record; credential headers are "
                                "never recorded"])
    body = trajectory.rebuilt_requests.get(step)
    if body is not None:
        return WireRequest(body, "anthropic", "rebuilt from Claude Code's own api-request records",
                           [f"not in those records: {gap}" for gap in CLAUDE_CODE_GAPS])
    return None


_PARTS = (("system", "system prompt"), ("tools", "tools"), ("messages", "messages"))
_EXPECTED = {"metadata": "the request's metadata", "stream": "whether it streamed"}
"""Fields Claude Code's records never give: their absence is no disagreement."""


def agreement(rebuilt: Mapping[str, Any], sent: Mapping[str, Any]) -> dict[str, Any]:
    """How a request rebuilt from the agent's own records agrees with the one a record of the
    same run holds (issue 63): `agrees` when the system prompt (but the billing block Claude
    Code adds as it sends), the tools and the messages are the same; `same`, the parts that
    are; `differs`, each field that is not, in words (where in it, what)."""
    same: list[str] = []
    differs: dict[str, str] = {}
    for key, name in _PARTS:
        mine, theirs = rebuilt.get(key), sent.get(key)
        if mine == theirs:
            same.append(name)
        elif key == "system" and isinstance(theirs, list) and theirs and mine == theirs[1:] \
                and "billing" in str(theirs[0]).lower():
            same.append(f"{name} but its billing block")  # a gap the records always have, not a disagreement
        elif key == "messages" and isinstance(mine, list) and isinstance(theirs, list) and _words(mine) == _words(theirs):
            same.append(name)  # the same words; where a turn's form differs, said below
            forms = [index for index, (left, right) in enumerate(zip(mine, theirs, strict=True)) if left != right]
            differs[key] = f"item {', '.join(map(str, forms))}: the same words, as a string in the records and as " \
                           "text blocks sent (or the other way)"
        else:
            differs[key] = _difference(mine, theirs)
    agrees = all(key not in differs or name in same for key, name in _PARTS)
    for key in sorted(set(rebuilt) | set(sent)):
        if key not in ("system", "tools", "messages") and rebuilt.get(key) != sent.get(key):
            differs[key] = _EXPECTED.get(key) or f"{_short(rebuilt.get(key))} in the records, {_short(sent.get(key))} sent"
            agrees = agrees and key in _EXPECTED
    return {"agrees": agrees, "same": same, "differs": differs}


def _words(messages: list[Any]) -> list[Any]:
    """The messages with a content of text blocks alone as its text (the form Claude Code's
    records and the wire may give a system turn differently), else as they are."""
    out = []
    for message in messages:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list) and content and all(
                isinstance(block, Mapping) and block.get("type") == "text" and set(block) <= {"type", "text", "cache_control"}
                for block in content):
            message = {**message, "content": "\n".join(str(block.get("text")) for block in content)}
        out.append(message)
    return out


def _difference(mine: Any, theirs: Any) -> str:
    """Where two parts of a request first differ: the item, then the key."""
    if isinstance(mine, list) and isinstance(theirs, list):
        if len(mine) != len(theirs):
            return f"{len(mine)} items in the records, {len(theirs)} sent"
        for index, (left, right) in enumerate(zip(mine, theirs, strict=True)):
            if left != right:
                if isinstance(left, Mapping) and isinstance(right, Mapping):
                    keys = sorted(key for key in set(left) | set(right) if left.get(key) != right.get(key))
                    return f"item {index}: {', '.join(keys)}" + (" (cache marks)" if keys == ["cache_control"] else "")
                return f"item {index}"
    return f"{_short(mine)} in the records, {_short(theirs)} sent"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
