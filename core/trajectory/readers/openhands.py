"""OpenHands runs: the v0 event stream (a JSON list of events, as exported from the UI or
`trajectory.json`), an evaluation's `output.jsonl` (one instance per line, its events in
`history`), and the v1 SDK's event folder (`events/event-NNNNN-<id>.json`, one event a file,
or such events in one JSON list).

v0: an event is an `action` (from the agent or the user) or an `observation` (its `cause`
is the action's id). The agent's actions carry `tool_call_metadata`: the tool call's id and
name and the model's whole response (`model_response`, with the provider's `usage`); the
actions of one response (same response id) are one step. `system` is the system prompt
(with its tools), `message` is text, `condensation` a compaction marker (its
`forgotten_event_ids` or id range are dropped from later prompts). State changes, recalls
and null observations are counted, not shown.

v1: `SystemPromptEvent`, `MessageEvent` (`llm_message`), `ActionEvent` (`thought`,
`tool_call`; grouped into a step by `llm_response_id`), `ObservationEvent`,
`AgentErrorEvent` and `UserRejectObservation` (they answer a call by `tool_call_id`), and
`Condensation`. The v1 events record no usage: it is estimated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgspec

from ...messages import MessageType
from ...startup.read_ahead import MAX_FILE_BYTES
from ..coerce import mapping, optional_str
from ..files import read_in_folder
from ..model import Fidelity, Trajectory, TrajectoryFormat, TrajectoryInfo
from ..outline import Part, RawList, heads
from ..parse import loads
from . import chat
from .source import Source, sniff_lines

FORMAT: TrajectoryFormat = "openhands"
_V1_KINDS = ("SystemPromptEvent", "MessageEvent", "ActionEvent", "ObservationEvent", "AgentErrorEvent",
             "UserRejectObservation", "Condensation", "CondensationRequest", "ConversationStateUpdateEvent",
             "PauseEvent", "CondensationSummaryEvent")
_V0_HIDDEN = ("agent_state_changed", "recall", "null", "change_agent_state")


def _event_folder(source: Source) -> Any:
    if not source.folder:
        return None
    folder = source.path / "events" if (source.path / "events").is_dir() else source.path
    files = sorted(folder.glob("event-*.json"))
    return files or None


def _is_v0(event: Any) -> bool:
    return isinstance(event, Mapping) and "id" in event and ("action" in event or "observation" in event)


def _is_v1(event: Any) -> bool:
    return isinstance(event, Mapping) and event.get("kind") in _V1_KINDS


def accepts(source: Source) -> bool:
    if source.folder:
        return _event_folder(source) is not None
    if source.data:
        return False
    first = source.first_line
    # `instance_id` first: a SWE-agent `.traj` on one line has a `history` too, 24 MB of it, read in outline
    if isinstance(first, Mapping) and "instance_id" in first and isinstance(first.get("history"), list):
        return True
    try:
        document = source.document
    except ValueError:
        return False
    return isinstance(document, list | RawList) and bool(document) and (_is_v0(document[0]) or _is_v1(document[0]))


def sniff(name: str, head: bytes, text: str) -> bool:
    """A `.json` list of v0 events, or an evaluation's `output.jsonl` (its first line alone may be
    megabytes: its first bytes are enough), from a file's first bytes (a folder's listing)."""
    compact = head[:4096]
    if name.endswith(".json"):
        return compact.lstrip().startswith(b"[") and (b'"observation"' in compact or b'"action"' in compact
                                                      or b'"kind"' in compact)
    if not name.endswith(".jsonl"):
        return False
    if head.lstrip().startswith(b"{") and b'"instance_id"' in head and b'"history"' in head:
        return True
    return sniff_lines(accepts, name, text)


def read(source: Source) -> Trajectory:
    info = TrajectoryInfo()
    fidelity = chat.reconstructed()
    files = _event_folder(source)
    events: Any
    if files is not None:
        events = [loads(read_in_folder(path, source.path, MAX_FILE_BYTES)) for path in files]
    elif isinstance(source.first_line, Mapping) and "instance_id" in source.first_line:
        events = _instance(source, info, fidelity)
    else:
        document = source.document  # a list of events: each read by its head, whole when its step is shown
        events = document.records(_EventHead) if isinstance(document, RawList) else document
    tally = chat.Tally()
    if any(_is_v1(event) for event in events[:5]):
        entries = _v1(events, tally, fidelity)
    else:
        entries = _v0(heads(events), _Events(events), tally, fidelity)
    tally.said(fidelity)
    return chat.trajectory(source, FORMAT, entries, info, fidelity)


def _instance(source: Source, info: TrajectoryInfo, fidelity: Fidelity) -> list[Any]:
    """An evaluation's `output.jsonl`: instance `source.unit`'s history (the other instances'
    lines passed over, not built: an evaluation's output can be gigabytes)."""
    content = source.content
    instances = [(start, end) for _, start, end in source.line_spans() if _is_object(content[start:end])]
    fidelity.units = len(instances)
    if source.unit > len(instances):
        raise ValueError(f"#{source.unit}: the file has {len(instances)} instances")
    start, end = instances[source.unit - 1]
    record = mapping(loads(content[start:end]))
    info.session = {"instance_id": record.get("instance_id")}
    test_result = mapping(record.get("test_result"))
    patch = test_result.get("git_patch")
    if isinstance(patch, str):
        info.submission = patch  # byte for byte, as the run produced it
    metrics = mapping(record.get("metrics"))
    if isinstance(metrics.get("accumulated_cost"), int | float):
        info.model_stats.instance_cost = float(metrics["accumulated_cost"])
    if record.get("error"):
        info.exit_status = str(record["error"])[:200]
    config = mapping(mapping(record.get("metadata")).get("llm_config"))
    info.model_name = optional_str(config.get("model"))
    info.raw = {key: value for key, value in record.items() if key != "history"}
    return list(record["history"])


def _first(entries: list[chat.Entry], kind: MessageType) -> bool:
    return not any(entry.kind == kind for entry in entries)


class _ResponseHead(Part):
    id: Any = msgspec.UNSET
    model: Any = msgspec.UNSET
    usage: Any = msgspec.UNSET


class _MetadataHead(Part):
    tool_call_id: Any = msgspec.UNSET
    model_response: _ResponseHead | None | msgspec.UnsetType = msgspec.UNSET


class _ArgsHead(Part):
    tools: Any = msgspec.UNSET


class _EventHead(Part):
    """What the plan needs of a v0 event (issue 49): what it is, whose it is, the call it makes
    or answers, its model response's id and usage. Its text, arguments and output are read
    when its step is shown."""

    id: Any = msgspec.UNSET
    action: Any = msgspec.UNSET
    observation: Any = msgspec.UNSET
    source: Any = msgspec.UNSET
    cause: Any = msgspec.UNSET
    tool_call_metadata: _MetadataHead | None | msgspec.UnsetType = msgspec.UNSET
    args: _ArgsHead | None | msgspec.UnsetType = msgspec.UNSET


class _Object(Part):
    """Nothing of a record: only that it is an object."""


_is_object_decode = msgspec.json.Decoder(_Object).decode


def _is_object(line: Any) -> bool:
    """Whether a line is a JSON object (passed over, not built)."""
    try:
        _is_object_decode(line)
        return True
    except msgspec.MsgspecError:
        try:  # what only `json` reads (a NaN)
            return isinstance(loads(line), Mapping)
        except ValueError:
            return False


class _Events:
    """The events by position, each read whole when an entry of it is built (the last read kept)."""

    def __init__(self, events: Any) -> None:
        self.events = events
        self._last: tuple[int, Mapping[str, Any]] = (-1, {})

    def __getitem__(self, index: int) -> Mapping[str, Any]:
        if self._last[0] != index:
            self._last = (index, mapping(self.events[index]))
        return self._last[1]


class _Later(chat.Later):
    """The entry of v0 event `records[0]` (and, for a model response, of the events of its
    other calls), read whole when shown. `how`: `system`, `user`, `response` or `observation`."""

    events: Any = None
    records: list[int] = msgspec.field(default_factory=list)
    how: str = ""

    def make(self) -> chat.Entry:
        event = self.events[self.records[0]]
        args = mapping(event.get("args"))
        if self.how == "system":
            return chat.Entry("system", str(args.get("content") or ""), self.kind)
        if self.how == "user":
            return chat.Entry("user", str(args.get("content") or event.get("message") or ""), self.kind)
        if self.how == "observation":
            return _observation(event)
        action = event.get("action")
        response = mapping(mapping(event.get("tool_call_metadata")).get("model_response"))
        thought = str(args.get("thought") or (args.get("content") if action == "message" else "") or "")
        usage = mapping(response.get("usage"))
        details = mapping(usage.get("prompt_tokens_details"))
        entry = chat.assistant(thought, _calls(event), usage=chat.usage(usage.get("prompt_tokens"),
                                                                       usage.get("completion_tokens"),
                                                                       details.get("cached_tokens")),
                               model=optional_str(response.get("model")))
        for other in self.records[1:]:  # another call of the same response
            _add_calls(entry, _calls(self.events[other]))
        return entry


def _v0(heads: Any, events: _Events, tally: chat.Tally, fidelity: Fidelity) -> list[chat.Entry]:
    """The entries of v0 events planned from their heads: each entry's role, type and usage
    now, its text when shown; a condensation made now (it names the entries it drops)."""
    entries: list[chat.Entry] = []
    at: dict[Any, int] = {}
    """Event id -> the index of the entry it became (for condensations)."""
    response_of: dict[str, int] = {}
    """Model response id -> the index of its step's entry."""
    system = task = False
    for index, event in enumerate(heads):
        event = mapping(event)
        action, observation = event.get("action"), event.get("observation")
        metadata = mapping(event.get("tool_call_metadata"))
        if action == "system":
            entries.append(_Later("system", "", MessageType.USER_MESSAGE if system else MessageType.SYSTEM,
                                  events=events, records=[index], how="system"))
            system = True
            fidelity.parts["system prompt"] = "recorded"
            if mapping(event.get("args")).get("tools"):
                fidelity.parts["tools"] = "recorded"
        elif action == "condensation":
            entries.append(_condensation(mapping(events[index].get("args")), at))
        elif action == "message" and event.get("source") == "user":
            entries.append(_Later("user", "", MessageType.USER_MESSAGE if task else MessageType.TASK, events=events,
                                  records=[index], how="user"))
            task = True
        elif action and event.get("source") == "agent" and action not in _V0_HIDDEN:
            response = mapping(metadata.get("model_response"))
            response_id = optional_str(response.get("id"))
            if response_id and response_id in response_of:  # another call of the same response
                entry = entries[response_of[response_id]]
                assert isinstance(entry, _Later)
                entry.records.append(index)
                entry.kind = MessageType.ACTION
            else:
                calls = not (action == "message" and not optional_str(metadata.get("tool_call_id")))
                usage = mapping(response.get("usage"))
                planned = chat.usage(usage.get("prompt_tokens"), usage.get("completion_tokens"),
                                     mapping(usage.get("prompt_tokens_details")).get("cached_tokens"))
                entries.append(_Later("assistant", "", MessageType.ACTION if calls else MessageType.ASSISTANT_MESSAGE,
                                      {"usage": planned} if planned is not None else {}, events=events,
                                      records=[index], how="response"))
                if response_id:
                    response_of[response_id] = len(entries) - 1
        elif observation and observation not in _V0_HIDDEN and event.get("cause") is not None:
            answered = optional_str(metadata.get("tool_call_id"))
            entries.append(_Later("tool" if answered else "user", "", MessageType.OBSERVATION, events=events,
                                  records=[index], how="observation"))
        else:
            tally.skip(f"action/{action}" if action else f"observation/{observation}" if observation else None)
            continue
        _place(at, event.get("id"), len(entries) - 1)
    return entries


_KEYS = (str, int)
"""What an event's id can be to be found again (a list or an object there: an id nothing names)."""


def _place(at: dict[Any, int], key: Any, entry: int) -> None:
    """The entry an event became, by its id, where the id is one (`_KEYS`)."""
    if isinstance(key, _KEYS):
        at[key] = entry


def _calls(event: Mapping[str, Any]) -> list[tuple[dict[str, Any], Any]]:
    """The tool call an agent's v0 action makes (none for a message without a call id)."""
    action = event.get("action")
    args = mapping(event.get("args"))
    metadata = mapping(event.get("tool_call_metadata"))
    call_id = optional_str(metadata.get("tool_call_id"))
    if action == "message" and not call_id:
        return []
    name = optional_str(metadata.get("function_name")) or str(action)
    arguments = _arguments(action, args, mapping(metadata.get("model_response")), call_id)
    return [chat.call(call_id or f"{action}_{event.get('id')}", name, arguments)]


def _observation(event: Mapping[str, Any]) -> chat.Entry:
    extras = mapping(event.get("extras"))
    text = str(event.get("content") or "")
    extra: dict[str, Any] = {"raw_output": text}
    code = mapping(extras.get("metadata")).get("exit_code")
    if isinstance(code, int):
        extra["returncode"] = code
    call_id = optional_str(mapping(event.get("tool_call_metadata")).get("tool_call_id"))
    return chat.Entry("tool" if call_id else "user", text, MessageType.OBSERVATION, extra, tool_call_id=call_id)


def _arguments(action: Any, args: Mapping[str, Any], response: Mapping[str, Any], call_id: str | None) -> Any:
    """The call's arguments as the model wrote them (from the recorded response), else the action's."""
    for choice in response.get("choices") or []:
        for recorded in mapping(mapping(choice).get("message")).get("tool_calls") or []:
            recorded = mapping(recorded)
            if recorded.get("id") == call_id:
                return mapping(recorded.get("function")).get("arguments") or {}
    if action == "run":
        return {"command": args.get("command", "")}
    return {key: value for key, value in args.items() if key not in ("thought", "security_risk", "confirmation_state")}


def _condensation(args: Mapping[str, Any], at: dict[Any, int]) -> chat.Entry:
    ids = args.get("forgotten_event_ids") or args.get("forgotten_events") or []
    start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    if not ids and isinstance(start, int) and isinstance(end, int):
        ids = list(range(start, end + 1))
    forgotten = sorted({at[i] for i in ids if isinstance(i, _KEYS) and i in at})
    summary = args.get("summary")
    return chat.compaction(str(summary) if summary else f"(condensation: {len(forgotten)} events forgotten)",
                           forgotten=forgotten, source="openhands condensation")


def _add_calls(entry: chat.Entry, calls: list[tuple[dict[str, Any], Any]]) -> None:
    """Another tool call of the model response `entry` already holds (OpenHands writes one
    action per call): the step gets it too."""
    entry.tool_calls = (entry.tool_calls or []) + [tool_call for tool_call, _ in calls]
    entry.extra["actions"] = tuple(entry.extra.get("actions", ())) + tuple(action for _, action in calls)
    entry.kind = MessageType.ACTION


def _v1(events: list[Any], tally: chat.Tally, fidelity: Fidelity) -> list[chat.Entry]:
    entries: list[chat.Entry] = []
    at: dict[Any, int] = {}
    response_of: dict[str, int] = {}
    for event in events:
        event = mapping(event)
        kind = event.get("kind")
        if kind == "SystemPromptEvent":
            entries.append(chat.Entry("system", chat.text_of(event.get("system_prompt")), MessageType.SYSTEM))
            fidelity.parts["system prompt"] = "recorded"
            if event.get("tools"):
                fidelity.parts["tools"] = "recorded"
        elif kind == "MessageEvent":
            message = mapping(event.get("llm_message"))
            text = chat.text_of(message.get("content"))
            if message.get("role") == "assistant":
                entries.append(chat.assistant(text, reasoning=optional_str(message.get("reasoning_content"))))
            else:
                entries.append(chat.Entry("user", text, MessageType.TASK if _first(entries, MessageType.TASK)
                                          else MessageType.USER_MESSAGE))
        elif kind == "ActionEvent":
            tool_call = mapping(event.get("tool_call"))
            call_id = str(event.get("tool_call_id") or tool_call.get("id") or "")
            name = str(event.get("tool_name") or tool_call.get("name") or "")
            arguments = tool_call.get("arguments")
            if arguments is None:
                arguments = {key: value for key, value in mapping(event.get("action")).items() if key != "kind"}
            calls = [chat.call(call_id, name, arguments)]
            response_id = optional_str(event.get("llm_response_id"))
            if response_id and response_id in response_of:
                _add_calls(entries[response_of[response_id]], calls)
            else:
                entries.append(chat.assistant(chat.text_of(event.get("thought")), calls,
                                              reasoning=optional_str(event.get("reasoning_content"))))
                if response_id:
                    response_of[response_id] = len(entries) - 1
        elif kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
            observation = mapping(event.get("observation"))
            if kind == "ObservationEvent":
                text = chat.text_of(observation.get("content"))
            else:
                text = str(event.get("error") or event.get("rejection_reason") or json.dumps(dict(event)))
            extra: dict[str, Any] = {"raw_output": text, "observation_kind": kind}
            if isinstance(observation.get("exit_code"), int):
                extra["returncode"] = observation["exit_code"]
            answered = optional_str(event.get("tool_call_id"))
            entries.append(chat.Entry("tool" if answered else "user", text, MessageType.OBSERVATION, extra,
                                      tool_call_id=answered))
        elif kind == "Condensation":
            ids = event.get("forgotten_event_ids") or []
            forgotten = sorted({at[i] for i in ids if isinstance(i, _KEYS) and i in at})
            summary = event.get("summary")
            entries.append(chat.compaction(str(summary) if summary else f"(condensation: {len(forgotten)} events forgotten)",
                                           forgotten=forgotten, source="openhands condensation"))
        else:
            tally.skip(kind)
            continue
        _place(at, event.get("id"), len(entries) - 1)
    return entries
