"""Fork a live session from a replayed step (SPEC §11.3).

The fork's history is the trajectory up to step k: every message before step k's query
(`steps[k-1].prompt_end`), so its first query sends exactly the prompt step k was asked
with (before processors). It runs with the configured model in a fresh environment;
with `replay_actions` the commands of steps 1..k-1 run there first (no model calls), so
files and shell state are what they were when step k was asked. They come from a file, so
they are untrusted: each passes the agent's gate, and confirm mode asks for each one.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..actions import BASH_TOOL
from ..config import SwedeckConfig
from ..environments.base import ExecutionResult
from ..messages import FunctionCall, Message, ToolCall, without_exits
from ..prompt_view import history_before
from ..session import Session
from ..trajectory.model import Trajectory

if TYPE_CHECKING:
    from ..agent.agent import Agent


def fork_history(trajectory: Trajectory, step: int) -> list[Message]:
    """The messages before step `step`'s query (1-based; negative counts from the end): what
    that query was sent (recorded, or rebuilt with compactions applied), in swedeck's terms."""
    query = trajectory.step(step)
    return in_our_terms(history_before(trajectory, query.index))


def in_our_terms(history: list[Message]) -> list[Message]:
    """Other agents' tool calls mapped onto swedeck's `bash` tool: a shell command (Claude
    Code's `Bash`, Codex's `shell`, OpenHands' `execute_bash`...) becomes a `bash` call with
    its command; any other tool (`Read`, `apply_patch`, a browser) becomes text in the
    assistant message, and its result a user message, so the model still reads them."""
    out: list[Message] = []
    as_text: dict[str, str] = {}
    for message in history:
        actions = {action.tool_call_id: action for action in message.extra.actions if action.tool_call_id}
        if message.role == "assistant" and message.tool_calls and any(
                "shell" in action.unknown for action in actions.values()):
            calls, notes = [], []
            for tool_call in message.tool_calls:
                action = actions.get(tool_call.id)
                if action is not None and action.unknown.get("shell"):
                    calls.append(ToolCall(id=tool_call.id, function=FunctionCall(
                        name=BASH_TOOL, arguments=json.dumps({"command": action.command}))))
                else:
                    as_text[tool_call.id] = tool_call.function.name
                    notes.append(f"[{tool_call.function.name}] {tool_call.function.arguments}")
            content = "\n".join(part for part in (message.text, *notes) if part)
            out.append(message.updated(content=content, tool_calls=tuple(calls) or None))
        elif message.role == "tool" and message.tool_call_id in as_text:
            out.append(message.updated(role="user", tool_call_id=None, name=None,
                                       content=f"[{as_text[message.tool_call_id]} result]\n{message.text}"))
        else:
            out.append(message)
    return without_exits(out)


def actions_before(trajectory: Trajectory, step: int) -> list[tuple[int, str]]:
    """(step, command) of every action of steps 1..k-1, in order."""
    number = trajectory.step(step).index
    return [(earlier.index, command) for earlier in trajectory.steps[: number - 1] for command in earlier.commands]


class ForkSession(Session):
    """A Session that starts from a trajectory's history and, when asked, first re-runs the
    recorded commands: through the agent's gate, so confirm mode asks for each (commands
    from a file are untrusted), and in the live UI each shows as a command block."""

    def __init__(self, config: SwedeckConfig, history: list[Message], *, recorded: list[tuple[int, str]] | None = None,
                 **options: Any):
        super().__init__(config, None, history=history, **options)
        self.recorded = list(recorded or [])
        self._replayed: list[tuple[int, str, ExecutionResult | None]] = []

    def _prepare(self, agent: Agent) -> None:
        agent.recorded_commands = self.recorded
        self._replayed = agent.replayed

    @property
    def replayed(self) -> list[tuple[int, str, ExecutionResult | None]]:
        """(step, command as run, result) of each recorded command; the result is None when the
        person rejected it."""
        return list(self._replayed)


def fork_session(trajectory: Trajectory, step: int, config: SwedeckConfig, *, replay: bool = False,
                 interactive: bool = True) -> ForkSession:
    """A live session continuing `trajectory` from step `step` with the configured model."""
    recorded = actions_before(trajectory, step) if replay else None
    return ForkSession(config, fork_history(trajectory, step), recorded=recorded, interactive=interactive)
