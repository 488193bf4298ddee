"""The normalized trajectory every reader returns, whatever the file format (SPEC §9.3)."""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

import msgspec

from ..messages import Action, ContextInfo, Message, ModelStats, Usage

_V = TypeVar("_V")

TrajectoryFormat = str
"""A reader's `FORMAT` (`readers.FORMATS` lists them: `swedeck-jsonl`, `claude-code`, ...)."""

Provenance = Literal["recorded", "reconstructed", "unknown"]
"""How swedeck knows a part of what the model saw: the file stores the exact request
(`recorded`), it is rebuilt from the conversation (`reconstructed`), or it is not stored at
all (`unknown`: a system prompt or tool list the format never wrote down)."""

class Branch(msgspec.Struct, frozen=True):
    """A run kept beside the main line that swedeck can open: a subagent's trajectory, a
    Claude Code sidechain or rewound branch. `target` is what `load_trajectory` (and
    `swedeck replay`) opens: a file, or `PATH#NAME` for one inside the file."""

    label: str
    target: str

    def as_record(self) -> dict[str, str]:
        return {"label": self.label, "target": self.target}


class Fidelity(msgspec.Struct):
    """What a file records and what swedeck rebuilt from it (SPEC §9.3; the fidelity panel)."""

    prompt: Provenance
    """The messages of each query, as a whole."""
    parts: dict[str, Provenance] = msgspec.field(default_factory=dict)
    """Each part of what the model saw: `system prompt`, `tools`, `messages`, `reasoning`, ..."""
    skipped: dict[str, int] = msgspec.field(default_factory=dict)
    """Records swedeck does not turn into messages, counted by their type (never dropped silently)."""
    why: dict[str, str] = msgspec.field(default_factory=dict)
    """For a type in `skipped`, what swedeck read from its records or what they repeat."""
    compactions: int = 0
    branches: int = 0
    """Sidechains and subagent runs kept beside the main line (Claude Code, ATIF subagents)."""
    openable: list[Branch] = msgspec.field(default_factory=list)
    """Those of them swedeck can open (`b` in replay), each with what opens it."""
    units: int = 1
    """Runs in the file (an Inspect log's samples, an OpenHands evaluation's instances); one is open."""
    unit: int = 1
    """The open one (`PATH#N`)."""
    notes: list[str] = msgspec.field(default_factory=list)

    def as_record(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "parts": dict(self.parts), "skipped": dict(self.skipped), "why": dict(self.why),
                "compactions": self.compactions, "branches": self.branches,
                "branch_list": [branch.as_record() for branch in self.openable], "units": self.units, "unit": self.unit,
                "notes": list(self.notes)}


class TrajectoryInfo(msgspec.Struct):
    """What a trajectory says about its run as a whole: how it ended, its cost, its config, its session."""

    exit_status: str | None = None
    submission: str | None = None
    model_stats: ModelStats = msgspec.field(default_factory=ModelStats)
    config: dict[str, Any] = msgspec.field(default_factory=dict)
    model_name: str | None = None
    swedeck_version: str | None = None
    session: dict[str, Any] = msgspec.field(default_factory=dict)
    """The swedeck header's session record (id, started, environment, ...); empty for other formats."""
    warnings: list[str] = msgspec.field(default_factory=list)
    """Things the reader skipped or guessed (a torn last line, an unparsable config string)."""
    raw: dict[str, Any] = msgspec.field(default_factory=dict)
    """The file's own `info` record, for fields swedeck has no name for."""


class MetaEvent(msgspec.Struct, frozen=True):
    """A swedeck `meta` line: a mode switch, a processor toggle, a limit change, the end."""

    event: str
    data: dict[str, Any]
    message_count: int
    """How many messages preceded it, so the UI can place it between messages."""


class Step(msgspec.Struct, frozen=True):
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
    provenance: Provenance | None = None
    """How this query's prompt is known (None: the file's `Fidelity.prompt`)."""

    @property
    def commands(self) -> list[str]:
        return [action.command for action in self.actions]


class Numbered(Generic[_V]):
    """Values that repeat (a run's models, stop reasons, subtypes) kept once, each known by its
    number: columns of a million records hold the number."""

    def __init__(self, *first: _V) -> None:
        self.values: list[_V] = list(first)
        self._numbers: dict[_V, int] = {value: number for number, value in enumerate(first)}

    def number(self, value: _V) -> int:
        number = self._numbers.get(value)
        if number is None:
            number = self._numbers[value] = len(self.values)
            self.values.append(value)
        return number


class StepFacts:
    """What the fidelity summary and the cost report need of every step (its model, its usage,
    its tool calls and shell commands), kept in columns by a reader that knows them from its
    records' heads: a session of a million records is summed without building a step (issue
    61.14: building them took 26 of 41 s). Each figure is what the built step says."""

    def __init__(self, prompt: array[int] | None = None, completion: array[int] | None = None,
                 cached: array[int] | None = None, written: array[int] | None = None,
                 tool_calls: array[int] | None = None, shell_commands: array[int] | None = None,
                 models: array[int] | None = None, names: list[str | None] | None = None,
                 estimated: bytearray | None = None) -> None:
        """Per step: its prompt, completion, cached and cache write (0: none) tokens, a prompt of
        -1 for no usage (never another negative); its tool calls and shell commands; its model
        (a number into `names`); 1 where its usage is swedeck's estimate and counts a prompt."""
        self._prompt, self._completion = prompt or array("q"), completion or array("q")
        self._cached, self._written = cached or array("q"), written or array("q")
        self._calls, self._shells = tool_calls or array("q"), shell_commands or array("q")
        self._models, self._names = models or array("q"), names or []
        self._estimated = estimated or bytearray(len(self._models))

    def totals(self) -> tuple[int, int, int, int]:
        """Tool calls, shell commands, the steps whose usage counts a prompt, and those whose
        usage is swedeck's estimate (the summary's), at C speed."""
        with_usage = len(self._prompt) - self._prompt.count(-1) - self._prompt.count(0)
        return sum(self._calls), sum(self._shells), with_usage, self._estimated.count(1)

    def without_usage(self) -> int:
        return self._prompt.count(-1)

    def __len__(self) -> int:
        return len(self._models)

    def rows(self, role: str, fallback: str | None, numbered: bool) -> Iterator[tuple[Any, ...]]:
        """Each step with usage as `cost.account_rows` reads a call (those without:
        `without_usage`): role, model (else `fallback`), step (1-based, when `numbered`),
        prompt, completion, cached, cache write. Made by C's loops (`zip`, `map`, `compress`):
        a million steps."""
        count = len(self._models)
        models = map([name or fallback for name in self._names].__getitem__, self._models)
        steps = range(1, count + 1) if numbered else itertools.repeat(None, count)
        rows = zip(itertools.repeat(role, count), models, steps, self._prompt, self._completion, self._cached,
                   self._written, strict=True)
        return itertools.compress(rows, map((-1).__ne__, self._prompt)) if self.without_usage() else rows


class Trajectory(msgspec.Struct):
    """A trajectory as read from a file of any format: its messages, its steps and its info."""

    path: Path
    format: TrajectoryFormat
    messages: Sequence[Message]
    """A list, or a `lazy.MessageList` that builds messages when they are read."""
    steps: Sequence[Step]
    info: TrajectoryInfo
    meta_events: list[MetaEvent] = msgspec.field(default_factory=list)
    processors: dict[str, Any] = msgspec.field(default_factory=dict)
    """Processor config hash -> the processor config list recorded with it (swedeck files)."""
    fidelity: Fidelity | None = None
    """Set by the readers of other agents' records; `fidelity_of` gives one for every file."""
    recorded_prompts: Mapping[int, Sequence[Message]] = msgspec.field(default_factory=dict)
    """Step number -> the exact messages of its request, where the file stores them (Inspect's
    `ModelEvent.input`): `prompt` shows these instead of rebuilding them."""
    rebuilt_requests: Mapping[int, Mapping[str, Any]] = msgspec.field(default_factory=dict)
    """Step number -> its request's body rebuilt from the agent's own request records (Claude
    Code's `api-request*`), for `prompt --wire` (a record of `swedeck record` keeps the body itself)."""
    wire_agreement: dict[int, dict[str, Any]] = msgspec.field(default_factory=dict)
    """Step number -> how the agent's own request records agree with a record of the same run
    (`wire_request.agreement`), where both exist."""
    facts: StepFacts | None = None
    """Each step's model, usage and calls without building it, where the reader knows them
    (Claude Code's whole reading); None: read from the steps."""

    def step_facts(self) -> StepFacts | None:
        """`facts` when they cover every step (else the steps are read)."""
        return self.facts if self.facts is not None and len(self.facts) == len(self.steps) else None

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
