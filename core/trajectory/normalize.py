"""Turning other tools' message records into swedeck messages, and messages into steps.

Other formats have no `message_type`; it is inferred from the conversation's shape:
first system -> system, first user -> task, an assistant message with a command ->
action (else assistant_message), what answers an action -> observation (the submission's
output -> final), a user message after a command-less response -> format_error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..messages import Action, Message, MessageExtra, MessageType, ToolCall
from .actions import text_actions, tool_call_actions
from .model import Step

_TOP_LEVEL = ("role", "content", "tool_calls", "tool_call_id", "name", "cache_control")
_ROLE_ALIASES = {"developer": "system", "function": "tool"}
SUBMIT_MARKERS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")


def build_message(record: Mapping[str, Any], extra: Mapping[str, Any], message_type: MessageType | None) -> Message:
    """A Message from a foreign record; keys swedeck has no field for go into `extra`."""
    role = _ROLE_ALIASES.get(str(record.get("role")), record.get("role"))
    if role not in ("system", "user", "assistant", "tool", "exit"):
        raise ValueError(f"unknown message role {record.get('role')!r}")
    content = record.get("content")
    if content is not None and not isinstance(content, str):
        content = [part for part in content if isinstance(part, dict)] if isinstance(content, list) else str(content)
    merged = dict(extra)
    if message_type is not None:
        merged["message_type"] = message_type
    merged.setdefault("message_type", MessageType.USER_MESSAGE)
    cache_control = record.get("cache_control")
    return Message(
        role=role,
        content=content,
        tool_calls=tool_calls(record.get("tool_calls")),
        tool_call_id=_optional_str(record.get("tool_call_id")),
        name=_optional_str(record.get("name")),
        cache_control=cache_control if isinstance(cache_control, dict) else None,
        extra=message_extra(merged),
    )


def foreign_extra(record: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of a foreign record that are not chat fields, flattened with its own `extra`."""
    extra = {key: value for key, value in record.items() if key not in _TOP_LEVEL and key != "extra"}
    if isinstance(record.get("extra"), Mapping):
        extra.update(record["extra"])
    return extra


def message_extra(data: dict[str, Any]) -> MessageExtra:
    """MessageExtra from foreign data: a value of the wrong type for a swedeck field is kept
    under `raw_<name>` instead of failing the whole file."""
    while True:
        try:
            return MessageExtra(**data)
        except ValidationError as error:
            bad = {str(item["loc"][0]) for item in error.errors() if item.get("loc")} & set(data)
            if not bad:
                raise
            for key in bad:
                data[f"raw_{key}"] = data.pop(key)
            data.setdefault("message_type", MessageType.USER_MESSAGE)


def tool_calls(raw: Any) -> tuple[ToolCall, ...] | None:
    if not isinstance(raw, list) or not raw:
        return None
    calls = []
    for number, call in enumerate(raw):
        if not isinstance(call, Mapping):
            continue
        function = call.get("function") if isinstance(call.get("function"), Mapping) else {}
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append(ToolCall(id=str(call.get("id") or f"call_{number}"), type=str(call.get("type") or "function"),
                              function={"name": str(function.get("name") or ""), "arguments": arguments}))
    return tuple(calls) or None


def actions_of(message: Message) -> tuple[Action, ...]:
    if message.extra.actions:
        return message.extra.actions
    if message.tool_calls:
        return tool_call_actions(message.tool_calls)
    return text_actions(message.text)


def infer_types(messages: list[Message], submission: str | None = None) -> list[Message]:
    """Messages with `message_type` and `actions` filled in from the conversation's shape."""
    out: list[Message] = []
    seen_system = seen_task = False
    actions: tuple[Action, ...] = ()
    unanswered = 0
    after_plain_response = False
    for message in messages:
        update: dict[str, Any] = {}
        if message.role == "system":
            kind = MessageType.SYSTEM if not seen_system else MessageType.USER_MESSAGE
            seen_system = True
        elif message.role == "exit":
            kind = MessageType.EXIT
        elif message.role == "assistant":
            actions = actions_of(message)
            kind = MessageType.ACTION if actions else MessageType.ASSISTANT_MESSAGE
            if actions and not message.extra.actions:
                update["actions"] = actions
            unanswered, after_plain_response = len(actions), not actions
        elif message.role == "tool":
            kind, unanswered = MessageType.OBSERVATION, max(unanswered - 1, 0)
        elif not seen_task:
            kind, seen_task = MessageType.TASK, True
        elif unanswered:
            kind = MessageType.FINAL if _is_submission(message, actions, submission) else MessageType.OBSERVATION
            unanswered -= 1
        elif after_plain_response:
            kind, after_plain_response = MessageType.FORMAT_ERROR, False
        else:
            kind = MessageType.USER_MESSAGE
        update["message_type"] = kind
        out.append(message.model_copy(update={"extra": message.extra.model_copy(update=update)}))
    return out


def _is_submission(message: Message, actions: tuple[Action, ...], submission: str | None) -> bool:
    if not any(marker in action.command for action in actions for marker in SUBMIT_MARKERS):
        return False
    text = message.text
    if submission and text.strip() == submission.strip():
        return True
    return not text.lstrip().startswith("<returncode>")


def build_steps(messages: list[Message]) -> list[Step]:
    """One step per assistant message (a model query), with the messages that answer it."""
    steps: list[Step] = []
    for index, message in enumerate(messages):
        if message.role != "assistant":
            continue
        answers = []
        for later in range(index + 1, len(messages)):
            other = messages[later]
            if other.role == "assistant":
                break
            if other.message_type in (MessageType.OBSERVATION, MessageType.FINAL, MessageType.FORMAT_ERROR):
                answers.append(later)
        extra = message.extra
        steps.append(Step(
            index=len(steps) + 1, message_index=index, actions=actions_of(message),
            observation_indices=tuple(answers), prompt_end=index, usage=extra.usage, cost=extra.cost,
            context=extra.context, processors=extra.processors,
        ))
    return steps


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def as_mapping_list(value: Any, what: str) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        raise ValueError(f"{what} is {type(value).__name__}, not a list")
    bad = [i for i, item in enumerate(value) if not isinstance(item, Mapping)]
    if bad:
        raise ValueError(f"{what}[{bad[0]}] is {type(value[bad[0]]).__name__}, not an object")
    return value
