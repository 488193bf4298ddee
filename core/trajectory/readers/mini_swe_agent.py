"""mini-swe-agent `.traj.json`: a bare list of messages, or `{"messages": [...], "info": {...}}`.

Both of its formats: text (```mswea_bash_command / ```bash blocks in the assistant content)
and tool calls (`tool_calls` + `role: tool`); its last message may be `role: exit`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import Trajectory, TrajectoryInfo
from ..normalize import as_mapping_list, build_message, build_steps, foreign_extra, infer_types
from .common import info_from
from .source import Source

FORMAT = "mini-swe-agent"


def accepts(source: Source) -> bool:
    document = source.document
    return isinstance(document, list) or (isinstance(document, Mapping) and "messages" in document)


def read(source: Source) -> Trajectory:
    document = source.document
    raw_info: Any = {}
    if isinstance(document, Mapping):
        raw_info = document.get("info") or {}
        if not isinstance(raw_info, Mapping):
            raise ValueError(f"`info` is {type(raw_info).__name__}, not an object")
        records = as_mapping_list(document.get("messages"), "`messages`")
    else:
        records = as_mapping_list(document, "the message list")
    info = info_from(raw_info)
    exit_records = [r for r in records if r.get("role") == "exit" and isinstance(r.get("extra"), Mapping)]
    for record in exit_records:  # v2 keeps the ending on the exit message too
        info.exit_status = info.exit_status or _str(record["extra"].get("exit_status"))
        info.submission = info.submission or _str(record["extra"].get("submission"))
    messages = [build_message(record, foreign_extra(record), None) for record in records]
    messages = infer_types(messages, info.submission)
    return Trajectory(path=source.path, format=FORMAT, messages=messages, steps=build_steps(messages), info=info)


def _str(value: Any) -> str | None:
    return None if value is None else str(value)
