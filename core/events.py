"""The core's event API: what a front end (the TUI, the headless runner) is told and asked.

The agent runs in its own thread. It reports everything a front end draws as an `Event`
passed to one callable, `emit(event)`, and it never knows who listens. When it needs a
person (approve a command, type a task, decide what to do at a limit) it emits a
`Request` carrying a `concurrent.futures.Future` and waits for the front end to resolve
it. Front ends steer the agent through the session (`session.SessionControl`: interrupt,
switch mode, toggle processors), which is safe to call from any thread.

Events are frozen dataclasses: cheap to make on the streaming hot path, safe to hand
across threads. See docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from .context_status import ContextStatus as ContextStatus  # part of the event API: `ContextUpdated.status`

if TYPE_CHECKING:
    from .environments.base import ExecutionResult
    from .exit_status import ExitStatus
    from .messages import Message, Usage


class AgentState(str, Enum):
    STARTING = "starting"
    THINKING = "thinking"
    """Waiting for / streaming the model's response."""
    AWAITING_CONFIRMATION = "waiting for you"
    RUNNING = "running"
    """A command runs in the environment."""
    AWAITING_INPUT = "waiting for input"
    """A task, a follow-up, a human-mode command or a message after an interrupt."""
    PAUSED = "paused"
    """At a limit or after an API error, until the person decides."""
    DONE = "done"


Mode = Literal["confirm", "yolo", "human"]


@dataclass(frozen=True, slots=True)
class Event:
    pass


# --- session -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionStarted(Event):
    session_id: str
    model_name: str
    environment: str
    """Short description: `local (host: /path)` or `docker (image)`."""
    mode: Mode
    trajectory_path: str | None
    task: str = ""
    """The task so far: given, or the last one of a resumed or forked history."""
    restored_messages: int = 0
    """Messages the session continues from (a resumed or forked trajectory)."""


@dataclass(frozen=True, slots=True)
class StateChanged(Event):
    state: AgentState
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ModeChanged(Event):
    mode: Mode
    previous: Mode


@dataclass(frozen=True, slots=True)
class ProcessorsChanged(Event):
    """The active history processors changed (the person's panel, or the agent fitting the
    window): what the meter names, one label per enabled processor."""

    labels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ProgressUpdated(Event):
    step: int
    step_limit: int
    cost: float
    cost_limit: float
    turn: int = 1


@dataclass(frozen=True, slots=True)
class ContextUpdated(Event):
    status: ContextStatus


@dataclass(frozen=True, slots=True)
class PlanEntry:
    content: str
    status: Literal["pending", "in_progress", "completed"] | str = "pending"
    priority: str = "medium"


@dataclass(frozen=True, slots=True)
class PlanUpdated(Event):
    """The agent's plan, whole (an ACP agent's `plan` update: each one replaces the last)."""

    entries: tuple[PlanEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class Notice(Event):
    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass(frozen=True, slots=True)
class SessionEnded(Event):
    exit_status: ExitStatus
    submission: str = ""
    trajectory_path: str | None = None
    message: str = ""


# --- the model ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueryStarted(Event):
    step: int


@dataclass(frozen=True, slots=True)
class StreamDelta(Event):
    """A piece of the response as it arrives. The hot path: keep handlers cheap."""

    step: int
    kind: Literal["text", "reasoning", "tool_call"]
    text: str
    index: int = 0
    """Tool-call index for `tool_call` deltas (their `text` is an arguments fragment)."""
    name: str | None = None
    """The tool's name, on the first delta of a tool call."""


@dataclass(frozen=True, slots=True)
class QueryRetrying(Event):
    step: int
    attempt: int
    """The attempt that failed, 1-based."""
    attempts: int
    wait_s: float
    error: str


@dataclass(frozen=True, slots=True)
class QueryFinished(Event):
    step: int
    message: Message
    usage: Usage | None
    cost: float
    stream_guard_fired: bool = False


@dataclass(frozen=True, slots=True)
class QueryCancelled(Event):
    step: int


# --- actions and commands ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ActionProposed(Event):
    action_id: str
    step: int
    command: str
    needs_confirmation: bool


@dataclass(frozen=True, slots=True)
class ActionDecided(Event):
    action_id: str
    decision: Literal["approved", "auto", "edited", "rejected"]
    """`auto`: yolo, whitelisted or always allowed."""
    command: str
    reason: str = ""
    """Said beside it: why it ran without asking (`yolo`, `whitelisted`, `always allowed: git
    status …`), what an approval allowed from now on, what an edit replaced."""


@dataclass(frozen=True, slots=True)
class CommandStarted(Event):
    action_id: str
    command: str


@dataclass(frozen=True, slots=True)
class CommandOutput(Event):
    action_id: str
    text: str
    """A chunk of decoded output, as it arrives."""


@dataclass(frozen=True, slots=True)
class CommandFinished(Event):
    action_id: str
    command: str
    result: ExecutionResult
    """What the model gets (token shapes masked for showing, as in the trajectory)."""


# --- the history -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MessageAdded(Event):
    message: Message
    index: int


# --- requests: the agent waits on `future` -----------------------------------------------


@dataclass(frozen=True, slots=True)
class CompactionStarted(Event):
    """A summary is being written (`summarize`, SPEC §17): `reason` is `threshold`, `request`
    or `context_exceeded`; `messages` is how many it replaces."""

    reason: str = ""
    messages: int = 0


@dataclass(frozen=True, slots=True)
class Compacted(Event):
    """A compaction was recorded at history `position` (or, `undone`, taken back): the next
    prompt went from `tokens_before` to `tokens_after` (the meter's prediction either side)."""

    position: int = 0
    tokens_before: int | None = None
    tokens_after: int | None = None
    messages: int = 0
    model: str = ""
    cost: float = 0.0
    undone: bool = False
    kept: str = ""
    """What it replaced that the model still sees (`kept: paths 12/12 · commands 28/30`), the loss report's line."""


@dataclass(frozen=True, slots=True)
class CompactionFailed(Event):
    """No compaction was made (the summary call failed, or nothing could be summarized): the
    history is as it was."""

    error: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer to a ConfirmationRequested."""

    kind: Literal["approve", "reject", "edit", "always_allow"]
    comment: str = ""
    """The rejection comment sent to the model (reject)."""
    command: str = ""
    """The edited command (edit)."""


@dataclass(frozen=True, slots=True)
class PauseDecision:
    kind: Literal["retry", "raise_limits", "enable_processor", "quit"]
    step_limit: int | None = None
    cost_limit: float | None = None
    processors: list[dict[str, Any]] | None = None
    """With `enable_processor`: the whole new processor config (the offered fit's)."""


Answer = TypeVar("Answer")


@dataclass(frozen=True, slots=True)
class Request(Event, Generic[Answer]):
    future: Future[Answer] = field(compare=False)
    """Resolved by the front end with the request's `Answer` type."""


@dataclass(frozen=True, slots=True)
class ConfirmationRequested(Request[Decision]):
    action_id: str = ""
    command: str = ""


@dataclass(frozen=True, slots=True)
class InputRequested(Request[str | None]):
    kind: Literal["task", "follow_up", "human_command", "after_interrupt"] = "task"
    prompt: str = ""
    """Resolve `future` with the text, or None to decline (no follow-up: the session ends)."""


@dataclass(frozen=True, slots=True)
class PauseRequested(Request[PauseDecision | None]):
    reason: Literal["limit", "api_error", "context_exceeded"] = "limit"
    detail: str = ""
    """None: as `quit`."""
    fit: Any = None
    """With `context_exceeded`: the smallest processor change that fits (`agent.context.ContextFit`), if any."""


@dataclass(frozen=True, slots=True)
class CompactionReview(Request[str | None]):
    """Confirm mode: the summary before it is used. The answer is the text to use (as written
    or edited), or None to keep the full history."""

    summary: str = ""
    messages: int = 0
    tokens_before: int | None = None
    tokens_after: int | None = None
    ledger: str = ""
    """What the replaced part touched, kept after the summary word for word (shown, not editable)."""


EventSink = Callable[[Event], None]
