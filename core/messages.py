"""The message model (SPEC §6.2).

Messages are OpenAI-style chat messages plus an `extra` record that is stripped before a
message is sent to a model. They are immutable: the history only ever grows, and history
processors build changed copies instead of editing in place (`updated`, `with_extra`).

They are msgspec Structs, not pydantic models, so that the replay draws its first frame
without importing pydantic (bench B2). Each part keeps the keys other tools wrote that it has
no field for (`unknown`), as pydantic's `extra="allow"` did, and writes them back after its
fields; `from_record` reads a record with msgspec's lax rules (docs/trajectory-format.md).
"""

# No `from __future__ import annotations` here: msgspec then reads these classes' annotations
# as objects, not strings it has to evaluate (about 2 ms at the first message a process builds).

import functools
import re
import time
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any, ClassVar, Literal, TypeVar

import msgspec


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

MessageError = msgspec.ValidationError
"""What a record that is not a message raises (a `ValueError`)."""

_R = TypeVar("_R", bound="Record")


class Record(msgspec.Struct, frozen=True, kw_only=True):
    """A part of a message as other tools write it: the keys swedeck has no field for are kept
    in `unknown`, in their order, and written back after the fields (`to_record`).

    Building one from data (`from_record`) checks and converts its fields as JSON allows
    (`"3"` for an int, `1` for a bool); the constructor takes the fields as they are.
    """

    unknown: dict[str, Any] = {}
    _nested: ClassVar[dict[str, tuple[type["Record"], bool]]] = {}
    """Fields that hold records: name -> (record type, whether a sequence of them)."""
    _lenient: ClassVar[frozenset[str]] = frozenset()
    """Fields whose value, when it does not fit, is kept as written in `unknown` (and written
    back as it was) instead of failing the record: the keys swedeck once kept only there."""

    @classmethod
    def from_record(cls: type[_R], data: object) -> _R:
        return msgspec.convert(_fields(cls, data, keep_unknown=True), cls, strict=False)

    def updated(self: _R, **update: Any) -> _R:
        """A copy with `update` set as it is (not checked): fields replaced, other keys
        added to `unknown`."""
        fields = {key: value for key, value in update.items() if key in self.__struct_fields__ and key != "unknown"}
        if len(fields) < len(update):
            fields["unknown"] = {**self.unknown, **{key: value for key, value in update.items() if key not in fields}}
        return msgspec.structs.replace(self, **fields)

    def to_record(self, *, keep_none: bool = False) -> dict[str, Any]:
        """The record as JSON data: fields then unknown keys; None values are left out at this
        level unless `keep_none`."""
        out = _fields_json(self.__struct_fields__, msgspec.structs.astuple(self), 1, keep_none)  # 0 is `unknown`
        if self.unknown:
            out.update(_fields_json(tuple(self.unknown), tuple(self.unknown.values()), 0, keep_none))
        return out


def _fields(cls: type["Record | Message"], data: object, *, keep_unknown: bool) -> dict[str, Any]:
    """`data` as `msgspec.convert` takes it for `cls`: nested records built first, unknown keys
    gathered under `unknown` (a key named `unknown` is one of them) or, for a message, refused."""
    if not isinstance(data, Mapping):
        raise MessageError(f"Expected `object`, got `{type(data).__name__}`")
    names, nested = cls.__struct_fields__, cls._nested
    fields: dict[str, Any] = {}
    unknown: dict[str, Any] = {}
    lenient: frozenset[str] = getattr(cls, "_lenient", frozenset())
    for key, value in data.items():
        if key not in names or key == "unknown":
            if not keep_unknown:
                raise MessageError(f"Object contains unknown field `{key}`")
            unknown[key] = value
        elif key in lenient and value is not None:
            try:
                fields[key] = _fitted(cls, key, value)
            except MessageError:
                unknown[key] = value
        elif key in nested and value is not None:
            fields[key] = _nested_value(key, *nested[key], value)
        else:
            fields[key] = value
    if unknown:
        fields["unknown"] = unknown
    return fields


def _fitted(cls: type["Record | Message"], key: str, value: object) -> Any:
    """`value` as field `key` of `cls` takes it (a `MessageError` when it does not fit)."""
    if key in cls._nested:
        return _nested_value(key, *cls._nested[key], value)
    kind = _field_types(cls)[key]
    return msgspec.convert(value, kind, strict=False)


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    return {field.name: field.type for field in msgspec.structs.fields(cls)}


def _nested_value(key: str, kind: type[Record], many: bool, value: object) -> Any:
    """The record (or the tuple of records) a field holds, built; an error says where, as
    msgspec does (`$.tool_calls[0].function.name`)."""
    if many:
        if not isinstance(value, (list, tuple)):
            raise MessageError(f"Expected `array`, got `{type(value).__name__}` - at `$.{key}`")
        return tuple(_nested_value(f"{key}[{number}]", kind, False, item) for number, item in enumerate(value))
    try:
        return _built(kind, value)
    except msgspec.ValidationError as error:
        message, at, path = str(error).rpartition(" - at `$")
        raise MessageError(f"{message} - at `$.{key}{path}" if at else f"{error} - at `$.{key}`") from None


def _built(kind: type[_R], value: object) -> _R:
    return value if isinstance(value, kind) else kind.from_record(value)


_PLAIN = frozenset((str, int, float, bool, type(None)))


def _fields_json(names: tuple[str, ...], values: tuple[Any, ...], start: int, keep_none: bool) -> dict[str, Any]:
    """`names[start:]` with their values as JSON data, None values left out unless `keep_none`."""
    return {names[number]: value if type(value) in _PLAIN else _json(value)
            for number in range(start, len(names)) if (value := values[number]) is not None or keep_none}


def _json(value: Any) -> Any:
    """A field's value as JSON data (what pydantic's `mode="json"` made of it)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, Record):
        return value.to_record()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {key: _json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(item) for item in value]
    return value


class Usage(Record, frozen=True, kw_only=True):
    prompt_tokens: int = 0
    """Every input token, cached or not, cache writes included."""
    completion_tokens: int = 0
    """Every output token, reasoning included."""
    cached_tokens: int = 0
    """Of the prompt, read from the provider's cache."""
    cache_write_tokens: int | None = None
    """Of the prompt, written to the cache (Anthropic's `cache_creation_input_tokens`), where recorded."""
    reasoning_tokens: int | None = None
    """Of the completion, reasoning, where recorded."""
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


class ContextInfo(Record, frozen=True, kw_only=True):
    window: int | None = None
    prompt_tokens: int | None = None
    left_percent: float | None = None


class FunctionCall(Record, frozen=True, kw_only=True):
    name: str
    arguments: str = ""


class ToolCall(Record, frozen=True, kw_only=True):
    id: str
    type: str = "function"
    function: FunctionCall
    _nested = {"function": (FunctionCall, False)}


class Action(Record, frozen=True, kw_only=True):
    """A bash command parsed from an assistant message."""

    command: str
    tool_call_id: str | None = None
    reasoning: str | None = None


class MessageExtra(Record, frozen=True, kw_only=True):
    """Everything swedeck knows about a message beyond what the model is sent.

    Unknown keys written by other tools survive a load (`unknown`).
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
    task: str | None = None
    """On a task message: the task itself, where the content wraps it in a template."""
    requeried: bool | None = None
    """An attempt the agent asked again for (SWE-agent's refused edit): in the next prompt only."""
    # A compaction (MessageType.COMPACTION, SPEC §17): swedeck's own summaries record all of
    # these; readers of other formats set those their files know (`tokens_before`, `forgotten`).
    summary: str | None = None
    """The summary the model (or the person, `edited`) wrote; the content is it rendered."""
    replaces: tuple[int, ...] | None = None
    """Positions in the history of the messages the summary stands for (swedeck's `summarize`)."""
    undoes: int | None = None
    """On an undo marker: the position of the compaction it takes back."""
    forgotten: tuple[int, ...] | None = None
    """Positions of the messages the compaction dropped (OpenHands' condensation, Inspect's trim)."""
    tokens_before: int | None = None
    tokens_after: int | None = None
    model: str | None = None
    """The model that wrote the summary."""
    reason: str | None = None
    """Why the compaction ran (`threshold`, `ctrl+k`, `context window exceeded`)."""
    summary_usage: Usage | None = None
    summary_cost: float | None = None
    edited: bool | None = None
    """The person changed the summary before it was used."""
    ledger: str | None = None
    """What the replaced part touched, kept word for word after the summary (`trajectory/ledger.py`)."""
    _nested = {"actions": (Action, True), "usage": (Usage, False), "context": (ContextInfo, False),
               "summary_usage": (Usage, False)}
    _lenient = frozenset(("task", "requeried", "summary", "replaces", "undoes", "forgotten", "tokens_before",
                          "tokens_after", "model", "reason", "summary_usage", "summary_cost", "edited",
                          "ledger"))


_USER_MESSAGE_EXTRA = MessageExtra(message_type=MessageType.USER_MESSAGE)


class Message(msgspec.Struct, frozen=True, kw_only=True):
    """A chat message; a record with any other key is not one (`from_record` raises)."""

    role: Role
    content: str | list[dict[str, Any]] | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    cache_control: dict[str, Any] | None = None
    extra: MessageExtra = _USER_MESSAGE_EXTRA
    _nested: ClassVar[dict[str, tuple[type[Record], bool]]] = {"extra": (MessageExtra, False),
                                                                "tool_calls": (ToolCall, True)}

    @classmethod
    def from_record(cls, data: object) -> "Message":
        return msgspec.convert(_fields(cls, data, keep_unknown=False), cls, strict=False)

    @property
    def message_type(self) -> MessageType:
        return self.extra.message_type

    @property
    def text(self) -> str:
        """The content as plain text (list contents joined by their text parts)."""
        return content_text(self.content)

    def updated(self, **update: Any) -> "Message":
        """A copy with `update`'s fields replaced, as they are (not checked)."""
        return msgspec.structs.replace(self, **update)

    def with_extra(self, **update: Any) -> "Message":
        return msgspec.structs.replace(self, extra=self.extra.updated(**update))

    def to_api(self) -> dict[str, Any]:
        """The message as a model API gets it: no `extra`, no empty fields."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_record() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        if self.cache_control is not None:
            out["cache_control"] = self.cache_control
        return out

    def to_record(self) -> dict[str, Any]:
        """The message as a trajectory stores it."""
        return _fields_json(self.__struct_fields__, msgspec.structs.astuple(self), 0, False)


_SURROGATE = re.compile("[\ud800-\udfff]")
"""In a Python str a surrogate code point is always a lone one (pairs decode to one character)."""


def valid_text(text: str) -> str:
    """`text` as valid Unicode: a lone UTF-16 surrogate (`"\\ud83d"` in a provider's JSON) becomes
    U+FFFD, so the text can be stored, shown and sent back (UTF-8 cannot encode it)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def answered_by(message: Message, fallback: str | None) -> str | None:
    """The model an answer names, else `fallback` (the file's)."""
    model = message.extra.model or message.extra.unknown.get("model") or fallback
    return str(model) if model else None


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
    if fields.get("tool_calls") is not None:
        fields["tool_calls"] = _nested_value("tool_calls", *Message._nested["tool_calls"], fields["tool_calls"])
    return Message(role=role, content=content, extra=MessageExtra.from_record({"message_type": message_type, **extra}),
                   **fields)


def without_exits(messages: Iterable[Message]) -> list[Message]:
    """The messages but the run's exit records (role `exit`): kept in the record, never sent."""
    return [message for message in messages if message.role != "exit"]


def task_text(message: Message) -> str:
    """The task a task message carries (its `task` extra, else its text)."""
    return message.extra.task or message.text


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
