"""The replay model (`replay:PATH`, SPEC §4.5): a saved trajectory's answers, streamed again.

Each query answers with the next assistant message, streamed as `StreamDelta`s at
`model_kwargs.tokens_per_second` (default 80, 0 = at once), and judged by the same
parser as a live response. Recorded tool calls are parsed as tool calls, recorded text
as a fenced block, so mini-swe-agent trajectories replay under any agent class. When no
message is left, `ReplayExhausted` ends the session cleanly.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import replace
from pathlib import Path

from ..config import ModelConfig
from ..events import EventSink, StreamDelta
from ..messages import Action, Message, MessageType, ModelStats
from ..tokens import count_text
from .base import FormatError, ModelResponse, ModelSpec, QueryCancelled, ReplayExhausted, TextAnswer
from .replay_source import recorded_answers
from .responses import Parts, build_response
from .usage import estimate_usage

PREFIX = "replay:"
DEFAULT_TOKENS_PER_SECOND = 80.0
_MIN_WAIT_S = 0.02
"""Shorter sleeps are not worth a wake-up: tokens are sent in groups that fill this."""
_TOKEN = re.compile(r"\s*\S+|\s+")


class ReplayModel:
    def __init__(self, config: ModelConfig, spec: ModelSpec | None = None):
        self.config = config
        self.spec = spec or ModelSpec()
        self.model_name = config.model_name or PREFIX
        self.path = Path(self.model_name.removeprefix(PREFIX)).expanduser()
        self.tokens_per_second = float(config.model_kwargs.get("tokens_per_second", DEFAULT_TOKENS_PER_SECOND))
        self.stats = ModelStats()
        self._messages, self._summaries = recorded_answers(self.path)
        self._next = 0
        self._next_summary = 0
        self._cancelled = threading.Event()

    @property
    def remaining(self) -> int:
        return len(self._messages) - self._next

    def query(self, messages: list[Message], *, step: int = 0, emit: EventSink | None = None) -> ModelResponse:
        self._cancelled.clear()
        if self._next >= len(self._messages):
            raise ReplayExhausted(f"the replayed trajectory {self.path} has no more responses")
        recorded = self._messages[self._next]
        self._stream(recorded, step, emit)
        self._next += 1
        text = recorded.text
        usage = recorded.extra.usage or estimate_usage(messages, text)
        parts = Parts(
            content=text,
            reasoning=recorded.extra.reasoning or "",
            tool_calls=recorded.tool_calls or (),
            usage=usage,
            cost=recorded.extra.cost or 0.0,
        )
        self.stats.add(parts.cost, usage)
        spec = replace(self.spec, action_format="tool_call" if recorded.tool_calls else "text")
        try:
            return build_response(parts, spec, self.config.require_reasoning, self.config.format_error_template)
        except FormatError:
            foreign = _foreign_tool_actions(recorded)
            if not foreign:
                raise
        # Another tool's tool calls (SWE-agent's `find_file`...): they ran when recorded, so
        # replay them as `name args` commands rather than failing every step.
        message = recorded.with_extra(message_type=MessageType.ACTION, actions=foreign, usage=usage, cost=parts.cost)
        return ModelResponse(message=message, actions=list(foreign), usage=usage, cost=parts.cost)

    def complete(self, messages: list[Message], *, max_tokens: int | None = None) -> TextAnswer:
        """The next summary the file recorded (its compactions, in order)."""
        if self._next_summary >= len(self._summaries):
            raise ReplayExhausted(f"the replayed trajectory {self.path} has no more recorded summaries")
        recorded = self._summaries[self._next_summary]
        self._next_summary += 1
        text = recorded.extra.summary or ""
        usage = estimate_usage(messages, text)
        cost = recorded.extra.summary_cost or 0.0
        self.stats.add(cost, usage)
        return TextAnswer(text=text, usage=usage, cost=cost)

    def cancel(self) -> None:
        self._cancelled.set()

    def _stream(self, message: Message, step: int, emit: EventSink | None) -> None:
        pieces: list[tuple[str, str, int, str | None]] = []
        if message.extra.reasoning:
            pieces += [("reasoning", token, 0, None) for token in _TOKEN.findall(message.extra.reasoning)]
        pieces += [("text", token, 0, None) for token in _TOKEN.findall(message.text)]
        for index, call in enumerate(message.tool_calls or ()):
            pieces.append(("tool_call", "", index, call.function.name))
            pieces += [("tool_call", token, index, None) for token in _TOKEN.findall(call.function.arguments)]
        tps = self.tokens_per_second
        group = max(1, math.ceil(_MIN_WAIT_S * tps)) if tps > 0 else len(pieces) or 1
        for start in range(0, len(pieces), group):
            batch = pieces[start : start + group]
            if tps > 0:
                tokens = sum(max(1, count_text(text)) for _, text, _, _ in batch)
                if self._cancelled.wait(tokens / tps):
                    raise QueryCancelled()
            elif self._cancelled.is_set():
                raise QueryCancelled()
            if emit is not None:
                for kind, text, index, name in batch:
                    emit(StreamDelta(step=step, kind=kind, text=text, index=index, name=name))  # type: ignore[arg-type]


def _foreign_tool_actions(message: Message) -> tuple[Action, ...]:
    calls = message.tool_calls or ()
    if not calls or all(call.function.name == "bash" for call in calls):
        return ()
    try:
        from ..actions import tool_call_actions
    except ImportError:
        return ()
    return tool_call_actions(calls)
