"""The assistant messages of a saved trajectory, for the replay model.

Uses the trajectory loader (`swedeck.core.trajectory.loader`) when it is there, which
reads every supported format; otherwise a minimal reader of JSON message lists
(mini-swe-agent's `.traj.json`, swedeck's `{"messages": [...]}`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import SwedeckError
from ..messages import FunctionCall, Message, MessageExtra, MessageType, ToolCall


def assistant_messages(path: Path) -> list[Message]:
    if not path.is_file():
        raise SwedeckError(f"replay: no trajectory file at {path}")
    try:
        from ..trajectory.loader import load_trajectory
    except ImportError:
        messages = _read_minimal(path)
    else:
        messages = list(load_trajectory(path).messages)
    return [message for message in messages if message.role == "assistant"]


def _read_minimal(path: Path) -> list[Message]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SwedeckError(f"replay: cannot read {path}: {exc}") from None
    if isinstance(data, dict):
        data = data.get("messages") or data.get("history") or []
    if not isinstance(data, list):
        raise SwedeckError(f"replay: {path} holds no message list")
    return [_message(record) for record in data if isinstance(record, dict) and record.get("role") == "assistant"]


def _message(record: dict[str, Any]) -> Message:
    calls = tuple(
        ToolCall(
            id=str(call.get("id") or f"call_{index}"),
            function=FunctionCall(
                name=str((call.get("function") or {}).get("name") or ""),
                arguments=str((call.get("function") or {}).get("arguments") or ""),
            ),
        )
        for index, call in enumerate(record.get("tool_calls") or [])
        if isinstance(call, dict)
    )
    extra = record.get("extra") if isinstance(record.get("extra"), dict) else {}
    known = {key: extra[key] for key in ("usage", "cost", "reasoning") if extra.get(key) is not None}
    content = record.get("content")
    return Message(
        role="assistant",
        content=content if isinstance(content, (str, list)) else None,
        tool_calls=calls or None,
        extra=MessageExtra(message_type=MessageType.ASSISTANT_MESSAGE, **known),
    )
