"""The message model (SPEC §6.2).

Messages are OpenAI-style chat messages plus an `extra` record that is stripped before a
message is sent to a model. They are immutable: the history only ever grows, and history
processors build changed copies instead of editing in place.
"""

from __future__ import annotations

import re
import time
from enum import Enum
from typing import Any, Literal

import msgspec
from pydantic import BaseModel, ConfigDict, Field


class MessageType(str, Enum):
    SYSTEM = "system"
    TASK = "task"
    ACTION = "action"
    OBSERVATION = "observation"
    USER_MESSAGE = "user_message"
    ASSISTANT_MESSAGE = "assistant_message"
    FORMAT_ERROR = "format_error"
    INTERRUPT = "interrupt"
    FINAL = "final"
    EXIT = "exit"
    COMPACTION = "compaction"
    """The history before it was replaced by its content, a summary (Claude Code's compact,
    Codex's `compacted`, OpenHands' condensation): the next query's prompt starts here."""


Role = Literal["system", "user", "assistant", "tool", "exit"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class Usage(_Record):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    estimated: bool = False
    """True when the provider sent no usage and swedeck counted the tokens itself."""


class ModelStats(msgspec.Struct):
    """What a model's queries cost so far: the live model's running count and a trajectory's
    `info.model_stats` record, under mini-swe-agent's names."""

    instance_cost: float = 0.0
    api_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, cost: float, usage: Usage | None, calls: int = 1) -> None:
        self.api_calls += calls
        self.instance_cost += cost
        if usage is not None:
            self.prompt_tokens += usage.prompt_tokens
            self.completion_tokens += usage.completion_tokens


class ContextInfo(_Record):
    window: int | None = None
    prompt_tokens: int | None = None
    left_percent: float | None = None


class FunctionCall(_Record):
    name: str
    arguments: str = ""


class ToolCall(_Record):
    id: str
    type: str = "function"
    function: FunctionCall


class Action(_Record):
    """A bash command parsed from an assistant message."""

    command: str
    tool_call_id: str | None = None
    reasoning: str | None = None


class MessageExtra(_Record):
    """Everything swedeck knows about a message beyond what the model is sent.

    Unknown keys written by other tools survive a load (`extra="allow"`).
    """

    message_type: MessageType
    step: int | None = None
    turn: int | None = None
    timestamp: float | None = None
    tags: tuple[str, ...] = ()
    actions: tuple[Action, ...] = ()
    usage: Usage | None = None
    cost: float | None = None
    context: ContextInfo | None = None
    command: str | None = None
    """On an observation and on a human-mode command: the command as it ran (edited or not).
    Not `actions`: mini-swe-agent's inspector starts a page at every message with actions."""
    approval: str | None = None
    """On an observation: how its command came to run (`approved`, `edited`, `auto: yolo`,
    `auto: whitelisted`, `auto: always allowed: git status …`)."""
    raw_output: str | None = None
    """On an observation: the command's output before the observation template wrapped it
    (mini-swe-agent v2's name); the output pane shows this, the prompt the content."""
    returncode: int | None = None
    duration_s: float | None = None
    output_truncated: bool | None = None
    timed_out: bool | None = None
    reasoning: str | None = None
    stream_guard: bool | None = None
    finish_reason: str | None = None
    """Why the provider ended the answer (`length`: it hit `max_tokens`), when it said."""
    processors: str | None = None
    """Hash of the processor config that built the prompt of this query (§11.2)."""
    mode: str | None = None


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str | list[dict[str, Any]] | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    cache_control: dict[str, Any] | None = None
    extra: MessageExtra = Field(default_factory=lambda: MessageExtra(message_type=MessageType.USER_MESSAGE))

    @property
    def message_type(self) -> MessageType:
        return self.extra.message_type

    @property
    def text(self) -> str:
        """The content as plain text (list contents joined by their text parts)."""
        return content_text(self.content)

    def with_extra(self, **update: Any) -> Message:
        return self.model_copy(update={"extra": self.extra.model_copy(update=update)})

    def to_api(self) -> dict[str, Any]:
        """The message as a model API gets it: no `extra`, no empty fields."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.model_dump() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        if self.cache_control is not None:
            out["cache_control"] = self.cache_control
        return out

    def to_record(self) -> dict[str, Any]:
        """The message as a trajectory stores it."""
        return self.model_dump(mode="json", exclude_none=True, exclude_defaults=False)


_SURROGATE = re.compile("[\ud800-\udfff]")
"""In a Python str a surrogate code point is always a lone one (pairs decode to one character)."""


def valid_text(text: str) -> str:
    """`text` as valid Unicode: a lone UTF-16 surrogate (`"\\ud83d"` in a provider's JSON) becomes
    U+FFFD, so the text can be stored, shown and sent back (UTF-8 cannot encode it)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def content_text(content: str | list[dict[str, Any]] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))


def make_message(role: Role, content: str | None, message_type: MessageType, **extra: Any) -> Message:
    """A new message stamped with the current time."""
    extra.setdefault("timestamp", time.time())
    fields = {key: extra.pop(key) for key in ("tool_calls", "tool_call_id", "name") if key in extra}
    return Message(role=role, content=content, extra=MessageExtra(message_type=message_type, **extra), **fields)


def task_text(message: Message) -> str:
    """The task a task message carries (its `task` extra, else its text)."""
    return str((message.extra.model_extra or {}).get("task") or message.text)


def last_submission(messages: list[Message]) -> str | None:
    """The current turn's submission when its task was submitted (perhaps ""), None while it
    is open: a session resumed after its submission is still Submitted with it."""
    for message in reversed(messages):
        if message.message_type == MessageType.FINAL:
            return message.text
        if message.message_type == MessageType.TASK:
            return None
    return None


def has_open_turn(messages: list[Message]) -> bool:
    """Whether the last task in a (resumed) history has not been submitted yet."""
    for message in reversed(messages):
        if message.message_type == MessageType.FINAL:
            return False
        if message.message_type == MessageType.TASK:
            return True
    return False


def last_task(messages: list[Message]) -> str:
    """The task of the last task message in a history ("" when there is none)."""
    for message in reversed(messages):
        if message.message_type == MessageType.TASK:
            return task_text(message)
    return ""
