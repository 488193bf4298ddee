"""SWE-agent `.traj`: `history` (the messages), `trajectory` (one record per step: response,
thought, action, observation, state) and `info`.

SWE-agent's own viewers show `trajectory`: its records are the steps. `history` is what
the model was sent, so messages come from it, one per entry, and are matched to the
records by their action (`_aligned`): an attempt SWE-agent requeried (a refused edit, a
blocked command) is a record with no query in `history`; it becomes a step of its own,
marked `requeried`, before the query that replaced it. Where `history` lacks what
`trajectory` has (older files often end before the last observation, the submitted diff,
or before the last step), the record fills it in, marked `extra.from_trajectory`. Without
`history` the messages are rebuilt from `trajectory` alone. A record's `observation` is the
command's own output; `history` has it as the model got it (in the next-step template, with
the open file and the prompt): the first is the observation's `raw_output`, for the output
pane, the second its content, for the prompt.

Older files have no `message_type`: a user entry that follows a query is its observation.
Demonstrations (`is_demo`, with `put_demos_in_history`) are kept as messages, never steps.
SWE-agent's `thought` is part of the content it recorded, so it is not shown twice as
reasoning. `replay_config` and `state` may be JSON strings; every key may be missing.
Messages are built per step, when read (`lazy.MessageList`). Opening the file plans them from
the records' heads (`outline.RawRecords`: each entry's role and type marks, each record's action
and whether it has an observation); a message is built from its whole record when its step is read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple, cast

import msgspec

from ...messages import Message, MessageType
from ..coerce import as_mapping_list, maybe_parsed
from ..lazy import LazySequence, MessageList, StepList
from ..model import Fidelity, Trajectory, TrajectoryFormat
from ..normalize import build_message, check_roles, counts_as_step, foreign_extra
from ..outline import Part, heads, records_at
from .common import info_of, model_name
from .source import Source

FORMAT: TrajectoryFormat = "swe-agent"
FIDELITY = Fidelity(prompt="recorded", parts={"system prompt": "recorded", "tools": "unknown", "messages": "recorded"},
                    notes=["SWE-agent's `history` is what each query sent (its `query` per step)"])
"""What a file of this format records (`fidelity.fidelity_of`)."""

_TYPES = {
    "system_prompt": MessageType.SYSTEM,
    "observation": MessageType.OBSERVATION,
    "action": MessageType.ACTION,
    "thought": MessageType.ASSISTANT_MESSAGE,
    "user": MessageType.USER_MESSAGE,
    "demonstration": MessageType.USER_MESSAGE,
}

Entry = tuple[dict[str, Any], dict[str, Any], MessageType]
"""A message before it is built: its chat fields, its `extra`, its type."""


class _Marks(Part):
    message_type: Any = msgspec.UNSET
    is_demo: Any = msgspec.UNSET
    action: Any = msgspec.UNSET
    actions: Any = msgspec.UNSET


_MARKS = (_Marks, dict)
"""What a history entry's `extra` is when it is an object: a head's, or a record's parsed whole."""


class _HistoryHead(_Marks):
    """What a `history` entry's type depends on (its own keys, and those of its `extra`)."""

    role: Any = msgspec.UNSET
    extra: _Marks | None | msgspec.UnsetType = msgspec.UNSET


class _RecordHead(Part):
    """What matching needs of a `trajectory` record: its action, and whether it has an observation."""

    action: Any = msgspec.UNSET
    observation: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class _Planned(NamedTuple):
    """A message as opening the file plans it: what counting and matching steps need, and where
    its entry comes from when its step is read (`_Records.entry`)."""

    step: bool
    kind: MessageType
    action: str | None
    """A query's command, to match it with its `trajectory` record."""
    make: int | Callable[[], Entry]
    """The index of its `history` entry, or what builds it from `trajectory` (what only that has)."""
    raw_output: int | None = None
    """The `trajectory` record whose observation is its `raw_output` (`history` has it wrapped)."""

    def with_raw_output(self, record: int) -> _Planned:
        return _Planned(self.step, self.kind, self.action, self.make, record)  # `_replace` costs 5x as much


class _Records(NamedTuple):
    """What the file's messages are built from."""

    history: Sequence[Mapping[str, Any]]
    roles: list[str]
    records: Sequence[Mapping[str, Any]]

    def entry(self, planned: _Planned) -> Entry:
        if not isinstance(planned.make, int):
            return planned.make()
        fields, extra, kind = _history_entry(self.history, planned.make, self.roles[planned.make], planned.kind)
        if planned.raw_output is not None:
            observation = self.records[planned.raw_output].get("observation")
            if isinstance(observation, str):
                extra["raw_output"] = observation
        return fields, extra, kind


def accepts(source: Source) -> bool:
    document = source.document
    return isinstance(document, Mapping) and ("history" in document or "trajectory" in document)


def read(source: Source) -> Trajectory:
    document = source.document
    raw_info, info = info_of(document)
    config = maybe_parsed(document.get("replay_config"))
    if isinstance(config, Mapping):
        info.config = dict(config)
        info.model_name = model_name(info.config)
    elif config is not None:
        info.warnings.append("replay_config is neither an object nor a JSON string; ignored")
    records = as_mapping_list(records_at(document, "trajectory", _RecordHead) or [], "`trajectory`")
    history = as_mapping_list(records_at(document, "history", _HistoryHead) or [], "`history`")
    sources = _Records(history, check_roles(history), records)
    planned = _matched(_from_history(history, sources.roles), sources) if history else _from_records(records)
    starts = [i for i, entry in enumerate(planned) if entry.step]

    def build(start: int, end: int) -> list[Message]:
        return [build_message(*sources.entry(planned[i])) for i in range(start, end)]

    messages = MessageList(len(planned), starts, build, source.path)
    states = _States(records)
    return Trajectory(path=source.path, format=FORMAT, messages=messages, steps=StepList(messages, starts, states),
                      info=info)


def _merged(record: Mapping[str, Any], extra: Mapping[str, Any]) -> Callable[[str], Any]:
    """`{**record, **extra}.get`, without the merge: `extra`'s value where it holds the key."""
    return lambda key: extra[key] if key in extra else record.get(key)


def _from_history(history: Sequence[Mapping[str, Any]], roles: list[str]) -> list[_Planned]:
    """Each entry's type from its head (what the type depends on); its entry is built from the
    whole record when its step is read."""
    planned: list[_Planned] = []
    seen_task = after_query = False
    for index, (head, role) in enumerate(zip(heads(history), roles, strict=True)):
        marks = head.get("extra")  # a head's is a `_Marks`, a record's a dict (`isinstance` of an ABC costs 10 % here)
        mark = _merged(head, cast(Mapping[str, Any], marks)) if isinstance(marks, _MARKS) else head.get  # as `foreign_extra` merges them
        recorded = mark("message_type")
        kind = _TYPES.get(str(recorded)) if recorded is not None else None
        demo = bool(mark("is_demo"))
        action: str | None = None
        if demo:
            kind = MessageType.ASSISTANT_MESSAGE if role == "assistant" else MessageType.USER_MESSAGE
        elif role == "system" and kind is None:
            kind = MessageType.SYSTEM
        elif role == "user" and not seen_task and kind in (None, MessageType.OBSERVATION):
            kind, seen_task = MessageType.TASK, True  # the issue: SWE-agent's first observation
        elif role == "assistant":
            command = _command(mark("action"))
            kind = kind or (MessageType.ASSISTANT_MESSAGE if command is None else MessageType.ACTION)
            if mark("actions"):
                action = _first_command(mark("actions"))
            elif command is not None:
                action = command.rstrip("\n")
                kind = MessageType.ACTION if kind == MessageType.ASSISTANT_MESSAGE else kind
        elif kind is None:
            kind = MessageType.OBSERVATION if role == "tool" or after_query else MessageType.USER_MESSAGE
        if not demo:
            after_query = role == "assistant"
        planned.append(_Planned(counts_as_step(role, kind, demo), kind, action, index))
    return planned


def _history_entry(history: Sequence[Mapping[str, Any]], index: int, role: str, kind: MessageType) -> Entry:
    """A `history` entry as a message of the type `_from_history` found."""
    record = history[index]
    extra = foreign_extra(record)
    extra.pop("message_type", None)
    fields = {key: record[key] for key in ("role", "content", "tool_calls", "tool_call_id", "name",
                                            "cache_control") if key in record}
    fields["role"] = role
    ids = extra.pop("tool_call_ids", None)
    if isinstance(ids, list) and ids and fields.get("tool_call_id") is None:
        fields["tool_call_id"] = str(ids[0])
        if len(ids) > 1:
            extra["tool_call_ids"] = ids
    if role == "assistant" and not extra.get("is_demo"):
        action = _command(extra.pop("action", None))
        if action is not None and not extra.get("actions"):
            ids = [call.get("id") for call in record.get("tool_calls") or [] if isinstance(call, Mapping)]
            # as the record it becomes (`MessageExtra` validates it when the step is built)
            extra["actions"] = ({"command": action.rstrip("\n"), "tool_call_id": str(ids[0]) if ids and ids[0] else None},)
    return fields, extra, kind


def _matched(entries: list[_Planned], sources: _Records) -> list[_Planned]:
    """`history` with what only `trajectory` has: a missing observation, missing last steps,
    and the requeried attempts (below)."""
    records = sources.records
    queries = [i for i, entry in enumerate(entries) if entry.step]
    record_heads = heads(records)
    pairs, attempts, used = _aligned(entries, queries, record_heads)
    out = list(entries)
    for number in reversed(range(len(pairs))):
        start, record = queries[number], pairs[number]
        end = queries[number + 1] if number + 1 < len(queries) else len(entries)
        answer = next((i for i in range(start + 1, end) if entries[i].kind is MessageType.OBSERVATION), None)
        if answer is not None:  # history has it wrapped in the next-step template: the record's own is its raw output
            out[answer] = entries[answer].with_raw_output(record)
        elif "observation" in record_heads[record]:
            out.insert(end, _planned_observation(records, record, partial(sources.entry, entries[start])))
        for index in reversed(attempts[number]):
            out[start:start] = _requeried_entries(records, index, record_heads[index])
    for index in range(used, len(records)):
        out += _record_entries(records, index, record_heads[index])
    return out


def _aligned(entries: list[_Planned], queries: list[int],
             records: Sequence[Mapping[str, Any]]) -> tuple[list[int], list[list[int]], int]:
    """Which record is each query's, by content: SWE-agent keeps an attempt it requeried (a
    refused edit, a blocked or malformed command) in `trajectory` but not in `history`, so
    the k-th query is not always the k-th record. A query's record is the next one with its
    action; the records passed over are its requeried attempts. Returns each query's record,
    each query's attempts, and how many records the queries used."""
    pairs: list[int] = []
    attempts: list[list[int]] = []
    position = 0
    actions = [_record_action(record) for record in records]
    for query in queries:
        if position >= len(records):
            break
        action = entries[query].action
        try:
            found = actions.index(action, position) if action is not None else position
        except ValueError:  # nothing to match by: in order, as SWE-agent's viewer does
            found = position
        pairs.append(found)
        attempts.append(list(range(position, found)))
        position = found + 1
    return pairs, attempts, position


def _command(action: Any) -> str | None:
    """A recorded `action` when it is a command: text, not blank (else None)."""
    return action if isinstance(action, str) and action.strip() else None


def _first_command(actions: Any) -> str | None:
    """The first command of a recorded `actions` list."""
    if not isinstance(actions, (list, tuple)):
        return None
    command = actions[0].get("command") if isinstance(actions[0], Mapping) else None
    return None if command is None else str(command).rstrip("\n")


def _record_action(record: Mapping[str, Any]) -> str | None:
    action = record.get("action")
    return action.rstrip("\n") if isinstance(action, str) else None


def _requeried_entries(records: Sequence[Mapping[str, Any]], index: int, head: Mapping[str, Any]) -> list[_Planned]:
    """A requeried attempt as a step of its own: the query, and what SWE-agent told the model
    about it (the last message of the next record's `query`, when recorded; else the record's
    observation). Both are marked `requeried`: they were never in the history, and only the
    next query's prompt had them (`prompt_view.without_requeried`)."""
    query = _planned_query(records, index, head, requeried=True)
    return [query, _Planned(False, MessageType.FORMAT_ERROR, None, partial(_requery_entry, records, index))]


def _requery_entry(records: Sequence[Mapping[str, Any]], index: int) -> Entry:
    said = _requery_message(records[index + 1]) if index + 1 < len(records) else None
    text = said if said is not None else str(records[index].get("observation") or "")
    return {"role": "user", "content": text}, {"from_trajectory": True, "requeried": True}, MessageType.FORMAT_ERROR


def _requery_message(record: Mapping[str, Any]) -> str | None:
    query = record.get("query")
    if isinstance(query, list) and query and isinstance(query[-1], Mapping) and query[-1].get("role") == "user":
        content = query[-1].get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return None


def _from_records(records: Sequence[Mapping[str, Any]]) -> list[_Planned]:
    """Messages rebuilt from `trajectory` alone: one assistant message and one observation per step."""
    record_heads = heads(records)
    return [entry for index in range(len(records)) for entry in _record_entries(records, index, record_heads[index],
                                                                                marked=False)]


def _record_entries(records: Sequence[Mapping[str, Any]], index: int, head: Mapping[str, Any],
                    marked: bool = True) -> list[_Planned]:
    entries = [_planned_query(records, index, head, marked=marked)]
    if "observation" in head:
        entries.append(_planned_observation(records, index, None, marked))
    return entries


def _planned_query(records: Sequence[Mapping[str, Any]], index: int, head: Mapping[str, Any], marked: bool = True,
                   requeried: bool = False) -> _Planned:
    kind = MessageType.ASSISTANT_MESSAGE if _command(head.get("action")) is None else MessageType.ACTION
    return _Planned(True, kind, None, partial(_record_query, records, index, kind, marked, requeried))


def _record_query(records: Sequence[Mapping[str, Any]], index: int, kind: MessageType, marked: bool,
                  requeried: bool) -> Entry:
    record = records[index]
    action = record.get("action")
    response = record.get("response") or record.get("thought") or ""
    extra: dict[str, Any] = {"from_trajectory": True} if marked else {}
    if isinstance(record.get("thought"), str):
        extra["thought"] = record["thought"]
    if kind == MessageType.ACTION:
        extra["actions"] = ({"command": str(action).rstrip("\n")},)
    if requeried:
        extra["requeried"] = True
    return {"role": "assistant", "content": str(response)}, extra, kind


def _planned_observation(records: Sequence[Mapping[str, Any]], index: int, query: Callable[[], Entry] | None,
                         marked: bool = True) -> _Planned:
    return _Planned(False, MessageType.OBSERVATION, None, partial(_observation, records, index, query, marked))


def _observation(records: Sequence[Mapping[str, Any]], index: int, query: Callable[[], Entry] | None,
                 marked: bool = True) -> Entry:
    """A step's observation from its `trajectory` record; a tool result when the query called a tool."""
    record = records[index]
    query_fields = query()[0] if query is not None else {}
    calls = [call for call in query_fields.get("tool_calls") or [] if isinstance(call, Mapping) and call.get("id")]
    fields: dict[str, Any] = {"role": "tool", "tool_call_id": str(calls[0]["id"])} if calls else {"role": "user"}
    fields["content"] = str(record.get("observation") or "")
    return fields, ({"from_trajectory": True} if marked else {}), MessageType.OBSERVATION


class _States(LazySequence[Any]):
    """SWE-agent's `state` per step (open file, working dir), parsed when a step is read."""

    def __init__(self, records: Sequence[Mapping[str, Any]]):
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    def _item(self, index: int) -> Any:
        return maybe_parsed(self._records[index].get("state"))
