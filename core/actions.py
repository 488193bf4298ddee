"""From an assistant message to its actions (SPEC §4.2): the one owner of the `bash` tool
and of the fenced command blocks.

Two readings of the same grammar:
- **to run** (`parse_tool_calls`, `parse_text`), shared by every model: every tool call must
  be the `bash` tool with a JSON object holding a non-empty `command` (and a non-empty
  `reasoning` when required); text must hold exactly one fenced block. Anything else is a
  `FormatProblem` the model is told about.
- **as recorded** (`tool_call_actions`, `text_actions`), for other tools' trajectories: what
  the message asked for, whatever its shape, never an error.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from .messages import Action, Message, ToolCall, valid_text

BASH_TOOL = "bash"
MARKED_FENCE = "mswea_bash_command"
"""mini-swe-agent v2's fence; v1 and swedeck's text mode use ```bash."""
FENCE_LANGUAGES = ("bash", "sh", MARKED_FENCE)
PEER_FENCE_LANGUAGES = ("bash", MARKED_FENCE)
"""What mini-swe-agent itself runs: a recorded ```sh block was a format error there."""
_FENCE = re.compile(r"```(" + "|".join(FENCE_LANGUAGES) + r")[ \t]*\n(.*?)\n?```", re.DOTALL)


class FormatProblem(ValueError):
    """Why a response cannot be run, in words for the model."""


class ToolSchema(msgspec.Struct, frozen=True):
    """The bash tool swedeck offers a tool-calling model (`tools()`), with or without a reasoning field."""

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


def fenced_commands(text: str, languages: tuple[str, ...] = FENCE_LANGUAGES) -> list[str]:
    """The bodies of the fenced command blocks in `text`. mini-swe-agent's own fence marks
    the action: plain ```bash blocks next to it are examples and are left out."""
    blocks = [(language, body) for language, body in _FENCE.findall(text or "") if language in languages]
    marked = [body for language, body in blocks if language == MARKED_FENCE]
    return marked or [body for _, body in blocks]


def without_fences(text: str) -> str:
    """`text` with its fenced command blocks taken out: the words around the command."""
    return _FENCE.sub("", text).strip()


def parse_text(content: str) -> list[Action]:
    blocks = fenced_commands(content)
    if len(blocks) != 1:
        found = "no" if not blocks else f"{len(blocks)}"
        raise FormatProblem(
            f"your response must contain exactly one ```bash code block with the command to run; found {found}."
        )
    command = blocks[0].strip()
    if not command:
        raise FormatProblem("your ```bash code block is empty.")
    return [Action(command=command)]


_FENCED_LANGUAGE = re.compile(r"```(" + "|".join(FENCE_LANGUAGES) + r")[ \t]*\n(?:.*?)\n?```", re.DOTALL)
"""`_FENCE`, its language alone kept (the same blocks found)."""


def text_action_count(text: str) -> int:
    """`len(text_actions(text))`, none built (2.5 million steps' summary)."""
    if "```" not in text:
        return 0
    languages = _FENCED_LANGUAGE.findall(text)
    return languages.count(MARKED_FENCE) or languages.count("bash")


def text_actions(text: str) -> tuple[Action, ...]:
    """The commands a recorded message fenced, as mini-swe-agent read them."""
    return tuple(Action(command=command.strip("\n")) for command in fenced_commands(text, PEER_FENCE_LANGUAGES))


def tool_call_actions(calls: tuple[ToolCall, ...]) -> tuple[Action, ...]:
    """One action per recorded tool call: the `command` argument, or `name args…` for other tools."""
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


def is_shell(action: Action) -> bool:
    """Whether a recorded action is a shell command: unless its file says it is not (a Claude
    Code `Read`, an MCP tool's call: `unknown.shell` False)."""
    return bool(action.unknown.get("shell", True))


def actions_of(message: Message) -> tuple[Action, ...]:
    """A recorded answer's commands: as the file lists them, else read from its tool calls or text."""
    if message.extra.actions:
        return message.extra.actions
    if message.tool_calls:
        return tool_call_actions(message.tool_calls)
    return text_actions(message.text)
