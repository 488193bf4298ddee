"""Helpers for the UI tests: a scripted stand-in for `Session` and Pilot utilities.

`ScriptedSession` has the control API of `swedeck.core.session.Session` and, in `run`,
emits real `core.events` objects from a script, waiting on real futures for requests, as
the agent does. Only the snapshot and theme tests use it: a snapshot needs a frame that is
the same on every run (no session id, temp paths, durations, or a stream caught mid-way).
The flow tests drive the real `Session` (scripted HTTP model, local shell) instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from swedeck.core import events as ev
from swedeck.core.agent.context import ContextTracker
from swedeck.core.config import SwedeckConfig
from swedeck.core.environments.base import ExecutionResult
from swedeck.core.exit_status import ExitStatus
from swedeck.core.messages import Message, MessageType, make_message
from swedeck.core.prompt_view import prompt_lines
from swedeck.core.session import PromptPreview, SessionResult
from swedeck.core.tokens import count_messages

Step = Callable[["ScriptedSession", ev.EventSink], Any]


class ScriptedSession:
    """A `SessionControl` (tests/test_session_control.py checks it matches the real one) that
    plays a script of events and requests instead of running an agent."""

    def __init__(self, config: SwedeckConfig, script: Iterable[Step], task: str | None = None):
        self.config = config
        self.task = task
        self.script = list(script)
        self.session_id = "test-session"
        self.trajectory_path: str | None = None
        self.finished = threading.Event()
        self.calls: list[tuple[str, Any]] = []
        self.answers: list[Any] = []
        self._processors: list[Any] = list(config.agent.history_processors)
        self._history: list[Message] = []
        self._mode: ev.Mode = config.agent.mode
        self._quit = threading.Event()
        self._waiting: Future[Any] | None = None
        self._waiting_kind: type | None = None

    @property
    def mode(self) -> ev.Mode:
        return self._mode

    @property
    def processors(self) -> list[Any]:
        return self._processors

    @property
    def history(self) -> list[Message]:
        return self._history

    def set_mode(self, mode: ev.Mode) -> None:
        self.calls.append(("set_mode", mode))
        previous, self._mode = self._mode, mode
        self._emit(ev.ModeChanged(mode=mode, previous=previous))

    def set_processors(self, processors: list[Any]) -> None:
        self.calls.append(("set_processors", processors))
        self._processors = list(processors)

    def compact(self, undo: bool = False) -> None:
        self.calls.append(("compact", undo))

    def interrupt(self) -> None:
        """As the agent does: a waiting confirmation is given up (answered with nothing)."""
        self.calls.append(("interrupt", None))
        future = self._waiting
        if future is not None and self._waiting_kind is ev.ConfirmationRequested and not future.done():
            future.set_result(None)

    def quit(self, status: ExitStatus = ExitStatus.USER_QUIT, message: str = "") -> None:
        self.calls.append(("quit", None))
        self._quit.set()

    def prompt_preview(self) -> PromptPreview:
        messages = [m for m in self.history]
        enabled = [p for p in self.processors if getattr(p, "enabled", True)]
        for processor in enabled:
            messages = processor(messages)
        status = self.context_status()
        return PromptPreview(messages, prompt_lines(self.history, messages), count_messages(messages),
                             status.window, None, [], status)

    def context_status(self) -> ev.ContextStatus:
        return ContextTracker(self.config.model.context_window).status(self.history)

    def run(self, emit: ev.EventSink) -> SessionResult:
        self._emit = emit
        for step in self.script:
            if self._quit.is_set():
                break
            step(self, emit)
        status = ExitStatus.USER_QUIT if self._quit.is_set() else ExitStatus.SUBMITTED
        emit(ev.SessionEnded(exit_status=status))
        self.finished.set()
        return SessionResult(exit_status=status, exit_code=0)

    def ask(self, emit: ev.EventSink, request_type: type, **fields: Any) -> Any:
        future: Future[Any] = Future()
        self._waiting, self._waiting_kind = future, request_type
        emit(request_type(future=future, **fields))
        while not self._quit.is_set():
            try:
                answer = future.result(timeout=0.05)
            except TimeoutError:
                continue
            if answer is not None:
                self.answers.append(answer)
            return answer
        return None


def emit_all(*events: ev.Event) -> Step:
    def step(session: ScriptedSession, emit: ev.EventSink) -> None:
        for event in events:
            emit(event)
    return step


def add_message(role: str, text: str, kind: MessageType, **extra: Any) -> Step:
    def step(session: ScriptedSession, emit: ev.EventSink) -> None:
        message = make_message(role, text, kind, **extra)  # type: ignore[arg-type]
        session._history.append(message)
        emit(ev.MessageAdded(message=message, index=len(session.history) - 1))
    return step


def ask(request_type: type, **fields: Any) -> Step:
    def step(session: ScriptedSession, emit: ev.EventSink) -> None:
        session.ask(emit, request_type, **fields)
    return step


def assistant_turn(step_no: int, text: str, command: str, *, needs_confirmation: bool = True,
                   reasoning: str = "") -> list[Step]:
    """A streamed response with one command, its confirmation, and the command's run."""
    action_id = f"{step_no}.0"
    deltas = [ev.StreamDelta(step=step_no, kind="reasoning", text=part) for part in _pieces(reasoning)]
    deltas += [ev.StreamDelta(step=step_no, kind="text", text=part) for part in _pieces(text)]
    message = make_message("assistant", text, MessageType.ACTION, step=step_no, reasoning=reasoning or None)
    steps: list[Step] = [
        emit_all(ev.StateChanged(ev.AgentState.THINKING), ev.QueryStarted(step=step_no), *deltas,
                 ev.QueryFinished(step=step_no, message=message, usage=None, cost=0.0),
                 ev.ActionProposed(action_id=action_id, step=step_no, command=command,
                                   needs_confirmation=needs_confirmation)),
    ]
    if needs_confirmation:
        steps.append(emit_all(ev.StateChanged(ev.AgentState.AWAITING_CONFIRMATION)))
        steps.append(lambda s, emit: _confirm_and_run(s, emit, action_id, command))
    else:
        steps.append(lambda s, emit: _run(s, emit, action_id, command))
    return steps


def _confirm_and_run(session: ScriptedSession, emit: ev.EventSink, action_id: str, command: str) -> None:
    decision = session.ask(emit, ev.ConfirmationRequested, action_id=action_id, command=command)
    if decision is None:
        return
    if decision.kind == "reject":
        emit(ev.ActionDecided(action_id=action_id, decision="rejected", command=command))
        add_message("user", f"rejected: {decision.comment}", MessageType.USER_MESSAGE)(session, emit)
        return
    if decision.kind == "edit":
        command = decision.command
    emit(ev.ActionDecided(action_id=action_id, decision="edited" if decision.kind == "edit" else "approved",
                          command=command))
    _run(session, emit, action_id, command)


def _run(session: ScriptedSession, emit: ev.EventSink, action_id: str, command: str) -> None:
    output = f"output of {command}\n"
    emit(ev.StateChanged(ev.AgentState.RUNNING, command))
    emit(ev.CommandStarted(action_id=action_id, command=command))
    emit(ev.CommandOutput(action_id=action_id, text=output))
    emit(ev.CommandFinished(action_id=action_id, command=command,
                            result=ExecutionResult(output=output, returncode=0, duration_s=0.01)))


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def tui_config(*specs: str, **flags: Any) -> SwedeckConfig:
    from swedeck.core.config import load_config

    base = {"model.model_name": "test/model", "model.context_window": 1000}
    base.update(flags)
    return load_config(list(specs), environ={}, flags=base, user_config=False)


def screen_text(app: Any) -> str:
    """Everything the screen shows, as plain text (for asserting what a person reads)."""
    from textual.widgets import Log, Static

    parts: list[str] = []
    for widget in app.screen.query("*"):
        if isinstance(widget, Static):
            parts.append(str(widget.render()))
        elif isinstance(widget, Log):
            parts.extend(widget.lines)
    for widget in app.screen.query("Markdown"):
        parts.append(getattr(widget, "source", ""))
    return "\n".join(parts)
