"""Inspect AI eval logs: the `.eval` zip (`header.json`, `samples/<id>_epoch_<n>.json`) and
the `.json` log (`{"version", "eval", "samples": [...]}`). A log holds several samples: one
opens (`PATH#N` for sample N; the fidelity panel says how many there are).

A sample's `messages` are its conversation; each assistant message is one step. Its
`events` hold every `model` event with the exact `input` the model was sent (newer logs
store it as `input_refs`, ranges into the sample's `events_data.messages` pool), the tools
offered and the output with the provider's `usage`: a step whose model event is found (by
the output message's id) shows that input as what the model saw, labelled `recorded`.
Large strings may be stored once in the sample's `attachments` (`attachment://<hash>`);
they are put back. `tool` events repeat the tool messages; other events (spans, state,
store, scoring) are counted. Scores become the exit status (`scored: includes=C`). Usage:
Inspect's `input_tokens` leaves out cache reads and writes, so the prompt is their sum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ...messages import Message, MessageType
from ...startup.read_ahead import inspect_samples, is_sample
from ...zip_members import BadZip, Directory
from ..coerce import listed, mapping, optional_str
from ..lazy import OnDemand
from ..model import Fidelity, Trajectory, TrajectoryFormat, TrajectoryInfo
from ..outline import Outline, Part, RawRecords, heads, outline, records_at
from ..parse import loads
from . import chat
from .source import Source

FORMAT: TrajectoryFormat = "inspect"
_ATTACHMENT = "attachment://"


def accepts(source: Source) -> bool:
    if source.data:
        try:
            return "header.json" in _archive(source)
        except BadZip:
            return False
    if source.folder:
        return False
    document = source.document
    return isinstance(document, Mapping) and isinstance(document.get("eval"), Mapping) and "version" in document


def _archive(source: Source) -> Directory:
    """The zip's directory, read once for the source (`accepts` and `read` share it: a directory
    of 900,000 members takes a second to read), keeping the header's and the samples' entries."""
    archive = source.__dict__.get("_archive")
    if archive is None:
        archive = source.__dict__["_archive"] = Directory(source.data, _kept)
    return archive


def _kept(name: str) -> bool:
    return name == "header.json" or is_sample(name)


def sniff(name: str, head: bytes, text: str) -> bool:
    """A `.eval` zip, or a `.json` log whose first bytes have `eval` and `version` (a folder's listing)."""
    if name.endswith(".eval"):
        return head.startswith(b"PK\x03\x04")
    return name.endswith(".json") and b'"eval"' in head[:4096] and b'"version"' in head[:4096]


def _samples(source: Source) -> tuple[Mapping[str, Any], int, Any]:
    """The log's header, how many samples it holds, and sample `source.unit` (parsed). A `.eval`
    lists its samples from the zip's directory and decompresses only the header and that sample."""
    if source.data:
        archive = _archive(source)
        header = loads(_member(archive, "header.json"))
        names = inspect_samples(archive.names)
        sample = outline(_ahead(source, names[source.unit - 1]) or _member(archive, names[source.unit - 1])) \
            if 1 <= source.unit <= len(names) else None
        return header, len(names), sample
    document = source.document
    samples = records_at(document, "samples", _Nothing)
    if not isinstance(samples, _SAMPLES):  # not a list: no samples, as a field of the wrong type reads
        samples = []
    if not 1 <= source.unit <= len(samples):
        return document, len(samples), None
    return document, len(samples), samples.outline(source.unit - 1) if isinstance(samples, RawRecords) \
        else samples[source.unit - 1]


_SAMPLES = (list, RawRecords)


class _Nothing(Part):
    """No part of a record is needed up front (the samples of a `.json` log, the message pool)."""


class _EventHead(Part):
    """What the reader needs of every event up front: a model event's output (its message's id,
    its usage), model and input ranges, a compaction's figures. A model event's `input` (the
    whole history, in logs without `input_refs`) is parsed only when its step's prompt is shown."""

    event: Any = msgspec.UNSET
    type: Any = msgspec.UNSET
    model: Any = msgspec.UNSET
    output: _OutputHead | None | msgspec.UnsetType = msgspec.UNSET
    input_refs: Any = msgspec.UNSET
    tokens_before: Any = msgspec.UNSET
    tokens_after: Any = msgspec.UNSET


class _OutputHead(Part):
    """Of a model event's output, its usage and its message's id (the message is the sample's)."""

    choices: list[_ChoiceHead] | None | msgspec.UnsetType = msgspec.UNSET
    usage: Any = msgspec.UNSET


class _ChoiceHead(Part):
    message: _IdHead | None | msgspec.UnsetType = msgspec.UNSET


class _IdHead(Part):
    id: Any = msgspec.UNSET


def _member(archive: Directory, name: str) -> bytearray:
    """A member's bytes, decompressed to at most `MAX_MEMBER_BYTES` whatever its entry claims."""
    try:
        return archive.read(name)
    except KeyError:
        raise ValueError(f"no member {name}") from None


def _ahead(source: Source, name: str) -> bytes | bytearray | None:
    """Member `name` as the replay's read-ahead decompressed it while the UI imported (the
    first sample's, when the zip is still the one it read), else None."""
    return source.ahead(name) if source.ahead is not None else None


def read(source: Source) -> Trajectory:
    header, count, sample_record = _samples(source)
    evaluation = mapping(header.get("eval"))
    info = TrajectoryInfo(model_name=optional_str(evaluation.get("model")),
                          config={"eval": {key: evaluation.get(key) for key in ("task", "model", "model_generate_config",
                                                                                "task_args", "dataset")}})
    info.session = {"task": evaluation.get("task"), "eval_id": evaluation.get("eval_id"), "status": header.get("status")}
    fidelity = Fidelity(prompt="recorded", parts={"system prompt": "recorded", "tools": "recorded",
                                                  "messages": "recorded"}, units=count)
    if not count:
        raise ValueError("the log has no samples (a header-only log: nothing ran, or it was written without samples)")
    if source.unit > count:
        raise ValueError(f"#{source.unit}: the log has {count} samples")
    sample = mapping(sample_record)
    attachments = mapping(sample.get("attachments"))
    info.session.update({"sample": sample.get("id"), "epoch": sample.get("epoch")})
    used = mapping(sample.get("model_usage"))
    if used:  # the sample's own count of every model call in it (its scorer's too): what its cost reconciles with
        counts = [mapping(usage) for usage in used.values()]
        info.raw["agent_usage"] = {"source": "Inspect's model_usage", "prompt_tokens": sum(
            chat.count(usage.get(key)) for usage in counts
            for key in ("input_tokens", "input_tokens_cache_read", "input_tokens_cache_write")),
            "completion_tokens": sum(chat.count(usage.get("output_tokens")) for usage in counts)}
    scores = mapping(sample.get("scores"))
    if scores:
        info.raw["scores"] = dict(scores)
        info.exit_status = "scored: " + ", ".join(f"{name}={mapping(score).get('value')}" for name, score in scores.items())
    if sample.get("error"):
        info.exit_status = "error: " + str(mapping(sample["error"]).get("message") or sample["error"])[:200]
    tally = chat.Tally()
    events_data = sample.outline_at("events_data") if isinstance(sample, Outline) else sample.get("events_data")
    pool = records_at(mapping(events_data), "messages", _Nothing) or []
    events = records_at(sample, "events", _EventHead) or []
    by_output: dict[str, tuple[int, Mapping[str, Any]]] = {}
    """Each model event by its output message's id, with its position in `events` (what its
    step's prompt is read from)."""
    summaries: list[Mapping[str, Any]] = []
    """The `summary` compaction events, in order: each has its summary message in `messages`."""
    compacted_before: dict[str, list[Mapping[str, Any]]] = {}
    """The trim and edit compactions (no message of their own), by the output id of the next model call."""
    pending: list[Mapping[str, Any]] = []
    for position, event in enumerate(heads(events) if isinstance(events, list | RawRecords) else []):
        event = mapping(event)
        kind = event.get("event")
        if kind == "model":
            message = _output_message(event, attachments)
            if message.get("id"):
                by_output[str(message["id"])] = position, event
                if pending:
                    compacted_before.setdefault(str(message["id"]), []).extend(pending)
                    pending = []
            else:
                tally.skip("model event without an output message id")
        elif kind == "compaction":
            (summaries if event.get("type", "summary") == "summary" else pending).append(event)
        elif kind != "tool":  # tool events repeat the tool messages
            tally.skip(f"event/{kind}")
    entries: list[chat.Entry] = []
    found: dict[int, int] = {}
    recorded = _prompts(pool, attachments, events, found)
    step = 0
    messages = records_at(sample, "messages", _MessageHead) or []
    later = isinstance(messages, RawRecords)  # each message read whole when its step is shown
    firsts = _Firsts()
    for index, head in enumerate(heads(messages) if isinstance(messages, list | RawRecords) else []):
        head = mapping(head) if later else _resolved(mapping(head), attachments)
        role = head.get("role")
        if role == "user" and mapping(head.get("metadata")).get("summary"):
            message = _resolved(mapping(messages[index]), attachments) if later else head
            event = summaries.pop(0) if summaries else {}
            marker = _compaction(event, entries, _content(message.get("content"))[0])
            if head.get("id"):
                marker.extra["inspect_id"] = head.get("id")  # a later trim may drop the summary itself
            entries.append(marker)
            continue
        trims = compacted_before.pop(str(head.get("id")), []) if role == "assistant" else []
        sent = _sent(by_output.get(str(head.get("id"))), events, pool) if trims else None
        for event in trims:
            entries.append(_compaction(event, entries, "", sent))
        first = firsts.first(role)
        entry = _planned(head, messages, index, attachments, first) if later else _entry(head, first)
        entries.append(entry)
        if not entry.is_step:
            continue
        step += 1
        found_event = by_output.pop(str(head.get("id")), None)
        if found_event is None:
            continue
        found[step], event = found_event
        entry.extra.update(_usage_of(event))
        entry.extra["model"] = optional_str(event.get("model"))
    if by_output:
        tally.counts["model call outside the sample's messages (a scorer, a sub-agent)"] += len(by_output)
    missing = step - len(recorded)
    if missing:
        fidelity.notes.append(f"{missing} steps have no model event: their prompt is rebuilt from the conversation")
    tally.said(fidelity)
    return chat.trajectory(source, FORMAT, entries, info, fidelity,
                           provenance=lambda number: "recorded" if number in recorded else "reconstructed",
                           recorded_prompts=recorded)


def _compaction(event: Mapping[str, Any], entries: list[chat.Entry], summary: str,
                sent: set[str] | None = None) -> chat.Entry:
    """A `CompactionEvent` as the step model's compaction. A summary (`CompactionSummary`)
    replaces the conversation after the sample's input (its system and user messages before the
    first response) with its summary message, as Inspect sends it; a trim or an edit has no
    message: its marker says what happened, and forgets the messages the next model call was
    not sent (`sent`: the ids of its recorded input), itself too (Inspect sent no such message),
    so the prompt rebuilt from the conversation (an export's, re-read) is the one Inspect sent."""
    kind = str(event.get("type") or "summary")
    before, after = event.get("tokens_before"), event.get("tokens_after")
    marker = chat.compaction(summary or f"(Inspect's {kind} compaction: the conversation was {kind}med)"
                             if kind == "trim" else summary or f"(Inspect's {kind} compaction)",
                             before=before if isinstance(before, int) else None,
                             after=after if isinstance(after, int) else None,
                             source=f"inspect {kind}")
    if kind == "summary":
        first = next((i for i, entry in enumerate(entries) if entry.role == "assistant"), len(entries))
        marker.extra["forgotten"] = list(range(first, len(entries)))
    elif sent is not None:
        marker.extra["forgotten"] = [i for i, entry in enumerate(entries) if entry.extra.get("inspect_id")
                                     and str(entry.extra["inspect_id"]) not in sent] + [len(entries)]
    return marker


def _sent(found: tuple[int, Mapping[str, Any]] | None, events: Sequence[Any], pool: Sequence[Any]) -> set[str] | None:
    """The ids of the messages a model event was sent (`found`: its position among the events), read
    whole; None without one."""
    if found is None:
        return None
    return {str(mapping(item).get("id")) for item in _input(mapping(events[found[0]]), pool) if mapping(item).get("id")}


def _prompts(pool: Sequence[Any], attachments: Mapping[str, Any], events: Sequence[Any],
             found: dict[int, int]) -> OnDemand[list[Message]]:
    """Step number -> the input its model event records (`found`: step -> the position of its
    model event, filled as the steps are read), built when read: each input repeats the whole
    history, so building all of them at load, or keeping all that were read, would cost the
    square of it. The last few built are kept, for the step on screen."""

    def build(number: int) -> list[Message]:
        firsts = _Firsts()
        entries: list[chat.Entry] = []
        for item in _input(mapping(events[found[number]]), pool):  # `events`: each read whole here
            message = _resolved(mapping(item), attachments)
            entries.append(_entry(message, firsts.first(message.get("role"))))
        return [entry.build() for entry in entries]

    return OnDemand(found, build, keep=4)


def _output_message(event: Mapping[str, Any], attachments: Mapping[str, Any]) -> Mapping[str, Any]:
    choices = listed(mapping(event.get("output")).get("choices"))  # a field of the wrong type reads as missing
    return mapping(_resolved(mapping(mapping(choices[0]).get("message")), attachments)) if choices else {}


def _input(event: Mapping[str, Any], pool: Sequence[Any]) -> list[Any]:
    """The event's input: with `input_refs` (even an empty list), the pool's ranges
    (`[start, end)`), as Inspect's own reader expands them; else its `input`."""
    refs = event.get("input_refs")
    if not isinstance(refs, list):
        return list(event.get("input") or [])
    messages: list[Any] = []
    for span in refs:
        if isinstance(span, list) and len(span) == 2 and all(isinstance(n, int) for n in span):
            messages.extend(pool[span[0]:span[1]])
    return messages


def _usage_of(event: Mapping[str, Any]) -> dict[str, Any]:
    usage = mapping(mapping(event.get("output")).get("usage"))
    if not usage:
        return {}
    # each figure a count or 0 before they are added (a string or a list there reads as missing, as elsewhere)
    read, written = chat.count(usage.get("input_tokens_cache_read")), chat.count(usage.get("input_tokens_cache_write"))
    recorded = chat.usage(chat.count(usage.get("input_tokens")) + read + written, usage.get("output_tokens"), read, written,
                          usage.get("reasoning_tokens"))
    return {"usage": recorded} if recorded else {}


def _resolved(value: Any, attachments: Mapping[str, Any]) -> Any:
    """`value` with every `attachment://<hash>` string replaced by the text it stands for."""
    if not attachments:  # nothing to put back: no walk over every message
        return value
    if isinstance(value, str):
        if value.startswith(_ATTACHMENT):
            return attachments.get(value[len(_ATTACHMENT):], value)
        return value
    if isinstance(value, Mapping):
        return {key: _resolved(item, attachments) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolved(item, attachments) for item in value]
    return value


def _content(content: Any) -> tuple[str, str | None]:
    """(text, reasoning) of an Inspect content field."""
    if not isinstance(content, list):
        return chat.text_of(content), None
    texts, reasoning = [], []
    for part in content:
        part = mapping(part)
        if part.get("type") == "reasoning":
            reasoning.append(str(part.get("reasoning") or part.get("summary") or ("[redacted]" if part.get("redacted") else "")))
        elif part.get("type") == "text":
            texts.append(str(part.get("text") or ""))
        else:
            texts.append(f"[{part.get('type')}]")
    return "\n".join(texts), "\n".join(reasoning) or None


def _entry(message: Mapping[str, Any], first: bool) -> chat.Entry:
    """A message's entry; `first`: no system message (for one), or no task (for a user's), before it."""
    role = message.get("role")
    text, reasoning = _content(message.get("content"))
    extra: dict[str, Any] = {"inspect_id": message.get("id")} if message.get("id") else {}
    if role == "assistant":
        calls = [chat.call(str(call.get("id") or ""), str(call.get("function") or ""), call.get("arguments") or {})
                 for call in (mapping(item) for item in listed(message.get("tool_calls")))]
        return chat.assistant(text, calls, reasoning=reasoning, **extra)
    if role == "tool":
        error = mapping(message.get("error"))
        if error:
            extra["tool_error"] = {"type": optional_str(error.get("type")), "message": optional_str(error.get("message"))}
            text = text or str(error.get("message") or "")
        extra["raw_output"] = text
        return chat.Entry("tool", text, MessageType.OBSERVATION, extra, tool_call_id=optional_str(message.get("tool_call_id")),
                          name=optional_str(message.get("function")))
    if role == "system":
        return chat.Entry("system", text, MessageType.SYSTEM if first else MessageType.USER_MESSAGE, extra)
    return chat.Entry("user", text, MessageType.TASK if first else MessageType.USER_MESSAGE, extra)


class _Firsts:
    """Whether a system message, and a task, came yet (what `_entry`'s `first` says)."""

    def __init__(self) -> None:
        self.system = self.task = False

    def first(self, role: Any) -> bool:
        """For a message of `role`, next in order: is it the first of its kind? (Counted.)"""
        if role == "system":
            first, self.system = not self.system, True
            return first
        if role in ("assistant", "tool"):
            return False
        first, self.task = not self.task, True
        return first


class _MessageHead(Part):
    """What the plan needs of a sample's message (issue 49): the rest is read when its step is shown."""

    role: Any = msgspec.UNSET
    id: Any = msgspec.UNSET
    metadata: _Metadata | None | msgspec.UnsetType = msgspec.UNSET
    tool_calls: list[_Nothing] | None | msgspec.UnsetType = msgspec.UNSET


class _Metadata(Part):
    summary: Any = msgspec.UNSET


class _Later(chat.Later):
    """Message `index` of the sample, read whole when its entry is built."""

    messages: Any = None
    index: int = 0
    attachments: Any = None
    first: bool = False

    def make(self) -> chat.Entry:
        return _entry(_resolved(mapping(self.messages[self.index]), self.attachments), self.first)


def _planned(head: Mapping[str, Any], messages: Sequence[Any], index: int, attachments: Mapping[str, Any],
             first: bool) -> chat.Entry:
    """The entry of a message known by its head: its role, type and id now (as `_entry` gives them)."""
    role = head.get("role")
    extra: dict[str, Any] = {"inspect_id": head.get("id")} if head.get("id") else {}
    if role == "assistant":
        kind = MessageType.ACTION if listed(head.get("tool_calls")) else MessageType.ASSISTANT_MESSAGE
    elif role == "tool":
        kind = MessageType.OBSERVATION
    elif role == "system":
        kind = MessageType.SYSTEM if first else MessageType.USER_MESSAGE
    else:
        role, kind = "user", MessageType.TASK if first else MessageType.USER_MESSAGE
    return _Later(str(role), "", kind, extra, messages=messages, index=index, attachments=attachments, first=first)
