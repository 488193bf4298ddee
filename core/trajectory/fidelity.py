"""The fidelity summary of a file (SPEC §9.3): what it recorded, what swedeck rebuilt, what
it skipped. The readers of other agents' records set `Trajectory.fidelity` per file; the
formats whose lazy readers do not (swedeck's, SWE-agent's, mini-swe-agent's) say what their
files record in their reader's `FIDELITY`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..actions import is_shell
from ..messages import MessageType
from . import readers
from .compaction import positions, sendable
from .lazy import StepList
from .model import Fidelity, Provenance, Trajectory


def _known(format: str) -> Fidelity | None:
    """What a format's files record, from its reader (`FIDELITY`), where the reader does not set
    it per file."""
    for reader in readers.READERS:
        if reader.FORMAT == format:
            return reader.fidelity
    return None


def fidelity_of(trajectory: Trajectory) -> Fidelity:
    if trajectory.fidelity is not None:
        return trajectory.fidelity
    known = _known(trajectory.format)
    fidelity = (Fidelity(prompt="reconstructed") if known is None
                else Fidelity(prompt=known.prompt, parts=dict(known.parts), notes=list(known.notes)))
    fidelity.compactions = len(positions(trajectory.messages))  # from the reader's table where it has one
    return fidelity


def prompt_provenance(trajectory: Trajectory, number: int) -> Provenance:
    """How the prompt of query `number` (1-based; len+1 = the next query) is known: the
    request the file recorded, else the step's own label, else the file's. Cheap: what-if
    asks it of every step."""
    if number in trajectory.recorded_prompts:
        return "recorded"
    steps = trajectory.steps
    own = None if number > len(steps) else steps.provenance(number - 1) if isinstance(steps, StepList) \
        else steps[number - 1].provenance
    return own or _file_provenance(trajectory)


def _file_provenance(trajectory: Trajectory) -> Provenance:
    """How the file's prompts are known, where a step says nothing of its own."""
    if trajectory.fidelity is not None:
        return trajectory.fidelity.prompt
    known = _known(trajectory.format)
    return known.prompt if known is not None else "reconstructed"


def provenance_counts(trajectory: Trajectory, steps: int) -> Counter[str]:
    """`prompt_provenance` of steps 1 to `steps`, counted by kind (a million steps: their own
    labels counted at C speed, then the recorded ones moved), not asked one by one."""
    listed = trajectory.steps
    own = listed.provenances() if isinstance(listed, StepList) else [step.provenance for step in listed]
    counts: Counter[Any] = Counter(own[:steps])
    counts[None] += steps - min(steps, len(own))
    for number in trajectory.recorded_prompts:
        if 1 <= number <= steps:
            counts[own[number - 1] if number <= len(own) else None] -= 1
            counts["recorded"] += 1
    for label in [label for label in counts if not label]:  # no label of its own: the file's
        counts[_file_provenance(trajectory)] += counts.pop(label)
    return +counts


def _usage(with_usage: int, estimated: int, steps: int) -> str:
    """`with_usage` steps have a prompt count, `estimated` of them swedeck's estimate."""
    if not steps or not with_usage:
        return "none"
    if estimated == with_usage:
        return "estimated"
    return "provider-reported" if with_usage == steps else "mixed"


def summary(trajectory: Trajectory) -> dict[str, Any]:
    """The fidelity panel's figures: `--print --json`'s `fidelity` and the replay panel. One
    pass over the steps, none of them kept (a file of millions of steps is not held whole)."""
    fidelity = fidelity_of(trajectory)
    record = fidelity.as_record()
    steps = tool_calls = shell_commands = with_usage = estimated = 0
    by_step: Counter[str] = Counter()
    facts = trajectory.step_facts()
    if facts is not None:  # known from the records' heads: no step is built
        steps = len(facts)
        tool_calls, shell_commands, with_usage, estimated = facts.totals()
        by_step = provenance_counts(trajectory, steps)
    for step in trajectory.steps if facts is None else ():
        steps += 1
        tool_calls += len(step.actions)
        shell_commands += sum(map(is_shell, step.actions))
        by_step[prompt_provenance(trajectory, step.index)] += 1
        if step.usage is not None and step.usage.prompt_tokens:
            with_usage += 1
            estimated += step.usage.estimated
    record["usage"] = _usage(with_usage, estimated, steps)
    record["format"] = trajectory.format
    record["steps"] = steps
    record["tool_calls"] = tool_calls
    record["shell_commands"] = shell_commands
    record["steps_by_provenance"] = dict(sorted(by_step.items()))
    record["estimated_usage_steps"] = steps - with_usage + estimated
    agent_cost = trajectory.info.raw.get("agent_cost")
    if isinstance(agent_cost, dict):  # the agent's own total (Claude Code's cost-state)
        record["agent_total_usd"] = agent_cost.get("total_usd")
    if record["compactions"]:
        from .compaction import compaction_problems
        from .losses import compaction_losses  # only a run with compactions reads them

        record["compaction_losses"] = compaction_losses(trajectory.messages)
        record["notes"] = [*record["notes"], *compaction_problems(trajectory.messages)]
    if trajectory.wire_agreement:
        record["wire_agreement"] = {str(step): found for step, found in sorted(trajectory.wire_agreement.items())}
    errors = reconstruction_errors(trajectory)
    if not errors and trajectory.recorded_prompts and not isinstance(trajectory.recorded_prompts, dict):
        record["notes"] = [*record["notes"], f"reconstruction error not computed: {len(trajectory.recorded_prompts):,} "
                           "recorded requests, each built when its step is shown (swedeck prompt PATH --step N)"]
    if errors:
        record["reconstruction_error_tokens"] = {str(step): error for step, error in errors.items()}
        largest = max(errors, key=lambda step: abs(errors[step]))
        if errors[largest]:
            record["reconstruction_error_parts"] = {str(largest): reconstruction_parts(trajectory, largest)}
    unanswered = _before_any_step(trajectory)
    if unanswered:
        record["skipped"] = {**record["skipped"], "tool results before any model response (no step shows them)":
                             unanswered}
    return record


def reconstruction_errors(trajectory: Trajectory) -> dict[int, int]:
    """For each step whose request was recorded: the tokens of the prompt rebuilt from the file's
    messages minus the recorded request's (0: the rebuild is the request, by count)."""
    if not trajectory.recorded_prompts or not isinstance(trajectory.recorded_prompts, dict):
        return {}  # a reader that builds its recorded prompts on demand (Inspect's) is not made to build them all
    from ..tokens import count_messages

    errors = {}
    for number, recorded in sorted(trajectory.recorded_prompts.items()):
        if number > len(trajectory.steps):
            continue
        rebuilt = sendable(trajectory.messages[: trajectory.steps[number - 1].prompt_end])
        errors[number] = count_messages(rebuilt) - count_messages(list(recorded))
    return errors


def reconstruction_parts(trajectory: Trajectory, number: int) -> list[dict[str, Any]]:
    """Where step `number`'s rebuilt prompt and its recorded request differ: the messages of
    each that the other does not hold as they are (by role and words), with their tokens."""
    from ..tokens import count_messages

    rebuilt = sendable(trajectory.messages[: trajectory.steps[number - 1].prompt_end])
    recorded = list(trajectory.recorded_prompts[number])
    mine = Counter((message.role, message.text) for message in rebuilt)
    theirs = Counter((message.role, message.text) for message in recorded)
    parts = []
    for side, messages, other in (("transcript", rebuilt, theirs), ("request", recorded, mine)):
        seen: Counter[tuple[str, str]] = Counter()
        for message in messages:
            key = (message.role, message.text)
            seen[key] += 1
            if seen[key] > other[key]:
                parts.append({"side": side, "role": message.role, "tokens": count_messages([message]),
                              "text": " ".join(message.text.split())[:60]})
    return parts


def _before_any_step(trajectory: Trajectory) -> int:
    """Tool results and observations before the first step (all of them in a run without one):
    kept as messages, shown by no step, so counted. Later ones always answer a step."""
    end = trajectory.steps[0].message_index if trajectory.steps else len(trajectory.messages)
    return sum(1 for index in range(end) if trajectory.messages[index].role == "tool"
               or trajectory.messages[index].message_type == MessageType.OBSERVATION)


def summary_lines(record: dict[str, Any]) -> list[str]:
    """The summary as text: `replay --print`'s header block and the replay fidelity panel."""
    lines = [f"format: {record['format']}   steps: {record['steps']}   tool calls: {record['tool_calls']} "
             f"({record['shell_commands']} shell)"]
    lines.append(f"what the model saw: {record['prompt']}  ("
                 + (", ".join(f"{count} {key}" for key, count in record["steps_by_provenance"].items()) + " steps)"
                    if record["steps_by_provenance"] else "no steps: the run has no model response)"))
    if record["parts"]:
        lines.append("  " + "   ".join(f"{part}: {how}" for part, how in record["parts"].items()))
    lines.append(f"usage: {record['usage']}" + (f"  ({record['estimated_usage_steps']} steps without a recorded "
                                                "count: estimated)" if record["estimated_usage_steps"] else ""))
    if record["compactions"]:
        lines.append(f"compactions: {record['compactions']}")
        from .losses import losses_line

        lines.extend(f"  {losses_line(report)}" for report in record.get("compaction_losses", []))
    if record["branches"]:
        lines.append(f"branches kept beside the main line: {record['branches']}"
                     + (" (b opens one; swedeck replay TARGET from the shell)" if record["branch_list"] else ""))
        lines.extend(f"  {branch['label']}: {branch['target']}" for branch in record["branch_list"])
    if record["units"] > 1:
        lines.append(f"runs in this file: {record['units']} (run {record['unit']} is open; PATH#N opens run N)")
    if record["skipped"]:
        why = record.get("why") or {}
        plain = [f"{kind} x{count}" for kind, count in record["skipped"].items() if kind not in why]
        lines.append("records not shown as messages:" + (" " + ", ".join(plain) if plain else ""))
        lines.extend(f"  {kind} x{count}: {why[kind]}" for kind, count in record["skipped"].items() if kind in why)
    agreement = record.get("wire_agreement")
    if agreement:
        agreeing = [found for found in agreement.values() if found["agrees"]]
        lines.append(f"the agent's own request records against the record of the run: {len(agreeing)} of "
                     f"{len(agreement)} steps agree" + (f" ({', '.join(agreeing[0]['same'])})" if agreeing else ""))
        for step, found in agreement.items():
            if not found["agrees"]:
                lines.append(f"  step {step} differs: " + "; ".join(f"{key}: {why}" for key, why in found["differs"].items()))
    errors = record.get("reconstruction_error_tokens")
    if errors:
        values = sorted(errors.values())
        lines.append(f"reconstruction error (tokens rebuilt from the messages minus the recorded request): "
                     f"median {values[len(values) // 2]:+,}, largest {max(values, key=abs):+,} over {len(values)} steps")
        for step, parts in (record.get("reconstruction_error_parts") or {}).items():
            said = [f"the {part['side']}'s {part['role']} message {part['text']!r} ({part['tokens']:,} tokens)"
                    for part in parts[:6]]
            lines.append(f"  step {step}, where they differ: " + ("; ".join(said) or "the same messages, tokens apart"))
    lines.extend(f"note: {note}" for note in record["notes"])
    return lines
