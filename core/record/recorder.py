"""Each exchange written as it happens (SPEC §18): the record of a run `swedeck record` watched.

The record is a swedeck `.traj.jsonl` (final `.traj.json` at the end), so replay, prompt,
diff and export read it as they read swedeck's own runs:

- every exchange is an `exchange` event: the request body exactly as sent (parsed JSON, or
  its text when it is not JSON), its path and wire format, the status, the answer as
  assembled, the provider's usage, the first and last byte's time, any error; never a
  credential header;
- the main conversation is the steps: the first model call starts it, and a call whose
  messages continue it (the last main call's messages and answer come first) is its next
  step. Its new messages (the tool results, the person's words) and its answer are written
  as messages. Every other call (a title, a summary, a subagent, another model) is a side
  call: an `exchange` event on a line of its own (`line`: its model and "side"), not a step;
- a step's prompt is the request itself (`recorded_prompts`): provenance recorded, whole.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..trajectory.readers import chat
from ..trajectory.readers.api_requests import EXCHANGE
from ..trajectory.writer import TrajectoryWriter
from .endpoint import Exchange, Handlers
from .join import agent_sessions
from .live import LiveAnswers
from .wire import Answer, Assembler, Wire, prompt_entries, tools_of, wire_of


@dataclass
class _Open:
    exchange: Exchange
    wire: Wire
    body: Any
    assembler: Assembler


@dataclass
class RecordState:
    """What the record knows of the main conversation so far."""

    main: list[tuple[str, str]] | None = None
    """The main line's messages as (role, text), its last answer included."""
    written: int = 0
    """How many of the main line's messages are written (the next step writes the rest)."""
    steps: int = 0
    exchanges: int = 0
    side: int = 0
    errors: int = 0
    models: list[str] = field(default_factory=list)
    last_usage: dict[str, int] = field(default_factory=dict)
    """The provider's figures of the last main call (the live meter of an ACP session)."""
    last_model: str = ""
    sessions: set[str] = field(default_factory=set)
    """The agent's own session ids its main requests named (`join.agent_sessions`)."""


class Recorder(Handlers):
    def __init__(self, writer: TrajectoryWriter, live: LiveAnswers | None = None) -> None:
        self.writer = writer
        self.state = RecordState()
        self._lock = threading.Lock()
        self.live = live
        """The answers as they stream, for a viewer in another process (`record --attach`)."""

    # --- the endpoint's calls ------------------------------------------------------------

    def started(self, exchange: Exchange) -> _Open:
        wire = wire_of(exchange.path)
        try:
            body: Any = json.loads(exchange.body) if exchange.body else None
        except ValueError:
            body = exchange.body.decode("utf-8", "replace")
        streaming = isinstance(body, Mapping) and bool(body.get("stream"))
        return _Open(exchange, wire, body, Assembler(wire, streaming))

    def bytes_passed(self, state: _Open, data: bytes) -> None:
        state.assembler.feed(data)
        if self.live is not None and state.assembler.streaming:
            self.live.passed(state.exchange.number, state.wire, data)

    def ended(self, state: _Open, exchange: Exchange) -> None:
        answer = state.assembler.answer() if exchange.status == 200 else Answer(error=exchange.error or _status_words(exchange))
        with self._lock:
            self._record(state, exchange, answer)
        if self.live is not None:
            self.live.ended(exchange.number)

    # --- writing ---------------------------------------------------------------------------

    def _record(self, state: _Open, exchange: Exchange, answer: Answer) -> dict[str, Any]:
        book = self.state
        book.exchanges += 1
        body = state.body
        entries = prompt_entries(state.wire, body) if isinstance(body, Mapping) else []
        keys = [_key(entry) for entry in entries]
        line = "raw" if state.wire == "raw" or not isinstance(body, Mapping) else "side"
        if line == "side" and (book.main is None or keys[: len(book.main)] == book.main):
            line = "main"  # the first call starts the main line; a call that continues it is its next step
        model = str(body.get("model") or "") if isinstance(body, Mapping) else ""
        if model and model not in book.models:
            book.models.append(model)
        record: dict[str, Any] = {
            "number": exchange.number, "wire": state.wire, "method": exchange.method, "path": exchange.path,
            "upstream": exchange.upstream, "status": exchange.status, "line": line if line != "side" else f"{model} side",
            "model": model or None, "request": body, "headers": exchange.headers,
            "answer": answer.record(),
            "usage": answer.usage or None, "started": exchange.started, "first_byte_s": exchange.first_byte_s,
            "last_byte_s": exchange.last_byte_s, "chunks": exchange.chunks, "error": answer.error or exchange.error,
            "tools": tools_of(state.wire, body) if isinstance(body, Mapping) else [],
        }
        if record["error"]:
            book.errors += 1
        if line == "main":
            book.sessions |= agent_sessions(exchange.headers, body)
        if line == "main" and exchange.status == 200 and not answer.error:
            book.last_usage, book.last_model = dict(answer.usage), model
            book.steps += 1
            record["step"] = book.steps
            self.writer.add_exchange(EXCHANGE, record)
            for entry in entries[book.written:]:
                self.writer.add_message(entry.build())
            reply = answer.entry()
            reply.extra["step"] = book.steps
            self.writer.add_message(reply.build())
            book.main = [*keys, _key(reply)]
            book.written = len(entries) + 1
        else:
            if line != "main":
                book.side += 1
            self.writer.add_exchange(EXCHANGE, record)
        return record


def _key(entry: chat.Entry) -> tuple[str, str]:
    """What says two messages are the same one in two requests: the role, the words, the calls."""
    calls = ",".join(str(call.get("id")) for call in entry.tool_calls or [])
    return entry.role, f"{chat.text_of(entry.content)}|{calls}|{entry.tool_call_id or ''}"


def _status_words(exchange: Exchange) -> str:
    return f"HTTP {exchange.status}" if exchange.status else "no answer"
