"""Fork a live session from a replayed step (SPEC §11.3).

The fork's history is the trajectory up to step k: every message before step k's query
(`steps[k-1].prompt_end`), so its first query sends exactly the prompt step k was asked
with (before processors). It runs with the configured model in a fresh environment;
with `replay_actions` the commands of steps 1..k-1 run there first (no model calls), so
files and shell state are what they were when step k was asked. They come from a file, so
they are untrusted: each passes the agent's gate, and confirm mode asks for each one.
"""

from __future__ import annotations

from typing import Any

from ..config import SwedeckConfig
from ..environments.base import ExecutionResult
from ..messages import Message
from ..session import Session
from ..trajectory.model import Trajectory


def fork_history(trajectory: Trajectory, step: int) -> list[Message]:
    """The messages before step `step`'s query (1-based; negative counts from the end)."""
    query = trajectory.step(step)
    return [message for message in trajectory.messages[: query.prompt_end] if message.role != "exit"]


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

    def _prepare(self, agent: Any) -> None:
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
