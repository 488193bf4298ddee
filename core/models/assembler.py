"""Rebuilds one assistant response from stream chunks, emitting each delta as it arrives.

Tool-call fragments arrive per `index`: the first carries id and name, later ones only
pieces of the arguments. The assembler knows nothing about HTTP; it is fed parsed chunks
(litellm's objects or plain dicts, both read through `_get`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from ..events import EventSink, StreamDelta
from ..messages import FunctionCall, ToolCall, valid_text


def _get(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class Assembler:
    step: int = 0
    emit: EventSink | None = None
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    usage: Any = None
    _received: int = 0

    @property
    def received(self) -> int:
        """How much of the answer has arrived: text, reasoning and tool-call fragments."""
        return self._received

    def feed(self, chunk: Any) -> str:
        """Take one chunk; the content text it added (the stream guard looks at that)."""
        usage = _get(chunk, "usage")
        if usage is not None:
            self.usage = usage
        added_text = ""
        for choice in _get(chunk, "choices") or ():
            delta = _get(choice, "delta")
            if delta is None:
                continue
            reasoning = valid_text(_get(delta, "reasoning_content") or "")
            if reasoning:
                self.reasoning.append(reasoning)
                self._send("reasoning", reasoning)
            text = valid_text(_get(delta, "content") or "")
            if text:
                self.content.append(text)
                self._send("text", text)
                added_text += text
            for call in _get(delta, "tool_calls") or ():
                self._feed_call(call)
        return added_text

    def _feed_call(self, call: Any) -> None:
        index = _get(call, "index") or 0
        partial = self.calls.setdefault(index, _PartialCall())
        function = _get(call, "function")
        new_name = None
        if _get(call, "id") and not partial.id:
            partial.id = _get(call, "id")
        name = _get(function, "name")
        if name and not partial.name:
            partial.name = new_name = name
        arguments = valid_text(_get(function, "arguments") or "")
        if arguments:
            partial.arguments.append(arguments)
        if new_name or arguments:
            self._send("tool_call", arguments, index=index, name=new_name)

    def _send(self, kind: str, text: str, index: int = 0, name: str | None = None) -> None:
        # `text` is already valid: `feed` made it so before keeping it
        self._received += len(text) + (1 if name else 0)
        if self.emit is not None:
            self.emit(StreamDelta(step=self.step, kind=kind, text=text, index=index, name=name))  # type: ignore[arg-type]

    @property
    def text(self) -> str:
        return "".join(self.content)

    def tail(self, chars: int) -> str:
        """The last `chars` characters of the content, without joining all of it."""
        pieces: list[str] = []
        size = 0
        for piece in reversed(self.content):
            pieces.append(piece)
            size += len(piece)
            if size >= chars:
                break
        return "".join(reversed(pieces))[-chars:] if chars > 0 else ""

    @property
    def reasoning_text(self) -> str:
        return "".join(self.reasoning)

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The calls as assembled; a call the provider sent without an id gets a unique one, so
        its result pairs with it alone (history processors and providers pair by id)."""
        out = []
        for index in sorted(self.calls):
            partial = self.calls[index]
            out.append(
                ToolCall(
                    id=partial.id or f"call_{uuid.uuid4().hex[:24]}",
                    function=FunctionCall(name=partial.name, arguments="".join(partial.arguments)),
                )
            )
        return tuple(out)

    def replace_text(self, text: str) -> None:
        self.content = [text]
