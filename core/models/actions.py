"""From an assistant response to runnable actions (SPEC §4.2), shared by every model.

`tool_call` format: every tool call must be the `bash` tool with a JSON object holding a
non-empty `command` (and a non-empty `reasoning` when required). `text` format: exactly
one fenced bash block. Anything else is a `FormatProblem` the model is told about.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..messages import Action, ToolCall, valid_text

BASH_TOOL = "bash"
FENCE_LANGUAGES = ("bash", "sh", "mswea_bash_command")
_FENCE = re.compile(r"```(" + "|".join(FENCE_LANGUAGES) + r")[ \t]*\n(.*?)\n?```", re.DOTALL)


class FormatProblem(ValueError):
    """Why a response cannot be run, in words for the model."""


@dataclass(frozen=True)
class ToolSchema:
    require_reasoning: bool = False

    def tools(self) -> list[dict[str, Any]]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        if self.require_reasoning:  # before `command`, so the model reasons first
            properties["reasoning"] = {"type": "string", "description": "Why this command, briefly."}
            required.append("reasoning")
        properties["command"] = {"type": "string", "description": "The bash command to run."}
        required.append("command")
        return [
            {
                "type": "function",
                "function": {
                    "name": BASH_TOOL,
                    "description": "Run a bash command and get its output.",
                    "parameters": {"type": "object", "properties": properties, "required": required},
                },
            }
        ]


def parse_tool_calls(tool_calls: tuple[ToolCall, ...] | list[ToolCall], require_reasoning: bool) -> list[Action]:
    actions = []
    for call in tool_calls:
        name = call.function.name
        if name != BASH_TOOL:
            raise FormatProblem(f"unknown tool {name!r}: the only tool is `{BASH_TOOL}`.")
        try:
            arguments = json.loads(call.function.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise FormatProblem(f"the arguments of your `{BASH_TOOL}` call are not valid JSON ({exc.msg}).") from None
        if not isinstance(arguments, dict):
            raise FormatProblem(f"the arguments of your `{BASH_TOOL}` call must be a JSON object.")
        command = arguments.get("command")
        if isinstance(command, str):
            command = valid_text(command)  # "\ud83d" in the JSON decodes to a lone surrogate
        if not isinstance(command, str) or not command.strip():
            raise FormatProblem(f"your `{BASH_TOOL}` call has no `command` string.")
        reasoning = arguments.get("reasoning")
        if require_reasoning and (not isinstance(reasoning, str) or not reasoning.strip()):
            raise FormatProblem(f"your `{BASH_TOOL}` call must include a non-empty `reasoning` string.")
        actions.append(Action(command=command, tool_call_id=call.id, reasoning=reasoning if isinstance(reasoning, str) else None))
    return actions


def parse_text(content: str) -> list[Action]:
    blocks = _FENCE.findall(content or "")
    # mini-swe-agent's own fence marks the action; plain ```bash blocks next to it are examples.
    marked = [block for block in blocks if block[0] == "mswea_bash_command"]
    blocks = marked or blocks
    if len(blocks) != 1:
        found = "no" if not blocks else f"{len(blocks)}"
        raise FormatProblem(
            f"your response must contain exactly one ```bash code block with the command to run; found {found}."
        )
    command = blocks[0][1].strip()
    if not command:
        raise FormatProblem("your ```bash code block is empty.")
    return [Action(command=command)]
