"""The agent loop (SPEC §6).

A step: build the prompt from the history with the active processors -> query the model
-> parse actions -> (confirm) -> run each action -> append observations. The history
keeps everything; the prompt is a processed copy.

Control flow uses exceptions that say how the step ended (`Submitted`, `Interrupted`,
`Rejected`, `LimitReached`, the model errors); `_run_turns` adds the messages a step's end
carries and `endings` decides what the end means (interactive: ask the person; headless:
end). Beside the loop: `control` (flags other threads set), `transcript` (the history as
written), `commands` and `gate` (running a step's commands), `person`, `replies`.

Threads: `run()` blocks the thread it is called in (a worker in the UI). `interrupt`,
`set_mode`, `set_processors` and `quit` are called from other threads; they only set
flags, cancel the model stream or the running command, and resolve pending futures.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

from .. import events as ev
from ..config import SwedeckConfig
from ..environments.base import Environment, ExecutionResult
from ..exit_status import ExitStatus
from ..messages import Action, ContextInfo, Message, MessageType, has_open_turn, last_submission, make_message
from ..models.base import (
    APIError,
    ContextWindowExceeded,
    FormatError,
    Model,
    ModelResponse,
    ModelSpec,
    QueryCancelled,
    ReplayExhausted,
)
from ..processors.base import active_labels
from ..rules.load import config_rules
from ..trajectory.normalize import is_step
from . import commands, compaction, endings, limits, replies
from .changes import Change
from .context import ContextTracker
from .control import Control
from .exits import FlowInterrupt, Interrupted, LimitReached, QuitRequested, Rejected, SessionEnd, Submitted
from .gate import Gate
from .person import PersonChannel
from .prompt import PromptBuilder
from .resolution import resolver
from .templates import render
from .transcript import Recorder, Transcript


class Agent:
    """The default agent: one `bash` tool call per action (`interactive` is the same)."""

    model_spec = ModelSpec(action_format="tool_call")

    def __init__(
        self,
        config: SwedeckConfig,
        model: Model,
        env: Environment,
        emit: ev.EventSink,
        *,
        prompt_builder: PromptBuilder,
        record: Recorder | None = None,
        interactive: bool = True,
        history: list[Message] | None = None,
        window: int | None = None,
        window_source: str = "unknown",
    ):
        self.config = config
        self.model = model
        self.env = env
        self.prompts = prompt_builder
        self.emit = emit
        self.transcript = Transcript(list(history or []), emit, record)
        self.control = Control(config.agent.mode, emit)
        self.person = PersonChannel(emit, interactive)
        self.gate = Gate(config.agent.whitelist_actions, resolver(env), config_rules(config.agent.rules))
        self.context = ContextTracker(window, window_source)
        self.window = window
        self.fit_applied = False
        """A processor change was made to fit the window and no query has succeeded since."""
        self._started = time.monotonic()
        self._consecutive_format_errors = 0
        self.step = sum(1 for m in self.history if is_step(m))
        self.submission = last_submission(self.history) or ""
        self.recorded_commands: list[tuple[int, str]] = []
        """A fork's `--replay-actions`: commands from a file, run before the first query, each
        through the gate like a model's (a file is untrusted: confirm mode asks for each)."""
        self.replayed: list[tuple[int, str, ExecutionResult | None]] = []
        self.warnings: list[str] = []
        """What the person must know of the run's result (a submission with a secret masked)."""
        self.compaction_quiet_until = 0
        """No automatic compaction before this step (one just failed, or had nothing to compact)."""
        self._compaction_asks: queue.SimpleQueue[str] = queue.SimpleQueue()
        """`compact` / `undo`, asked from the front end; done before the next query."""
        self._summary_models: dict[str, Model] = {}

    @property
    def history(self) -> list[Message]:
        return self.transcript.messages

    @property
    def interactive(self) -> bool:
        """A person answers (the live UI) or no one does (headless, a batch): decided once, by
        the channel to the person, which every ending and review asks."""
        return self.person.interactive

    @property
    def turn(self) -> int:
        return self.transcript.turn

    # --- control, from any thread -------------------------------------------------------

    @property
    def mode(self) -> ev.Mode:
        return self.control.mode

    @property
    def state(self) -> ev.AgentState:
        return self.control.state

    def set_mode(self, mode: ev.Mode) -> None:
        previous = self.control.change_mode(mode)
        if previous is None:
            return
        # A human-mode prompt waiting for a command gives way; a pending confirmation stays
        # pending: switching modes never runs an action by itself.
        self.person.settle("human_command", answer=None)
        self.transcript.meta("mode_change", mode=mode, previous=previous)
        self.emit(ev.ModeChanged(mode=mode, previous=previous))

    def interrupt(self) -> None:
        state = self.control.request_interrupt()
        if state is None:
            return
        self.person.settle("confirmation", error=Interrupted())
        if state == ev.AgentState.THINKING:
            self.model.cancel()
        elif state == ev.AgentState.RUNNING:
            self.env.interrupt_session()

    def request_compaction(self, undo: bool = False) -> None:
        """From any thread: compact (or undo the last compaction) before the next query."""
        self._compaction_asks.put("undo" if undo else "compact")

    def summary_model(self, name: str) -> Model:
        """The model a `summarize` processor names for its summaries (the agent's settings otherwise)."""
        if name not in self._summary_models:
            from ..models import get_model

            config = self.config.model.model_copy(update={"model_name": name})
            self._summary_models[name] = get_model(config, ModelSpec(action_format="text"))
        return self._summary_models[name]

    def quit(self, status: ExitStatus = ExitStatus.USER_QUIT) -> None:
        """End the session; `status` is how it is recorded (Ctrl+C headless: Interrupted)."""
        self.control.request_quit(status)
        self.person.close()
        self.model.cancel()
        if self.control.state == ev.AgentState.RUNNING:
            self.env.interrupt_session()

    # --- the session --------------------------------------------------------------------

    def run(self, task: str | None = None) -> tuple[ExitStatus, str, str]:
        """Run until the session ends. Returns (exit status, submission, message)."""
        try:
            self._start(task)
            self._run_turns()
        except SessionEnd as end:
            return end.status, end.submission or self.submission, end.message
        except QuitRequested:
            status = self.control.quit_status
            if status == ExitStatus.USER_QUIT and last_submission(self.history) is not None:
                # quit at the follow-up prompt: the run was submitted, and stays so
                return ExitStatus.SUBMITTED, self.submission, "submitted; no follow-up task"
            return status, self.submission, "quit by the user" if status == ExitStatus.USER_QUIT else "interrupted"
        except KeyboardInterrupt:
            return ExitStatus.INTERRUPTED, self.submission, "interrupted"
        raise AssertionError("the loop ends only by raising")  # pragma: no cover

    def _start(self, task: str | None) -> None:
        if not any(m.message_type == MessageType.SYSTEM for m in self.history):
            system = render("system_template", self.config.agent.system_template, self.template_vars())
            message = make_message("system", system, MessageType.SYSTEM)
            if self.history:  # a fork of a file that kept none (Claude Code, OpenHands): the system prompt first
                self.transcript.prepend(message)
            else:
                self.transcript.add(message)
        # A resumed history may end in tool calls that never got results (the process died).
        reason = "the session ended before it ran"
        for reply in replies.dangling(self.history, lambda: replies.not_run(self.config.agent, self.template_vars(),
                                                                             reason)):
            self.transcript.add(reply)
        self._replay_recorded()
        if task is None and not has_open_turn(self.history):
            if not self.interactive and last_submission(self.history) is not None:  # resumed after its submission
                self.emit(ev.Notice(text="nothing left to do: the session was already submitted; give a task "
                                         "(-t TEXT) to go on with a follow-up", level="warning"))
                raise SessionEnd(ExitStatus.SUBMITTED, "already submitted; nothing was run",
                                 submission=self.submission)
            self.control.set_state(ev.AgentState.AWAITING_INPUT)
            kind = "follow_up" if self.turn else "task"
            task = self.person.ask_text(kind, "What should the agent do?" if kind == "task" else "Next task (empty to end)")
            if not task:
                raise SessionEnd(ExitStatus.SUBMITTED if self.submission or self.turn else ExitStatus.USER_QUIT)
        if task:
            self.add_task(task)

    def _replay_recorded(self) -> None:
        """Run a fork's recorded commands (SPEC §11.3) before its first query; each is proposed,
        approved, edited or rejected as a model's command is, and none enters the history."""
        for position, (step, command) in enumerate(self.recorded_commands):
            action_id = f"replay.{position}"
            try:
                ran, approval = self.gate.decide(self, Action(command=command), action_id, step, unrun=[])
            except Rejected:
                self.replayed.append((step, command, None))
                self.transcript.meta("replayed_command", step=step, command=command, approval="rejected")
                continue
            except Interrupted:
                self.control.clear_interrupt()
                self.emit(ev.Notice(text="the recorded commands were interrupted; the rest did not run",
                                    level="warning"))
                return
            result = commands.execute(self, ran, action_id)
            self.replayed.append((step, ran, result))
            self.transcript.meta("replayed_command", step=step, command=ran, approval=approval,
                                 returncode=result.returncode)

    def _run_turns(self) -> None:
        while True:
            try:
                self.control.check_quit()
                if self.mode == "human":
                    commands.human_step(self)
                else:
                    limits.check(self.config.agent, self.step, self.model.stats.instance_cost,
                                 time.monotonic() - self._started)
                    self._step()
            except FlowInterrupt as flow:
                for message in flow.messages:
                    self.transcript.add(message)
                if isinstance(flow, Submitted):
                    self.submission = flow.submission
                    if flow.warning:
                        self.warnings.append(flow.warning)
                        self.emit(ev.Notice(text=flow.warning, level="warning"))
                    # a kill from here keeps it
                    self.transcript.meta("submitted", submission=flow.submission,
                                         **({"warning": flow.warning} if flow.warning else {}))
                    self.apply(endings.next_turn_or_end(self))
                elif isinstance(flow, Interrupted):
                    endings.after_interrupt(self)
            except LimitReached as limit:
                self.apply(endings.pause_or_end(self, "limit", str(limit), ExitStatus.LIMITS_EXCEEDED))
            except APIError as exc:
                self.apply(endings.pause_or_end(self, "api_error", str(exc), ExitStatus.API_ERROR))
            except ContextWindowExceeded as exc:
                self.apply(endings.context_exceeded(self, str(exc)))

    # --- one step -----------------------------------------------------------------------

    def _compaction_first(self) -> None:
        """What was asked of compaction, then the `summarize` threshold (SPEC §17)."""
        while not self._compaction_asks.empty():
            if self._compaction_asks.get() == "undo":
                self.apply(compaction.undo(self))
            else:
                self.apply(Change(quiet_until=0))
                self.apply(compaction.compact(self, "request"))
        if compaction.due(self):
            self.apply(compaction.compact(self, "threshold"))

    def _step(self) -> None:
        step = self.step + 1  # counted once the model answers: a failed query is retried as the same step
        self._compaction_first()
        prompt = self.prompts.build(self.history)
        for error in prompt.errors:
            self.emit(ev.Notice(text=error, level="warning"))
        self.control.set_state(ev.AgentState.THINKING)
        self.emit(ev.QueryStarted(step=step))
        self.control.check_interrupt()
        try:
            response = self._query(prompt.messages, step)
        except ReplayExhausted:
            raise SessionEnd(ExitStatus.REPLAY_EXHAUSTED, "the replayed trajectory has no more responses",
                             submission=self.submission) from None
        except QueryCancelled:
            self.emit(ev.QueryCancelled(step=step))
            self.control.check_quit()
            raise Interrupted() from None
        except FormatError as exc:
            self.step = step
            self.context.record(exc.usage, prompt.messages)
            self._format_error(exc, step, prompt.processors_hash)
            return
        self.step = step
        self.context.record(response.usage, prompt.messages)
        if not response.actions:
            error = "your response contained no command. Every response must run exactly one bash command."
            self._format_error(FormatError(error, response.message, response.usage, response.cost),
                               step, prompt.processors_hash)
            return
        self._consecutive_format_errors = 0
        self.fit_applied = False
        status = self.context.status()
        context = ContextInfo(window=self.window, prompt_tokens=status.prompt_tokens, left_percent=status.left_percent)
        message = self._stamp(response.message, step, prompt.processors_hash, context=context)
        self.emit(ev.QueryFinished(step=step, message=message, usage=response.usage, cost=response.cost,
                                   stream_guard_fired=response.stream_guard_fired))
        self.transcript.add(message)
        self.update_context()  # the query's figure, as soon as its answer is in
        self.progress()
        commands.run_actions(self, response.actions, step)
        self.update_context()

    def _query(self, messages: list[Message], step: int) -> ModelResponse:
        """The model's answer; the wall-time limit stops it mid-answer (a silent stream too)."""
        limit = self.config.agent.wall_time_limit_s
        if not limit:
            return self.model.query(messages, step=step, emit=self.emit)
        up = threading.Event()

        def reached() -> None:
            up.set()
            self.model.cancel()

        timer = threading.Timer(max(0.0, limit - (time.monotonic() - self._started)), reached)
        timer.daemon = True
        timer.start()
        try:
            return self.model.query(messages, step=step, emit=self.emit)
        except QueryCancelled:
            if up.is_set():
                self.emit(ev.QueryCancelled(step=step))
                raise LimitReached(f"wall time limit reached while the model answered ({limit:.0f} s)") from None
            raise
        finally:
            timer.cancel()

    def _stamp(self, message: Message, step: int, processors_hash: str | None, **extra: Any) -> Message:
        return message.with_extra(step=step, turn=self.turn, processors=processors_hash, mode=self.mode,
                                  timestamp=time.time(), **extra)

    def _format_error(self, exc: FormatError, step: int, processors_hash: str | None) -> None:
        self._consecutive_format_errors += 1
        message = self._stamp(exc.message, step, processors_hash)
        self.emit(ev.QueryFinished(step=step, message=message, usage=exc.usage, cost=exc.cost,
                                   stream_guard_fired=bool(message.extra.stream_guard)))
        self.transcript.add(message)
        self.progress()
        for reply in replies.format_error(self.config.agent, self.template_vars(), message, exc.error, step):
            self.transcript.add(reply)
        if self._consecutive_format_errors >= self.config.agent.max_consecutive_format_errors:
            raise SessionEnd(ExitStatus.FORMAT_ERROR,
                             f"{self._consecutive_format_errors} format errors in a row; last: {exc.error}")

    # --- context, progress, processors ----------------------------------------------------

    def context_status(self) -> ev.ContextStatus:
        """The meter's figures, with the next prompt predicted (SPEC §5; `agent/context.py`), and
        where the next compaction fires against that same prediction (`compaction.due`)."""
        status = self.context.status(self.prompts.build(self.history).messages)
        return compaction.with_trigger(status, self.prompts.processors, self.window, self.history)

    def update_context(self) -> None:
        self.emit(ev.ContextUpdated(self.context_status()))

    def progress(self) -> None:
        agent = self.config.agent
        self.emit(ev.ProgressUpdated(step=self.step, step_limit=agent.step_limit, cost=self.model.stats.instance_cost,
                                     cost_limit=agent.cost_limit, turn=self.turn))

    def set_window(self, window: int, source: str) -> None:
        """The context window, learnt after the start (litellm's model info, from another thread)."""
        self.window = self.context.window = window
        self.context.window_source = source
        self.update_context()

    def apply(self, change: Change) -> None:
        """What a collaborator decided (`changes.Change`), applied here, the one owner of the agent's state."""
        if change.quiet_until is not None:
            self.compaction_quiet_until = change.quiet_until
        if change.fit_applied is not None:
            self.fit_applied = change.fit_applied
        if change.processors is not None:
            self.set_processors(change.processors)
        if change.task is not None:
            self.add_task(change.task)
        if change.progress:
            self.progress()

    def set_processors(self, processors: list[Any]) -> None:
        self.prompts.set_processors(processors)
        self.compaction_quiet_until = 0  # a new `summarize` setting is acted on from the next query
        self.transcript.meta("processors_change", processors=self.prompts.describe(),
                             hash=self.prompts.processors_hash)
        self.emit(ev.ProcessorsChanged(labels=tuple(active_labels(self.prompts.processors))))
        self.update_context()

    def template_vars(self) -> dict[str, Any]:
        status = self.context.status()
        left = status.left_percent
        return {
            **self.env.get_template_vars(),
            "task": self.transcript.task,
            "step": self.step,
            "step_limit": self.config.agent.step_limit,
            "cost": self.model.stats.instance_cost,
            "cost_limit": self.config.agent.cost_limit,
            "mode": self.mode,
            "context_window_max": self.window,
            "context_window_prompt_tokens": status.prompt_tokens,
            "context_left_percent": None if left is None else round(left, 1),
        }

    def add_task(self, task: str) -> None:
        turn = self.transcript.start_turn(task)
        content = render("instance_template", self.config.agent.instance_template,
                         {**self.template_vars(), "task": task})
        self.transcript.add(make_message("user", content, MessageType.TASK, turn=turn, mode=self.mode, task=task))
        self.progress()
        self.update_context()
