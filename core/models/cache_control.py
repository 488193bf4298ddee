"""Provider prompt caching marks (`model.set_cache_control: default_end`).

Like mini-swe-agent: only the last message is marked `ephemeral` (older marks are
removed, Anthropic allows only a few), on copies of the API dicts. Text content becomes a
one-part list because the mark lives on a content part; tool messages carry it on the
message itself, which is where providers accept it.
"""

from __future__ import annotations

import copy
from typing import Any

from ..messages import Message

EPHEMERAL = {"type": "ephemeral"}


def request_messages(messages: list[Message], mode: str | None) -> list[dict[str, Any]]:
    """The messages of a request as they are sent: their API form, with the model's cache
    mark. The model layer sends these and the prompt inspector rebuilds them (SPEC §11.2)."""
    return set_cache_control([message.to_api() for message in messages], mode)


def set_cache_control(messages: list[dict[str, Any]], mode: str | None) -> list[dict[str, Any]]:
    if mode is None or not messages:
        return messages
    if mode != "default_end":
        raise ValueError(f"unknown set_cache_control mode {mode!r}")
    out = copy.deepcopy(messages)
    for message in out:
        message.pop("cache_control", None)
        if isinstance(message.get("content"), list):
            for part in message["content"]:
                if isinstance(part, dict):
                    part.pop("cache_control", None)
    last = out[-1]
    if last.get("role") == "tool":
        last["cache_control"] = dict(EPHEMERAL)
        return out
    content = last.get("content")
    if isinstance(content, str) or content is None:
        last["content"] = [{"type": "text", "text": content or "", "cache_control": dict(EPHEMERAL)}]
    elif content and isinstance(content[-1], dict):
        content[-1]["cache_control"] = dict(EPHEMERAL)
    return out
