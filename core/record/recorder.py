"""Each exchange written as it happens (SPEC §18): the record of a run `swedeck record` watched.

The record is a swedeck `.traj.jsonl` (final `.traj.json` at the end), so replay, prompt,
diff and export read it as they read swedeck's own runs:

- every exchange is an `exchange` event: the request body exactly as sent (parsed JSON, or
  its text when it is not JSON), its path and wire format, the status, the answer as
  assembled, the provider's usage, the first and last byte's time, any error; never a
  credential header;
- the main conversation is the steps, placed by content, not by order: it is the conversation
  the agent continues (a call whose messages begin with an earlier call's messages and answer
  continues it), whichever call came first. A first call that offers tools and asks for a real
  answer (more than 16 tokens) starts it at once, so a live view shows it as it happens; any
  other call (a warm-up, a count, a title) opens a thread of its own, written as a side call,
  and the first thread a later call continues becomes the main line, its calls written as
  steps then (`promoted`). A thread whose first words are what an earlier answer asked a tool
  to say (an `Agent` call's prompt: a subagent) never does. A run that ends before any thread
  is continued takes its longest thread (then: not a probe, offering tools, the largest request). Each
  step's new messages (the tool results, the person's words) and its answer are written as
  messages. Every other call (a warm-up, a title, a summary, a subagent, another model) is a
  side call: an `exchange` event on a line of its own (`line`: its model and "side"), not a step;
- a step's prompt is the request itself (`recorded_prompts`): provenance recorded, whole.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..redact import MASK, is_credential_field, mask_body_credentials, mask_query
from ..trajectory.join import agent_sessions
from ..trajectory.readers import chat
from ..trajectory.readers.api_requests import EXCHANGE, asked_words, opening_words
from ..trajectory.writer import TrajectoryWriter
from .endpoint import Exchange, Handlers
from .live import LiveAnswers
from .wire import Answer, Assembler, Wire, prompt_entries, tools_of, wire_of

RECORD_BODY_LIMIT = 64 << 20
"""A request larger than this is forwarded whole but recorded as its size only (bounded memory)."""


@dataclass
class _Open:
    exchange: Exchange
    wire: Wire
    body: Any
    assembler: Assembler


@dataclass
class _Call:
    """A successful call of a thread not yet placed: what writing it as a step needs."""

    record: dict[str, Any]
    entries: list[chat.Entry]
    reply: chat.Entry
    keys: list[tuple[str, str]]
    """Its messages and its answer (what a call that continues it begins with)."""
    usage: dict[str, int]
    model: str
    headers: dict[str, str]
    body: Any


@dataclass
class _Thread:
    calls: list[_Call]
    subagent: bool
    """Its first words are what an earlier answer asked a tool to say (an `Agent`/`Task` call's prompt)."""
    name: str = ""
    """A subagent's id in the record (`1`, `2`, ... in the order they started)."""
    parent_step: int | None = None
    """The main-line step whose answer asked for it (None: asked before the main line was known)."""

    @property
    def keys(self) -> list[tuple[str, str]]:
        return self.calls[-1].keys


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
    threads: list[_Thread] = field(default_factory=list)
    """Before the main line is known: every conversation so far (each written as side calls)."""
    asked: dict[str, int | None] = field(default_factory=dict)
    """Words earlier answers asked a tool to say (a subagent's prompt starts a thread with them),
    each with the main-line step whose answer asked (None: a call not on it)."""
    subagents: list[_Thread] = field(default_factory=list)
    """The subagent runs so far, each written as it goes (`line: subagent`, its id and parent step)."""
    calls: int = 0
    """Model calls answered (every line: mini-swe-agent's `api_calls` counts every call an agent made)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    """The provider's figures summed over those calls (`info.model_stats`)."""
    last_request: tuple[int, list[chat.Entry], list[Any]] | None = None
    """The latest main call's step, its request's messages and its tools, as the agent sent them
    (the live prompt inspector of an ACP session shows them)."""


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
        if len(exchange.body) > RECORD_BODY_LIMIT:  # forwarded whole; its parse (five times its size) is not made
            body: Any = {"swedeck_not_recorded": f"a request of {len(exchange.body):,} bytes, over the record's "
                                                 f"{RECORD_BODY_LIMIT >> 20} MB: forwarded whole, not recorded"}
            return _Open(exchange, "raw", body, Assembler("raw", False))
        try:
            body = json.loads(exchange.body) if exchange.body else None
        except (ValueError, RecursionError):
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
            try:
                self._record(state, exchange, answer)
            except Exception as error:  # noqa: BLE001 - never a traceback on the agent's terminal: the exchange, said
                self.state.errors += 1
                self.writer.add_exchange(EXCHANGE, {
                    "number": exchange.number, "wire": state.wire, "method": exchange.method,
                    "path": mask_query(exchange.path), "status": exchange.status, "line": "unreadable",
                    "error": f"swedeck could not record this exchange: {type(error).__name__}: {str(error)[:300]}",
                    "started": exchange.started, "last_byte_s": exchange.last_byte_s})
        if self.live is not None:
            self.live.ended(exchange.number)

    # --- writing ---------------------------------------------------------------------------

    def close(self) -> None:
        """The run ended: with no conversation continued, its longest thread is the main line."""
        with self._lock:
            book = self.state
            if book.main is None and book.threads:
                chosen = max((thread for thread in book.threads if not thread.subagent), default=None,
                             key=lambda thread: (len(thread.calls), not _probe(thread.calls[-1].body),
                                                 bool(thread.calls[-1].record["tools"]),
                                                 len(json.dumps(thread.calls[-1].body, default=str))))
                if chosen is not None:
                    self._promote(chosen)

    def _record(self, state: _Open, exchange: Exchange, answer: Answer) -> dict[str, Any]:
        book = self.state
        book.exchanges += 1
        body = state.body
        entries = prompt_entries(state.wire, body) if isinstance(body, Mapping) else []
        keys = [_key(entry) for entry in entries]
        model = str(body.get("model") or "") if isinstance(body, Mapping) else ""
        if model and model not in book.models:
            book.models.append(model)
        record: dict[str, Any] = {
            "number": exchange.number, "wire": state.wire, "method": exchange.method, "path": mask_query(exchange.path),
            "upstream": mask_query(exchange.upstream), "status": exchange.status, "line": f"{model} side",
            "model": model or None, "request": mask_body_credentials(body),
            "headers": {name: MASK if is_credential_field(name) else value for name, value in exchange.headers.items()},
            "answer": answer.record(),
            "usage": answer.usage or None, "started": exchange.started, "first_byte_s": exchange.first_byte_s,
            "last_byte_s": exchange.last_byte_s, "chunks": exchange.chunks, "error": answer.error or exchange.error,
            "tools": tools_of(state.wire, body) if isinstance(body, Mapping) else [],
        }
        if record["error"]:
            book.errors += 1
        elif exchange.status == 200:
            book.calls += 1
            book.prompt_tokens += int((answer.usage or {}).get("prompt") or 0)
            book.completion_tokens += int((answer.usage or {}).get("output") or 0)
        if state.wire == "raw" or not isinstance(body, Mapping):
            record["line"] = "raw"
            book.side += 1
            self.writer.add_exchange(EXCHANGE, record)
            return record
        ok = exchange.status == 200 and not answer.error
        asked = _asked(answer) if ok else set()
        if book.main is not None:
            if keys[: len(book.main)] == book.main:
                record["line"] = "main"
                if ok:
                    book.sessions |= agent_sessions(exchange.headers, body)
                    self._step(_Call(record, entries, answer.entry(), [], dict(answer.usage), model,
                                     exchange.headers, body))
                    self._asking(asked, book.steps)
                    return record
            else:
                book.side += 1
                self._subagent(record, keys, entries, answer, ok)
            self._asking(asked, None)
            self.writer.add_exchange(EXCHANGE, record)
            return record
        thread = max((thread for thread in book.threads if keys[: len(thread.keys)] == thread.keys),
                     key=lambda thread: len(thread.keys), default=None)
        if not ok:  # a failed call places nothing
            record["line"] = "main" if thread is not None and not thread.subagent else record["line"]
            if thread is not None and thread.subagent:
                _said_subagent(record, thread)
            book.side += record["line"] != "main"
            self.writer.add_exchange(EXCHANGE, record)
            return record
        reply = answer.entry()
        call = _Call(record, entries, reply, [*keys, _key(reply)], dict(answer.usage), model, exchange.headers, body)
        book.last_usage, book.last_model = dict(answer.usage), model  # the meter, before the line is known
        asker = self._asker(entries)
        subagent = thread.subagent if thread is not None else asker is not None
        if thread is not None and not subagent:  # the conversation the agent continues: the main line
            self._promote(thread)
        if not subagent and (thread is not None or _a_conversation(body)):
            record["line"] = "main"
            book.sessions |= agent_sessions(exchange.headers, body)
            self._step(call)
            self._asking(asked, book.steps)
            return record
        if thread is not None:
            thread.calls.append(call)
        else:
            thread = _Thread([call], subagent)
            book.threads.append(thread)
            if subagent:
                self._started(thread, asker)
        if thread.subagent:
            _said_subagent(record, thread)
        self._asking(asked, None)
        book.side += 1
        self.writer.add_exchange(EXCHANGE, record)
        return record

    # --- subagents (issue 65.4: each a run of its own in the record, as it happens) --------

    def _asking(self, asked: set[str], step: int | None) -> None:
        for words in asked:
            self.state.asked.setdefault(words, step)

    def _asker(self, entries: list[chat.Entry]) -> tuple[int | None] | None:
        """Whether a call opens with what an earlier answer asked a tool to say (a subagent's
        prompt), and the main-line step that asked (in a one-tuple); None when it does not."""
        opening = opening_words(entries)
        for words, step in self.state.asked.items():
            if words in opening:
                return (step,)
        return None

    def _started(self, thread: _Thread, asker: tuple[int | None] | None) -> None:
        book = self.state
        thread.name = str(len(book.subagents) + 1)
        thread.parent_step = asker[0] if asker is not None else None
        book.subagents.append(thread)

    def _subagent(self, record: dict[str, Any], keys: list[tuple[str, str]], entries: list[chat.Entry],
                  answer: Answer, ok: bool) -> None:
        """A call beside the main line: a subagent's when it continues one, or opens with what an
        answer asked a tool to say (then a new one); its exchange says which and where it started."""
        book = self.state
        thread = max((run for run in book.subagents if keys[: len(run.keys)] == run.keys),
                     key=lambda run: len(run.keys), default=None)
        if thread is None:
            asker = self._asker(entries)
            if asker is None or not ok:
                return
            thread = _Thread([], True)
            self._started(thread, asker)
        if ok:
            reply = answer.entry()
            thread.calls.append(_Call(record, entries, reply, [*keys, _key(reply)], dict(answer.usage),
                                      str(record.get("model") or ""), {}, None))
        _said_subagent(record, thread)

    def _promote(self, thread: _Thread) -> None:
        """A thread written as side calls is the main line: its calls are written again as its steps."""
        book = self.state
        book.threads = []
        for call in thread.calls:
            book.side -= 1
            book.sessions |= agent_sessions(call.headers, call.body)
            self._step(call, promoted=True)

    def _step(self, call: _Call, promoted: bool = False) -> None:
        """A main call written as the next step: its exchange, its new messages, its answer."""
        book = self.state
        book.last_usage, book.last_model = call.usage, call.model
        book.steps += 1
        book.last_request = (book.steps, list(call.entries), list(call.record.get("tools") or []))
        record = {**call.record, "line": "main", "step": book.steps, **({"promoted": True} if promoted else {})}
        self.writer.add_exchange(EXCHANGE, record)
        for entry in call.entries[book.written:]:
            self.writer.add_message(entry.build())
        self.writer.add_message(msgspec.structs.replace(call.reply, extra={**call.reply.extra, "step": book.steps}).build())
        book.main = [*(_key(entry) for entry in call.entries), _key(call.reply)]
        book.written = len(call.entries) + 1


WARM_UP_TOKENS = 16
"""An answer asked for in this many tokens or fewer is a probe (a warm-up, a count), never the conversation."""


def _probe(body: Mapping[str, Any]) -> bool:
    limit = body.get("max_tokens", body.get("max_output_tokens", body.get("max_completion_tokens")))
    return isinstance(limit, int) and limit <= WARM_UP_TOKENS


def _a_conversation(body: Mapping[str, Any]) -> bool:
    """Whether a first call is plainly the conversation, so the main line starts with it at once
    (a live view shows it as it happens): it offers tools and asks for a real answer. Anything
    else (a warm-up, a title, a count) waits until a later call continues it."""
    return bool(body.get("tools")) and not _probe(body)


def _asked(answer: Answer) -> set[str]:
    """What an answer asked its tools to say: a subagent opens with it (`api_requests.asked_words`)."""
    return asked_words(arguments for _, _, arguments in answer.calls)


def _said_subagent(record: dict[str, Any], thread: _Thread) -> None:
    record["line"] = "subagent"
    record["subagent"] = thread.name
    record["parent_step"] = thread.parent_step


def _key(entry: chat.Entry) -> tuple[str, str]:
    """What says two messages are the same one in two requests: the role, the words, the calls."""
    calls = ",".join(str(call.get("id")) for call in entry.tool_calls or [])
    return entry.role, f"{chat.text_of(entry.content)}|{calls}|{entry.tool_call_id or ''}"


def _status_words(exchange: Exchange) -> str:
    return f"HTTP {exchange.status}" if exchange.status else "no answer"
