"""Any trajectory as ATIF v1.7 (SPEC §16), the Agent Trajectory Interchange Format of Harbor.

One ATIF step per message in ATIF's sense: the system prompt and each user message (the task,
and the person's later words: a follow-up, an interrupt's note, a compaction's summary) are
`system` / `user` steps; each model response is an `agent` step with its tool calls, the
results that answered them (`observation.results`, by `source_call_id`: tool results,
observations, a format error, the submission, the run's end) and its `metrics` where the
provider reported usage. What ATIF has no field for goes under `extra.swedeck`
(exit status, submission, processor changes, approvals, exit codes, the source's fidelity),
and what it cannot hold at all is said in `losses`: printed by `swedeck export`, and in
its `--json`. The text of every message is written as the file has it: nothing is masked
or changed on the way (a secret the source file holds stays; swedeck's own files are
masked when they are written).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..messages import Message, MessageType, content_text
from ..trajectory.fidelity import summary
from ..trajectory.model import Step, Trajectory
from ..trajectory.output import tool_error

ATIF_VERSION = "ATIF-v1.7"


@dataclass
class AtifExport:
    document: dict[str, Any]
    losses: list[str] = field(default_factory=list)
    """What ATIF cannot hold, each kind once with its count: re-read, these are gone or rebuilt."""


def step_range(text: str | None, count: int) -> tuple[int, int]:
    """`A:B` (1-based, inclusive; either side may be left out; negative counts from the end)."""
    if not text:
        return 1, count
    first, colon, last = text.partition(":")
    try:
        start = int(first) if first.strip() else 1
        end = (int(last) if last.strip() else count) if colon else start
    except ValueError:
        raise ValueError(f"--step {text}: give A:B, step numbers (e.g. 3:10, :5, -10:)") from None
    start, end = (count + 1 + n if n < 0 else n for n in (start, end))
    if not 1 <= start <= end <= count:
        raise ValueError(f"--step {text}: the trajectory has steps 1..{count}")
    return start, end


def to_atif(trajectory: Trajectory, steps: tuple[int, int] | None = None) -> AtifExport:
    """The trajectory (or its steps `A..B`, with the messages before its first query) as ATIF."""
    writer = _Writer(trajectory)
    first, last = steps or (1, len(trajectory.steps))
    records = list(writer.records(first, last))
    return AtifExport({**writer.head(), "steps": records, **writer.tail(first, last)}, writer.losses())


def atif_chunks(trajectory: Trajectory, steps: tuple[int, int], losses: list[str]) -> Iterator[bytes]:
    """`to_atif`'s document as the bytes `json_bytes` writes of it, step by step (issue 49: a
    690,000-step rollout's export is never whole in memory): `losses` is filled at the end. A
    text with a lone surrogate (another tool's file may hold one) is written with every
    non-ASCII character of its step escaped, where the whole document was before."""
    writer = _Writer(trajectory)
    first, last = steps
    head = _dumps(writer.head())
    yield _encoded(head[:-2] + ',\n "steps": [')  # the object left open after its last key
    count = 0
    for record in writer.records(first, last):
        yield _encoded(("\n" if not count else ",\n") + "  " + _dumps(record).replace("\n", "\n  "))
        count += 1
    tail = _dumps(writer.tail(first, last))
    yield _encoded(("\n ]," if count else "],") + tail[1:] + "\n")
    losses.extend(writer.losses())


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


def _encoded(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: written as JSON's escapes, which keep it exactly
        return _escaped(text)


def _escaped(text: str) -> bytes:
    """`text` with every character past ASCII as its JSON escape (its JSON strings are where
    they can be: the structure is ASCII)."""
    return "".join(c if ord(c) < 128 else json.dumps(c)[1:-1] for c in text).encode("ascii")


class _Writer:
    def __init__(self, trajectory: Trajectory):
        self.trajectory = trajectory
        self.written = 0
        """ATIF steps written so far (a step's `step_id` is the next)."""
        self.system = False
        """A `system` step is written (a later system message is a `user` one)."""
        self.metrics: list[int] = [0, 0, 0]
        self.metered = 0
        self.cost: float | None = None
        self.lost: Counter[str] = Counter()
        self.placed = 0
        """Messages the written steps make when ATIF's reader (swedeck's) reads them back."""
        self.at: dict[int, int] = {}
        """Each written message's position in the source -> its position when read back (what a
        compaction's `forgotten` and `replaces` name in the file)."""

    def records(self, first: int, last: int) -> Iterator[dict[str, Any]]:
        """The ATIF steps of steps `first..last`, in order, each made when it is reached: a
        step's results are the messages after its answer that answer it (`_is_result`)."""
        messages = self.trajectory.messages
        steps = self.trajectory.steps
        start = steps[first - 1].message_index if steps and first > 1 else 0
        end = len(messages) if not steps or last == len(steps) else steps[last].message_index
        if steps and first > 1:  # the prefix every query was sent: the system prompt and the task
            for index in range(steps[0].message_index):
                yield from self._message(messages[index], index)
            self.lost["steps before the range (left out)"] += first - 1
        if steps and last < len(steps):
            self.lost["steps after the range (left out)"] += len(steps) - last
        number = first - 1 if steps else len(steps)
        owned: set[int] = set()
        for index in range(start, end):
            if number < len(steps) and steps[number].message_index == index:
                step = steps[number]
                number += 1
                owned = {at for at in step.observation_indices if _is_result(messages[at])}
                for at in (index, *(at for at in step.observation_indices if at in owned)):
                    self._place(at)
                yield self._counted(self._agent(step, messages[index], owned))
            elif index not in owned:  # a result is written with the agent step it answers
                yield from self._message(messages[index], index)

    def _counted(self, record: dict[str, Any]) -> dict[str, Any]:
        self.written += 1
        metrics = record.get("metrics")
        if metrics:
            self.metered += 1
            for position, key in enumerate(("prompt_tokens", "completion_tokens", "cached_tokens")):
                self.metrics[position] += metrics[key]
            if "cost_usd" in metrics:
                self.cost = (self.cost or 0) + metrics["cost_usd"]
        return record

    def _place(self, index: int) -> None:
        self.at[index] = self.placed
        self.placed += 1

    def _message(self, message: Message, index: int) -> Iterator[dict[str, Any]]:
        if message.role == "exit":
            return  # the end: the exit status and submission go under extra
        self._place(index)
        if message.role == "assistant":  # not a query's answer: a demonstration the prompt showed the model
            self.lost["assistant messages that answer no query, as demonstrations (written as user steps)"] += 1
            record = self._plain("user", message)
            record.setdefault("extra", {}).setdefault("swedeck", {})["role"] = "assistant"
            yield self._counted(record)
            return
        if message.role == "tool":
            self.lost["tool results that answer no call of a step (written as user steps)"] += 1
        source = "system" if message.role == "system" and not self.system else "user"
        self.system = self.system or source == "system"
        if message.role == "system" and source == "user":
            self.lost["system messages after the first (written as user steps)"] += 1
        yield self._counted(self._plain(source, message))

    def _plain(self, source: str, message: Message) -> dict[str, Any]:
        record: dict[str, Any] = {"step_id": self.written + 1, "source": source, "message": self._text(message)}
        _stamp(record, message)
        extra = _extra(message)
        if message.message_type == MessageType.COMPACTION:
            extra.update(self._compaction(message))
        if extra:
            record["extra"] = {"swedeck": extra}
        return record

    def _compaction(self, message: Message) -> dict[str, Any]:
        """What a compaction marker says beyond its text: its figures, its source, and the messages
        it forgets or replaces, by their positions when the file is read back (so the prompt
        rebuilt from the export is the one the source's rebuild gives: Inspect's trim, issue 62)."""
        fields = message.extra
        kept: dict[str, Any] = {key: getattr(fields, key) for key in ("tokens_before", "tokens_after", "summary",
                                                                     "reason", "model", "edited", "ledger")
                                if getattr(fields, key) is not None}
        if isinstance(fields.unknown.get("compaction_source"), str):
            kept["compaction_source"] = fields.unknown["compaction_source"]
        for key in ("forgotten", "replaces"):
            positions = getattr(fields, key)
            if positions is None:
                continue
            kept[key] = [self.at[index] for index in positions if index in self.at]
            if len(kept[key]) < len(positions):
                self.lost[f"compaction {key} naming messages not written (left out, or after the marker)"] += 1
        if fields.undoes is not None:
            if fields.undoes in self.at:
                kept["undoes"] = self.at[fields.undoes]
            else:
                self.lost["compaction undos of a compaction not written"] += 1
        return kept

    def _agent(self, step: Step, message: Message, owned: set[int]) -> dict[str, Any]:
        record = self._plain("agent", message)
        thought = message.extra.unknown.get("thought")
        if message.extra.reasoning:
            record["reasoning_content"] = message.extra.reasoning
        elif isinstance(thought, str) and thought.strip():  # SWE-agent's thought, where Harbor's converter puts it
            record["reasoning_content"] = thought
        calls, synthesized = self._calls(step, message)
        if calls:
            record["tool_calls"] = calls
        results = [self._result(self.trajectory.messages[index], synthesized) for index in step.observation_indices
                   if index in owned]
        if results:
            record["observation"] = {"results": results}
        usage = step.usage
        if usage is not None and usage.prompt_tokens and not usage.estimated:
            metrics: dict[str, Any] = {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                                       "cached_tokens": usage.cached_tokens}
            if step.cost is not None:
                metrics["cost_usd"] = step.cost
            record["metrics"] = metrics
        elif usage is not None and usage.prompt_tokens:
            record.setdefault("extra", {}).setdefault("swedeck", {})["estimated_usage"] = {
                "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}
        if step.processors:
            processors = self.trajectory.processors.get(step.processors)
            record.setdefault("extra", {}).setdefault("swedeck", {})["processors"] = (
                processors if processors is not None else step.processors)
        if self.trajectory.recorded_prompts and step.index in self.trajectory.recorded_prompts:
            self.lost["recorded prompts (ATIF keeps the conversation: re-read, what the model saw is rebuilt)"] += 1
        return record

    def _calls(self, step: Step, message: Message) -> tuple[list[dict[str, Any]], list[str]]:
        """The step's tool calls, and the ids made for commands the model wrote in its text (as
        mini-swe-agent's protocol has them), which their observations answer in order."""
        calls: list[dict[str, Any]] = []
        for call in message.tool_calls or ():
            try:
                arguments = json.loads(call.function.arguments or "{}")
            except ValueError:
                arguments = None
            if not isinstance(arguments, dict):
                self.lost["tool call arguments that are not a JSON object (kept as text under arguments._raw)"] += 1
                arguments = {"_raw": call.function.arguments}
            record: dict[str, Any] = {"tool_call_id": call.id, "function_name": call.function.name, "arguments": arguments}
            command = next((action.command for action in step.actions if action.tool_call_id == call.id), None)
            if command is not None:  # as the source's agent wrote it (SWE-agent quotes its arguments)
                record["extra"] = {"swedeck": {"command": command}}
            calls.append(record)
        ids: list[str] = []
        if not calls:
            for number, action in enumerate(step.actions, start=1):
                call_id = action.tool_call_id or f"step{step.index}-command{number}"
                calls.append({"tool_call_id": call_id, "function_name": "bash", "arguments": {"command": action.command},
                              "extra": {"swedeck": {"from_text": True}}})
                ids.append(call_id)
            if step.actions:
                self.lost["commands the model wrote in its text (ATIF holds them as tool calls, extra.swedeck.from_text)"] \
                    += len(step.actions)
        return calls, ids

    def _result(self, message: Message, synthesized: list[str]) -> dict[str, Any]:
        """One observation; one of a command from the text takes the next id made for them."""
        result: dict[str, Any] = {"content": self._text(message)}
        call_id = message.tool_call_id
        if call_id is None and synthesized and message.message_type == MessageType.OBSERVATION:
            call_id = synthesized.pop(0)
        if call_id:
            result["source_call_id"] = call_id
        extra = _extra(message)
        error = tool_error(message)
        if error is not None:
            extra["tool_error"] = error
            self.lost["tool errors (ATIF has no field for them: kept under extra.swedeck.tool_error)"] += 1
        if extra:
            result["extra"] = {"swedeck": extra}
        return result

    def _text(self, message: Message) -> str:
        if isinstance(message.content, list) and any(part.get("type") not in (None, "text")
                                                     for part in message.content if isinstance(part, dict)):
            self.lost["content parts that are not text (images, files: their text alone is written)"] += 1
        if message.cache_control or (isinstance(message.content, list) and any(
                isinstance(part, dict) and part.get("cache_control") for part in message.content)):
            self.lost["cache marks on messages (ATIF has no field for them)"] += 1
        return content_text(message.content)

    def head(self) -> dict[str, Any]:
        """The document's keys before its steps."""
        trajectory = self.trajectory
        info = trajectory.info
        agent: dict[str, Any] = {"name": _agent_name(trajectory), "version": str(info.swedeck_version or "unknown")}
        if info.model_name:
            agent["model_name"] = info.model_name
        session_id = str(info.session.get("id") or info.session.get("sessionId") or trajectory.path.name)
        return {"schema_version": ATIF_VERSION, "session_id": session_id, "agent": agent}

    def tail(self, first: int, last: int) -> dict[str, Any]:
        """The document's keys after its steps (once they are all written: their totals)."""
        trajectory = self.trajectory
        info = trajectory.info
        stats = info.model_stats
        final: dict[str, Any] = {"total_steps": self.written}
        if self.metered:
            final |= {"total_prompt_tokens": self.metrics[0], "total_completion_tokens": self.metrics[1],
                      "total_cached_tokens": self.metrics[2]}
            if self.cost is not None:
                final["total_cost_usd"] = self.cost
            elif stats.instance_cost and (first, last) == (1, len(trajectory.steps)):
                final["total_cost_usd"] = stats.instance_cost
        extra: dict[str, Any] = {"source_format": trajectory.format, "source_file": trajectory.path.name,
                                 "fidelity": summary(trajectory)}
        if info.exit_status is not None:
            extra["exit_status"] = info.exit_status
        if info.submission is not None:
            extra["submission"] = info.submission  # byte for byte: JSON keeps every character
        if (first, last) != (1, len(trajectory.steps)):
            extra["steps"] = [first, last]
        if trajectory.meta_events:
            extra["meta_events"] = [{"event": e.event, "message_count": e.message_count, **e.data}
                                    for e in trajectory.meta_events]
        return {"final_metrics": final, "extra": {"swedeck": extra}}

    def losses(self) -> list[str]:
        return [f"{what}: {count}" for what, count in self.lost.items()]


def _agent_name(trajectory: Trajectory) -> str:
    if trajectory.format.startswith("swedeck"):
        return "swedeck"
    named = trajectory.info.session.get("agent")
    return str(named) if named else trajectory.format


_PERSON = (MessageType.USER_MESSAGE, MessageType.TASK, MessageType.INTERRUPT, MessageType.COMPACTION)
"""What the person said (or what replaced the history) after a step: a `user` step of its own,
as Harbor writes a later user turn, never a result of the step before it."""


def _is_result(message: Message) -> bool:
    """A message that answers the step's query as one of its `observation.results`: a tool's
    result (a rejection's comment included: it answers the call), an observation, a format
    error, the submission, the run's end; not the person's own later words."""
    return message.role in ("tool", "exit") or message.message_type not in _PERSON


def _stamp(record: dict[str, Any], message: Message) -> None:
    if message.extra.timestamp is not None:
        try:
            stamp = datetime.fromtimestamp(message.extra.timestamp, UTC)
        except (OverflowError, OSError, ValueError):
            return
        record["timestamp"] = stamp.isoformat().replace("+00:00", "Z")


_KEPT = ("returncode", "duration_s", "approval", "raw_output", "output_truncated", "timed_out", "command",
         "finish_reason", "mode")


def _extra(message: Message) -> dict[str, Any]:
    """What swedeck knows of a message that ATIF has no field for."""
    extra: dict[str, Any] = {}
    kind = message.message_type
    if kind not in (MessageType.SYSTEM, MessageType.TASK, MessageType.ACTION, MessageType.OBSERVATION,
                    MessageType.ASSISTANT_MESSAGE):
        extra["message_type"] = kind.value
    if kind == MessageType.EXIT and isinstance(message.extra.unknown.get("exit_status"), str):
        extra["exit_status"] = message.extra.unknown["exit_status"]
    for key in _KEPT:
        value = getattr(message.extra, key, None)
        if value is not None:
            if key == "raw_output" and value == content_text(message.content):
                continue
            extra[key] = value
    return extra
