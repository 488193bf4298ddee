"""mini-swe-agent `.traj.json`: a bare list of messages, or `{"messages": [...], "info": {...}}`.

Both of its formats: text (```mswea_bash_command / ```bash blocks in the assistant content)
and tool calls (`tool_calls` + `role: tool`); its last message may be `role: exit`. v2 keeps
the provider's response on each assistant message: its `usage` is the recorded usage of
that query. Messages are built per step, when read (`lazy.MessageList`).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import compress
from typing import Any

from ...messages import Message, Usage
from ..coerce import as_mapping_list, optional_str
from ..lazy import MessageList, StepList
from ..model import Fidelity, Trajectory, TrajectoryFormat
from ..normalize import TypeInference, build_message, check_roles, foreign_extra
from ..outline import RawList, records_at
from .common import info_from
from .source import Source

FORMAT: TrajectoryFormat = "mini-swe-agent"
FIDELITY = Fidelity(prompt="reconstructed", parts={"system prompt": "recorded", "tools": "unknown",
                                                   "messages": "reconstructed"},
                    notes=["mini-swe-agent keeps the conversation; each query's prompt is its prefix"])
"""What a file of this format records (`fidelity.fidelity_of`)."""


def accepts(source: Source) -> bool:
    document = source.document
    return isinstance(document, list | RawList) or (isinstance(document, Mapping) and "messages" in document)


def read(source: Source) -> Trajectory:
    document = source.document
    raw_info: Any = {}
    if isinstance(document, Mapping):
        raw_info = document.get("info") or {}
        if not isinstance(raw_info, Mapping):
            raise ValueError(f"`info` is {type(raw_info).__name__}, not an object")
        records = as_mapping_list(records_at(document, "messages"), "`messages`")
    else:
        records = as_mapping_list(document.records() if isinstance(document, RawList) else document, "the message list")
    info = info_from(raw_info)
    roles = check_roles(records)
    for index in compress(range(len(roles)), map("exit".__eq__, roles)):  # v2 keeps the ending on the exit message too
        if isinstance(ending := records[index].get("extra"), Mapping):
            info.exit_status = info.exit_status or optional_str(ending.get("exit_status"))
            info.submission = info.submission or optional_str(ending.get("submission"))
    inference = TypeInference.of(roles, info.submission)

    def build(start: int, end: int) -> list[Message]:
        block = [build_message(record, _with_usage(foreign_extra(record)), None) for record in records[start:end]]
        return inference.block(block, start)

    messages = MessageList(len(records), inference.assistants, build, source.path)
    return Trajectory(path=source.path, format=FORMAT, messages=messages,
                      steps=StepList(messages, inference.assistants), info=info)


def _with_usage(extra: dict[str, Any]) -> dict[str, Any]:
    """v2's `response.usage` (the provider's own count) as the message's recorded usage."""
    response = extra.get("response")
    usage = response.get("usage") if isinstance(response, Mapping) else None
    if "usage" in extra or not isinstance(usage, Mapping):
        return extra
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    extra["usage"] = Usage(prompt_tokens=_count(usage.get("prompt_tokens")),
                           completion_tokens=_count(usage.get("completion_tokens")), cached_tokens=_count(cached))
    return extra


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


