"""Two runs side by side (SPEC §16): their steps aligned and the first place they part.

A step is known by what the agent did: its commands (or, for a step without one, what it
was: a format error, an answer). Two steps are the *same* when they did the same thing;
alignment keeps the longest common start and end of the two runs, and between them a
longest common subsequence of the steps by that key (difflib's matcher, as `diff` does for
lines: where a step repeats, the runs part where their common start ends, so a retried
command is the second one, not the first); inside each stretch where the runs
differ, steps are paired in order while they look alike (a command edited rather than
replaced: similarity of at least `SIMILAR`) and the rest are gaps, one side only. The
first row that is not `same` is the first divergence, given as a step number of A: for
a step only B took, the step of A it comes before (`len(A) + 1` after A's last).

The key ignores what the formats add around a command (mini-swe-agent's text protocol,
SWE-agent's quoting of a tool's arguments is kept: it is what the agent ran) and the
output: two runs in different places print different things, and the question is where
the *agent* chose differently. Each row says whether the outputs differ too.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..messages import MessageType
from ..trajectory.model import Step, Trajectory
from ..trajectory.output import answer_text

RowKind = Literal["same", "changed", "a_only", "b_only"]
SIMILAR = 0.6
"""How alike two different steps must be to be shown as one step changed rather than two gaps."""


@dataclass(frozen=True)
class Row:
    kind: RowKind
    a: int | None
    """Step number in A (None: B only)."""
    b: int | None
    output_differs: bool = False
    """For `same` and `changed` rows: what the commands printed is not the same."""


@dataclass
class RunTotals:
    path: str
    format: str
    steps: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    exit_status: str | None
    submission_chars: int | None
    seconds: float | None
    cost_source: str = "recorded"
    """`recorded` (the run's own figure), or `priced` from its usage and litellm's prices (issue 65)."""
    unpriced: list[str] = field(default_factory=list)
    """Models of its calls with no price (not in a priced `cost`)."""


@dataclass
class Alignment:
    a: RunTotals
    b: RunTotals
    rows: list[Row] = field(default_factory=list)

    @property
    def first_divergence(self) -> int | None:
        """Step number of A where the runs first part; None when they never do."""
        for index, row in enumerate(self.rows):
            if row.kind != "same":
                if row.a is not None:
                    return row.a
                later = next((r.a for r in self.rows[index:] if r.a is not None), None)
                return later if later is not None else self.a.steps + 1
        return None

    def divergences(self) -> list[int]:
        """Indices of rows that start a stretch where the runs differ (`d` moves between them)."""
        return [index for index, row in enumerate(self.rows)
                if row.kind != "same" and (index == 0 or self.rows[index - 1].kind == "same")]


def step_key(trajectory: Trajectory, step: Step) -> str:
    """What the agent did at this step, as one string: its commands, else what the step was."""
    if step.actions:
        return "\n".join(" ".join(action.command.split()) for action in step.actions)
    message = trajectory.messages[step.message_index]
    kinds = {trajectory.messages[i].message_type for i in step.observation_indices}
    if MessageType.FORMAT_ERROR in kinds:
        return "(format error)"
    return f"({message.message_type.value})"


def _outputs(trajectory: Trajectory, step: Step) -> list[str]:
    """What the step's answers say, as the output pane shows them (a command's output without the
    template around it); not how the run ended (mini-swe-agent's `exit`, which the totals give and
    other formats do not keep as a message)."""
    return [answer_text(message).strip() for message in (trajectory.messages[i] for i in step.observation_indices)
            if message.message_type != MessageType.EXIT]


def align(a: Trajectory, b: Trajectory) -> Alignment:
    keys_a = [step_key(a, step) for step in a.steps]
    keys_b = [step_key(b, step) for step in b.steps]
    # The common start and end first: the runs part where their common prefix ends, whatever
    # a longest match in the middle would prefer (B's `cat; cat` retry is its second `cat`).
    head = 0
    while head < min(len(keys_a), len(keys_b)) and keys_a[head] == keys_b[head]:
        head += 1
    tail = 0
    while tail < min(len(keys_a), len(keys_b)) - head and keys_a[-1 - tail] == keys_b[-1 - tail]:
        tail += 1
    rows = [Row("same", k + 1, k + 1, _differ(a, b, k, k)) for k in range(head)]
    matcher = difflib.SequenceMatcher(None, keys_a[head:len(keys_a) - tail], keys_b[head:len(keys_b) - tail],
                                      autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        a0, a1, b0, b1 = a0 + head, a1 + head, b0 + head, b1 + head
        if tag == "equal":
            rows += [Row("same", a0 + k + 1, b0 + k + 1, _differ(a, b, a0 + k, b0 + k)) for k in range(a1 - a0)]
        else:
            rows += _stretch(a, b, keys_a, keys_b, range(a0, a1), range(b0, b1))
    rows += [Row("same", len(keys_a) - tail + k + 1, len(keys_b) - tail + k + 1,
                 _differ(a, b, len(keys_a) - tail + k, len(keys_b) - tail + k)) for k in range(tail)]
    return Alignment(totals(a), totals(b), rows)


def _stretch(a: Trajectory, b: Trajectory, keys_a: Sequence[str], keys_b: Sequence[str], left: range,
             right: range) -> list[Row]:
    """Where the runs differ: pairs in order while they look alike, the rest one side only."""
    rows: list[Row] = []
    i, j = left.start, right.start
    while i < left.stop and j < right.stop:
        if difflib.SequenceMatcher(None, keys_a[i], keys_b[j]).ratio() >= SIMILAR:
            rows.append(Row("changed", i + 1, j + 1, _differ(a, b, i, j)))
            i, j = i + 1, j + 1
        elif left.stop - i >= right.stop - j:
            rows.append(Row("a_only", i + 1, None))
            i += 1
        else:
            rows.append(Row("b_only", None, j + 1))
            j += 1
    rows += [Row("a_only", k + 1, None) for k in range(i, left.stop)]
    rows += [Row("b_only", None, k + 1) for k in range(j, right.stop)]
    return rows


def _differ(a: Trajectory, b: Trajectory, i: int, j: int) -> bool:
    """What the step's commands printed is not the same; a step one file holds no output of (a
    record's last step: nothing sent the output on) differs in nothing it can say."""
    left, right = _outputs(a, a.steps[i]), _outputs(b, b.steps[j])
    return bool(left) and bool(right) and left != right


def totals(trajectory: Trajectory) -> RunTotals:
    steps = list(trajectory.steps)
    prompt = sum(step.usage.prompt_tokens for step in steps if step.usage)
    completion = sum(step.usage.completion_tokens for step in steps if step.usage)
    stats = trajectory.info.model_stats
    cost = stats.instance_cost or sum(step.cost or 0.0 for step in steps)
    source, unpriced = "recorded", []
    if not cost and (prompt or completion):  # no figure of its own: priced from its usage (issue 65)
        from ..cost import Prices, cost_of
        from ..subagents import subagent_runs

        report = cost_of(trajectory, Prices(), subagent_runs(trajectory))  # its subagents' and side calls' too
        cost, source, unpriced = report.total_usd, "priced", sorted(report.unpriced)
    stamps = [message.extra.timestamp for message in trajectory.messages if message.extra.timestamp is not None]
    submission = trajectory.info.submission
    return RunTotals(path=str(trajectory.path), format=trajectory.format, steps=len(steps), prompt_tokens=prompt,
                     completion_tokens=completion, cost=round(cost, 6), exit_status=trajectory.info.exit_status,
                     submission_chars=len(submission) if submission is not None else None,
                     seconds=round(max(stamps) - min(stamps), 1) if len(stamps) > 1 else None, cost_source=source,
                     unpriced=unpriced)


def totals_line(name: str, totals: RunTotals) -> str:
    """One run's totals as one line: `swedeck diff --print` and the diff view's foot."""
    parts = [f"{totals.format}", f"{totals.steps} steps", f"{totals.prompt_tokens:,} prompt tokens"]
    if totals.cost:
        parts.append(f"${totals.cost:.4f}" + (" priced" if totals.cost_source == "priced" else ""))
    if totals.unpriced:
        parts.append("unpriced: " + ", ".join(totals.unpriced))
    if totals.seconds is not None:
        parts.append(f"{totals.seconds:.0f} s")
    parts.append(f"exit: {totals.exit_status or 'unknown'}")
    if totals.submission_chars is not None:
        parts.append(f"submission {totals.submission_chars:,} chars")
    return f"{name}: {totals.path} ({', '.join(parts)})"
