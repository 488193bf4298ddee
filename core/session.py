"""A session: config -> model, environment, trajectory, agent; run; clean up.

The one object a front end holds. `run(emit)` blocks (the TUI calls it in a thread
worker); the control methods are safe from any thread and may be called before the agent
exists (they then change what it starts with).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from . import events as ev
from .agent import agent_class
from .agent.context import ContextTracker
from .agent.prompt import PromptBuilder
from .config import SwedeckConfig, require_model
from .errors import SwedeckError, UsageError
from .events import ContextStatus
from .exit_status import ExitStatus, exit_code
from .messages import Message, MessageType, ModelStats, last_task, without_exits
from .redact import Redactor, is_secret_name, secret_values
from .tokens import count_messages

if TYPE_CHECKING:
    from .agent.agent import Agent
    from .environments.base import Environment
    from .models.base import Model
    from .trajectory.writer import TrajectoryWriter


@dataclass
class SessionResult:
    exit_status: ExitStatus
    submission: str = ""
    trajectory_path: str | None = None
    exit_code: int = 0
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    """What the person must know of the result (a submission with a secret masked)."""


@dataclass
class PromptPreview:
    """What the next query would send (the prompt inspector, SPEC §10.5)."""

    messages: list[Message]
    lines: list[Any]
    """`prompt_view.PromptLine` per message: tokens, origin, changed by a processor."""
    total: int
    """The local count of these messages."""
    window: int | None
    processors_hash: str | None
    errors: list[str] = field(default_factory=list)
    status: ContextStatus | None = None
    """What the meter shows for the same prompt: the window and the anchored prediction."""
    title: str = "What the model gets next (after history processors)"
    """What these messages are (an ACP session shows the latest request its agent sent)."""


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


def build_redactor(config: SwedeckConfig) -> Redactor:
    """Secret values from the config and from every secret-named host variable (a local
    command can print its environment)."""
    values = secret_values(config.model_dump(mode="json"))
    values |= {value for name, value in os.environ.items() if is_secret_name(name)}
    return Redactor(values, shapes_for_model=config.environment.mask_secret_shapes)


class SessionControl(Protocol):
    """What a front end holds of a session (the TUI, and tests' stand-ins for it): the real
    `Session` implements it, and `tests/test_session_control.py` checks every stand-in does
    too, signature by signature. The control methods are safe to call from any thread."""

    config: SwedeckConfig
    task: str | None
    trajectory_path: str | None
    finished: threading.Event
    """Set when `run` has written the final file and closed the environment."""

    @property
    def mode(self) -> ev.Mode: ...

    @property
    def processors(self) -> list[Any]: ...

    @property
    def history(self) -> list[Message]: ...

    def set_mode(self, mode: ev.Mode) -> None:
        """Switch mode; never runs a pending action by itself. Recorded in the trajectory."""

    def set_processors(self, processors: list[Any]) -> None:
        """Replace the active history processors (toggles and parameters); recorded."""

    def interrupt(self) -> None:
        """Cancel the model stream or the running command (only that command)."""

    def compact(self, undo: bool = False) -> None:
        """Compact the history with a summary (or undo the last compaction) before the next query (SPEC §17)."""

    def quit(self, status: ExitStatus = ExitStatus.USER_QUIT, message: str = "") -> None:
        """End the session with `status` (and `message`) once the current operation is cancelled."""

    def context_status(self) -> ContextStatus:
        """The meter's figures now, the next prompt predicted with the active processors."""

    def prompt_preview(self) -> PromptPreview:
        """The next prompt as the model would get it, line by line against the history."""

    def run(self, emit: ev.EventSink) -> SessionResult:
        """Run the session on this (worker) thread; every event goes to `emit`."""


class Session:
    def __init__(
        self,
        config: SwedeckConfig,
        task: str | None = None,
        *,
        interactive: bool = True,
        resume: str | None = None,
        history: list[Message] | None = None,
        session_id: str | None = None,
    ):
        self.config = config.model_copy(deep=True)
        self.task = task
        self.interactive = interactive
        self.resume = resume
        self.session_id = session_id or new_session_id()
        self._history = list(history or [])
        self._agent: Agent | None = None
        self._quit = False
        self._quit_status = ExitStatus.USER_QUIT
        self._quit_message = ""
        self.prompts = PromptBuilder(list(self.config.agent.history_processors))
        self.trajectory_path: str | None = None
        self._earlier_stats = ModelStats()
        """A resumed session's totals before this process (SPEC §9.5)."""
        self._notices: list[str] = []
        self.finished = threading.Event()
        """Set when `run` has written the final file and closed the environment."""
        self.after_agent: Callable[[Environment, str], None] | None = None
        """Called with the environment and the submission when the agent has submitted, before the
        environment is closed: a batch instance's verifier (`batch.verify.Verifier`) runs in its container."""

    # --- control ------------------------------------------------------------------------

    @property
    def mode(self) -> ev.Mode:
        return self._agent.mode if self._agent else self.config.agent.mode

    @property
    def processors(self) -> list[Any]:
        return self.prompts.processors

    def set_mode(self, mode: ev.Mode) -> None:
        if self._agent:
            self._agent.set_mode(mode)
        else:
            self.config.agent.mode = mode

    def set_processors(self, processors: list[Any]) -> None:
        if self._agent:
            self._agent.set_processors(processors)
        else:
            self.prompts.set_processors(processors)

    def interrupt(self) -> None:
        if self._agent:
            self._agent.interrupt()

    def compact(self, undo: bool = False) -> None:
        if self._agent:
            self._agent.request_compaction(undo=undo)

    def quit(self, status: ExitStatus = ExitStatus.USER_QUIT, message: str = "") -> None:
        """End the session; the first quit names how it is recorded (see `Control.request_quit`),
        with `message` (a UI crash says what it was)."""
        if not self._quit:
            self._quit, self._quit_status, self._quit_message = True, status, message
        if self._agent:
            self._agent.quit(status)

    def context_status(self) -> ContextStatus:
        """The meter's figures now, the next prompt predicted with the active processors."""
        if self._agent:
            return self._agent.context_status()
        tracker = ContextTracker(self.config.model.context_window)
        return tracker.status(self.prompts.build(self._history).messages)

    def prompt_preview(self) -> PromptPreview:
        from .prompt_view import prompt_lines

        history = self._agent.history if self._agent else self._history
        prompt = self.prompts.build(history)
        status = self.context_status()
        total = count_messages(prompt.messages) if prompt.messages else 0
        return PromptPreview(prompt.messages, prompt_lines(without_exits(history), prompt.messages), total, status.window,
                             prompt.processors_hash, prompt.errors, status)

    @property
    def history(self) -> list[Message]:
        return list(self._agent.history if self._agent else self._history)

    # --- running ------------------------------------------------------------------------

    def run(self, emit: ev.EventSink) -> SessionResult:
        from .trajectory.writer import TrajectoryWriter

        writer = env = None
        status, submission, message = ExitStatus.ENVIRONMENT_ERROR, "", ""
        code: int | None = None
        try:
            cls = agent_class(self.config.agent.agent_class)
            if cls.model_spec.require_reasoning:
                self.config.model.require_reasoning = True
            require_model(self.config)
            redactor = build_redactor(self.config)
            history = self._history
            if self.resume:
                writer, history = self._resume(redactor)
            else:
                # a given history (a fork, §11.3) opens the new trajectory, so it replays whole; one
                # without a system prompt (another agent's file) is written by the agent once its
                # system prompt stands first (`Agent._start`)
                has_system = any(message.message_type == MessageType.SYSTEM for message in history)
                writer = TrajectoryWriter(self.config.run.output, self._session_meta(), redactor,
                                          keep_jsonl=self.config.run.keep_jsonl,
                                          messages=history if has_system or not history else ())
            self.trajectory_path = str(writer.path)
            # What the first queries run with, so every prompt can be rebuilt (SPEC §11.2)
            writer.add_meta("processors_change", processors=self.prompts.describe(),
                            hash=self.prompts.processors_hash, reason="start")
            for notice in self._notices:
                emit(ev.Notice(text=notice, level="warning"))
            emit(ev.StateChanged(ev.AgentState.STARTING, "starting the environment"))
            model, window, source = self._model(cls)
            env = self._environment(redactor)
            env.start()
            self._agent = cls(self.config, model, env, emit, prompt_builder=self.prompts, record=writer,
                              interactive=self.interactive, history=history, window=window, window_source=source)
            self._prepare(self._agent)
            if self._quit:
                self._agent.quit(self._quit_status)
            if window is None and not (self.config.model.model_name or "").startswith("replay:"):
                # litellm's model info, without holding up the start (its import takes seconds)
                threading.Thread(target=self._window_from_litellm, args=(self._agent,), daemon=True,
                                 name="swedeck-window").start()
            emit(ev.SessionStarted(session_id=self.session_id, model_name=model.model_name,
                                   environment=getattr(env, "description", ""), mode=self.mode,
                                   trajectory_path=self.trajectory_path, task=self.task or last_task(history),
                                   restored_messages=len(history)))
            status, submission, message = self._agent.run(self.task)
            if self._quit and status == self._quit_status and self._quit_message:
                message = self._quit_message
            if self.after_agent is not None and status == ExitStatus.SUBMITTED:
                emit(ev.StateChanged(ev.AgentState.RUNNING, "verifying"))
                self.after_agent(env, submission)
        except UsageError as exc:
            status, message, code = ExitStatus.ENVIRONMENT_ERROR, str(exc), exc.exit_code
        except SwedeckError as exc:
            status, message = ExitStatus.ENVIRONMENT_ERROR, str(exc)
        except KeyboardInterrupt:
            status, message = ExitStatus.INTERRUPTED, "interrupted"
        finally:
            warnings = list(self._agent.warnings) if self._agent else []
            final_path = self._finish(writer, env, status, submission, message, warnings)
            self.finished.set()  # the record is complete and the environment closed
        result = SessionResult(exit_status=status, submission=submission, trajectory_path=final_path,
                               exit_code=code if code is not None else exit_code(status), message=message,
                               warnings=warnings)
        emit(ev.StateChanged(ev.AgentState.DONE, status.value))
        emit(ev.SessionEnded(exit_status=result.exit_status, submission=submission,
                             trajectory_path=final_path, message=message))
        return result

    def _prepare(self, agent: Agent) -> None:
        """What a kind of session gives its agent before it runs (a fork: recorded commands)."""

    def _model(self, cls: type[Agent]) -> tuple[Model, int | None, str]:
        """The model, and its window from the config or the map (never litellm: see `run`)."""
        from .context_window import resolve_context_window
        from .models import get_model

        model = get_model(self.config.model, cls.model_spec)
        window = resolve_context_window(self.config.model.model_name or "", override=self.config.model.context_window)
        return model, window.window, window.source

    def _window_from_litellm(self, agent: Agent) -> None:
        from .context_window import resolve_context_window

        try:
            window = resolve_context_window(self.config.model.model_name or "", use_litellm=True)
        except Exception:  # noqa: BLE001 - no window is a meter that says "unknown", never a failed session
            return
        if window.window:
            agent.set_window(window.window, window.source)

    def _environment(self, redactor: Redactor) -> Environment:
        from .environments import get_environment

        return get_environment(self.config.environment, self.session_id, redactor=redactor)

    def _resume(self, redactor: Redactor) -> tuple[Any, list[Message]]:
        from .trajectory.loader import load_trajectory
        from .trajectory.totals import TOTALS_KEY, run_totals
        from .trajectory.writer import TrajectoryWriter

        assert self.resume is not None
        trajectory = load_trajectory(self.resume)
        for warning in trajectory.info.warnings:  # a damaged line was skipped: say so before going on
            self._notices.append(f"{self.resume}: {warning}")
        # The totals of the earlier processes: the final file's counts are the whole run's
        self._earlier_stats = run_totals(trajectory)
        writer = TrajectoryWriter.resume(self.resume, self._session_meta(), redactor,
                                         keep_jsonl=self.config.run.keep_jsonl, messages=trajectory.messages,
                                         meta_events=trajectory.meta_events,
                                         resumed={TOTALS_KEY: msgspec.structs.asdict(self._earlier_stats)})
        history = without_exits(trajectory.messages)
        return writer, history

    def _session_meta(self) -> dict[str, Any]:
        from swedeck import __version__

        return {
            "id": self.session_id,
            "started": time.time(),
            "swedeck_version": __version__,
            "model": self.config.model.model_name,
            "environment": self.config.environment.environment_class,
            "cwd": self._starting_folder(),
            "config": self.config.model_dump(mode="json"),
        }

    def _starting_folder(self) -> str | None:
        """Where the session's commands start (a resume runs there again, SPEC §9.5): the local
        folder as resolved, or the container's `cwd` when one is set."""
        if self.config.environment.environment_class == "local":
            return str(Path(self.config.environment.cwd or os.getcwd()).resolve())
        return self.config.environment.cwd

    def _finish(self, writer: TrajectoryWriter | None, env: Environment | None, status: ExitStatus, submission: str, message: str,
                warnings: list[str]) -> str | None:
        if env is not None:
            try:
                env.close()
            except Exception:  # noqa: BLE001 - closing must not hide how the session ended
                pass
        if writer is None:
            return None
        from .trajectory.totals import plus

        agent = self._agent
        stats = plus(self._earlier_stats, agent.model.stats if agent else ModelStats())
        info = {
            "exit_status": status.value,
            "submission": submission,
            "message": message,
            "model_stats": msgspec.structs.asdict(stats),
            **({"warnings": warnings} if warnings else {}),
        }
        return str(writer.finish(info))
