"""`swedeck replay --print`: the normalized steps as text or JSON lines, without a UI.

Printed text never carries the trajectory's terminal control sequences: a recorded
observation must not be able to move the cursor or retitle the reader's terminal.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..actions import without_fences
from ..messages import Action, MessageType
from ..text import excerpt, inert_json, one_line, printable
from .compaction import compaction_at
from .compaction import label as compaction_label
from .fidelity import prompt_provenance, summary, summary_lines
from .model import Step, Trajectory

if TYPE_CHECKING:
    from ..cost import CostReport
from .output import answer_label, answer_text, tool_error

THOUGHT_CHARS = 300
OBSERVATION_LINES = 12
OBSERVATION_WIDTH = 160


def step_record(trajectory: Trajectory, step: Step) -> dict[str, Any]:
    """Everything known about one step, as one JSON object."""
    message = trajectory.messages[step.message_index]
    not_run = {} if ran(trajectory, step) else {"ran": False}
    return {
        "path": str(trajectory.path),
        "format": trajectory.format,
        "step": step.index,
        "message_index": step.message_index,
        "prompt_end": step.prompt_end,
        "thought": thought(trajectory, step),
        "content": message.text,
        "actions": [{**action.to_record(), **not_run} for action in step.actions],
        "observations": [
            {"index": index, "role": other.role, "message_type": other.message_type.value, "content": other.text,
             "label": answer_label(other),
             **({"returncode": other.extra.returncode} if other.extra.returncode is not None else {}),
             **({"tool_error": error} if (error := tool_error(other)) is not None else {}),
             **({"task": answer_text(other)} if other.message_type == MessageType.TASK else {})}
            for index, other in ((i, trajectory.messages[i]) for i in step.observation_indices)
        ],
        "usage": {**step.usage.to_record(), "source": "estimated" if step.usage.estimated else "recorded"}
        if step.usage else None,
        "cost": step.cost,
        "context": step.context.to_record(keep_none=True) if step.context else None,
        "processors": step.processors,
        "state": step.state,
        "provenance": prompt_provenance(trajectory, step.index),
        **({"compaction": compaction_label(compaction)} if (compaction := compaction_at(trajectory, step)) else {}),
    }


def ran(trajectory: Trajectory, step: Step) -> bool:
    """Whether the step's commands ran: not when its answer was refused as a format error (the
    agent ran nothing it wrote, however many fenced blocks it had) and nothing else answered."""
    kinds = {trajectory.messages[index].message_type for index in step.observation_indices}
    return MessageType.FORMAT_ERROR not in kinds or MessageType.OBSERVATION in kinds or any(
        trajectory.messages[index].role == "tool" for index in step.observation_indices)


def thought(trajectory: Trajectory, step: Step) -> str:
    """The assistant's words around its command: reasoning, else SWE-agent's recorded thought,
    else the content without the fenced command."""
    message = trajectory.messages[step.message_index]
    if message.extra.reasoning and message.extra.reasoning.strip():
        return message.extra.reasoning.strip()
    recorded = message.extra.unknown.get("thought")
    if isinstance(recorded, str) and recorded.strip():
        return recorded.strip()
    return without_fences(message.text)


def json_lines(trajectory: Trajectory, steps: Sequence[Step], cost: CostReport | None = None,
               subagents: list[dict[str, Any]] | None = None) -> Iterator[str]:
    """A first line with the file's fidelity summary (and its cost, issue 65: `cost`, `subagents`),
    then one line a step (its `cost_usd`)."""
    first: dict[str, Any] = {"path": str(trajectory.path), "format": trajectory.format, "fidelity": summary(trajectory)}
    if cost is not None:
        first["cost"] = cost.as_record()
    if subagents is not None:
        first["subagents"] = subagents
    yield inert_json(first)
    for step in steps:
        record = step_record(trajectory, step)
        if cost is not None:
            record["cost_usd"] = cost.steps.get(step.index)
        yield inert_json(record)


def text_lines(trajectory: Trajectory, steps: Sequence[Step], cost: CostReport | None = None) -> Iterator[str]:
    yield header(trajectory)
    if cost is not None:
        yield from (f"   {line}" for line in cost_lines(cost))
    for step in steps:
        yield ""
        dollars = cost.steps.get(step.index) if cost is not None else None
        yield f"── step {step.index}/{len(trajectory.steps)}{usage_note(step, dollars)}"
        compaction = compaction_at(trajectory, step)
        if compaction is not None:
            yield f"  ⟲ {compaction_label(compaction)}"
        said = one_line(printable(thought(trajectory, step)), THOUGHT_CHARS)
        if said:
            yield f"  thought: {said}"
        not_run = "" if ran(trajectory, step) else "  (not run: the answer was a format error)"
        for action in step.actions:
            command = printable(action.command).splitlines() or [""]
            yield f"  $ {command[0]}{not_run}{cell_note(action)}"
            yield from (f"    {line}" for line in command[1:])
        for index in step.observation_indices:
            other = trajectory.messages[index]
            label = answer_label(other)
            if other.extra.returncode is not None:
                label += f" (exit {other.extra.returncode})"
            text = answer_text(other) if other.message_type == MessageType.TASK else other.text
            yield f"  {printable(label)}:"  # a mini-swe-agent `exit_status` is the file's words
            yield from (f"    {line}" for line in excerpt(printable(text), OBSERVATION_LINES, OBSERVATION_WIDTH))


def header(trajectory: Trajectory) -> str:
    info = trajectory.info
    parts = [trajectory.format, f"{len(trajectory.steps)} steps"]
    if info.model_name:
        parts.append(str(info.model_name))
    if info.exit_status:
        parts.append(str(info.exit_status))
    if info.model_stats.instance_cost:
        parts.append(f"${info.model_stats.instance_cost:.4f}")
    lines = [f"== {trajectory.path} ({', '.join(parts)})"]
    lines += [f"   warning: {warning}" for warning in info.warnings]
    if trajectory.fidelity is not None:  # another agent's record: say what it holds
        lines += [f"   {line}" for line in summary_lines(summary(trajectory))]
    else:  # swedeck's own: what does not fit in its compaction records
        from .compaction import compaction_problems

        lines += [f"   note: {note}" for note in compaction_problems(trajectory.messages)]
    return printable("\n".join(lines))  # a file's name and its model name are the file's words too


def cell_note(action: Action) -> str:
    """`  (in the exec cell, exit 3)` after a command a code cell ran (Codex's code mode)."""
    if not action.unknown.get("cell"):
        return ""
    code = action.unknown.get("exit_code")
    return "  (in the exec cell" + (f", exit {code}" if isinstance(code, int) else "") + ")"


def cost_lines(cost: CostReport) -> list[str]:
    """The cost report in words: the total by kind, by role where there is more than the main
    line, the models without a price, the agent's own total and how it reconciles."""
    kinds = ", ".join(f"{kind.replace('_', ' ')} {value:.6f}" for kind, value in cost.by_kind.items() if value)
    lines = [f"cost: {cost.total_usd:.6f} USD" + (f" ({kinds})" if kinds else "")]
    if len(cost.by_role) > 1:
        lines.append("  by role: " + ", ".join(f"{role} {value:.6f}" for role, value in cost.by_role.items()))
    if cost.unpriced:
        lines.append("  unpriced (not in the total; model.prices sets them): "
                     + ", ".join(f"{model} ({calls} calls)" for model, calls in cost.unpriced.items()))
    if cost.agent_total_usd is not None:
        lines.append(f"  the agent's own total: {cost.agent_total_usd:.6f} USD: {cost.reconciliation}")
    if cost.agent_tokens is not None:
        lines.append(f"  tokens: {cost.tokens['prompt_tokens']:,} prompt + {cost.tokens['completion_tokens']:,} completion; "
                     f"{cost.agent_tokens.get('source')}: {cost.agent_tokens.get('prompt_tokens'):,} + "
                     f"{cost.agent_tokens.get('completion_tokens'):,}: {cost.token_reconciliation}")
    return lines


def usage_note(step: Step, dollars: float | None = None) -> str:
    notes = []
    if step.usage:
        estimated = " (estimated)" if step.usage.estimated else ""
        notes.append(f"{step.usage.prompt_tokens} prompt + {step.usage.completion_tokens} completion tokens{estimated}")
    if dollars is not None:
        notes.append(f"${dollars:.6f}")
    elif step.cost:
        notes.append(f"${step.cost:.4f}")
    if step.context and step.context.left_percent is not None:
        notes.append(f"{step.context.left_percent:.0f}% context left")
    return f"  [{', '.join(notes)}]" if notes else ""
