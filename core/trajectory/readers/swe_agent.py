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
Messages are built per step, when read (`lazy.MessageList`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...messages import Message, MessageType
from ..lazy import LazySequence, MessageList, StepList
from ..model import Trajectory, TrajectoryFormat
from ..normalize import as_mapping_list, build_message, check_roles, counts_as_step, foreign_extra
from .common import info_of, maybe_parsed, model_name
from .source import Source

FORMAT: TrajectoryFormat = "swe-agent"

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
    records = as_mapping_list(document.get("trajectory") or [], "`trajectory`")
    history = as_mapping_list(document.get("history") or [], "`history`")
    entries = _matched(_from_history(history, check_roles(history)), records) if history else _from_records(records)
    starts = [i for i, (fields, extra, kind) in enumerate(entries)
              if counts_as_step(fields["role"], kind, bool(extra.get("is_demo")))]

    def build(start: int, end: int) -> list[Message]:
        return [build_message(*entries[i]) for i in range(start, end)]

    messages = MessageList(len(entries), starts, build, source.path)
    states = _States(records)
    return Trajectory(path=source.path, format=FORMAT, messages=messages, steps=StepList(messages, starts, states),
                      info=info)


def _from_history(history: Sequence[Mapping[str, Any]], roles: list[str]) -> list[Entry]:
    entries: list[Entry] = []
    seen_task = after_query = False
    for record, role in zip(history, roles, strict=True):
        extra = foreign_extra(record)
        recorded = extra.pop("message_type", None)
        kind = _TYPES.get(str(recorded)) if recorded is not None else None
        fields = {key: record[key] for key in ("role", "content", "tool_calls", "tool_call_id", "name",
                                                "cache_control") if key in record}
        fields["role"] = role
        ids = extra.pop("tool_call_ids", None)
        if isinstance(ids, list) and ids and fields.get("tool_call_id") is None:
            fields["tool_call_id"] = str(ids[0])
            if len(ids) > 1:
                extra["tool_call_ids"] = ids
        if extra.get("is_demo"):
            kind = MessageType.ASSISTANT_MESSAGE if role == "assistant" else MessageType.USER_MESSAGE
        elif role == "system" and kind is None:
            kind = MessageType.SYSTEM
        elif role == "user" and not seen_task and kind in (None, MessageType.OBSERVATION):
            kind, seen_task = MessageType.TASK, True  # the issue: SWE-agent's first observation
        elif role == "assistant":
            action = extra.pop("action", None)
            has_action = isinstance(action, str) and bool(action.strip())
            kind = kind or (MessageType.ACTION if has_action else MessageType.ASSISTANT_MESSAGE)
            if has_action and not extra.get("actions"):
                ids = [call.get("id") for call in record.get("tool_calls") or [] if isinstance(call, Mapping)]
                # as the record it becomes (`MessageExtra` validates it when the step is built)
                extra["actions"] = ({"command": action.rstrip("\n"), "tool_call_id": str(ids[0]) if ids and ids[0] else None},)
                kind = MessageType.ACTION if kind == MessageType.ASSISTANT_MESSAGE else kind
        elif kind is None:
            kind = MessageType.OBSERVATION if role == "tool" or after_query else MessageType.USER_MESSAGE
        if not extra.get("is_demo"):
            after_query = role == "assistant"
        entries.append((fields, extra, kind))
    return entries


def _matched(entries: list[Entry], records: Sequence[Mapping[str, Any]]) -> list[Entry]:
    """`history` with what only `trajectory` has: a missing observation, missing last steps,
    and the requeried attempts (below)."""
    queries = [i for i, (fields, extra, kind) in enumerate(entries)
               if counts_as_step(fields["role"], kind, bool(extra.get("is_demo")))]
    pairs, attempts, used = _aligned(entries, queries, records)
    out = list(entries)
    for number in reversed(range(len(pairs))):
        start, record = queries[number], records[pairs[number]]
        end = queries[number + 1] if number + 1 < len(queries) else len(entries)
        answers = [i for i in range(start + 1, end) if entries[i][2] == MessageType.OBSERVATION]
        output = record.get("observation")
        if answers and isinstance(output, str):
            entries[answers[0]][1]["raw_output"] = output  # history has it wrapped in the next-step template
        elif not answers and "observation" in record:
            out.insert(end, _observation(record, entries[start][0]))
        for index in reversed(attempts[number]):
            out[start:start] = _requeried_entries(records, index)
    for record in records[used:]:
        out += _record_entries(record)
    return out


def _aligned(entries: list[Entry], queries: list[int],
             records: Sequence[Mapping[str, Any]]) -> tuple[list[int], list[list[int]], int]:
    """Which record is each query's, by content: SWE-agent keeps an attempt it requeried (a
    refused edit, a blocked or malformed command) in `trajectory` but not in `history`, so
    the k-th query is not always the k-th record. A query's record is the next one with its
    action; the records passed over are its requeried attempts. Returns each query's record,
    each query's attempts, and how many records the queries used."""
    pairs: list[int] = []
    attempts: list[list[int]] = []
    position = 0
    for query in queries:
        if position >= len(records):
            break
        action = _action_of(entries[query])
        found = next((j for j in range(position, len(records))
                      if action is not None and _record_action(records[j]) == action), None)
        if found is None:  # nothing to match by: in order, as SWE-agent's viewer does
            found = position
        pairs.append(found)
        attempts.append(list(range(position, found)))
        position = found + 1
    return pairs, attempts, position


def _action_of(entry: Entry) -> str | None:
    actions = entry[1].get("actions")
    if not actions or not isinstance(actions, (list, tuple)):
        return None
    first = actions[0]  # a record: this reader's own, or the file's
    command = first.get("command") if isinstance(first, Mapping) else None
    return None if command is None else str(command).rstrip("\n")


def _record_action(record: Mapping[str, Any]) -> str | None:
    action = record.get("action")
    return action.rstrip("\n") if isinstance(action, str) else None


def _requeried_entries(records: Sequence[Mapping[str, Any]], index: int) -> list[Entry]:
    """A requeried attempt as a step of its own: the query, and what SWE-agent told the model
    about it (the last message of the next record's `query`, when recorded; else the record's
    observation). Both are marked `requeried`: they were never in the history, and only the
    next query's prompt had them (`prompt_view.without_requeried`)."""
    (query, extra, kind), *_ = _record_entries(records[index])
    extra["requeried"] = True
    said = _requery_message(records[index + 1]) if index + 1 < len(records) else None
    text = said if said is not None else str(records[index].get("observation") or "")
    return [(query, extra, kind),
            ({"role": "user", "content": text}, {"from_trajectory": True, "requeried": True}, MessageType.FORMAT_ERROR)]


def _requery_message(record: Mapping[str, Any]) -> str | None:
    query = record.get("query")
    if isinstance(query, list) and query and isinstance(query[-1], Mapping) and query[-1].get("role") == "user":
        content = query[-1].get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return None


def _from_records(records: Sequence[Mapping[str, Any]]) -> list[Entry]:
    """Messages rebuilt from `trajectory` alone: one assistant message and one observation per step."""
    return [entry for record in records for entry in _record_entries(record, marked=False)]


def _record_entries(record: Mapping[str, Any], marked: bool = True) -> list[Entry]:
    action = record.get("action")
    response = record.get("response") or record.get("thought") or ""
    extra: dict[str, Any] = {"from_trajectory": True} if marked else {}
    if isinstance(record.get("thought"), str):
        extra["thought"] = record["thought"]
    if isinstance(action, str) and action.strip():
        extra["actions"] = ({"command": action.rstrip("\n")},)
    entries: list[Entry] = [({"role": "assistant", "content": str(response)}, extra,
                             MessageType.ACTION if "actions" in extra else MessageType.ASSISTANT_MESSAGE)]
    if "observation" in record:
        entries.append(_observation(record, {}, marked))
    return entries


def _observation(record: Mapping[str, Any], query: Mapping[str, Any], marked: bool = True) -> Entry:
    """A step's observation from its `trajectory` record; a tool result when the query called a tool."""
    calls = [call for call in query.get("tool_calls") or [] if isinstance(call, Mapping) and call.get("id")]
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
