"""The agent loop (SPEC §6).

A step: build the prompt from the history with the active processors -> query the model
-> parse actions -> (confirm) -> run each action -> append observations. The history
keeps everything; the prompt is a processed copy.

Control flow uses exceptions that say how the step ended (`Submitted`, `Interrupted`,
`Rejected`, `LimitReached`, the model errors); `_run_turns` adds the messages a step's end
carries and decides what the end means in an interactive session (ask the person) and in a
headless one (end). The person is asked through `person.PersonChannel`; the messages that
answer a response are built by `replies`.

Threads: `run()` blocks the thread it is called in (a worker in the UI). `interrupt`,
`set_mode`, `set_processors` and `quit` are called from other threads; they only set
flags, cancel the model stream or the running command, and resolve pending futures.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import replace
from typing import Any

from .. import events as ev
from ..config import SwedeckConfig
from ..environments.base import Environment, ExecutionResult
from ..errors import SwedeckError
from ..messages import Action, ContextInfo, Message, MessageType, has_open_turn, last_task, make_message
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
from ..redact import mask_shapes
from ..trajectory.normalize import is_step
from . import limits, replies
from .approvals import Approvals
from .context import ContextTracker, smallest_fit
from .exits import (
    ExitStatus,
    FlowInterrupt,
    Interrupted,
    LimitReached,
    QuitRequested,
    Rejected,
    SessionEnd,
    Submitted,
)
from .person import PersonChannel
from .prompt import PromptBuilder
from .templates import render

SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


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
        record: Any = None,
        interactive: bool = True,
        history: list[Message] | None = None,
        window: int | None = None,
        window_source: str = "unknown",
    ):
        self.config = config
        self.model = model
        self.env = env
        self.interactive = interactive
        self.history: list[Message] = list(history or [])
        self.prompts = prompt_builder
        self._emit = emit
        self._record = record
        self._mode: ev.Mode = config.agent.mode
        self._lock = threading.RLock()
        self.person = PersonChannel(emit, interactive)
        self._state = ev.AgentState.STARTING
        self._current_task_text: str | None = None
        """The task of this turn, once given (a resumed history holds earlier ones)."""
        self._quit = False
        self._quit_status = ExitStatus.USER_QUIT
        self._interrupt_requested = False
        self.approvals = Approvals()
        self._whitelist = [re.compile(pattern) for pattern in config.agent.whitelist_actions]
        self._started = time.monotonic()
        self._consecutive_format_errors = 0
        self.context = ContextTracker(window, window_source)
        self._fit_applied = False
        """A processor change was made to fit the window and no query has succeeded since."""
        self.window = window
        self.step = sum(1 for m in self.history if is_step(m))
        self.turn = max([m.extra.turn or 0 for m in self.history] + [0])
        self.submission = ""

    # --- control, from any thread -------------------------------------------------------

    @property
    def mode(self) -> ev.Mode:
        return self._mode

    @property
    def state(self) -> ev.AgentState:
        return self._state

    def set_mode(self, mode: ev.Mode) -> None:
        with self._lock:
            if mode == self._mode:
                return
            previous, self._mode = self._mode, mode
        # A human-mode prompt waiting for a command gives way; a pending confirmation stays
        # pending: switching modes never runs an action by itself.
        self.person.settle("human_command", answer=None)
        self._meta("mode_change", mode=mode, previous=previous)
        self._emit(ev.ModeChanged(mode=mode, previous=previous))

    def interrupt(self) -> None:
        with self._lock:
            state = self._state
            if state not in _INTERRUPTIBLE:
                return
            self._interrupt_requested = True
        self.person.settle("confirmation", error=Interrupted())
        if state == ev.AgentState.THINKING:
            self.model.cancel()
        elif state == ev.AgentState.RUNNING:
            self.env.interrupt_session()

    def quit(self, status: ExitStatus = ExitStatus.USER_QUIT) -> None:
        """End the session; `status` is how it is recorded (Ctrl+C headless: Interrupted)."""
        with self._lock:
            self._quit = True
            self._quit_status = status
        self.person.close()
        self.model.cancel()
        if self._state == ev.AgentState.RUNNING:
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
            status = self._quit_status
            return status, self.submission, "quit by the user" if status == ExitStatus.USER_QUIT else "interrupted"
        except KeyboardInterrupt:
            return ExitStatus.INTERRUPTED, self.submission, "interrupted"
        raise AssertionError("the loop ends only by raising")  # pragma: no cover

    def _start(self, task: str | None) -> None:
        if not any(m.message_type == MessageType.SYSTEM for m in self.history):
            system = render("system_template", self.config.agent.system_template, self.template_vars())
            self._add(make_message("system", system, MessageType.SYSTEM))
        # A resumed history may end in tool calls that never got results (the process died).
        reason = "the session ended before it ran"
        for reply in replies.dangling(self.history, lambda: replies.not_run(self.config.agent, self.template_vars(),
                                                                             reason)):
            self._add(reply)
        if task is None and not has_open_turn(self.history):
            self._set_state(ev.AgentState.AWAITING_INPUT)
            kind = "follow_up" if self.turn else "task"
            task = self.person.ask_text(kind, "What should the agent do?" if kind == "task" else "Next task (empty to end)")
            if not task:
                raise SessionEnd(ExitStatus.SUBMITTED if self.submission or self.turn else ExitStatus.USER_QUIT)
        if task:
            self._add_task(task)

    def _run_turns(self) -> None:
        while True:
            try:
                self._check_quit()
                if self._mode == "human":
                    self._human_step()
                else:
                    limits.check(self.config.agent, self.step, self.model.stats.instance_cost,
                                 time.monotonic() - self._started)
                    self._step()
            except FlowInterrupt as flow:
                for message in flow.messages:
                    self._add(message)
                if isinstance(flow, Submitted):
                    self.submission = flow.submission
                    self._meta("submitted", submission=flow.submission)  # recorded now: a kill from here keeps it
                    self._next_turn_or_end()
                elif isinstance(flow, Interrupted):
                    self._after_interrupt()
            except LimitReached as limit:
                self._pause_or_end("limit", str(limit), ExitStatus.LIMITS_EXCEEDED)
            except APIError as exc:
                self._pause_or_end("api_error", str(exc), ExitStatus.API_ERROR)
            except ContextWindowExceeded as exc:
                self._context_exceeded(str(exc))

    def _next_turn_or_end(self) -> None:
        if not (self.interactive and self.config.agent.confirm_exit):
            raise SessionEnd(ExitStatus.SUBMITTED, submission=self.submission)
        self._set_state(ev.AgentState.AWAITING_INPUT, "submitted")
        task = self.person.ask_text("follow_up", "The agent submitted. Give a follow-up task, or leave empty to end.")
        if not task:
            raise SessionEnd(ExitStatus.SUBMITTED, submission=self.submission)
        self._add_task(task)

    def _context_exceeded(self, detail: str) -> None:
        """Offer (or, with `on_context_exceeded: fit`, apply) the smallest processor change that
        fits the window; never the same refused prompt again."""
        policy = self.config.agent.on_context_exceeded
        retried = self._fit_applied
        fit = None if retried else smallest_fit([m for m in self.history if m.role != "exit"],
                                                 self.prompts.processors, self.context)
        if fit is not None:
            detail += (f" — it fits with {fit.change}: next ≈ {fit.expected_tokens:,} / {fit.window:,} tokens")
            self._emit(ev.ContextUpdated(replace(self.context_status(), advice=f"fits with {fit.change} "
                                                 f"≈ {fit.expected_tokens:,}")))
        elif retried:
            detail += " — still too long after the processors were changed"
        if fit is not None and policy == "fit":
            self._emit(ev.Notice(text=f"The prompt did not fit the context window: switched on {fit.change} "
                                      f"(next ≈ {fit.expected_tokens:,} / {fit.window:,} tokens) and retrying.",
                                 level="warning"))
            self._fit_applied = True
            self.set_processors(fit.processors)
            return
        if policy == "stop":
            raise SessionEnd(ExitStatus.CONTEXT_WINDOW_EXCEEDED, detail)
        self._pause_or_end("context_exceeded", detail, ExitStatus.CONTEXT_WINDOW_EXCEEDED, fit=fit)

    def _pause_or_end(self, reason: str, detail: str, status: ExitStatus, fit: Any = None) -> None:
        if not self.interactive:
            raise SessionEnd(status, detail)
        self._set_state(ev.AgentState.PAUSED, detail)
        decision = self.person.ask(ev.PauseRequested, "pause", reason=reason, detail=detail, fit=fit)
        if decision is None or decision.kind == "quit":
            raise SessionEnd(status, detail)
        if decision.kind == "raise_limits":
            agent = self.config.agent
            limits.lift(agent, decision)
            self._meta("limit_change", step_limit=agent.step_limit, cost_limit=agent.cost_limit,
                       wall_time_limit_s=agent.wall_time_limit_s)
            self._progress()
        elif decision.kind == "enable_processor" and decision.processors is not None:
            self._fit_applied = True
            self.set_processors(decision.processors)

    def _after_interrupt(self) -> None:
        with self._lock:
            self._interrupt_requested = False
        self._add(make_message("user", "The user interrupted you.", MessageType.INTERRUPT, mode=self._mode))
        if not self.interactive:
            raise SessionEnd(ExitStatus.INTERRUPTED, "interrupted")
        self._set_state(ev.AgentState.AWAITING_INPUT, "interrupted")
        text = self.person.ask_text("after_interrupt", "Interrupted. Message to the agent (empty to continue):")
        if text:
            self._add(make_message("user", text, MessageType.USER_MESSAGE, mode=self._mode))

    # --- one step -----------------------------------------------------------------------

    def _step(self) -> None:
        self.step += 1
        step = self.step
        prompt = self.prompts.build(self.history)
        for error in prompt.errors:
            self._emit(ev.Notice(text=error, level="warning"))
        self._set_state(ev.AgentState.THINKING)
        self._emit(ev.QueryStarted(step=step))
        self._check_interrupt_before_io()
        try:
            response = self.model.query(prompt.messages, step=step, emit=self._emit)
        except (APIError, ContextWindowExceeded):
            self.step -= 1  # nothing was answered: the retry is the same step
            raise
        except ReplayExhausted:
            self.step -= 1
            raise SessionEnd(ExitStatus.REPLAY_EXHAUSTED, "the replayed trajectory has no more responses",
                             submission=self.submission) from None
        except QueryCancelled:
            self.step -= 1
            self._emit(ev.QueryCancelled(step=step))
            if self._quit:
                raise QuitRequested() from None
            raise Interrupted() from None
        except FormatError as exc:
            self.context.record(exc.usage, prompt.messages)
            self._format_error(exc, step, prompt.processors_hash)
            return
        self.context.record(response.usage, prompt.messages)
        if not response.actions:
            error = "your response contained no command. Every response must run exactly one bash command."
            self._format_error(FormatError(error, response.message, response.usage, response.cost),
                               step, prompt.processors_hash)
            return
        self._consecutive_format_errors = 0
        self._fit_applied = False
        message = self._stamp_response(response, step, prompt.processors_hash)
        self._emit(ev.QueryFinished(step=step, message=message, usage=response.usage, cost=response.cost,
                                    stream_guard_fired=response.stream_guard_fired))
        self._add(message)
        self._update_context()  # the query's figure, as soon as its answer is in
        self._progress()
        self._run_actions(response.actions, step)
        self._update_context()

    def _stamp_response(self, response: ModelResponse, step: int, processors_hash: str | None) -> Message:
        status = self.context.status()
        context = ContextInfo(window=self.window, prompt_tokens=status.prompt_tokens, left_percent=status.left_percent)
        return response.message.with_extra(step=step, turn=self.turn, processors=processors_hash,
                                           context=context, mode=self._mode, timestamp=time.time())

    def _format_error(self, exc: FormatError, step: int, processors_hash: str | None) -> None:
        self._consecutive_format_errors += 1
        message = exc.message.with_extra(step=step, turn=self.turn, processors=processors_hash,
                                          mode=self._mode, timestamp=time.time())
        self._emit(ev.QueryFinished(step=step, message=message, usage=exc.usage, cost=exc.cost))
        self._add(message)
        self._progress()
        for reply in replies.format_error(self.config.agent, self.template_vars(), message, exc.error, step):
            self._add(reply)
        if self._consecutive_format_errors >= self.config.agent.max_consecutive_format_errors:
            raise SessionEnd(ExitStatus.FORMAT_ERROR,
                             f"{self._consecutive_format_errors} format errors in a row; last: {exc.error}")

    def _run_actions(self, actions: list[Action], step: int) -> None:
        for position, action in enumerate(actions):
            action_id = f"{step}.{position}"
            try:
                command, approval = self._decide(action, action_id, step, unrun=actions[position:])
            except Interrupted:
                raise Interrupted(*self._not_run(actions[position:], step, "the user interrupted.")) from None
            result = self._execute(command, action_id)
            observation = self._observation(action, command, result, step).with_extra(approval=approval)
            rest = actions[position + 1:]
            if result.returncode == 0 and result.output.lstrip().startswith(SUBMIT_MARKER):
                submission = replies.submission(result.output)
                # A record of the submission, not a model query: `user`, as mini-swe-agent's final
                # output is, so no viewer counts it as a step (SPEC §9.3).
                final = make_message("user", submission, MessageType.FINAL, step=step, turn=self.turn)
                raise Submitted(submission, observation, *self._not_run(rest, step, "the task was submitted."), final)
            self._add(observation)
            if result.interrupted:
                raise Interrupted(*self._not_run(rest, step, "the user interrupted."))

    def _not_run(self, actions: list[Action], step: int, reason: str) -> list[Message]:
        if not actions:  # nothing to answer: no template to render (its variables ask the shell for its cwd)
            return []
        text = replies.not_run(self.config.agent, self.template_vars(), reason)
        return replies.unanswered(actions, step, text, MessageType.OBSERVATION)

    def _decide(self, action: Action, action_id: str, step: int, unrun: list[Action]) -> tuple[str, str]:
        """The command to run and how it was approved (recorded on its observation); a
        rejection answers `unrun` (this action and those after it) with the person's words."""
        command = action.command
        reason = self._auto_reason(command)
        self._emit(ev.ActionProposed(action_id=action_id, step=step, command=command,
                                     needs_confirmation=reason is None))
        if reason is not None:
            self._emit(ev.ActionDecided(action_id=action_id, decision="auto", command=command, reason=reason))
            return command, f"auto: {reason}"
        self._set_state(ev.AgentState.AWAITING_CONFIRMATION)
        decision = self.person.ask(ev.ConfirmationRequested, "confirmation", action_id=action_id, command=command)
        if decision.kind == "reject":
            self._emit(ev.ActionDecided(action_id=action_id, decision="rejected", command=command))
            text = replies.rejected(self.config.agent, self.template_vars(), decision.comment or "(no comment)")
            raise Rejected(*replies.unanswered(unrun, step, text, MessageType.USER_MESSAGE))
        if decision.kind == "edit" and decision.command.strip():
            self._emit(ev.ActionDecided(action_id=action_id, decision="edited", command=decision.command,
                                        reason=f"edited from: {command}"))
            return decision.command, "edited"
        reason = ""
        if decision.kind == "always_allow":
            reason = f"and from now on: {self.approvals.allow(command)}"
        self._emit(ev.ActionDecided(action_id=action_id, decision="approved", command=command, reason=reason))
        return command, "approved"

    def _auto_reason(self, command: str) -> str | None:
        """Why `command` runs without asking, or None when the person decides."""
        if self._mode != "confirm":
            return self._mode
        if any(pattern.search(command) for pattern in self._whitelist):
            return "whitelisted"
        return self.approvals.allowed_by(command)

    def _execute(self, command: str, action_id: str) -> ExecutionResult:
        self._check_interrupt_before_io()
        self._set_state(ev.AgentState.RUNNING, command)
        self._emit(ev.CommandStarted(action_id=action_id, command=command))
        try:
            result = self.env.execute(command, on_output=lambda text: self._emit(ev.CommandOutput(action_id, text)))
        except SwedeckError as exc:
            raise SessionEnd(ExitStatus.ENVIRONMENT_ERROR, str(exc)) from None
        with self._lock:
            if result.interrupted:
                self._interrupt_requested = False
        shown = replace(result, output=mask_shapes(result.output))  # token shapes masked, as in the trajectory
        self._emit(ev.CommandFinished(action_id=action_id, command=command, result=shown))
        if self._quit:
            raise QuitRequested()
        return result

    def _observation(self, action: Action, command: str, result: ExecutionResult, step: int) -> Message:
        return replies.observation(self.config.agent, self.template_vars(), action, command, result, step, self.turn,
                                   self._mode)

    # --- human mode ---------------------------------------------------------------------

    def _human_step(self) -> None:
        self._set_state(ev.AgentState.AWAITING_INPUT, "human mode")
        command = self.person.ask_text("human_command", "Command to run (human mode):")
        if not command or self._mode != "human":
            return
        self._add(make_message("user", command, MessageType.USER_MESSAGE, turn=self.turn, mode="human",
                               command=command))
        action_id = f"human.{len(self.history)}"
        self._emit(ev.ActionProposed(action_id=action_id, step=self.step, command=command, needs_confirmation=False))
        result = self._execute(command, action_id)
        self._add(self._observation(Action(command=command), command, result, self.step))
        with self._lock:
            self._interrupt_requested = False
        self._update_context()

    # --- limits, context, progress ------------------------------------------------------

    def _check_quit(self) -> None:
        if self._quit:
            raise QuitRequested()

    def _check_interrupt_before_io(self) -> None:
        with self._lock:
            if self._interrupt_requested:
                raise Interrupted()

    def context_status(self) -> ev.ContextStatus:
        """The meter's figures, with the next prompt predicted (SPEC §5; `agent/context.py`)."""
        return self.context.status(self.prompts.build(self.history).messages)

    def _update_context(self) -> None:
        self._emit(ev.ContextUpdated(self.context_status()))

    def _progress(self) -> None:
        agent = self.config.agent
        self._emit(ev.ProgressUpdated(step=self.step, step_limit=agent.step_limit, cost=self.model.stats.instance_cost,
                                      cost_limit=agent.cost_limit, turn=self.turn))

    def set_window(self, window: int, source: str) -> None:
        """The context window, learnt after the start (litellm's model info, from another thread)."""
        self.window = self.context.window = window
        self.context.window_source = source
        self._update_context()

    def set_processors(self, processors: list[Any]) -> None:
        self.prompts.set_processors(processors)
        self._meta("processors_change", processors=self.prompts.describe(), hash=self.prompts.processors_hash)
        self._update_context()

    def template_vars(self) -> dict[str, Any]:
        status = self.context.status()
        left = status.left_percent
        return {
            **self.env.get_template_vars(),
            "task": self._current_task(),
            "step": self.step,
            "step_limit": self.config.agent.step_limit,
            "cost": self.model.stats.instance_cost,
            "cost_limit": self.config.agent.cost_limit,
            "mode": self._mode,
            "context_window_max": self.window,
            "context_window_prompt_tokens": status.prompt_tokens,
            "context_left_percent": None if left is None else round(left, 1),
        }

    # --- history ------------------------------------------------------------------------

    def _add_task(self, task: str) -> None:
        self.turn += 1
        self._current_task_text = task
        content = render("instance_template", self.config.agent.instance_template,
                         {**self.template_vars(), "task": task})
        self._add(make_message("user", content, MessageType.TASK, turn=self.turn, mode=self._mode, task=task))
        self._progress()
        self._update_context()

    def _current_task(self) -> str:
        if self._current_task_text is not None:
            return self._current_task_text
        return last_task(self.history)

    def _add(self, message: Message) -> None:
        if message.extra.turn is None and self.turn:
            message = message.with_extra(turn=self.turn)
        self.history.append(message)
        if self._record is not None:
            self._record.add_message(message)
        self._emit(ev.MessageAdded(message=message, index=len(self.history) - 1))

    def _meta(self, event: str, **data: Any) -> None:
        if self._record is not None:
            self._record.add_meta(event, **data)

    def _set_state(self, state: ev.AgentState, detail: str = "") -> None:
        self._state = state
        self._emit(ev.StateChanged(state=state, detail=detail))


_INTERRUPTIBLE = (ev.AgentState.THINKING, ev.AgentState.RUNNING, ev.AgentState.AWAITING_CONFIRMATION)
