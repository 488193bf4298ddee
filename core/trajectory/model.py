"""The normalized trajectory every reader returns, whatever the file format (SPEC §9.3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..messages import Action, ContextInfo, Message, ModelStats, Usage

TrajectoryFormat = Literal["swedeck-jsonl", "swedeck-json", "mini-swe-agent", "swe-agent"]


@dataclass
class TrajectoryInfo:
    exit_status: str | None = None
    submission: str | None = None
    model_stats: ModelStats = field(default_factory=ModelStats)
    config: dict[str, Any] = field(default_factory=dict)
    model_name: str | None = None
    swedeck_version: str | None = None
    session: dict[str, Any] = field(default_factory=dict)
    """The swedeck header's session record (id, started, environment, ...); empty for other formats."""
    warnings: list[str] = field(default_factory=list)
    """Things the reader skipped or guessed (a torn last line, an unparsable config string)."""
    raw: dict[str, Any] = field(default_factory=dict)
    """The file's own `info` record, for fields swedeck has no name for."""


@dataclass(frozen=True)
class MetaEvent:
    """A swedeck `meta` line: a mode switch, a processor toggle, a limit change, the end."""

    event: str
    data: dict[str, Any]
    message_count: int
    """How many messages preceded it, so the UI can place it between messages."""


@dataclass(frozen=True)
class Step:
    """One model query: the assistant message, its actions and the messages that answer it."""

    index: int
    """1-based."""
    message_index: int
    actions: tuple[Action, ...]
    observation_indices: tuple[int, ...]
    prompt_end: int
    """The prompt of this query is rebuilt from `messages[:prompt_end]`."""
    usage: Usage | None = None
    cost: float | None = None
    context: ContextInfo | None = None
    processors: str | None = None
    """Hash of the processor config of this query (look it up in `Trajectory.processors`)."""
    state: dict[str, Any] | None = None
    """SWE-agent's environment state after the step (open file, working dir), when recorded."""

    @property
    def commands(self) -> list[str]:
        return [action.command for action in self.actions]


@dataclass
class Trajectory:
    path: Path
    format: TrajectoryFormat
    messages: Sequence[Message]
    """A list, or a `lazy.MessageList` that builds messages when they are read."""
    steps: Sequence[Step]
    info: TrajectoryInfo
    meta_events: list[MetaEvent] = field(default_factory=list)
    processors: dict[str, Any] = field(default_factory=dict)
    """Processor config hash -> the processor config list recorded with it (swedeck files)."""

    def step(self, number: int) -> Step:
        """Step `number` (1-based; negative counts from the end, -1 = last)."""
        if not self.steps:
            raise IndexError("the trajectory has no steps")
        if number < 0:
            number = len(self.steps) + 1 + number
        if not 1 <= number <= len(self.steps):
            raise IndexError(f"step {number} is out of range 1..{len(self.steps)}")
        return self.steps[number - 1]

    def observations(self, step: Step) -> list[Message]:
        return [self.messages[i] for i in step.observation_indices]
