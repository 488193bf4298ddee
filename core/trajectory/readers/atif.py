"""ATIF, the Agent Trajectory Interchange Format (Harbor; v1.0-v1.8): `{"schema_version":
"ATIF-v1.x", "agent": {...}, "steps": [...], "final_metrics": {...}}`, and a Harbor trial
folder (`agent/trajectory.json` beside `result.json` and `verifier/reward.*`).

A step's `source` is `system`, `user` or `agent`. An agent step is one model response: its
`message`, `reasoning_content`, `tool_calls` and `metrics` (the provider's usage); its
`observation.results` answer its tool calls (by `source_call_id`), each becoming a tool
message. ATIF keeps the conversation, not the requests, so each query's prompt is rebuilt
from the steps before it (`reconstructed`); the system prompt is recorded where the file
has a system step, the tools where `agent.tool_definitions` lists them. Subagent
trajectories (referenced from results, or embedded in v1.8) are branches: an embedded one
opens as `PATH#<trajectory_id>`, a referenced one as its file where it lies beside this one;
`continued_trajectory_ref` names the file the run continues in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ...messages import MessageType
from ...startup.read_ahead import MAX_FILE_BYTES
from ..coerce import as_number, listed, mapping, optional_str
from ..files import inside_folder, read_in_folder
from ..model import Branch, Fidelity, Trajectory, TrajectoryFormat, TrajectoryInfo
from ..outline import Part, RawRecords, heads, records_at
from ..parse import loads
from . import chat
from .source import Source

FORMAT: TrajectoryFormat = "atif"
BRANCHES = True
"""Branches inside a file open as `PATH#NAME` (a sidechain, a rewound answer, an embedded subagent)."""
TRIAL_TRAJECTORY = Path("agent") / "trajectory.json"
TRIAL_FILE_BYTES = 16 << 20
"""A trial's `result.json` larger than this is not read (its trajectory has the loader's own bound)."""
REWARD_BYTES = 1 << 20


def accepts(source: Source) -> bool:
    if source.folder:
        return (source.path / TRIAL_TRAJECTORY).is_file()
    document = source.document
    return isinstance(document, Mapping) and str(document.get("schema_version", "")).startswith("ATIF-v")


_MARKERS = (b'"schema_version": "ATIF-v', b'"schema_version":"ATIF-v')


def sniff(name: str, head: bytes, text: str) -> bool:
    """A `.json` whose first bytes name an ATIF schema version (a folder's listing)."""
    return name.endswith(".json") and any(marker in head[:4096] for marker in _MARKERS)


def read(source: Source) -> Trajectory:
    if source.folder:
        path = source.path / TRIAL_TRAJECTORY
        source = Source(path=path, content=read_in_folder(path, source.path, MAX_FILE_BYTES).decode("utf-8"))
    document = source.document
    if source.branch is not None:
        document = _embedded(document, source.branch)
    agent = mapping(document.get("agent"))
    info = TrajectoryInfo(model_name=optional_str(agent.get("model_name")), config={"agent": dict(agent)},
                          raw={key: document[key] for key in document if key != "steps"})  # the steps: in outline
    info.session = {"id": document.get("session_id"), "agent": agent.get("name"), "agent_version": agent.get("version"),
                    "schema_version": document.get("schema_version")}
    _final_metrics(info, mapping(document.get("final_metrics")))
    steps = records_at(document, "steps", _StepHead)
    if not isinstance(steps, list | RawRecords):
        raise ValueError(f"`steps` is {type(steps).__name__}, not a list")
    tally = chat.Tally()
    fidelity = Fidelity(prompt="reconstructed",
                        parts={"system prompt": "unknown", "tools": "recorded" if agent.get("tool_definitions") else "unknown",
                               "messages": "reconstructed"})
    entries, token_ids = _planned(heads(steps), _Steps(steps), fidelity, tally, source.path)
    if token_ids:
        fidelity.notes.append(f"{token_ids} steps record their prompt as token ids: the prompt text is still "
                              "rebuilt from the conversation")
    embedded = document.get("subagent_trajectories")
    if isinstance(embedded, list) and embedded:
        fidelity.branches += len(embedded)
        fidelity.openable += [Branch(f"subagent {name}", f"{source.path}#{name}") for name in
                              (optional_str(mapping(item).get("trajectory_id")) for item in embedded) if name]
        fidelity.notes.append(f"{len(embedded)} subagent trajectories are embedded in the file (not shown as steps)")
    continued = optional_str(document.get("continued_trajectory_ref"))
    if continued:
        fidelity.notes.append(f"the run continues in {continued}")
    copied = sum(1 for step in heads(steps) if isinstance(step, Mapping) and step.get("source") == "agent"
                 and step.get("is_copied_context"))
    if copied:
        fidelity.notes.append(f"{copied} agent steps are copied context from an earlier trajectory (is_copied_context)")
    tally.said(fidelity)
    _harbor_trial(source.path, info, fidelity)
    return chat.trajectory(source, FORMAT, entries, info, fidelity)


class _MetricsHead(Part):
    prompt_tokens: Any = msgspec.UNSET
    completion_tokens: Any = msgspec.UNSET
    cached_tokens: Any = msgspec.UNSET
    cost_usd: Any = msgspec.UNSET
    prompt_token_ids: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    """Passed over: only whether it is a list counts."""


class _ResultHead(Part):
    source_call_id: Any = msgspec.UNSET
    extra: Any = msgspec.UNSET
    subagent_trajectory_ref: Any = msgspec.UNSET


class _ObservationHead(Part):
    results: list[_ResultHead] | None | msgspec.UnsetType = msgspec.UNSET


class _CallHead(Part):
    """Of a tool call, its id only: its arguments are read when its step is shown."""

    tool_call_id: Any = msgspec.UNSET


class _StepHead(Part):
    """What the plan needs of a step (issue 49): its source, what swedeck wrote down, its calls
    and usage, whom each result answers. Its message, reasoning and results' content are read
    when its entries are built."""

    source: Any = msgspec.UNSET
    step_id: Any = msgspec.UNSET
    is_copied_context: Any = msgspec.UNSET
    metrics: _MetricsHead | None | msgspec.UnsetType = msgspec.UNSET
    tool_calls: list[_CallHead] | None | msgspec.UnsetType = msgspec.UNSET
    observation: _ObservationHead | None | msgspec.UnsetType = msgspec.UNSET
    extra: Any = msgspec.UNSET


class _Steps:
    """The file's steps by position, each read whole when an entry of it is built (the last read kept)."""

    def __init__(self, steps: Any) -> None:
        self.steps = steps
        self._last: tuple[int, Any] = (-1, None)

    def __getitem__(self, index: int) -> Any:
        if self._last[0] != index:
            self._last = (index, self.steps[index])
        return self._last[1]


class _Later(chat.Later):
    """Entry `position` of step `index`: one of `_step_entries` of the step read whole."""

    steps: Any = None
    index: int = 0
    number: int = 0
    position: int = 0
    first: bool = False

    def make(self) -> chat.Entry:
        return _step_entries(mapping(self.steps[self.index]), self.number, self.first)[self.position]


def _planned(heads: Any, steps: _Steps, fidelity: Fidelity, tally: chat.Tally, path: Path) -> tuple[list[chat.Entry], int]:
    """Each step's entries from its head: role, type and usage now, text when shown; the
    fidelity's notes and branches of the subagents its results name. Also how many steps
    record their prompt as token ids."""
    entries: list[chat.Entry] = []
    system = task = False
    token_ids = 0
    for index, step in enumerate(heads):
        number = index + 1
        if not isinstance(step, Mapping):
            tally.skip(f"step that is {type(step).__name__}")
            continue
        source_kind = step.get("source")
        planned: list[tuple[str, MessageType, dict[str, Any]]] = []
        first = False
        if source_kind == "system":
            first = not system
            planned = [("system", MessageType.SYSTEM if first else MessageType.USER_MESSAGE, {})]
            fidelity.parts["system prompt"] = "recorded"
        elif source_kind == "user":
            first = not task
            planned = [("user", _swedeck_type(step) or (MessageType.TASK if first else MessageType.USER_MESSAGE), {})]
        elif source_kind == "agent":
            metrics = mapping(step.get("metrics"))
            ids = metrics.get("prompt_token_ids")
            if isinstance(ids, list) or (isinstance(ids, msgspec.Raw) and bytes(memoryview(ids)[:1]) == b"["):
                token_ids += 1
            call_ids = _call_ids(step.get("tool_calls"), number)
            usage = chat.usage(metrics.get("prompt_tokens"), metrics.get("completion_tokens"), metrics.get("cached_tokens"))
            cost = as_number(metrics.get("cost_usd"))
            extra = {key: value for key, value in (("usage", usage), ("cost", cost)) if value is not None}
            planned = [("assistant", MessageType.ACTION if call_ids else MessageType.ASSISTANT_MESSAGE, extra)]
            for result in listed(mapping(step.get("observation")).get("results")):
                if not isinstance(result, Mapping):
                    continue
                _subagents(step, result, fidelity, path)
                kind = _swedeck_type(result) or MessageType.OBSERVATION
                call_id = optional_str(result.get("source_call_id"))
                role = "tool" if call_id and call_id in call_ids else "exit" if kind == MessageType.EXIT else "user"
                planned.append((role, kind, {}))
        else:
            tally.skip(f"step with source {source_kind!r}")
        for position, (role, kind, extra) in enumerate(planned):
            entries.append(_Later(role, "", kind, extra, steps=steps, index=index, number=number, position=position,
                                  first=first))
            system = system or kind == MessageType.SYSTEM
            task = task or kind == MessageType.TASK
    return entries, token_ids


def _call_ids(tool_calls: Any, number: int) -> set[str]:
    """The ids of a step's tool calls, as `_call` names them."""
    return {str(item.get("tool_call_id") or f"call_{number}_{k}") for k, item in enumerate(listed(tool_calls))
            if isinstance(item, Mapping)}


def _step_entries(step: Mapping[str, Any], number: int, first: bool) -> list[chat.Entry]:
    """A step's entries, read whole: a system or user message, or a model response and its
    results (`first`: the first system message, or no task before it)."""
    source_kind = step.get("source")
    text = _text(step.get("message"))
    if source_kind == "system":
        return [chat.Entry("system", text, MessageType.SYSTEM if first else MessageType.USER_MESSAGE)]
    if source_kind == "user":
        kind = _swedeck_type(step)
        if kind == MessageType.COMPACTION:
            return [chat.Entry("user", text, kind, _compaction(step))]
        return [chat.Entry("user", text, kind or (MessageType.TASK if first else MessageType.USER_MESSAGE))]
    metrics = mapping(step.get("metrics"))
    calls = [_call(item, number, k) for k, item in enumerate(listed(step.get("tool_calls"))) if isinstance(item, Mapping)]
    extra = {key: step[key] for key in ("step_id", "timestamp", "model_name", "is_copied_context", "llm_call_count")
             if step.get(key) is not None}
    response = chat.assistant(text, calls, reasoning=optional_str(step.get("reasoning_content")),
                              usage=chat.usage(metrics.get("prompt_tokens"), metrics.get("completion_tokens"),
                                               metrics.get("cached_tokens")),
                              cost=as_number(metrics.get("cost_usd")), **extra)
    return [response, *_results(step, {item["id"] for item, _ in calls})]


def _swedeck_type(step: Mapping[str, Any]) -> MessageType | None:
    """The message type swedeck wrote down when it exported the file (`extra.swedeck.message_type`:
    a compaction, a format error, an interrupt), so a round trip keeps what the step was."""
    value = mapping(mapping(step.get("extra")).get("swedeck")).get("message_type")
    try:
        return MessageType(value) if isinstance(value, str) else None
    except ValueError:
        return None


_COMPACTION_KEYS = ("tokens_before", "tokens_after", "summary", "reason", "model", "edited", "ledger",
                   "compaction_source", "forgotten", "replaces", "undoes")
"""What swedeck's export writes of a compaction marker (`extra.swedeck`): its positions are the
messages' as this reader makes them."""


def _compaction(step: Mapping[str, Any]) -> dict[str, Any]:
    said = mapping(mapping(step.get("extra")).get("swedeck"))
    return {key: said[key] for key in _COMPACTION_KEYS if said.get(key) is not None}


def _call(item: Mapping[str, Any], number: int, k: int) -> tuple[dict[str, Any], Any]:
    """A tool call; its command as swedeck wrote it down when swedeck exported the file
    (`extra.swedeck.command`: SWE-agent's own rendering of its tools' arguments)."""
    tool_call, action = chat.call(str(item.get("tool_call_id") or f"call_{number}_{k}"), str(item.get("function_name") or ""),
                                  item.get("arguments") if item.get("arguments") is not None else {})
    command = mapping(mapping(item.get("extra")).get("swedeck")).get("command")
    if isinstance(command, str):
        action = action.updated(command=command)
    return tool_call, action


def _embedded(document: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The subagent trajectory embedded in `document` (ATIF v1.8) with `trajectory_id` `name`."""
    for item in document.get("subagent_trajectories") or []:
        if isinstance(item, Mapping) and item.get("trajectory_id") == name:
            return item
    raise ValueError(f"#{name}: no embedded subagent trajectory with that trajectory_id")


def _subagents(step: Mapping[str, Any], result: Mapping[str, Any], fidelity: Fidelity, path: Path) -> None:
    """The subagent trajectories a result names: branches, openable where they lie beside the file."""
    refs = result.get("subagent_trajectory_ref")
    if isinstance(refs, list) and refs:
        fidelity.branches += len(refs)
        names = ", ".join(str(mapping(ref).get("trajectory_path") or mapping(ref).get("session_id")) for ref in refs)
        fidelity.notes.append(f"step {step.get('step_id')}: subagent trajectory {names}")
        for ref in map(mapping, refs):
            beside = path.parent / str(ref.get("trajectory_path") or "")
            if ref.get("trajectory_path") and beside.is_file() and inside_folder(beside, path.parent):
                fidelity.openable.append(Branch(f"subagent {ref.get('trajectory_id') or beside.name} "
                                                f"(step {step.get('step_id')})", str(beside)))


def _results(step: Mapping[str, Any], call_ids: set[str]) -> list[chat.Entry]:
    out = []
    for result in listed(mapping(step.get("observation")).get("results")):
        if not isinstance(result, Mapping):
            continue
        text = _text(result.get("content"))
        call_id = optional_str(result.get("source_call_id"))
        kind, extra = _swedeck_result(result, text)
        if call_id and call_id in call_ids:
            out.append(chat.Entry("tool", text, kind, extra, tool_call_id=call_id))
        elif kind == MessageType.EXIT:
            out.append(chat.Entry("exit", text, kind, extra))
        else:  # an observation not tied to a call of this step: what the model was told, as a user message
            out.append(chat.Entry("user", text, kind, extra))
    return out


_RESULT_FIELDS = ("returncode", "duration_s", "timed_out", "output_truncated", "approval", "mode", "tool_error")
"""What swedeck's export keeps of a result under `extra.swedeck` and its reader takes back."""


def _swedeck_result(result: Mapping[str, Any], text: str) -> tuple[MessageType, dict[str, Any]]:
    """A result's type and extra fields. In a file swedeck exported, what it wrote down under
    `extra.swedeck`: the type (the submission, the person's comment, mini-swe-agent's `exit`),
    the output as the command printed it (`raw_output`: absent when it is the content), its
    exit code. In any other file, an observation whose output is its content, as the output
    pane reads it (mini-swe-agent's `<returncode>` wrapper taken apart: `output.command_output`)."""
    own = mapping(mapping(result.get("extra")).get("swedeck"))
    kind = _swedeck_type(result) or MessageType.OBSERVATION
    if not own:
        return kind, {}
    extra = {key: own[key] for key in _RESULT_FIELDS if own.get(key) is not None}
    raw = own.get("raw_output")
    extra["raw_output"] = raw if isinstance(raw, str) else text
    if kind == MessageType.EXIT and isinstance(own.get("exit_status"), str):
        extra["exit_status"] = own["exit_status"]
    return kind, extra


def _text(message: Any) -> str:
    if isinstance(message, list):
        parts = []
        for part in message:
            part = mapping(part)
            if part.get("type") == "text":
                parts.append(str(part.get("text") or ""))
            elif part.get("type") in ("image", "audio"):
                parts.append(f"[{part['type']}: {mapping(part.get('source')).get('path', '')}]")
        return "\n".join(parts)
    return "" if message is None else message if isinstance(message, str) else json.dumps(message)


def _final_metrics(info: TrajectoryInfo, metrics: Mapping[str, Any]) -> None:
    stats = info.model_stats
    for name, key in (("prompt_tokens", "total_prompt_tokens"), ("completion_tokens", "total_completion_tokens"),
                      ("api_calls", "total_steps")):
        if isinstance(metrics.get(key), int):
            setattr(stats, name, metrics[key])
    cost = as_number(metrics.get("total_cost_usd"))
    if cost is not None:
        stats.instance_cost = cost


def _harbor_trial(path: Path, info: TrajectoryInfo, fidelity: Fidelity) -> None:
    """A trajectory at `<trial>/agent/trajectory.json`: the trial's result and reward."""
    if path.parent.name != "agent":
        return
    trial = path.parent.parent
    result_path, rewards = trial / "result.json", {}
    if result_path.exists() or result_path.is_symlink():
        try:
            result = loads(read_in_folder(result_path, trial, TRIAL_FILE_BYTES))
        except (OSError, ValueError) as error:
            info.warnings.append(f"{result_path}: not read ({str(error)[:200]})")
            result = {}
        if isinstance(result, Mapping):
            info.raw["harbor_result"] = dict(result)
            verifier = mapping(result.get("verifier_result"))
            rewards = dict(mapping(verifier.get("rewards")))
            exception = mapping(result.get("exception_info"))
            if exception:
                info.exit_status = str(exception.get("exception_type") or "exception")
    for reward_file in sorted((trial / "verifier").glob("reward.*")):
        try:
            value = read_in_folder(reward_file, trial, REWARD_BYTES).decode("utf-8", "replace").strip()
        except ValueError as error:
            info.warnings.append(f"{reward_file}: not read ({str(error)[:200]})")
            continue
        try:
            parsed = loads(value) if reward_file.suffix == ".json" else value
        except ValueError:
            parsed = value
        rewards = dict(parsed) if isinstance(parsed, Mapping) else {**rewards, "reward": parsed}
    if rewards:
        info.raw["rewards"] = rewards
        info.exit_status = info.exit_status or "reward " + ", ".join(f"{key}={value}" for key, value in rewards.items())
        fidelity.notes.append(f"Harbor trial {trial.name}: " + ", ".join(f"{k}={v}" for k, v in rewards.items()))
