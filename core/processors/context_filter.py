"""`context_filter`: keep the last N invocations, ADK `ContextFilterPlugin` semantics (Java).

An invocation is a model turn (an assistant message) with the user and tool messages
before it. Tool results are never kept without the assistant message that called them:
providers reject such prompts. Results pair with calls by position, as adk-java does:
walking back from the end, a result needs the nearest earlier call with its id, so ids
that a provider reused in later turns cannot stand in for a dropped call. The custom
filter gets and returns the messages after the system message, which it can neither see
nor drop (SPEC §7).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Literal, cast

from pydantic import Field, field_validator

from ..messages import Message
from .base import Processor, ProcessorError, is_system

_DOTTED = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")

CustomFilter = Callable[[list[Message]], list[Message]]


def load_custom_filter(path: str) -> CustomFilter:
    module_name, _, function_name = path.partition(":")
    module = importlib.import_module(module_name)
    function = getattr(module, function_name)
    if not callable(function):
        raise TypeError(f"{path} is not callable")
    return cast(CustomFilter, function)


def _start_of_kept(messages: list[Message], keep: int) -> int:
    """Index of the first kept message, by the plugin's rules (messages exclude the system message)."""
    model_turns = [i for i, m in enumerate(messages) if m.role == "assistant"]
    if len(model_turns) <= keep:
        return 0
    start = model_turns[-keep]
    # ADK gives tool results the user role, so this walks back over both.
    while start > 0 and messages[start - 1].role in ("user", "tool"):
        start -= 1
    start = _with_their_calls(messages, start)
    while start > 0 and messages[start - 1].role == "user" and messages[start - 1].tool_call_id is None:
        start -= 1
    return start


def _with_their_calls(messages: list[Message], start: int) -> int:
    """The latest start at or before `start` from which every kept tool result has its call."""
    needed: set[str] = set()
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.tool_call_id:
            needed.add(message.tool_call_id)
        for call in message.tool_calls or ():
            needed.discard(call.id)
        if index <= start and not needed:
            return index
    return 0


class ContextFilter(Processor):
    type: Literal["context_filter"] = "context_filter"
    shrink_options = tuple({"num_invocations_to_keep": n} for n in (10, 5, 3, 2, 1))
    num_invocations_to_keep: int | None = Field(default=None, gt=0, examples=[3])
    """Model turns kept, with the user and tool messages before them; unset: no trimming."""
    custom_filter: str | None = None
    """`package.module:function`: gets and returns the message list, after trimming."""

    @field_validator("custom_filter")
    @classmethod
    def _dotted(cls, value: str | None) -> str | None:
        if value is not None and not _DOTTED.match(value):
            raise ValueError(f"custom_filter must look like package.module:function, not {value!r}")
        return value

    def __call__(self, history: list[Message]) -> list[Message]:
        out = list(history)
        if self.num_invocations_to_keep is not None:
            positions = [i for i, m in enumerate(history) if not is_system(m)]
            start = _start_of_kept([history[i] for i in positions], self.num_invocations_to_keep)
            if start:
                dropped = set(positions[:start])
                out = [m for i, m in enumerate(history) if i not in dropped]
        if self.custom_filter is not None:
            system = [m for m in out if is_system(m)]
            try:
                filtered = load_custom_filter(self.custom_filter)([m for m in out if not is_system(m)])
                if not isinstance(filtered, list) or not all(isinstance(m, Message) for m in filtered):
                    raise TypeError("it must return a list of messages")
            except Exception as exc:  # user code: any failure leaves the prompt unchanged
                raise ProcessorError(f"custom_filter {self.custom_filter} failed: {type(exc).__name__}: {exc}") from exc
            out = system + [m for m in filtered if not is_system(m)]
        return out
