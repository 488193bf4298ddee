"""swedeck's final file `.traj.json` (SPEC §9.2): `{"trajectory_format": "swedeck-1", "info",
"messages", "meta_events"}`. Messages are validated per step, when read (`lazy.MessageList`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...messages import Message
from ..coerce import as_mapping_list, mapping
from ..lazy import MessageList, StepList
from ..model import MetaEvent, Trajectory, TrajectoryFormat
from ..normalize import check_roles, counts_as_step
from ..outline import heads, records_at
from . import swedeck_jsonl
from .common import info_of
from .source import Source
from .swedeck_jsonl import as_record, meta_event, processors_of, recorded_requests

FORMAT: TrajectoryFormat = "swedeck-json"
FIDELITY = swedeck_jsonl.FIDELITY
"""The same as the live file's: swedeck writes every message it sends."""
FINAL_FORMAT = "swedeck-1"
BRANCHES = True
"""A record of `swedeck record` opens its side calls (`PATH#side-N`)."""


def accepts(source: Source) -> bool:
    document = source.document
    return isinstance(document, Mapping) and str(document.get("trajectory_format", "")).startswith("swedeck-")


def read(source: Source) -> Trajectory:
    document = source.document
    raw_info, info = info_of(document)
    session = raw_info.get("session")
    if isinstance(session, Mapping):
        info.session = dict(session)
        info.model_name = info.model_name or session.get("model")
    records = as_mapping_list(records_at(document, "messages"), "`messages`")
    check_roles(records)

    def build(begin: int, end: int) -> list[Message]:
        return [_message(number, records[number]) for number in range(begin, end)]

    starts = [number for number, head in enumerate(heads(records)) if head.get("role") == "assistant" and _is_step(head)]
    messages = MessageList(len(records), starts, build, source.path)
    events = _meta_events(document.get("meta_events"), info.warnings)
    return as_record(source, Trajectory(path=source.path, format=FORMAT, messages=messages,
                                        steps=StepList(messages, starts), info=info, meta_events=events,
                                        processors=processors_of(events), recorded_prompts=recorded_requests(events)))


def _meta_events(raw: Any, warnings: list[str]) -> list[MetaEvent]:
    """The file's meta events; a wrong-typed one is passed over with a warning (it costs
    what it recorded, a processor config or a mode switch, never the file)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        warnings.append(f"`meta_events` is {type(raw).__name__}, not a list; ignored")
        return []
    events = []
    for number, record in enumerate(raw):
        count = record.get("message_count", 0) if isinstance(record, Mapping) else None
        if not isinstance(record, Mapping) or not isinstance(record.get("event", ""), str) \
                or not isinstance(count, int) or isinstance(count, bool):
            warnings.append(f"meta_events[{number}] is not a meta event (wrong types); ignored")
            continue
        events.append(meta_event(record, count))
    return events


def _is_step(record: Mapping[str, Any]) -> bool:
    extra = mapping(record.get("extra"))
    return counts_as_step(str(record.get("role")), extra.get("message_type"), bool(extra.get("is_demo")))


def _message(number: int, record: Mapping[str, Any]) -> Message:
    try:
        return Message.from_record(record)
    except ValueError as error:
        raise ValueError(f"message {number}: {str(error).splitlines()[0]}") from None
