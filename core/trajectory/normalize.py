"""Turning other tools' message records into swedeck messages, and messages into steps.

Other formats have no `message_type`; it is inferred from the conversation's shape:
first system -> system, first user -> task, an assistant message with a command ->
action (else assistant_message), what answers an action -> observation (the submission's
output -> final), a user message after a command-less response or marked by
mini-swe-agent as a format error (`extra.interrupt_type`) -> format_error.

A step is one model query (`is_step`): every assistant message but the submission record
(`final`, which older swedeck files wrote as an assistant message) and demonstrations
(SWE-agent's `is_demo`). `build_steps`, the live file's index and the replay model all
count steps by this one rule, so the step numbers of a file are the same everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import compress
from typing import Any, cast

from ..actions import actions_of
from ..messages import Action, FunctionCall, Message, MessageError, MessageExtra, MessageType, Role, ToolCall
from .coerce import mapping, optional_str
from .lazy import StepList
from .outline import heads

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
        role=cast(Role, role),
        content=content,
        tool_calls=tool_calls(record.get("tool_calls")),
        tool_call_id=optional_str(record.get("tool_call_id")),
        name=optional_str(record.get("name")),
        cache_control=cache_control if isinstance(cache_control, dict) else None,
        extra=message_extra(merged),
    )


_ROLES = frozenset(("system", "user", "assistant", "tool", "exit"))


def check_roles(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The role of every record, checked up front so that a lazy reader fails at load, not mid-replay."""
    roles: list[Any] = [record.get("role") for record in heads(records)]
    try:
        if set(roles) <= _ROLES:  # the usual file: one pass at C speed (10,000 records of 24 MB: 1 ms, not 29)
            return roles
    except TypeError:  # a list or an object as a role: said below
        pass
    checked = []
    for number, raw in enumerate(roles):
        role = _ROLE_ALIASES.get(str(raw), raw)
        if not isinstance(role, str) or role not in _ROLES:
            raise ValueError(f"message {number}: unknown message role {raw!r}")
        checked.append(role)
    return checked


def foreign_extra(record: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of a foreign record that are not chat fields, flattened with its own `extra`."""
    extra = {key: value for key, value in record.items() if key not in _TOP_LEVEL and key != "extra"}
    if isinstance(record.get("extra"), Mapping):
        extra.update(record["extra"])
    return extra


def message_extra(data: dict[str, Any]) -> MessageExtra:
    """MessageExtra from foreign data: a value of the wrong type for a swedeck field is kept
    under `raw_<name>` instead of failing the whole file."""
    try:
        return MessageExtra.from_record(data)
    except MessageError:
        bad = [key for key, value in data.items() if key in _EXTRA_FIELDS and not _fits(key, value)]
        if not bad:
            raise
    for key in bad:
        data[f"raw_{key}"] = data.pop(key)
    data.setdefault("message_type", MessageType.USER_MESSAGE)
    return MessageExtra.from_record(data)


_EXTRA_FIELDS = frozenset(MessageExtra.__struct_fields__) - {"unknown"}


def _fits(key: str, value: object) -> bool:
    """Whether `value` is one a MessageExtra takes for its field `key`."""
    try:
        MessageExtra.from_record({"message_type": MessageType.USER_MESSAGE, key: value})
    except MessageError:
        return False
    return True


def tool_calls(raw: object) -> tuple[ToolCall, ...] | None:
    if not isinstance(raw, list) or not raw:
        return None
    calls = []
    for number, call in enumerate(raw):
        if not isinstance(call, Mapping):
            continue
        function = mapping(call.get("function"))
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append(ToolCall(id=str(call.get("id") or f"call_{number}"), type=str(call.get("type") or "function"),
                              function=FunctionCall(name=str(function.get("name") or ""), arguments=arguments)))
    return tuple(calls) or None


def is_demo(message: Message) -> bool:
    """A demonstration put into the history (SWE-agent's `put_demos_in_history`), not a query of this run."""
    return bool(message.extra.unknown.get("is_demo"))


def counts_as_step(role: str, message_type: MessageType | str | None, demo: bool = False) -> bool:
    """The step rule on a message's parts, for readers that have not parsed the message."""
    return role == "assistant" and message_type != MessageType.FINAL and not demo


def is_step(message: Message) -> bool:
    return counts_as_step(message.role, message.message_type, is_demo(message))


class TypeInference:
    """`message_type` from a conversation's shape, one block at a time.

    A block starts at an assistant message (or at the first message) and runs to the next
    one: what a message is depends only on its block and on where the first system and
    the first user message are, so a lazy reader infers the types of one step alone.
    """

    def __init__(self, assistants: list[int], first_system: int | None, first_user: int | None,
                 submission: str | None = None):
        self.assistants = assistants
        self.first_system = first_system
        self.first_user = first_user
        self.submission = submission

    @classmethod
    def of(cls, roles: list[Any], submission: str | None = None) -> TypeInference:
        """From the records' roles (aliases such as `developer` allowed)."""
        if any(role in _ROLE_ALIASES for role in set(map(str, roles)) - _ROLES):
            roles = [_ROLE_ALIASES.get(str(role), role) for role in roles]
        return cls(list(compress(range(len(roles)), map("assistant".__eq__, roles))),
                   _first(roles, "system"), _first(roles, "user"), submission)

    def blocks(self, size: int) -> list[tuple[int, int]]:
        starts = [0] + [i for i in self.assistants if i > 0]
        return [(start, starts[k + 1] if k + 1 < len(starts) else size) for k, start in enumerate(starts)]

    def block(self, messages: list[Message], start: int) -> list[Message]:
        out: list[Message] = []
        actions: tuple[Action, ...] = ()
        unanswered = 0
        after_plain_response = False
        for index, message in enumerate(messages, start):
            update: dict[str, Any] = {}
            if message.role == "system":
                kind = MessageType.SYSTEM if index == self.first_system else MessageType.USER_MESSAGE
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
            elif index == self.first_user:
                kind = MessageType.TASK
            elif _marked_format_error(message):
                kind, unanswered, after_plain_response = MessageType.FORMAT_ERROR, 0, False
            elif unanswered:
                kind = MessageType.FINAL if _is_submission(message, actions, self.submission) else MessageType.OBSERVATION
                unanswered -= 1
            elif after_plain_response:
                kind, after_plain_response = MessageType.FORMAT_ERROR, False
            else:
                kind = MessageType.USER_MESSAGE
            update["message_type"] = kind
            out.append(message.with_extra(**update))
        return out


def _first(roles: list[Any], role: str) -> int | None:
    try:
        return roles.index(role)
    except ValueError:
        return None


def _marked_format_error(message: Message) -> bool:
    """mini-swe-agent v2 marks its format-error turns with `extra.interrupt_type`."""
    return message.extra.unknown.get("interrupt_type") == "FormatError"


def _is_submission(message: Message, actions: tuple[Action, ...], submission: str | None) -> bool:
    if not any(marker in action.command for action in actions for marker in SUBMIT_MARKERS):
        return False
    text = message.text
    if submission and text.strip() == submission.strip():
        return True
    return not text.lstrip().startswith("<returncode>")


def build_steps(messages: Sequence[Message]) -> StepList:
    """One step per model query (`is_step`), with the messages that answer it."""
    return StepList(messages, [index for index, message in enumerate(messages) if is_step(message)])
