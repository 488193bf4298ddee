"""Fork a live session from a replayed step (SPEC §11.3).

The fork's history is the trajectory up to step k: every message before step k's query
(`steps[k-1].prompt_end`), so its first query sends exactly the prompt step k was asked
with (before processors). It runs with the configured model in a fresh environment;
with `replay_actions` the commands of steps 1..k-1 run there first (no model calls), so
files and shell state are what they were when step k was asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..config import SwedeckConfig
from ..environments.base import Environment, EnvironmentHook, ExecutionResult
from ..messages import Message
from ..session import Session
from ..trajectory.model import Trajectory

ReplayProgress = Callable[[int, str, ExecutionResult], None]
"""Called after each re-executed command with (step, command, result)."""


def fork_history(trajectory: Trajectory, step: int) -> list[Message]:
    """The messages before step `step`'s query (1-based; negative counts from the end)."""
    query = trajectory.step(step)
    return [message for message in trajectory.messages[: query.prompt_end] if message.role != "exit"]


def actions_before(trajectory: Trajectory, step: int) -> list[tuple[int, str]]:
    """(step, command) of every action of steps 1..k-1, in order."""
    number = trajectory.step(step).index
    return [(earlier.index, command) for earlier in trajectory.steps[: number - 1] for command in earlier.commands]


def replay_actions(env: Environment, actions: list[tuple[int, str]], timeout: float | None = None,
                   progress: ReplayProgress | None = None) -> list[ExecutionResult]:
    """Run recorded commands in order against an environment; failures do not stop the replay
    (the original run went on after them too)."""
    results = []
    for step, command in actions:
        result = env.execute(command, timeout=timeout)
        results.append(result)
        if progress:
            progress(step, command, result)
    return results


@dataclass
class ReplayActionsHook(EnvironmentHook):
    """An environment hook that re-executes the recorded actions once the environment is up."""

    actions: list[tuple[int, str]]
    progress: ReplayProgress | None = None
    results: list[ExecutionResult] = field(default_factory=list)

    def on_environment_startup(self, env: Environment) -> None:
        self.results = replay_actions(env, self.actions, progress=self.progress)


class ForkSession(Session):
    """A Session whose environment first re-runs the recorded actions (when asked)."""

    def __init__(self, config: SwedeckConfig, history: list[Message], *, hook: ReplayActionsHook | None = None,
                 **options: Any):
        super().__init__(config, None, history=history, **options)
        self.replay_hook = hook

    def _environment(self, redactor: Any) -> Any:
        env = super()._environment(redactor)
        if self.replay_hook is not None:
            env.add_hook(self.replay_hook)
        return env


def fork_session(trajectory: Trajectory, step: int, config: SwedeckConfig, *, replay: bool = False,
                 progress: ReplayProgress | None = None, interactive: bool = True) -> ForkSession:
    """A live session continuing `trajectory` from step `step` with the configured model."""
    hook = ReplayActionsHook(actions_before(trajectory, step), progress) if replay else None
    return ForkSession(config, fork_history(trajectory, step), hook=hook, interactive=interactive)
