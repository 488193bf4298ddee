"""An ACP agent in swedeck's live panes (SPEC §19): a `SessionControl`, like swedeck's own
`Session`, whose `run` drives the agent (`acp.run.AcpRun`) and turns what it does into
swedeck's events, so the live screen shows it as it shows its own agent:

- its words stream into the model pane (`QueryStarted`, `StreamDelta`, `QueryFinished`), its
  thoughts as reasoning; a tool call closes the answer before it and is the step's command
  block (`ActionProposed`), running (`CommandStarted`) until the agent says how it ended
  (`CommandFinished`, with what the tool printed);
- `session/request_permission` is swedeck's confirmation: in confirm mode the person answers
  (y: the agent's allow-once option, a: its allow-always one, n: reject; an edit cannot be
  sent over ACP, so it is a reject that says so); in yolo mode allow-once, as headless;
- the end of a prompt asks for a follow-up (empty ends the session); the agent's
  `usage_update` is the meter;
- the person's interrupt is `session/cancel`.

Processors and compaction are the agent's own here: swedeck says so instead of pretending.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from .. import events as ev
from ..config import SwedeckConfig
from ..context_status import ContextStatus
from ..environments.base import ExecutionResult
from ..exit_status import ExitStatus
from ..messages import Message, MessageType, make_message
from ..session import PromptPreview, SessionResult
from ..text import visible
from .gate import AcpGate
from .presets import agent_label
from .run import AcpRun, Option, allow_once, reject_option, title_beside


class _Call:
    """A tool call of the agent, as swedeck shows it: proposed (a command block) once it is
    asked about or runs, under the title the agent last gave it."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.command: str | None = None
        """The shell command it runs (its `rawInput`), when the agent says."""
        self.action_id: str | None = None
        self.started: float | None = None
        self.ended = False
        self.rejected = False
        """Refused (by the person, the rules, an interrupt): it never ran, whatever the agent reports."""

    @property
    def shown(self) -> str:
        """What the person is shown: what will run, with the agent's title beside it when that says otherwise."""
        if self.command is None:
            return self.title
        beside = title_beside(self.command, self.title)
        return f"{self.command}    ({beside})" if beside else self.command

def _where(config: SwedeckConfig, cwd: Path) -> str:
    terminals = "docker" if config.environment.environment_class == "docker" else "local"
    return f"local: the agent's tools · terminals {terminals} · {cwd}"  # its own tools run here (the header warns)


CONFIRM_ANSWERS = {"approve": "allow_once", "always_allow": "allow_always", "reject": "reject_once"}


class AcpSession:
    def __init__(self, config: SwedeckConfig, spec: str, task: str | None, *, cwd: Path, output: str | None = None,
                 upstream: str | None = None, resume: str | None = None) -> None:
        self.config = config
        self.spec = spec
        self.task = task
        self.cwd = cwd
        self.output = output
        self.upstream = upstream
        self.resume = resume
        """The agent's session to continue (a fork of an ACP record, `acp.fork`)."""
        self.trajectory_path: str | None = None
        self.finished = threading.Event()
        self._mode: ev.Mode = "yolo" if config.agent.mode == "yolo" else "confirm"
        self._history: list[Message] = []
        self._emit: ev.EventSink = lambda event: None
        self._cancel: Any = None
        self._quit = threading.Event()
        self._step = 0
        self._open = False
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._calls: dict[str, _Call] = {}
        self._actions = 0
        """Command blocks proposed in the current step."""
        self._run: AcpRun | None = None
        self._status = ContextStatus(window=None, prompt_tokens=None)
        self._waiting: Future[Any] | None = None
        self._pending_comment = ""
        """A reject's comment, sent on as the person's next words once the agent's turn ends."""
        self._gate = AcpGate.of(config)
        """The one gate of the session: permission requests, terminals and writes (`acp.gate`)."""

    # --- what the front end holds ------------------------------------------------------------

    @property
    def mode(self) -> ev.Mode:
        return self._mode

    @property
    def processors(self) -> list[Any]:
        return []

    @property
    def history(self) -> list[Message]:
        return self._history

    def set_mode(self, mode: ev.Mode) -> None:
        if mode == "human":
            self._emit(ev.Notice(text="an ACP agent runs its own commands: human mode is not offered", level="warning"))
            mode = "confirm"
        previous, self._mode = self._mode, mode
        self._emit(ev.ModeChanged(mode=mode, previous=previous))

    def set_processors(self, processors: list[Any]) -> None:
        self._emit(ev.Notice(text="an ACP agent keeps its own context: swedeck's processors do not apply to it",
                             level="warning"))

    def compact(self, undo: bool = False) -> None:
        self._emit(ev.Notice(text="an ACP agent compacts its own context: ask it (its /compact command)",
                             level="warning"))

    def interrupt(self) -> None:
        waiting = self._waiting
        if waiting is not None and not waiting.done():
            waiting.set_result(None)
        if self._cancel is not None:
            self._cancel()

    def quit(self, status: ExitStatus = ExitStatus.USER_QUIT, message: str = "") -> None:
        self._quit.set()
        self.interrupt()

    def context_status(self) -> ContextStatus:
        return self._status

    def prompt_preview(self) -> PromptPreview:
        """The latest request the agent sent, as the record holds it (its system prompt, its
        messages: what the model saw); before the first one, the conversation as swedeck has it."""
        from ..prompt_view import prompt_lines
        from ..tokens import count_messages, count_tools

        state = self._run.recorder.state if self._run is not None else None
        if state is not None and state.last_request is not None:
            step, entries, tools = state.last_request
            sent = [entry.build() for entry in entries]
            total = count_messages(sent) + (count_tools(tools) if tools else 0)
            return PromptPreview(sent, prompt_lines(sent, sent), total, self._status.window, None, [], self._status,
                                 title=f"What the model got at step {step}: the request the agent sent, as recorded "
                                       f"({len(tools)} tools)")
        messages = list(self._history)
        return PromptPreview(messages, prompt_lines(messages, messages), count_messages(messages) if messages else 0,
                             self._status.window, None, [], self._status,
                             title="The conversation so far (the agent has sent no request yet)")

    # --- the session ---------------------------------------------------------------------------

    def run(self, emit: ev.EventSink) -> SessionResult:
        self._emit = emit
        try:
            run = AcpRun.open(self.spec, self.output, self.upstream, self.cwd, self.resume)
        except Exception as error:  # noqa: BLE001 - a missing adapter is said in the UI, then the session ends
            emit(ev.Notice(text=str(error), level="error"))
            emit(ev.SessionEnded(exit_status=ExitStatus.ENVIRONMENT_ERROR, message=str(error)))
            self.finished.set()
            return SessionResult(exit_status=ExitStatus.ENVIRONMENT_ERROR, exit_code=1, message=str(error))
        self.trajectory_path = str(run.writer.path)
        self._run = run
        emit(ev.SessionStarted(session_id=run.writer.path.name, model_name=f"ACP: {agent_label(self.spec)}",
                               environment=_where(self.config, self.cwd), mode=self._mode,
                               trajectory_path=self.trajectory_path, task=self.task or ""))
        emit(ev.Notice(text=visible(f"model traffic recorded; {run.recording.upstreams.said()}")))
        task = self.task or self._ask_text("task", "What next? (the agent continues its session)" if self.resume
                                           else "The task for the agent:")
        stop = "cancelled"
        if task:
            self._said(task, MessageType.TASK)
            stop = run.run(task, self.cwd, self, cancel=self._set_cancel,
                           say=lambda line: emit(ev.Notice(text=line, level="error")),
                           environment=self.config.environment)
        path, code = run.finish(stop)
        self.trajectory_path = str(path)
        status = ExitStatus.USER_QUIT if self._quit.is_set() else ExitStatus.SUBMITTED if code == 0 else ExitStatus.ENVIRONMENT_ERROR
        emit(ev.SessionEnded(exit_status=status, trajectory_path=str(path), message=f"ACP: {stop}"))
        self.finished.set()
        return SessionResult(exit_status=status, trajectory_path=str(path), exit_code=code, message=f"ACP: {stop}")

    def _set_cancel(self, cancel: Any) -> None:
        self._cancel = cancel

    def _ask_text(self, kind: str, prompt: str) -> str | None:
        future: Future[str | None] = Future()
        self._waiting = future
        self._emit(ev.StateChanged(ev.AgentState.AWAITING_INPUT))
        self._emit(ev.InputRequested(future=future, kind=kind, prompt=prompt))  # type: ignore[arg-type]
        while not self._quit.is_set():
            try:
                return future.result(timeout=0.1)
            except TimeoutError:
                continue
        return None

    def _said(self, text: str, kind: MessageType) -> None:
        message = make_message("user", text, kind, task=text if kind == MessageType.TASK else None)
        self._history.append(message)
        self._emit(ev.MessageAdded(message=message, index=len(self._history) - 1))

    # --- the driver's calls (on the session's event loop) -------------------------------------

    def _open_step(self) -> None:
        if not self._open:
            self._step += 1
            self._actions = 0
            self._open = True
            self._emit(ev.StateChanged(ev.AgentState.THINKING))
            self._emit(ev.QueryStarted(step=self._step))

    def _close_step(self, action: bool) -> None:
        if not self._open:
            return
        self._open = False
        text, thinking = "".join(self._text), "".join(self._thinking)
        self._text.clear()
        self._thinking.clear()
        message = make_message("assistant", text, MessageType.ACTION if action else MessageType.ASSISTANT_MESSAGE,
                               step=self._step, reasoning=thinking or None)
        self._history.append(message)
        self._emit(ev.QueryFinished(step=self._step, message=message, usage=None, cost=0.0))
        self._emit(ev.ProgressUpdated(step=self._step, step_limit=0, cost=0.0, cost_limit=0.0))
        self._meter()

    def _meter(self) -> None:
        """The provider's own count of the last call, from the record (an agent that sends
        `usage_update` corrects it)."""
        state = self._run.recorder.state if self._run is not None else None
        if state is None or not state.last_usage.get("prompt"):
            return
        from ..meter import model_window

        window = self._status.window or model_window(state.last_model)
        self._status = ContextStatus(window=window, prompt_tokens=state.last_usage["prompt"],
                                     cached_tokens=state.last_usage.get("cached", 0),
                                     window_source="map" if window else "unknown")
        self._emit(ev.ContextUpdated(self._status))

    async def words(self, text: str, thought: bool) -> None:
        if not text:
            return
        self._open_step()
        (self._thinking if thought else self._text).append(text)
        self._emit(ev.StreamDelta(step=self._step, kind="reasoning" if thought else "text", text=text))

    async def tool_call(self, call_id: str, title: str, command: str | None = None) -> None:
        known = self._calls.get(call_id)
        if known is not None:  # the agent names it better (a second `tool_call`, a title update)
            known.title = title
            known.command = command or known.command
            return
        self._open_step()
        self._close_step(action=True)
        self._calls[call_id] = _Call(title)
        self._calls[call_id].command = command

    def _proposed(self, call_id: str, title: str | None = None, command: str | None = None) -> _Call:
        """The call's command block, shown now if it was not yet."""
        call = self._calls.get(call_id)
        if call is None:  # asked about, or ended, without a `tool_call` first
            self._open_step()
            self._close_step(action=True)
            call = self._calls[call_id] = _Call(title or call_id)
        if title:
            call.title = title
        if command:
            call.command = command
        if call.action_id is None:
            call.action_id = f"{self._step}.{self._actions}"
            self._actions += 1
            self._emit(ev.ActionProposed(action_id=call.action_id, step=self._step, command=call.shown,
                                         needs_confirmation=self._mode == "confirm"))
        return call

    def _started(self, call: _Call) -> None:
        if call.started is None:
            call.started = time.monotonic()
            assert call.action_id is not None
            self._emit(ev.StateChanged(ev.AgentState.RUNNING, call.shown))
            self._emit(ev.CommandStarted(action_id=call.action_id, command=call.shown))

    async def permission(self, call_id: str, title: str, options: list[Option], shell: str | None,
                         raw_input: Any) -> Option | None:
        call = self._proposed(call_id, title, shell)
        action_id, command = str(call.action_id), call.shown
        by_kind = {option.kind: option for option in options}
        ruling = self._gate.permission(self._mode, shell)
        if ruling.decision == "deny":
            call.rejected = True
            self._emit(ev.ActionDecided(action_id=action_id, decision="rejected", command=command, reason=ruling.reason))
            return reject_option(options)
        if ruling.decision == "allow":
            chosen = allow_once(options)
            self._emit(ev.ActionDecided(action_id=action_id, decision="auto", command=command, reason=ruling.reason))
        else:
            decision = await self._ask(action_id, command)
            if decision is None:  # the person interrupted: the prompt is cancelled, and so is this request
                call.rejected = True
                self._emit(ev.ActionDecided(action_id=action_id, decision="rejected", command=command,
                                            reason="interrupted"))
                return None
            kind = decision.kind
            if kind == "edit":
                self._emit(ev.Notice(text="an ACP agent's command cannot be edited: rejected; say what to do instead",
                                     level="warning"))
                kind = "reject"
            chosen = by_kind.get(CONFIRM_ANSWERS[kind]) or (
                by_kind.get("reject_always") if kind == "reject" else None)
            said = decision.comment
            if kind == "always_allow" and shell:  # a rule for what was shown and approved: the command itself
                said = f"and from now on: {self._gate.gate.approvals.allow(shell)}"
            self._emit(ev.ActionDecided(action_id=action_id, decision="rejected" if kind == "reject" else "approved",
                                        command=command, reason=said))
            if kind == "reject" and decision.comment:
                self._pending_comment = decision.comment
        if chosen is not None and chosen.kind.startswith("allow"):
            self._gate.allowed(shell, raw_input, self.cwd)
            self._started(call)
        else:
            call.rejected = True
        return chosen

    async def _ask(self, action_id: str, command: str) -> Any:
        """The person's Decision on what is shown; None when they interrupt."""
        future: Future[Any] = Future()
        self._waiting = future
        self._emit(ev.StateChanged(ev.AgentState.AWAITING_CONFIRMATION))
        self._emit(ev.ConfirmationRequested(future=future, action_id=action_id, command=command))
        decision = await asyncio.wrap_future(future)
        self._waiting = None
        return decision

    async def terminal(self, command: str) -> str | None:
        ruling = self._gate.terminal(self._mode, command)
        if ruling.decision == "deny":
            self._emit(ev.Notice(text=visible(f"not run: $ {command}: {ruling.reason}"), level="warning"))
            return ruling.reason
        if ruling.decision == "allow":
            return None
        return await self._asked_about(self._proposed(f"terminal-{len(self._calls)}", "terminal", command), command)

    async def write(self, path: str, chars: int) -> str | None:
        ruling = self._gate.write(self._mode, path, self.cwd)
        if ruling.decision == "allow":
            return None
        return await self._asked_about(self._proposed(f"write-{len(self._calls)}",
                                                      f"write {path} ({chars:,} characters)"), None)

    async def _asked_about(self, call: _Call, rule_for: str | None) -> str | None:
        """Something no permission request carried, asked about: None if the person allowed it,
        else why not. `a` on it makes a rule for `rule_for` (a terminal's command)."""
        decision = await self._ask(str(call.action_id), call.shown)
        approved = decision is not None and decision.kind in ("approve", "always_allow")
        if rule_for is not None and decision is not None and decision.kind == "always_allow":
            self._gate.gate.approvals.allow(rule_for)
        self._emit(ev.ActionDecided(action_id=str(call.action_id), decision="approved" if approved else "rejected",
                                    command=call.shown, reason="" if approved else "the person did not allow it"))
        return None if approved else "the person did not allow it"

    async def tool_done(self, call_id: str, status: str, output: str) -> None:
        call = self._proposed(call_id)
        if call.rejected:  # its block stays "rejected": the agent's words about it are the observation
            call.ended = True
            self._history.append(make_message("tool", output, MessageType.OBSERVATION, raw_output=output,
                                              command=call.command or call.title))
            return
        self._started(call)
        call.ended = True
        assert call.action_id is not None and call.started is not None
        result = ExecutionResult(output=output, returncode=0 if status == "completed" else 1,
                                 duration_s=time.monotonic() - call.started)
        self._history.append(make_message("tool", output, MessageType.OBSERVATION, raw_output=output,
                                          command=call.command or call.title))
        self._emit(ev.CommandFinished(action_id=call.action_id, command=call.shown, result=result))

    def tool_output(self, call_id: str | None, text: str) -> None:
        call = self._calls.get(call_id) if call_id is not None else None
        if call is None:  # a terminal no tool call shows (yet): the call running, else its own block
            running = [known for known in self._calls.values() if known.started is not None and not known.ended]
            call = running[-1] if running else self._proposed(call_id or f"terminal-{len(self._calls)}", "terminal")
        elif call.action_id is None:
            call = self._proposed(call_id or "")
        self._started(call)
        assert call.action_id is not None
        self._emit(ev.CommandOutput(action_id=call.action_id, text=text))

    def note(self, text: str) -> None:
        self._emit(ev.Notice(text=text, level="warning"))

    def phase(self, name: str, seconds: float) -> None:
        self._emit(ev.Notice(text=f"ACP start-up: {name} at {seconds:.2f} s"))

    async def plan(self, entries: tuple[ev.PlanEntry, ...]) -> None:
        self._emit(ev.PlanUpdated(entries=entries))

    async def usage(self, used: int | None, size: int | None) -> None:
        self._status = ContextStatus(window=size, prompt_tokens=used, window_source="the agent's usage_update")
        self._emit(ev.ContextUpdated(self._status))

    async def prompt_ended(self, stop: str) -> str | None:
        self._close_step(action=False)
        if self._quit.is_set():
            return None
        if self._pending_comment:  # a rejection's comment goes on as the person's message
            comment, self._pending_comment = self._pending_comment, ""
            self._said(comment, MessageType.USER_MESSAGE)
            return comment
        loop = asyncio.get_running_loop()
        text = await loop.run_in_executor(None, self._ask_text, "follow_up",
                                          f"The agent ended its turn ({stop}). A follow-up, or empty to end.")
        if text:
            self._said(text, MessageType.USER_MESSAGE)
        return text or None
