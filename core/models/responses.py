"""From the parts of an assistant response to a `ModelResponse` or a `FormatError`.

Shared by every model so a replayed response is judged exactly like a live one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jinja2

from ..actions import FormatProblem, parse_text, parse_tool_calls
from ..messages import Message, MessageExtra, MessageType, ToolCall, Usage
from .base import FormatError, ModelResponse, ModelSpec

_TEMPLATES = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


@dataclass
class Parts:
    content: str
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    cost: float = 0.0
    stream_guard_fired: bool = False
    finish_reason: str | None = None


def build_response(parts: Parts, spec: ModelSpec, require_reasoning: bool, format_error_template: str) -> ModelResponse:
    """The response, or raises `FormatError` carrying the message to record."""
    message = Message(
        role="assistant",
        content=parts.content if parts.content or not parts.tool_calls else None,
        tool_calls=parts.tool_calls or None,
        extra=MessageExtra(
            message_type=MessageType.ASSISTANT_MESSAGE,
            reasoning=parts.reasoning or None,
            usage=parts.usage,
            cost=parts.cost,
            stream_guard=parts.stream_guard_fired or None,
            finish_reason=parts.finish_reason,
            timestamp=time.time(),
        ),
    )
    try:
        if spec.action_format == "text":
            actions = parse_text(parts.content)
        else:
            actions = parse_tool_calls(parts.tool_calls, require_reasoning or spec.require_reasoning)
    except FormatProblem as problem:
        error = _TEMPLATES.from_string(format_error_template).render(error=str(problem))
        raise FormatError(error, message, parts.usage, parts.cost) from None
    if actions:
        message = message.with_extra(message_type=MessageType.ACTION, actions=tuple(actions))
    return ModelResponse(
        message=message,
        actions=actions,
        usage=parts.usage,
        cost=parts.cost,
        stream_guard_fired=parts.stream_guard_fired,
    )
