"""The fidelity summary of a file (SPEC §9.3): what it recorded, what swedeck rebuilt, what
it skipped. The readers of other agents' records set `Trajectory.fidelity` themselves; the
three formats swedeck has always read get theirs here, from what each is known to store.
"""

from __future__ import annotations

from typing import Any

from ..messages import MessageType
from .model import Fidelity, Provenance, Trajectory

_KNOWN: dict[str, tuple[Provenance, dict[str, Provenance], str]] = {
    "swedeck-jsonl": ("recorded", {"system prompt": "recorded", "tools": "recorded", "messages": "recorded",
                                   "processors": "recorded"}, "swedeck writes every message it sends"),
    "swedeck-json": ("recorded", {"system prompt": "recorded", "tools": "recorded", "messages": "recorded",
                                  "processors": "recorded"}, "swedeck writes every message it sends"),
    "swe-agent": ("recorded", {"system prompt": "recorded", "tools": "unknown", "messages": "recorded"},
                  "SWE-agent's `history` is what each query sent (its `query` per step)"),
    "mini-swe-agent": ("reconstructed", {"system prompt": "recorded", "tools": "unknown",
                                         "messages": "reconstructed"},
                       "mini-swe-agent keeps the conversation; each query's prompt is its prefix"),
}


def fidelity_of(trajectory: Trajectory) -> Fidelity:
    if trajectory.fidelity is not None:
        return trajectory.fidelity
    prompt, parts, note = _KNOWN.get(trajectory.format, ("reconstructed", {}, ""))
    fidelity = Fidelity(prompt=prompt, parts=dict(parts), usage=_usage(trajectory), notes=[note] if note else [])
    fidelity.compactions = sum(1 for message in trajectory.messages if message.message_type == MessageType.COMPACTION)
    return fidelity


def _usage(trajectory: Trajectory) -> Any:
    steps = list(trajectory.steps)
    with_usage = [step for step in steps if step.usage is not None and step.usage.prompt_tokens]
    if not steps or not with_usage:
        return "none"
    if all(step.usage.estimated for step in with_usage if step.usage):
        return "estimated"
    return "provider-reported" if len(with_usage) == len(steps) else "mixed"


def summary(trajectory: Trajectory) -> dict[str, Any]:
    """The fidelity panel's figures: `--print --json`'s `fidelity` and the replay panel."""
    fidelity = fidelity_of(trajectory)
    steps = list(trajectory.steps)
    record = fidelity.as_record()
    record["format"] = trajectory.format
    record["steps"] = len(steps)
    record["tool_calls"] = sum(len(step.actions) for step in steps)
    record["shell_commands"] = sum(1 for step in steps for action in step.actions
                                   if (action.model_extra or {}).get("shell", True))
    by_step: dict[str, int] = {}
    for step in steps:
        key = step.provenance or fidelity.prompt
        by_step[key] = by_step.get(key, 0) + 1
    for number in trajectory.recorded_prompts:
        if number <= len(steps):
            key = steps[number - 1].provenance or fidelity.prompt
            by_step[key] -= 1
            by_step["recorded"] = by_step.get("recorded", 0) + 1
    record["steps_by_provenance"] = {key: value for key, value in sorted(by_step.items()) if value}
    record["estimated_usage_steps"] = sum(1 for step in steps if step.usage is None or step.usage.estimated
                                          or not step.usage.prompt_tokens)
    return record


def summary_lines(record: dict[str, Any]) -> list[str]:
    """The summary as text: `replay --print`'s header block and the replay fidelity panel."""
    lines = [f"format: {record['format']}   steps: {record['steps']}   tool calls: {record['tool_calls']} "
             f"({record['shell_commands']} shell)"]
    lines.append(f"what the model saw: {record['prompt']}  ("
                 + ", ".join(f"{count} {key}" for key, count in record["steps_by_provenance"].items()) + " steps)")
    if record["parts"]:
        lines.append("  " + "   ".join(f"{part}: {how}" for part, how in record["parts"].items()))
    lines.append(f"usage: {record['usage']}" + (f"  ({record['estimated_usage_steps']} steps without a recorded "
                                                "count: estimated)" if record["estimated_usage_steps"] else ""))
    if record["compactions"]:
        lines.append(f"compactions: {record['compactions']}")
    if record["branches"]:
        lines.append(f"branches kept beside the main line: {record['branches']}")
    if record["units"] > 1:
        lines.append(f"runs in this file: {record['units']} (run {record['unit']} is open; PATH#N opens run N)")
    if record["skipped"]:
        lines.append("records not shown as messages: "
                     + ", ".join(f"{kind} x{count}" for kind, count in record["skipped"].items()))
    lines.extend(f"note: {note}" for note in record["notes"])
    return lines
