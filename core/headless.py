"""`swedeck run --headless [--json]`: a whole session without a UI (SPEC §2).

Always yolo and never asks a person. Progress lines (or one JSON object per event) go to
stdout with terminal control sequences stripped from model and command text (SPEC §13 S4).
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

import msgspec

from . import events as ev
from .compaction_notes import compacted_text, started_text
from .config import SwedeckConfig
from .errors import UsageError
from .exit_status import ExitStatus, exit_line
from .messages import Message, MessageType, Record
from .redact import each_text
from .session import Session, SessionResult, build_redactor
from .text import excerpt, inert_json, strip_control

_QUIET = (ev.StreamDelta, ev.CommandOutput, ev.Request)


def _short(text: str) -> str:
    return "\n".join(f"    {row}" for row in excerpt(strip_control(text), lines=6, width=160))


PROGRESS_EVERY_S = 5.0
"""A streaming query prints a progress line this often (a small model may stream for minutes)."""
CHARS_PER_TOKEN = 4


class ProgressPrinter:
    """Turns events into short human-readable progress lines."""

    def __init__(self, out: TextIO, redact: Callable[[str], str] = str, every_s: float | None = None):
        self.out = out
        self.redact = redact
        self.cost = 0.0
        self.left: float | None = None
        self.every_s = PROGRESS_EVERY_S if every_s is None else every_s
        self._query_started = self._last_progress = self._first_delta = 0.0
        self._streamed_chars = 0

    def __call__(self, event: ev.Event) -> None:
        text = self.render(event)
        if text:
            print(self.redact(text), file=self.out, flush=True)

    def render(self, event: ev.Event) -> str | None:
        match event:
            case ev.SessionStarted():
                line = f"swedeck: session {event.session_id}, model {event.model_name}, {event.environment}"
                if event.restored_messages:
                    line += f", continuing from {event.restored_messages} recorded messages"
                return line
            case ev.ProgressUpdated():
                self.cost = event.cost
            case ev.ContextUpdated():
                self.left = event.status.left_percent
            case ev.QueryStarted():
                self._query_started = self._last_progress = time.monotonic()
                self._first_delta = 0.0
                self._streamed_chars = 0
            case ev.StreamDelta():
                self._streamed_chars += len(event.text)
                now = time.monotonic()
                if not self._first_delta:  # the wait before it (litellm's first import, the provider) is no stream
                    self._first_delta = self._last_progress = now  # the first line after `every_s` of stream, with a rate
                if now - self._last_progress >= self.every_s:
                    self._last_progress = now
                    streaming = now - self._first_delta
                    tokens = self._streamed_chars / CHARS_PER_TOKEN
                    rate = f"{tokens / streaming:,.0f} tok/s" if streaming >= 0.5 else "starting"
                    return (f"  … streaming step {event.step}: ≈{tokens:,.0f} tokens, {rate}, "
                            f"{now - self._query_started:.0f} s (first token after "
                            f"{self._first_delta - self._query_started:.1f} s)")
            case ev.MessageAdded() if event.message.message_type == MessageType.FORMAT_ERROR:
                first = strip_control(event.message.text).strip().splitlines()[:1]
                return f"  format error (sent back to the model): {first[0][:200] if first else ''}"
            case ev.CompactionStarted():
                return f"  {started_text(event)}"
            case ev.Compacted():
                return f"  {compacted_text(event)}"
            case ev.CompactionFailed():
                return f"  compaction failed: {strip_control(event.error)}"
            case ev.QueryRetrying():
                return f"  retry {event.attempt}/{event.attempts} in {event.wait_s:.1f} s: {strip_control(event.error)}"
            case ev.QueryFinished():
                context = f"{self.left:.0f}% context left" if self.left is not None else "context window unknown"
                line = f"step {event.step} | ${self.cost:.4f} | {context}"
                if event.message.extra.finish_reason == "length":
                    line += "\n  truncated: the answer reached max_tokens (finish_reason: length; raise model.max_tokens)"
                if event.stream_guard_fired:
                    line += "\n  stream guard: the answer repeated itself and was cut after its first copy"
                return line
            case ev.CommandStarted():
                return f"  $ {strip_control(event.command)}"
            case ev.CommandFinished():
                result = event.result
                status = result.stopped or f"exit {result.returncode}"
                output = _short(result.output)
                note = f"    [{status}, {result.duration_s:.2f} s]"
                return f"{output}\n{note}" if output else note
            case ev.Notice():
                return f"  {event.level}: {strip_control(event.text)}"
            case ev.SessionEnded():
                return exit_line(event.exit_status, strip_control(event.message), event.trajectory_path)
        return None


class JsonPrinter:
    """One JSON object per event: `{"event": "QueryFinished", ...fields}`."""

    def __init__(self, out: TextIO, redact: Callable[[str], str] = str):
        self.out = out
        self.redact = redact

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, _QUIET):
            return
        record = {"event": type(event).__name__, **{f.name: _jsonable(getattr(event, f.name))
                                                     for f in dataclasses.fields(event)}}
        # masked value by value: in the JSON text a token after a newline follows `\n`, and
        # the shapes' word boundary would not see it
        print(inert_json(each_text(record, self.redact)), file=self.out, flush=True)


def _record_fields(value: Any) -> tuple[str, ...] | None:
    """The field names of a record: an event (a dataclass) or a value in one (a msgspec Struct)."""
    if isinstance(value, msgspec.Struct):
        return value.__struct_fields__
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return tuple(field.name for field in dataclasses.fields(value))
    return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, Message):
        return _jsonable(value.to_record())
    if isinstance(value, Record):
        return _jsonable(value.to_record(keep_none=True))
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    names = _record_fields(value)
    if names is not None:
        data = {name: _jsonable(getattr(value, name)) for name in names}
        if isinstance(value, ev.ContextStatus):
            data["left_percent"] = value.left_percent
        return data
    if isinstance(value, str):
        return strip_control(value)
    if isinstance(value, dict):
        return {key: _jsonable(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(inner) for inner in value]
    if hasattr(value, "value") and not isinstance(value, int | float | bool):
        return value.value
    return value


def run_headless(config: SwedeckConfig, task: str | None, *, as_json: bool = False, resume: str | None = None,
                 out: TextIO | None = None) -> SessionResult:
    if not task and not resume:
        raise UsageError("--headless needs a task: swedeck run --headless 'the task' (or -t/--task-file)")
    config = config.model_copy(deep=True)
    config.agent.mode = "yolo"
    out = out or sys.stdout
    # Events carry raw text (a command the model wrote may hold a key); mask it as the
    # trajectory writer does before it reaches stdout (SPEC §9.4).
    redact = build_redactor(config).text
    sink = JsonPrinter(out, redact) if as_json else ProgressPrinter(out, redact)
    session = Session(config, task, interactive=False, resume=resume)
    outcome: list[SessionResult] = []
    failure: list[BaseException] = []

    done = threading.Event()

    def work() -> None:
        try:
            outcome.append(session.run(sink))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread, where the CLI reports it
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=work, name="swedeck-agent", daemon=True).start()
    with ending_on_signals(lambda: session.quit(ExitStatus.INTERRUPTED)):
        # Wait on an Event, not Thread.join: a Ctrl+C that interrupts join() can leave the
        # thread looking finished while it still runs (a CPython wart).
        while not done.is_set():
            try:
                done.wait(0.2)
            except KeyboardInterrupt:
                session.quit(ExitStatus.INTERRUPTED)
    if failure:
        raise failure[0]
    return outcome[0]


@contextlib.contextmanager
def ending_on_signals(end: Callable[[], None], *, ctrl_c: bool = False) -> Iterator[None]:
    """SIGTERM and SIGHUP (and SIGINT with `ctrl_c`) end the session as Ctrl+C does (the agent
    stops, the final file is written, a container is removed), instead of killing the process
    where it stands. Handlers can only be set in the main thread; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    numbers = (signal.SIGTERM, signal.SIGHUP, *((signal.SIGINT,) if ctrl_c else ()))
    previous = {number: signal.getsignal(number) for number in numbers}
    for number in previous:
        signal.signal(number, lambda _number, _frame: end())
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
