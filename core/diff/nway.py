"""N runs compared, and why they parted (issue 66): the first is the reference; every other run
is aligned with it (`align.align`), and every pair's first divergence is classed from what the
two models saw before it (the histories and prompts `swedeck prompt` rebuilds):

- `model`: a different model answered (both named);
- `sampling`: the prompts were the same, the models chose differently;
- `tool output`: an earlier step's output differed (which step, the differing lines), so the
  prompts differed;
- `context`: the prompts differed for another reason (the system prompt, the task, a
  compaction, the processors), with the first differing part.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

from ..messages import Message, MessageType, answered_by
from ..trajectory.model import Trajectory
from .align import Alignment, RunTotals, align, step_key, totals

EVIDENCE_LINES = 6
"""Differing lines of a tool output given as its evidence."""


@dataclass
class Divergence:
    pair: tuple[int, int]
    step: int | None
    """Step of the first run of the pair where they part; None: they never do."""
    other_step: int | None = None
    cls: str | None = None
    evidence: dict[str, Any] | None = None

    def as_record(self) -> dict[str, Any]:
        found = None if self.step is None else {"step": self.step, "other_step": self.other_step, "class": self.cls,
                                                "evidence": self.evidence}
        return {"pair": list(self.pair), "first_divergence": found}


@dataclass
class Comparison:
    runs: list[Trajectory]
    totals: list[RunTotals]
    alignments: list[Alignment]
    """Run k (k >= 1) against the reference (run 0): `alignments[k - 1]`."""
    divergences: list[Divergence]


def compare(runs: list[Trajectory]) -> Comparison:
    """Every run aligned with the first; every pair's first divergence, classed."""
    alignments = [align(runs[0], other) for other in runs[1:]]
    divergences = []
    for i, j in combinations(range(len(runs)), 2):
        alignment = alignments[j - 1] if i == 0 else align(runs[i], runs[j])
        divergences.append(divergence((i, j), runs[i], runs[j], alignment))
    return Comparison(runs, [totals(run) for run in runs], alignments, divergences)


def divergence(pair: tuple[int, int], a: Trajectory, b: Trajectory, alignment: Alignment) -> Divergence:
    row_index = next((index for index, row in enumerate(alignment.rows) if row.kind != "same"), None)
    if row_index is None:
        return Divergence(pair, None)
    rows = alignment.rows[row_index:]
    step_a = next((row.a for row in rows if row.a is not None), None)
    step_b = next((row.b for row in rows if row.b is not None), None)
    first = alignment.first_divergence
    cls, evidence = classify(a, b, step_a, step_b)
    return Divergence(pair, first, step_b, cls, evidence)


def _model(trajectory: Trajectory, step: int | None) -> str | None:
    if step is None:
        return trajectory.info.model_name
    return answered_by(trajectory.messages[trajectory.steps[step - 1].message_index], trajectory.info.model_name)


def _history(trajectory: Trajectory, step: int | None) -> list[Message]:
    """What the model saw before `step` (None: after the run's last step: all of it)."""
    from ..prompt_view import history_before

    return list(history_before(trajectory, step if step is not None else len(trajectory.steps) + 1))


def _prompt(trajectory: Trajectory, step: int | None) -> list[tuple[str, str]]:
    """The prompt the model was sent at `step`: the recorded request where the file has it, else
    the history after the recorded processors (`step_prompt`)."""
    from ..prompt_view import step_prompt

    if step is not None and step in trajectory.recorded_prompts:
        return [(message.role, message.text) for message in trajectory.recorded_prompts[step]]
    prompt = step_prompt(trajectory, step if step is not None else len(trajectory.steps) + 1)
    return [(line.message.role, line.message.text) for line in prompt.lines]


def classify(a: Trajectory, b: Trajectory, step_a: int | None, step_b: int | None) -> tuple[str, dict[str, Any]]:
    """Why two runs parted at these steps (either may be None: that run had ended)."""
    model_a, model_b = _model(a, step_a), _model(b, step_b)
    if model_a and model_b and model_a != model_b:
        return "model", {"a": model_a, "b": model_b}
    prompt = _prompt(a, step_a)
    if prompt == _prompt(b, step_b):
        return "sampling", {"prompt_messages": len(prompt), "a": _choice(a, step_a), "b": _choice(b, step_b)}
    history_a, history_b = _history(a, step_a), _history(b, step_b)
    for index, (left, right) in enumerate(zip(history_a, history_b, strict=False)):
        if (left.role, left.text) == (right.role, right.text):
            continue
        if _is_output(left) and _is_output(right):
            return "tool output", {"step": _answered_step(a, index), "message": index,
                                   "lines": _differing_lines(left.text, right.text)}
        return "context", {"part": _part(left, index), "message": index,
                           "a": _first_line(left.text, right.text), "b": _first_line(right.text, left.text)}
    if len(history_a) != len(history_b):
        longer, side = (history_a, "a") if len(history_a) > len(history_b) else (history_b, "b")
        extra = longer[min(len(history_a), len(history_b))]
        return "context", {"part": f"{side} has more: {_part(extra, min(len(history_a), len(history_b)))}",
                           "message": min(len(history_a), len(history_b))}
    return "context", {"part": "the processors (the histories are the same, the prompts not)"}


def _choice(trajectory: Trajectory, step: int | None) -> str | None:
    return None if step is None else step_key(trajectory, trajectory.steps[step - 1])


def _is_output(message: Message) -> bool:
    return message.role == "tool" or message.message_type == MessageType.OBSERVATION


def _answered_step(trajectory: Trajectory, index: int) -> int | None:
    """The step whose answers include history message `index`."""
    for step in trajectory.steps:
        if index in step.observation_indices:
            return step.index
    return None


def _part(message: Message, index: int) -> str:
    kind = message.message_type
    if kind == MessageType.SYSTEM or (message.role == "system" and index == 0):
        return "the system prompt"
    if kind == MessageType.TASK:
        return "the task"
    if kind == MessageType.COMPACTION:
        return "a compaction"
    return f"message {index} ({message.role}, {kind.value})"


def _first_line(mine: str, theirs: str) -> str:
    """The first line of `mine` that `theirs` does not have at the same place."""
    other = theirs.splitlines()
    for number, line in enumerate(mine.splitlines()):
        if number >= len(other) or other[number] != line:
            return line[:200]
    return ""


def _differing_lines(left: str, right: str) -> list[str]:
    diff = [line for line in difflib.unified_diff(left.splitlines(), right.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    return [line[:200] for line in diff[:EVIDENCE_LINES]]


def rows(comparison: Comparison) -> list[dict[str, Any]]:
    """The reference's steps in order, each with the step every other run took there (its kind:
    `same`, `changed`, or `a_only`: that run has none here); a step only another run took is a
    row of its own (`b_only`), where it falls."""
    reference = comparison.runs[0]
    placed: list[dict[int, dict[str, Any]]] = [{} for _ in range(len(reference.steps) + 2)]
    out_rows: list[dict[str, Any]] = []
    before: dict[int, list[dict[str, Any]]] = {}
    for run, alignment in enumerate(comparison.alignments, start=1):
        pending: list[dict[str, Any]] = []
        for row in alignment.rows:
            other = comparison.runs[run]
            entry = {"run": run, "step": row.b, "kind": row.kind, "output_differs": row.output_differs,
                     "command": _choice(other, row.b)}
            if row.a is None:
                pending.append(entry)
                continue
            for waiting in pending:
                before.setdefault(row.a, []).append(waiting)
            pending = []
            placed[row.a][run] = entry
        for waiting in pending:
            before.setdefault(len(reference.steps) + 1, []).append(waiting)
    for step in range(1, len(reference.steps) + 2):
        for waiting in before.get(step, []):
            out_rows.append({"ref_step": None, "ref_command": None, "others": [waiting]})
        if step <= len(reference.steps):
            out_rows.append({"ref_step": step, "ref_command": _choice(reference, step),
                             "others": [placed[step].get(run, {"run": run, "step": None, "kind": "a_only",
                                                                "output_differs": False, "command": None})
                                        for run in range(1, len(comparison.runs))]})
    return out_rows


def place(row: dict[str, Any], run: int) -> dict[str, Any] | None:
    """Run `run`'s place in an aligned row (`rows`): the step it took there; None in a row of
    another run's step alone."""
    return next((other for other in row["others"] if other["run"] == run), None)


def parts(row: dict[str, Any], run: int) -> bool:
    """Whether run `run` parts from the reference at an aligned row (a step other than its)."""
    found = place(row, run)
    return found is not None and found["kind"] != "same"


def first_rows(aligned: list[dict[str, Any]], runs: int) -> dict[int, int | None]:
    """Each other run's first aligned row that is not the reference's step (its first
    divergence), of `runs` runs; None for a run that never parts from it."""
    return {run: next((index for index, row in enumerate(aligned) if parts(row, run)), None) for run in range(1, runs)}


def evidence_text(evidence: dict[str, Any] | None) -> str:
    """A divergence's evidence in words (`--print`, the HTML page)."""
    if not evidence:
        return ""
    if "lines" in evidence:
        return f"the output of step {evidence.get('step')} differed: " + " / ".join(evidence["lines"][:3])
    if "part" in evidence:
        said = f"{evidence['part']}"
        if evidence.get("a") or evidence.get("b"):
            said += f": {evidence.get('a')!r} against {evidence.get('b')!r}"
        return said
    if "prompt_messages" in evidence:
        return f"the same {evidence['prompt_messages']} messages; {evidence.get('a')!r} against {evidence.get('b')!r}"
    return ", ".join(f"{key}: {value}" for key, value in evidence.items())


def first_line_record(comparison: Comparison) -> dict[str, Any]:
    """`--json`'s first line: each run's totals and every pair's first divergence (two runs: also
    `a`, `b` and `first_divergence`, as before)."""
    record: dict[str, Any] = {"runs": [asdict(total) for total in comparison.totals],
                              "divergences": [found.as_record() for found in comparison.divergences]}
    if len(comparison.runs) == 2:
        record.update({"a": record["runs"][0], "b": record["runs"][1],
                       "first_divergence": comparison.divergences[0].step})
    return record
