"""SWE-agent `.traj`: `history` (the messages, with SWE-agent's own `message_type`s),
`trajectory` (one record per step: response, action, observation, state) and `info`.

History entries keep their positions one to one. `replay_config` and `state` may be JSON
strings; every key may be missing (a trajectory without `history` is rebuilt from
`trajectory`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...messages import Action, MessageType
from ..model import Trajectory
from ..normalize import as_mapping_list, build_message, build_steps, foreign_extra
from .common import info_of, maybe_parsed, model_name
from .source import Source

FORMAT = "swe-agent"

_TYPES = {
    "system_prompt": MessageType.SYSTEM,
    "observation": MessageType.OBSERVATION,
    "action": MessageType.ACTION,
    "thought": MessageType.ASSISTANT_MESSAGE,
    "user": MessageType.USER_MESSAGE,
    "demonstration": MessageType.USER_MESSAGE,
}


def accepts(source: Source) -> bool:
    document = source.document
    return isinstance(document, Mapping) and ("history" in document or "trajectory" in document)


def read(source: Source) -> Trajectory:
    document = source.document
    raw_info, info = info_of(document)
    config = maybe_parsed(document.get("replay_config"))
    if isinstance(config, Mapping):
        info.config = dict(config)
        info.model_name = model_name(info.config)
    elif config is not None:
        info.warnings.append("replay_config is neither an object nor a JSON string; ignored")
    records = document.get("trajectory") or []
    steps_raw = as_mapping_list(records, "`trajectory`")
    if document.get("history"):
        messages = _from_history(as_mapping_list(document["history"], "`history`"))
    else:
        messages = _from_steps(steps_raw)
    steps = build_steps(messages)
    states = [maybe_parsed(record.get("state")) for record in steps_raw]
    steps = [replace(step, state=states[i] if i < len(states) and isinstance(states[i], Mapping) else None)
             for i, step in enumerate(steps)]
    return Trajectory(path=source.path, format=FORMAT, messages=messages, steps=steps, info=info)


def _from_history(history: list[Mapping[str, Any]]) -> list:
    messages = []
    seen_task = False
    for record in history:
        extra = foreign_extra(record)
        kind = _TYPES.get(str(extra.pop("message_type", "")))
        ids = extra.pop("tool_call_ids", None)
        fields = dict(record)
        if isinstance(ids, list) and ids and record.get("tool_call_id") is None:
            fields["tool_call_id"] = str(ids[0])
            if len(ids) > 1:
                extra["tool_call_ids"] = ids
        role = fields.get("role")
        if extra.get("is_demo"):
            kind = MessageType.USER_MESSAGE if role != "assistant" else MessageType.ASSISTANT_MESSAGE
        elif role == "system" and kind is None:
            kind = MessageType.SYSTEM
        elif role == "user" and not seen_task and kind in (None, MessageType.OBSERVATION):
            kind, seen_task = MessageType.TASK, True  # the issue: SPEC §7 counts it as the first observation
        elif role == "assistant" and kind is None:
            kind = MessageType.ACTION if extra.get("action") else MessageType.ASSISTANT_MESSAGE
        elif kind is None:
            kind = MessageType.OBSERVATION if role == "tool" else MessageType.USER_MESSAGE
        if role == "assistant":
            action, thought = extra.pop("action", None), extra.pop("thought", None)
            if isinstance(thought, str) and thought:
                extra["reasoning"] = thought if thought != _text(record.get("content")) else None
            if isinstance(action, str) and action.strip() and not extra.get("actions"):
                ids = [call.get("id") for call in record.get("tool_calls") or [] if isinstance(call, Mapping)]
                extra["actions"] = (Action(command=action, tool_call_id=str(ids[0]) if ids else None),)
                kind = MessageType.ACTION if kind == MessageType.ASSISTANT_MESSAGE else kind
            extra = {key: value for key, value in extra.items() if value is not None}
        messages.append(build_message(fields, extra, kind))
    return messages


def _from_steps(steps: list[Mapping[str, Any]]) -> list:
    """Messages rebuilt from `trajectory` alone: one assistant message and one observation per step."""
    messages = []
    for record in steps:
        action = record.get("action")
        response = record.get("response") or record.get("thought") or ""
        extra: dict[str, Any] = {}
        if isinstance(action, str) and action.strip():
            extra["actions"] = (Action(command=action),)
        messages.append(build_message({"role": "assistant", "content": str(response)}, extra,
                                      MessageType.ACTION if extra else MessageType.ASSISTANT_MESSAGE))
        if "observation" in record:
            messages.append(build_message({"role": "user", "content": str(record.get("observation") or "")},
                                          {}, MessageType.OBSERVATION))
    return messages


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""
