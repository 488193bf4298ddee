"""The model contract (SPEC §4.1): one `query(messages) -> ModelResponse`.

Implementations: `litellm_model.LitellmModel`, `replay_model.ReplayModel`. The agent
calls `query` from its thread; `cancel()` may be called from any other thread and makes
the running `query` raise `QueryCancelled` at once.

Streaming and retries: a query emits `StreamDelta` events while a response arrives. When
an attempt fails and is retried, a `QueryRetrying` event follows; it means "discard the
partial response drawn so far": the next attempt streams the whole response again, and
only the final `ModelResponse` (or `QueryFinished`) is the truth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..events import EventSink
from ..messages import Action, Message, ModelStats, Usage

ActionFormat = Literal["tool_call", "text"]
"""`tool_call`: the `bash` tool (with `reasoning` when required); `text`: one fenced bash block."""


@dataclass
class ModelResponse:
    message: Message
    """The assistant message as the history stores it (extra: usage, cost, reasoning, actions...)."""
    actions: list[Action]
    usage: Usage | None
    cost: float = 0.0
    stream_guard_fired: bool = False


@dataclass(frozen=True)
class TextAnswer:
    """A plain answer (`Model.complete`): its text and what it cost."""

    text: str
    usage: Usage | None
    cost: float = 0.0


@dataclass(frozen=True)
class Shape:
    """How a request is asked: with the agent's tools (a step) or without (a summary)."""

    tools: bool = True
    max_tokens: int | None = None
    """Overrides `model.max_tokens` (a summary's own limit)."""


class ModelError(Exception):
    """Base of the outcomes of a query that are not a response."""


class FormatError(ModelError):
    """The response cannot be run; `error` (already rendered with model.format_error_template)
    goes back to the model. `message` is the assistant message to record."""

    def __init__(self, error: str, message: Message, usage: Usage | None = None, cost: float = 0.0):
        super().__init__(error)
        self.error = error
        self.message = message
        self.usage = usage
        self.cost = cost


class ContextWindowExceeded(ModelError):
    """The prompt does not fit the model's context window (never retried)."""


class APIError(ModelError):
    """A non-retryable error, or retries exhausted. `retryable` says which."""

    def __init__(self, text: str, retryable: bool = False, attempts: int = 1):
        super().__init__(text)
        self.retryable = retryable
        self.attempts = attempts


class QueryCancelled(ModelError):
    """`cancel()` was called while the query ran; nothing of it is kept."""


class ReplayExhausted(ModelError):
    """A replay model has no recorded response left: the session ends cleanly."""


class Model(Protocol):
    stats: ModelStats
    model_name: str

    def query(self, messages: list[Message], *, step: int = 0, emit: EventSink | None = None) -> ModelResponse:
        """Send `messages` (their `to_api()` form); stream deltas to `emit` as `StreamDelta`
        events, retries as `QueryRetrying`. Raises the `ModelError`s above."""
        ...

    def complete(self, messages: list[Message], *, max_tokens: int | None = None) -> TextAnswer:
        """A plain text answer (no tools, no command read from it): a compaction's summary.
        Raises the `ModelError`s above; counted in `stats`."""
        ...

    def cancel(self) -> None:
        """From any thread: close the running stream now."""
        ...


@dataclass
class ModelSpec:
    """What the agent class decides about how the model is asked."""

    action_format: ActionFormat = "tool_call"
    require_reasoning: bool = False
    extra_tools: list[dict[str, Any]] = field(default_factory=list)
