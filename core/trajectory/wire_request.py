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
