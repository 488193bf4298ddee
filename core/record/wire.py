"""The three wire formats an agent speaks to its provider, read for the record (SPEC §18).

A request is recorded as its body (parsed JSON, exactly); what it means to swedeck is
`prompt_entries` (its messages as swedeck's; `trajectory/readers/api_requests.py`, which the
readers share). An answer is assembled by an `Assembler` fed the response's bytes as they pass (an SSE stream
or one JSON body): its text, thinking, tool calls, usage and stop reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..trajectory.coerce import mapping, optional_str
from ..trajectory.readers import chat
from ..trajectory.readers.api_requests import Wire, answer_entry, prompt_entries, tools_of

__all__ = ["Answer", "Assembler", "Wire", "prompt_entries", "streamed_text", "tools_of", "wire_of"]

def wire_of(path: str) -> Wire:
    """Which format a request path speaks (`/v1/messages`, `…/chat/completions`, `…/responses`)."""
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/messages") and not path.endswith("/count_tokens"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    return "raw"


# --- answers -------------------------------------------------------------------------------


@dataclass
class Answer:
    """What the model answered, as assembled from the response the agent received."""

    text: str = ""
    thinking: str = ""
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    """(id, name, arguments as sent)."""
    usage: dict[str, int] = field(default_factory=dict)
    """The provider's own figures: `prompt` (all input), `cached`, `cache_creation`, `output`."""
    stop: str | None = None
    model: str | None = None
    error: str | None = None

    def record(self) -> dict[str, Any]:
        """The answer as a record keeps it (`exchange.answer`)."""
        return {"text": self.text, "thinking": self.thinking,
                "calls": [{"id": call_id, "name": name, "arguments": arguments} for call_id, name, arguments in self.calls],
                "stop": self.stop, "model": self.model}

    def entry(self) -> chat.Entry:
        """The step's message: the same as a record's answer read back (`api_requests.answer_entry`)."""
        return answer_entry(self.record(), self.usage)


MAX_ANSWER = 64 << 20
"""An answer's bytes kept to assemble it in the record (they all pass to the agent)."""


class Assembler:
    """Fed a response's bytes as they pass; `answer()` once it ended. Knows SSE (`data:` lines)
    and whole JSON bodies; what it cannot read leaves the answer empty, never the agent's bytes."""

    def __init__(self, wire: Wire, streaming: bool) -> None:
        self.wire = wire
        self.streaming = streaming
        self._body = bytearray()
        self.passed = 0
        """Bytes the answer has had, kept or not."""

    def feed(self, data: bytes) -> None:
        """Kept as it passes (up to `MAX_ANSWER`); read once the answer has ended, so nothing is
        parsed between two reads of a stream the agent is waiting on (bench B10)."""
        self.passed += len(data)
        if len(self._body) + len(data) <= MAX_ANSWER:
            self._body += data

    def _events(self) -> list[Mapping[str, Any]]:
        events = []
        for line in bytes(self._body).split(b"\n"):
            line = line.rstrip(b"\r")
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if not payload or payload == b"[DONE]":
                continue
            try:
                event = json.loads(payload)
            except ValueError:
                continue
            if isinstance(event, Mapping):
                events.append(event)
        return events

    def answer(self) -> Answer:
        """The answer as assembled; one that cannot be read (too large, not JSON, a field no reading
        survives) is an answer with an error, never an exception: the exchange is recorded anyway."""
        if self.passed > MAX_ANSWER:
            return Answer(error=f"the answer passed whole to the agent ({self.passed:,} bytes) but is over "
                                f"{MAX_ANSWER >> 20} MB: not assembled in the record")
        try:
            return self._answer()
        except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError, AttributeError) as error:
            return Answer(error=f"the answer could not be read: {type(error).__name__}: {str(error)[:300]}")

    def _answer(self) -> Answer:
        if not self.streaming:
            try:
                body = json.loads(bytes(self._body) or b"null")
            except ValueError:
                return Answer(error="the answer is not JSON")
            return _whole(self.wire, mapping(body))
        return _streamed(self.wire, self._events())


def _whole(wire: Wire, body: Mapping[str, Any]) -> Answer:
    if body.get("error"):
        return Answer(error=chat.text_of(body.get("error")))
    if wire == "anthropic":
        entry_blocks = body.get("content") or []
        answer = Answer(stop=optional_str(body.get("stop_reason")), model=optional_str(body.get("model")),
                        usage=_anthropic_usage(mapping(body.get("usage"))))
        for block in map(mapping, entry_blocks if isinstance(entry_blocks, list) else []):
            _anthropic_block(answer, block)
        return answer
    if wire == "chat":
        choice = mapping((body.get("choices") or [{}])[0])
        message = mapping(choice.get("message"))
        answer = Answer(text=chat.text_of(message.get("content")), thinking=str(message.get("reasoning_content") or ""),
                        stop=optional_str(choice.get("finish_reason")), model=optional_str(body.get("model")),
                        usage=_chat_usage(mapping(body.get("usage"))))
        for call in map(mapping, message.get("tool_calls") or []):
            function = mapping(call.get("function"))
            answer.calls.append((str(call.get("id") or ""), str(function.get("name") or ""),
                                 str(function.get("arguments") or "")))
        return answer
    if wire == "responses":
        return _responses_answer(body)
    return Answer()


def _anthropic_usage(usage: Mapping[str, Any]) -> dict[str, int]:
    numbers = {key: value for key, value in usage.items() if isinstance(value, int) and not isinstance(value, bool)}
    if not numbers:
        return {}
    read, created = numbers.get("cache_read_input_tokens", 0), numbers.get("cache_creation_input_tokens", 0)
    return {"prompt": numbers.get("input_tokens", 0) + read + created, "cached": read, "cache_creation": created,
            "output": numbers.get("output_tokens", 0)}


def _chat_usage(usage: Mapping[str, Any]) -> dict[str, int]:
    if not usage:
        return {}
    cached = mapping(usage.get("prompt_tokens_details")).get("cached_tokens") or 0
    return {"prompt": int(usage.get("prompt_tokens") or 0), "cached": int(cached),
            "output": int(usage.get("completion_tokens") or 0)}


def _responses_usage(usage: Mapping[str, Any]) -> dict[str, int]:
    if not usage:
        return {}
    cached = mapping(usage.get("input_tokens_details")).get("cached_tokens") or 0
    return {"prompt": int(usage.get("input_tokens") or 0), "cached": int(cached),
            "output": int(usage.get("output_tokens") or 0)}


def _anthropic_block(answer: Answer, block: Mapping[str, Any]) -> None:
    kind = block.get("type")
    if kind == "text":
        answer.text += str(block.get("text") or "")
    elif kind in ("thinking", "redacted_thinking"):
        answer.thinking += str(block.get("thinking") or "")
    elif kind in ("tool_use", "server_tool_use"):
        answer.calls.append((str(block.get("id") or ""), str(block.get("name") or ""),
                             json.dumps(block.get("input") or {}, ensure_ascii=False)))


def _responses_answer(response: Mapping[str, Any]) -> Answer:
    answer = Answer(model=optional_str(response.get("model")), usage=_responses_usage(mapping(response.get("usage"))),
                    stop=optional_str(response.get("status")))
    for item in map(mapping, response.get("output") or []):
        kind = item.get("type")
        if kind == "message":
            answer.text += chat.text_of(item.get("content"))
        elif kind == "reasoning":
            answer.thinking += chat.text_of(item.get("summary") or item.get("content") or "")
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            arguments = item.get("arguments", item.get("input", item.get("action")))
            answer.calls.append((str(item.get("call_id") or item.get("id") or ""), str(item.get("name") or kind),
                                 arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)))
    if response.get("error"):
        answer.error = chat.text_of(response.get("error"))
    return answer


def _streamed(wire: Wire, events: list[Mapping[str, Any]]) -> Answer:
    if wire == "anthropic":
        return _anthropic_stream(events)
    if wire == "chat":
        return _chat_stream(events)
    if wire == "responses":
        done = next((mapping(event.get("response")) for event in reversed(events)
                     if event.get("type") in ("response.completed", "response.incomplete", "response.failed")), None)
        if done is not None:
            return _responses_answer(done)
        answer = Answer(error="the stream ended before `response.completed`")
        for event in events:
            if event.get("type") == "response.output_text.delta":
                answer.text += str(event.get("delta") or "")
        return answer
    return Answer()


def _anthropic_stream(events: list[Mapping[str, Any]]) -> Answer:
    answer = Answer()
    blocks: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = mapping(event.get("message"))
            answer.model = optional_str(message.get("model"))
            usage.update(mapping(message.get("usage")))
        elif kind == "content_block_start":
            blocks[int(event.get("index") or 0)] = {**mapping(event.get("content_block")), "_json": ""}
        elif kind == "content_block_delta":
            block = blocks.setdefault(int(event.get("index") or 0), {"type": "text", "_json": ""})
            delta = mapping(event.get("delta"))
            if delta.get("type") == "text_delta":
                block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
            elif delta.get("type") == "thinking_delta":
                block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking") or "")
            elif delta.get("type") == "input_json_delta":
                block["_json"] += str(delta.get("partial_json") or "")
        elif kind == "message_delta":
            answer.stop = optional_str(mapping(event.get("delta")).get("stop_reason")) or answer.stop
            usage.update(mapping(event.get("usage")))
        elif kind == "error":
            answer.error = chat.text_of(event.get("error"))
    for index in sorted(blocks):
        block = blocks[index]
        if block.get("type") in ("tool_use", "server_tool_use") and block["_json"]:
            try:
                block["input"] = json.loads(block["_json"])
            except ValueError:
                block["input"] = block["_json"]
        _anthropic_block(answer, block)
    answer.usage = _anthropic_usage(usage)
    if answer.stop is None and answer.error is None:
        answer.error = "the stream ended before `message_delta` said why"
    return answer


def _chat_stream(events: list[Mapping[str, Any]]) -> Answer:
    answer = Answer()
    calls: dict[int, list[str]] = {}
    for event in events:
        answer.model = optional_str(event.get("model")) or answer.model
        if event.get("usage"):
            answer.usage = _chat_usage(mapping(event.get("usage")))
        for choice in map(mapping, event.get("choices") or []):
            delta = mapping(choice.get("delta"))
            answer.text += str(delta.get("content") or "")
            answer.thinking += str(delta.get("reasoning_content") or "")
            for call in map(mapping, delta.get("tool_calls") or []):
                slot = calls.setdefault(int(call.get("index") or 0), ["", "", ""])
                function = mapping(call.get("function"))
                slot[0] = str(call.get("id") or slot[0])
                slot[1] += str(function.get("name") or "")
                slot[2] += str(function.get("arguments") or "")
            if choice.get("finish_reason"):
                answer.stop = str(choice.get("finish_reason"))
    answer.calls = [(call_id, name, arguments) for call_id, name, arguments in (calls[i] for i in sorted(calls))]
    if answer.stop is None:
        answer.error = "the stream ended without a finish_reason"
    return answer


_STRING = rb'"((?:[^"\\]|\\.)*)"'
_WORDS = {
    "anthropic": re.compile(rb'"type":\s*"text_delta",\s*"text":\s*' + _STRING),
    "chat": re.compile(rb'"delta":\s*\{[^{}]*?"content":\s*' + _STRING),
    "responses": re.compile(rb'"type":\s*"response\.output_text\.delta"[^\n]*?"delta":\s*' + _STRING),
}
"""Where a stream's words are in its events, found without parsing each event (bench B10)."""


def streamed_text(wire: Wire, data: bytes) -> Iterator[str]:
    """The answer's words in whole lines of a stream, for the live view (the record's own answer
    is parsed whole once the stream has ended); nothing for other events or formats."""
    pattern = _WORDS.get(wire)
    if pattern is None:
        return
    for match in pattern.finditer(data):
        try:
            text = json.loads(b'"' + match.group(1) + b'"')
        except ValueError:
            continue
        if isinstance(text, str) and text:
            yield text
