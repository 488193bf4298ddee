"""The subagent tree (issue 65.4): a run and the subagent runs it started, each a node you can
open, with its steps, tokens, dollars, duration and how it ended.

Claude Code keeps each subagent's run in a file of its own beside the session
(`<session>/subagents/agent-<id>.jsonl`); the session's `Agent`/`Task` call whose result names
the id (`toolUseResult.agentId`) is the step that started it. A node is summed from the
reader's outline of the run where it keeps one (Claude Code's: the plan's usage totals, models,
first and last timestamps and last stop, none of its steps built: a session with 404
subagents is summed in about a second), else from its steps, each read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .cost import Call, CostReport, Prices, account_rows, call_dollars, money, trajectory_rows
from .messages import Usage
from .trajectory.errors import TrajectoryError
from .trajectory.model import Trajectory
from .trajectory.readers.api_requests import SUBAGENT_RUN, subagent_parents

SUBAGENT_FILE = "subagent file "
"""How the readers label a subagent's file among a run's branches (`Fidelity.openable`)."""


@dataclass
class RunNode:
    id: str
    """`main`, or the subagent's id."""
    target: str
    """What opens it (`swedeck replay TARGET`)."""
    parent_step: int | None
    """The parent's step whose call started it; None for the main run, or where no step names it."""
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    """None: no usage, or `unpriced` (never summed as 0)."""
    unpriced: list[str] = field(default_factory=list)
    duration_s: float | None = None
    ended: str | None = None
    """How it ended: its exit status, else its last answer's stop reason."""
    error: str | None = None
    """Why it could not be read (its figures are then empty)."""
    children: list[RunNode] = field(default_factory=list)

    def as_record(self) -> dict[str, Any]:
        return {"id": self.id, "target": self.target, "parent_step": self.parent_step, "steps": self.steps,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 8), "unpriced": self.unpriced,
                "duration_s": self.duration_s, "ended": self.ended, "error": self.error,
                "children": [child.as_record() for child in self.children]}


def subagent_files(trajectory: Trajectory) -> list[tuple[str, str]]:
    """(id, target) of each subagent run the file keeps beside it (Claude Code's files) or in it
    (a record's subagent runs, `PATH#subagent-ID`), as its reader found them."""
    branches = trajectory.fidelity.openable if trajectory.fidelity is not None else []
    return [(branch.label.removeprefix(SUBAGENT_FILE).removeprefix(SUBAGENT_RUN).removeprefix("agent-"), branch.target)
            for branch in branches if branch.label.startswith((SUBAGENT_FILE, SUBAGENT_RUN))]


def subagent_tree(trajectory: Trajectory, prices: Prices,
                  read: Callable[[str], Trajectory] | None = None,
                  progress: Callable[[int, int], None] | None = None) -> RunNode:
    """The main run, its subagents as its children (in the order their calls started them, then
    those no step names), each summed. `read` opens a subagent's file (the loader's, lazily);
    `progress(done, total)` after each."""
    if read is None:
        from .trajectory.loader import load_trajectory

        def read(path: str) -> Trajectory:
            return load_trajectory(path, lazy=True)
    root = summed(trajectory, prices, "main", str(trajectory.path), None)
    started = agent_steps(trajectory)
    files = subagent_files(trajectory)
    files.sort(key=lambda found: (started.get(found[0]) is None, started.get(found[0]) or 0, found[0]))
    for done, (name, path) in enumerate(files, start=1):
        try:
            child = summed(read(path), prices, name, path, started.get(name))
        except TrajectoryError as error:
            child = RunNode(name, path, started.get(name), error=error.reason)
        root.children.append(child)
        if progress is not None:
            progress(done, len(files))
    return root


def summed(trajectory: Trajectory, prices: Prices, name: str, target: str, parent_step: int | None) -> RunNode:
    """One run's node: its steps, tokens, dollars, duration and ending."""
    info = trajectory.info
    node = RunNode(name, target, parent_step, steps=len(trajectory.steps), ended=info.exit_status)
    outline = info.raw.get("outline")
    if isinstance(outline, Mapping) and len(outline.get("models") or []) <= 1:
        stats = info.model_stats  # the reader's sums along the run, from its plan: no step built
        usage = Usage(prompt_tokens=stats.prompt_tokens, completion_tokens=stats.completion_tokens,
                      cached_tokens=int(outline.get("cached_tokens") or 0),
                      cache_write_tokens=int(outline.get("cache_write_tokens") or 0) or None)
        model = (outline.get("models") or [None])[0] or info.model_name
        node.prompt_tokens, node.completion_tokens = usage.prompt_tokens, usage.completion_tokens
        node.cost_usd = call_dollars(Call(name, model, usage), prices)
        if node.cost_usd is None and (usage.prompt_tokens or usage.completion_tokens):
            node.unpriced = [model or "(no model named)"]
        node.duration_s = _seconds(outline.get("first_at"), outline.get("last_at"))
        node.ended = node.ended or outline.get("stop")
        return node
    rows, without_usage = trajectory_rows(trajectory)  # every step's, from the reader's facts where it has them
    report = account_rows(rows, prices, without_usage)
    node.prompt_tokens, node.completion_tokens = report.tokens["prompt_tokens"], report.tokens["completion_tokens"]
    node.cost_usd = report.total_usd if report.total_usd or not report.unpriced else None
    node.unpriced = sorted(report.unpriced)
    stamps = [stamp for stamp in map(_stamp, trajectory.messages) if stamp is not None]
    node.duration_s = round(max(stamps) - min(stamps), 1) if len(stamps) > 1 else None
    return node


def _stamp(message: Any) -> float | None:
    """When a message was written: its timestamp, or the text one a reader kept (Claude Code's)."""
    if message.extra.timestamp is not None:
        return float(message.extra.timestamp)
    text = message.extra.unknown.get("timestamp_text")
    try:
        return datetime.fromisoformat(str(text)).timestamp() if text else None
    except ValueError:
        return None


def _seconds(first: Any, last: Any) -> float | None:
    try:
        return round((datetime.fromisoformat(str(last)) - datetime.fromisoformat(str(first))).total_seconds(), 1)
    except ValueError:
        return None


def node_line(node: RunNode) -> str:
    """A node in words: `agent-ID · 12 steps · 34,567 tokens · $0.0123 · 45 s · end_turn (from step 7)`."""
    parts = [node.id if node.id == "main" else f"subagent {node.id}", f"{node.steps} steps",
             f"{node.prompt_tokens + node.completion_tokens:,} tokens"]
    if node.error:
        return f"{parts[0]}: cannot be read: {node.error}"
    parts.append(money(node.cost_usd) if node.cost_usd is not None else
                 "unpriced: " + ", ".join(node.unpriced) if node.unpriced else "no usage")
    if node.duration_s is not None:
        parts.append(f"{node.duration_s:.0f} s")
    if node.ended:
        parts.append(node.ended)
    line = " · ".join(parts)
    return line + (f" (from step {node.parent_step})" if node.parent_step is not None else "")


def subagent_runs(trajectory: Trajectory) -> list[tuple[str, Trajectory]]:
    """The subagent runs a file keeps beside it as files of their own (Claude Code's
    `subagents/agent-*.jsonl`), each read, by its id; one that does not read is left out."""
    from .trajectory.loader import load_trajectory

    runs = []
    for name, path in subagent_files(trajectory):
        try:
            runs.append((name, load_trajectory(path, lazy=True)))
        except TrajectoryError:
            continue
    return runs


def agent_steps(trajectory: Trajectory) -> dict[str, int]:
    """Subagent id -> the main-line step whose call started it: from the reader's outline where
    it keeps one (Claude Code's), else from the steps' tool results (`agent_id`), each read."""
    outline = trajectory.info.raw.get("outline")
    if isinstance(outline, Mapping) and isinstance(outline.get("agent_steps"), Mapping):
        return dict(outline["agent_steps"])
    given = trajectory.info.raw.get("agent_steps")  # a reader's (Codex's: the step whose call spawned each)
    if isinstance(given, Mapping):
        return dict(given)
    recorded = subagent_parents(trajectory.meta_events)  # a record's: the step whose answer asked for it
    if recorded:
        return recorded
    started: dict[str, int] = {}
    for step in trajectory.steps:
        for index in step.observation_indices:
            agent = trajectory.messages[index].extra.unknown.get("agent_id")
            if isinstance(agent, str):
                started.setdefault(agent, step.index)
    return started


def subagent_list(trajectory: Trajectory, runs: list[tuple[str, Trajectory]], report: CostReport) -> list[dict[str, Any]]:
    """Each subagent run (`--print --json`'s `subagents`): its id, what opens it, the main-line
    step whose call started it (the call's result names its id), its steps and its dollars."""
    started = agent_steps(trajectory) if runs else {}  # (no subagent: no step is read to find one)
    targets = dict(subagent_files(trajectory))
    return [{"id": name, "target": targets.get(name, str(run.path)), "parent_step": started.get(name),
             "steps": len(run.steps),
             "cost_usd": round(report.by_role[f"subagent {name}"], 8) if f"subagent {name}" in report.by_role else None}
            for name, run in runs]
