"""swedeck's live file `.traj.jsonl` (SPEC §9.1): a header line, then one message or `meta`
event per line. A torn last line (the process died mid-write) is skipped with a warning, and
so is a damaged line anywhere else (a disk error, a hand edit): the rest of the file loads,
and the warning names the line and what was wrong with it.
"""

from __future__ import annotations

import mmap
from collections.abc import Mapping
from typing import Any

from ...messages import Message
from ..coerce import mapping
from ..lazy import MessageList, StepList
from ..model import Fidelity, MetaEvent, StepFacts, Trajectory, TrajectoryFormat, TrajectoryInfo
from ..normalize import build_steps
from ..parse import loads
from .common import model_name
from .source import MAX_LINE_BYTES, Source, too_long

FORMAT: TrajectoryFormat = "swedeck-jsonl"
FIDELITY = Fidelity(prompt="recorded", parts={"system prompt": "recorded", "tools": "recorded", "messages": "recorded",
                                              "processors": "recorded"},
                    notes=["swedeck writes every message it sends"])
"""What a file of this format records, where the reader does not say it per file (`fidelity.fidelity_of`)."""
HEADER_FORMAT = "swedeck-traj/1"
BRANCHES = True
"""A record of `swedeck record` opens its side calls (`PATH#side-N`)."""


def accepts(source: Source) -> bool:
    return is_header(source.first_line)


def is_header(record: object) -> bool:
    return isinstance(record, Mapping) and record.get("role") == "meta" and record.get("format") == HEADER_FORMAT


def read(source: Source) -> Trajectory:
    if isinstance(source.content, mmap.mmap):  # a large file: read in windows, each message built when read
        return read_in_windows(source)
    header = source.first_line
    info = header_info(header)
    messages: list[Message] = []
    events: list[MetaEvent] = []
    spans = list(source.line_spans())
    last = spans[-1][0] if spans else 0
    content = source.content
    for number, start, end in spans:
        if number == 1:
            continue
        try:
            if end - start > MAX_LINE_BYTES:
                raise too_long(end - start)
            record = loads(content[start:end])
            if not isinstance(record, Mapping):
                raise ValueError(f"a {type(record).__name__}, not an object")
            if record.get("role") == "meta":
                events.append(meta_event(record, len(messages)))
            else:
                messages.append(Message.from_record(record))
        except ValueError as error:  # pydantic's ValidationError is a ValueError too
            if number == last:
                info.warnings.append(f"line {number} is incomplete (the session was cut off mid-write); skipped")
            else:  # one damaged line costs that line, not the file
                info.warnings.append(f"line {number} is damaged ({_short(error)}); skipped")
            continue
    apply_end(info, events)
    steps = build_steps(messages)
    return as_record(source, Trajectory(path=source.path, format=FORMAT, messages=messages, steps=steps, info=info,
                                        meta_events=events, processors=processors_of(events),
                                        recorded_prompts=recorded_requests(events), facts=step_facts(messages, steps)))


def step_facts(messages: list[Message], steps: StepList) -> StepFacts | None:
    """Each step's facts, from its answer's message (the summary and the cost build no step:
    a file of half a million tiny steps under `MAP_BYTES`)."""
    from .jsonl_windows import Facts

    facts = Facts()
    for start in steps.starts:
        facts.message(messages[start])
    return facts.done()


def read_in_windows(source: Source) -> Trajectory:
    """The file read a window at a time (`jsonl_windows`): the same trajectory, its messages
    built when read (a damaged one is said when its step is shown)."""
    from .jsonl_windows import build_block, read_windows

    info = header_info(source.first_line)
    events: list[MetaEvent] = []
    windows, size, starts, facts = read_windows(source, lambda record, count: events.append(meta_event(record, count)),
                                                info.warnings.append)
    apply_end(info, events)
    messages = MessageList(size, starts, build_block(windows), source.path)
    messages.compactions = windows.compactions
    trajectory = Trajectory(path=source.path, format=FORMAT, messages=messages, steps=StepList(messages, starts),
                            info=info, meta_events=events, processors=processors_of(events),
                            recorded_prompts=recorded_requests(events), facts=facts)
    return as_record(source, trajectory)


def header_info(header: Mapping[str, Any]) -> TrajectoryInfo:
    session = mapping(header.get("session"))
    config = mapping(session.get("config"))
    return TrajectoryInfo(config=dict(config), model_name=session.get("model") or model_name(config),
                          swedeck_version=session.get("swedeck_version"), session=dict(session))


def meta_event(record: Mapping[str, Any], message_count: int) -> MetaEvent:
    data = {key: value for key, value in record.items() if key not in ("role", "event", "message_count")}
    return MetaEvent(event=str(record.get("event", "")), data=data, message_count=message_count)


def as_record(source: Source, trajectory: Trajectory) -> Trajectory:
    """A `swedeck record`'s record (it has `exchange` events): every step recorded, and its side
    calls as branches; `PATH#side-N` opens side call N. Any other swedeck file as it is."""
    events = trajectory.meta_events
    if not any(event.event == "exchange" for event in events):
        if source.branch is not None:
            raise ValueError(f"#{source.branch}: only a record of swedeck record has branches (its side calls, its subagents)")
        return trajectory
    from . import chat
    from .api_requests import record_fidelity, side_call_entries, subagent_entries

    fidelity = record_fidelity(events, str(source.path))
    if source.branch is None:
        trajectory.fidelity = fidelity
        return trajectory
    if source.branch.startswith("subagent-"):
        entries, prompts = subagent_entries(events, source.branch)
        run = Fidelity(prompt="recorded", parts={"system prompt": "recorded", "tools": "recorded",
                                                 "messages": "recorded"},
                       notes=[f"a subagent's run in the record {source.path}"])
        model = next((entry.extra.get("model") for entry in entries if entry.extra.get("model")), None)
        return chat.trajectory(source, trajectory.format, entries,
                               TrajectoryInfo(model_name=model, session=dict(trajectory.info.session)), run,
                               recorded_prompts=prompts)
    entries = side_call_entries(events, source.branch)
    side = Fidelity(prompt="recorded", parts={"system prompt": "recorded", "tools": "recorded", "messages": "recorded"},
                    notes=[f"a call beside the main conversation of the record {source.path}"])
    info = TrajectoryInfo(model_name=entries[-1].extra.get("model"), session=dict(trajectory.info.session))
    return chat.trajectory(source, trajectory.format, entries, info, side,
                           recorded_prompts={1: [entry.build() for entry in entries[:-1]]})


def recorded_requests(events: list[MetaEvent]) -> dict[int, list[Message]]:
    """A `swedeck record`'s steps' prompts: the requests themselves (`api_requests`); none
    for swedeck's own runs, whose messages are what was sent."""
    if not any(event.event == "exchange" for event in events):
        return {}
    from .api_requests import recorded_prompts  # only for a record: kept off the replay's start

    return recorded_prompts(events)


def processors_of(events: list[MetaEvent]) -> dict[str, Any]:
    """Processor config hash -> config, from every event that recorded one (§11.2)."""
    found: dict[str, Any] = {}
    for event in events:
        processors = event.data.get("processors")
        if isinstance(event.data.get("hash"), str) and isinstance(processors, list) \
                and all(isinstance(item, Mapping) for item in processors):
            found[event.data["hash"]] = processors
    return found


def apply_end(info: TrajectoryInfo, events: list[MetaEvent]) -> None:
    """A kept `.jsonl` ends with an `end` event carrying the final info."""
    from .common import model_stats

    for event in events:
        if event.event == "submitted":  # a session killed after its submission, before its end
            info.exit_status = "Submitted"
            info.submission = event.data.get("submission", info.submission)
        if event.event == "end":
            info.exit_status = event.data.get("exit_status", info.exit_status)
            info.submission = event.data.get("submission", info.submission)
            stats = event.data.get("model_stats")
            if isinstance(stats, Mapping):
                info.model_stats = model_stats(stats)


def _short(error: Exception) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text[:200]
