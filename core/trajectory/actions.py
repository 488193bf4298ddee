"""Actions (bash commands) recorded in assistant messages of other tools' trajectories."""

from __future__ import annotations

import json
import re
from typing import Any

from ..messages import Action, ToolCall

# mini-swe-agent v2 fences commands as ```mswea_bash_command; v1 and swedeck's text mode use ```bash.
_FENCES = (
    re.compile(r"```mswea_bash_command[ \t]*\n(.*?)\n?```", re.DOTALL),
    re.compile(r"```bash[ \t]*\n(.*?)\n?```", re.DOTALL),
)


def text_actions(text: str) -> tuple[Action, ...]:
    """Commands in fenced blocks; the mini-swe-agent fence wins over plain ```bash examples."""
    for fence in _FENCES:
        found = fence.findall(text or "")
        if found:
            return tuple(Action(command=command.strip("\n")) for command in found)
    return ()


def tool_call_actions(calls: tuple[ToolCall, ...]) -> tuple[Action, ...]:
    """One action per tool call: the `command` argument, or `name args…` for other tools."""
    return tuple(_call_action(call) for call in calls)


def _call_action(call: ToolCall) -> Action:
    arguments: Any
    try:
        arguments = json.loads(call.function.arguments or "{}")
    except (TypeError, ValueError):
        arguments = call.function.arguments
    if isinstance(arguments, dict) and isinstance(arguments.get("command"), str):
        reasoning = arguments.get("reasoning")
        return Action(command=arguments["command"], tool_call_id=call.id,
                      reasoning=reasoning if isinstance(reasoning, str) else None)
    if isinstance(arguments, dict):
        rendered = " ".join(json.dumps(value) if not isinstance(value, str) else value for value in arguments.values())
    else:
        rendered = str(arguments)
    return Action(command=f"{call.function.name} {rendered}".strip(), tool_call_id=call.id)
