"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): one
`{"timestamp", "type", "payload"}` per line.

`session_meta` opens the file (id, cwd, CLI version, and the base instructions where it
stores them). `response_item`s are the conversation as the model API carries it: `message`
(user, developer, assistant), `reasoning` (its summary), `function_call` /
`function_call_output`, `custom_tool_call` (`apply_patch`) / its output, `local_shell_call`.
One model call is the run of assistant-side items (message, reasoning, calls) between two
inputs: one step. The `event_msg` of type `token_count` that follows a call carries its
usage (`last_token_usage`: input tokens with the cached ones among them, output tokens) and
the context window; every other `event_msg` repeats what the items already say for the
terminal UI, and is counted, not shown. `turn_context` gives the model of the turns after
it; `compacted` is a compaction marker (its `message`, the summary). A shell call's output
is a JSON string `{"output", "metadata": {"exit_code"}}`: the output is shown, the exit
code kept. Codex's built-in system prompt and tool list are not in the file (`unknown`),
unless `session_meta` stores the base instructions.
"""

from __future__ import annotations

import mmap
import re
from array import array
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ...messages import Action, ContextInfo, Message, MessageType, Usage
from ..coerce import mapping, optional_str
from ..model import Branch, Fidelity, Trajectory, TrajectoryFormat, TrajectoryInfo
from ..parse import loads
from . import chat
from .api_requests import agent_words
from .source import Source, part_bounds, sniff_lines, span

FORMAT: TrajectoryFormat = "codex"
JOINED = True
"""Its files are joined with the record `swedeck record` made of the same run (`trajectory/join.py`)."""
_ITEM_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def accepts(source: Source) -> bool:
    if source.folder or source.data:
        return False
    first = next((record for _, record in source.json_lines(limit=3) if isinstance(record, Mapping)), None)
    return first is not None and first.get("type") in _ITEM_TYPES and isinstance(first.get("payload"), Mapping)


class _ItemHead(msgspec.Struct):
    type: Any = None
    id: Any = None
    kind: Any = None
    """A `SubAgentActivity`'s (`started`: a sub-agent `spawn_agent` started), with its thread and path."""
    agent_thread_id: Any = None
    agent_path: Any = None


class _PayloadHead(msgspec.Struct):
    type: Any = None
    role: Any = None
    name: Any = None
    """A call's tool (`exec`: a code-mode cell, whose commands Codex records as `item_completed`)."""
    info: Any = None
    """A `token_count`'s usage (parsed with the head: these records are small)."""
    content: msgspec.Raw = msgspec.Raw(b"")
    """A message's content, unparsed: its first bytes say whether it is Codex's own context."""
    item: _ItemHead | None = None
    """An `item_completed`'s item type (`CommandExecution`)."""


_CONTEXT_OPENINGS = ("<environment_context>", "<user_instructions>", "<permissions instructions>",
                     "# AGENTS.md instructions", "<skills_instructions>", "<collaboration_mode>")
_CONTEXT_TEXT = re.compile(rb'^\s*\[\s*\{[^{}]*?"text"\s*:\s*"\s*('
                           + b"|".join(re.escape(opening.encode()) for opening in _CONTEXT_OPENINGS) + rb")")
"""A user or developer message Codex writes itself: its environment, the folder's AGENTS.md,
its permissions and skills (what the model is given, not the person's words)."""
_CELL_TOOLS = ("exec", "wait")
"""Code mode's tools: a JavaScript cell that calls Codex's tools (`tools.exec_command`), and
the wait for a cell that yielded. The commands a cell runs are the step's shell commands."""
_WHY = {
    "event_msg/item_completed": "Codex's own view of the items (messages, commands): the commands an exec cell ran are "
                                "read as its step's shell commands; the rest repeat the response items",
    "event_msg/task_started": "a turn's start (its context window)",
    "event_msg/task_complete": "a turn's end (its last message, its duration)",
    "event_msg/thread_settings_applied": "the thread's settings (model, approvals, permissions, folder): in the session",
    "world_state": "the state Codex gave the model (environments, date, skills, collaboration mode): in the session",
    "token_usage_record": "each model call's usage, read as its step's usage",
    "event_msg/token_count": "the usage totals repeated (each call's usage is read once)",
    "additional_tools": "tools Codex added during the session: read as the tools recorded",
    "response_item/additional_tools": "tools Codex added during the session: read as the tools recorded",
}


class _Head(msgspec.Struct):
    """What the scan reads of every record (issue 49): its type, and its payload's type and
    role. A response item's body is parsed when its step is built, from the line's bytes."""

    type: Any = None
    ordinal: Any = None
    """Its place in the thread (0.171: every record numbered from 0)."""
    payload: _PayloadHead | None = None


_decode_head = msgspec.json.Decoder(_Head).decode


def _response(items: list[Mapping[str, Any]], model: str | None, ran: Sequence[Mapping[str, Any]] = ()) -> chat.Entry:
    """One model call: the run of assistant-side items (message, reasoning, calls); `ran`: the
    `CommandExecution`s its exec cells ran, each a shell command after the cell."""
    texts, reasoning, calls = [], [], []
    cell = None
    for item in items:
        kind = item.get("type")
        if kind == "message":
            texts.append(chat.text_of(item.get("content")))
        elif kind == "reasoning":
            reasoning.append(chat.text_of(item.get("summary")) or chat.text_of(item.get("content")))
        elif kind == "function_call":
            calls.append(chat.call(str(item.get("call_id") or ""), str(item.get("name") or ""), item.get("arguments") or {}))
        elif kind == "custom_tool_call":
            call_id = str(item.get("call_id") or "")
            calls.append(chat.call(call_id, str(item.get("name") or ""), {"input": item.get("input") or ""}))
            if item.get("name") in _CELL_TOOLS and ran:
                cell = call_id
        elif kind == "local_shell_call":
            action = mapping(item.get("action"))
            calls.append(chat.call(str(item.get("call_id") or item.get("id") or ""), "local_shell",
                                   {"command": action.get("command") or []}))
    entry = chat.assistant("\n".join(texts), calls, reasoning="\n".join(r for r in reasoning if r) or None, model=model)
    if cell is not None:  # the cell's own call first (its source), then what it ran
        entry.extra["actions"] = (*entry.extra["actions"], *(_cell_command(cell, command) for command in ran))
    return entry


def _cell_command(call_id: str, item: Mapping[str, Any]) -> Action:
    """A command an exec cell ran (`item_completed`'s `CommandExecution`): a shell command of
    its step, with its exit code and output, and the cell it ran in."""
    command = item.get("command")
    text = chat.shell_command("exec_command", {"command": command}) if command else None
    if text is None:
        parsed = [mapping(part).get("cmd") for part in item.get("parsed_cmd") or [] if isinstance(part, Mapping)]
        text = " && ".join(str(part) for part in parsed if part) or str(command or "")
    extra: dict[str, Any] = {"tool": "exec_command", "shell": True, "cell": call_id}
    if isinstance(item.get("exit_code"), int):
        extra["exit_code"] = item["exit_code"]
    if isinstance(item.get("aggregated_output"), str):
        extra["output"] = item["aggregated_output"]
    return Action(command=text, tool_call_id=call_id, unknown=extra)


_ACTION, _ANSWER, _OUTPUT, _TASK, _USER, _SYSTEM, _DEVELOPER, _WHOLE_ENTRY, _CONTEXT = range(9)
"""An entry's code in `_Columns.codes`: a model call with tool calls or without, a tool's
output, the task, a later user message, the first system/developer message, a later one, an
entry made whole at once (the base instructions, a compaction), and a user message Codex
wrote itself (its environment context, the folder's AGENTS.md)."""
_KINDS = {_ACTION: MessageType.ACTION, _ANSWER: MessageType.ASSISTANT_MESSAGE, _OUTPUT: MessageType.OBSERVATION,
          _TASK: MessageType.TASK, _USER: MessageType.USER_MESSAGE, _SYSTEM: MessageType.SYSTEM,
          _DEVELOPER: MessageType.USER_MESSAGE, _CONTEXT: MessageType.USER_MESSAGE}
_NONE = -1


class _Columns:
    """The rollout's entries as columns of numbers (issue 49: 690,000 steps of a 2 GB rollout
    as objects took a gigabyte): each entry's code and its first line, each line's span in the
    file, each model call's usage; an entry is made when its message is built, from its lines."""

    def __init__(self, content: Any) -> None:
        self.content = content
        self.codes = bytearray()
        self.first = array("q")
        """Each entry's first line in `spans` (its lines run to the next entry's first)."""
        self.spans = array("q")
        """Each line's start and end, flat."""
        self.usage = array("q")
        """Each entry's prompt, completion and cached tokens and the context window, flat (-1: none)."""
        self.whole: dict[int, chat.Entry] = {}
        self.model_from: list[int] = []
        """The entries where the model changes (`turn_context`), and the model from there on."""
        self.models: list[str | None] = []
        self.instructions: chat.Entry | None = None
        """The base instructions of `session_meta`, the first message wherever the record is."""
        self.ran: dict[int, list[tuple[int, int]]] = {}
        """A model call's entry -> the lines of the `CommandExecution`s its exec cells ran."""

    def __len__(self) -> int:
        return len(self.codes)

    def add(self, code: int, *lines: tuple[int, int]) -> None:
        self.codes.append(code)
        self.first.append(len(self.spans) // 2)
        for start, end in lines:
            self.spans.extend((start, end))
        self.usage.extend((_NONE, _NONE, _NONE, _NONE))

    def add_whole(self, entry: chat.Entry) -> None:
        self.whole[len(self.codes)] = entry
        self.add(_WHOLE_ENTRY)

    def is_step(self, index: int) -> bool:
        code = self.codes[index]
        return code in (_ACTION, _ANSWER) or (code == _WHOLE_ENTRY and self.whole[index].is_step)

    def model_at(self, index: int) -> str | None:
        position = bisect_right(self.model_from, index) - 1
        return self.models[position] if position >= 0 else None

    def entry(self, index: int) -> chat.Entry:
        code = self.codes[index]
        if code == _WHOLE_ENTRY:
            return self.whole[index]
        end = self.first[index + 1] if index + 1 < len(self.first) else len(self.spans) // 2
        payloads = [mapping(mapping(loads(span(self.content, self.spans[2 * line], self.spans[2 * line + 1]))).get("payload"))
                    for line in range(self.first[index], end)]
        if code in (_ACTION, _ANSWER):
            ran = [mapping(mapping(mapping(loads(span(self.content, start, end))).get("payload")).get("item"))
                   for start, end in self.ran.get(index, ())]
            made = _response(payloads, self.model_at(index), ran)
        elif code == _OUTPUT:
            made = _output(payloads[0])
        elif code in (_TASK, _USER) and payloads[0].get("type") == "agent_message":
            made = chat.Entry("user", agent_words(payloads[0]), _KINDS[code],
                              {"codex_role": "agent_message", "author": payloads[0].get("author")})
        elif code in (_TASK, _USER):
            made = chat.Entry("user", chat.text_of(payloads[0].get("content")), _KINDS[code])
        elif code == _CONTEXT:
            made = chat.Entry("user", chat.text_of(payloads[0].get("content")), _KINDS[code],
                              {"codex_role": "context", "agent_context": "Codex's context"})
        else:
            made = chat.Entry("system", chat.text_of(payloads[0].get("content")), _KINDS[code],
                              {"codex_role": payloads[0].get("role")})
            if code == _DEVELOPER:
                made.extra["agent_context"] = f"Codex's {payloads[0].get('role') or 'developer'} message"
        made.kind = _KINDS[code]
        prompt, completion, cached, window = self.usage[4 * index:4 * index + 4]
        if prompt != _NONE:
            made.extra["usage"] = Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached)
            if window != _NONE:
                made.extra["context"] = ContextInfo(window=window, prompt_tokens=prompt,
                                                    left_percent=round(100 * (1 - prompt / window), 1))
        return made


class _Reader:
    def __init__(self, content: Any, resumed: bool = False) -> None:
        """`resumed`: reading from a line inside the file (`part`), after its task and system message."""
        self.columns = _Columns(content)
        self.tally = chat.Tally()
        self.info = TrajectoryInfo()
        self.response: list[tuple[int, int]] = []
        self.calls = False
        self.system = resumed
        self.task = resumed
        self.last_step = _NONE
        """The entry of the latest model call: what a `token_count` after it counts."""
        self.cell = False
        """The model call being read has an exec cell (code mode)."""
        self.cell_step = _NONE
        """The entry of the latest model call with an exec cell: the `CommandExecution`s after it are its."""
        self.spawned: list[tuple[int, str, str]] = []
        """Each sub-agent a call started (`spawn_agent`): the entry of that call, its thread, its path."""
        self.last_ordinal = -1
        self.gaps: list[tuple[int, int]] = []
        """Ordinals missing between two records (first, last), and records before their predecessor."""
        self.back = 0

    def ordinal(self, value: Any) -> None:
        """A record's `ordinal`: the records of a thread are numbered in order from 0."""
        if not isinstance(value, int) or isinstance(value, bool):
            return
        if value <= self.last_ordinal:
            self.back += 1
        elif value > self.last_ordinal + 1 and len(self.gaps) < 100:
            self.gaps.append((self.last_ordinal + 1, value - 1))
        self.last_ordinal = max(self.last_ordinal, value)

    def flush(self) -> None:
        if not self.response:
            return
        self.last_step = len(self.columns)
        if self.cell:
            self.cell_step = self.last_step
        self.columns.add(_ACTION if self.calls else _ANSWER, *self.response)
        self.response, self.calls, self.cell = [], False, False

    def item(self, payload: _PayloadHead, span: tuple[int, int], context: bool | None = None) -> None:
        """A response item; `context`: whether a user message is Codex's own context, where the
        record was read whole (else its head's first bytes say)."""
        kind, role = payload.type, payload.role
        if kind == "reasoning" or kind in _CALLS or (kind == "message" and role == "assistant"):
            self.response.append(span)
            self.calls = self.calls or kind in _CALLS
            self.cell = self.cell or (kind == "custom_tool_call" and payload.name in _CELL_TOOLS)
            return
        self.flush()
        if kind == "message":
            if role in ("developer", "system"):
                self.columns.add(_DEVELOPER if self.system else _SYSTEM, span)
                self.system = True
            elif context if context is not None else bool(_CONTEXT_TEXT.match(bytes(memoryview(payload.content)[:256]))):
                self.columns.add(_CONTEXT, span)
            else:
                self.columns.add(_USER if self.task else _TASK, span)
                self.task = True
        elif kind in _OUTPUTS:
            self.columns.add(_OUTPUT, span)
        elif kind == "agent_message":  # another agent's words (a sub-agent's task from its parent, a reply)
            self.columns.add(_USER if self.task else _TASK, span)
            self.task = True
        else:
            self.tally.skip(f"response_item/{kind}")

    def completed(self, item: _ItemHead | None, span: tuple[int, int]) -> None:
        """An `item_completed`: a command an exec cell ran is its model call's (the one being
        read, or the latest with a cell); the rest repeat the response items."""
        kind = "event_msg/item_completed"
        self.tally.skip(kind, _WHY[kind])
        if item is not None and item.type == "SubAgentActivity" and item.kind == "started" \
                and isinstance(item.agent_thread_id, str):
            # the call that spawned it is in the model call being read, or the latest one
            self.spawned.append((len(self.columns) if self.response else self.last_step, item.agent_thread_id,
                                 str(item.agent_path or item.agent_thread_id)))
            return
        if item is None or item.type != "CommandExecution":
            return
        target = len(self.columns) if self.response and self.cell else \
            self.cell_step if self.cell_step != _NONE and self.cell_step == self.last_step else _NONE
        if target != _NONE:
            self.columns.ran.setdefault(target, []).append(span)

    def whole(self, entry: chat.Entry) -> None:
        self.flush()
        if entry.is_step:
            self.last_step = len(self.columns)
        self.columns.add_whole(entry)

    def token_count(self, info: Any) -> None:
        """The usage of the latest model call (a `token_count`'s `info.last_token_usage`), kept
        in its columns: its first `token_count` only (Codex repeats the count when nothing was
        called since). Once per model call of a rollout: written out, not looped."""
        details = mapping(info)
        last = mapping(details.get("last_token_usage"))
        total = mapping(details.get("total_token_usage"))
        if total:  # the session's own count so far (the last one is its whole): what its cost reconciles with
            self.info.raw["agent_usage"] = {"source": "Codex's token_count total",
                                            "prompt_tokens": chat.count(total.get("input_tokens")),
                                            "completion_tokens": chat.count(total.get("output_tokens")),
                                            "covers": "this thread"}  # a sub-agent's thread counts its own
        self.flush()
        target, usage = self.last_step, self.columns.usage
        at = 4 * target
        if target != _NONE and usage[at] != _NONE and usage[at + 3] == _NONE and details.get("model_context_window"):
            usage[at + 3] = chat.count(details.get("model_context_window")) or _NONE  # after a token_usage_record
        if target == _NONE or not last or usage[at] != _NONE:
            self.tally.skip("event_msg/token_count", _WHY["event_msg/token_count"])
            return
        self._usage(at, last, details.get("model_context_window"))

    def usage_record(self, payload: Mapping[str, Any]) -> None:
        """A `token_usage_record` (Codex 0.171): the usage of the model call before it, once;
        the `token_count` after it adds the context window."""
        self.flush()
        kind = "token_usage_record"
        self.tally.skip(kind, _WHY[kind])
        at = 4 * self.last_step
        if self.last_step != _NONE and self.columns.usage[at] == _NONE:
            self._usage(at, mapping(payload.get("usage")), None)

    def _usage(self, at: int, last: Mapping[str, Any], window: Any) -> None:
        count, usage = chat.count, self.columns.usage
        prompt, completion = count(last.get("input_tokens")), count(last.get("output_tokens"))
        cached = count(last.get("cached_input_tokens"))
        if prompt or completion or cached:  # as `chat.usage`: a count of nothing is no count
            usage[at], usage[at + 1], usage[at + 2] = prompt, completion, cached
            usage[at + 3] = count(window) or _NONE


def _session(payload: Mapping[str, Any]) -> dict[str, Any]:
    """What `session_meta` says of the session: its id, folder, CLI, provider and history mode."""
    meta = mapping(payload.get("meta")) or payload
    return {key: meta.get(key) for key in ("id", "cwd", "cli_version", "originator", "model_provider", "history_mode")
            if meta.get(key)}


def _output(payload: Mapping[str, Any]) -> chat.Entry:
    output = payload.get("output")
    extra: dict[str, Any] = {}
    if isinstance(output, str) and output.startswith("{"):
        try:
            parsed = loads(output)
        except ValueError:
            parsed = None
        if isinstance(parsed, Mapping) and "output" in parsed:
            metadata = mapping(parsed.get("metadata"))
            if isinstance(metadata.get("exit_code"), int):
                extra["returncode"] = metadata["exit_code"]
            if isinstance(metadata.get("duration_seconds"), int | float):
                extra["duration_s"] = float(metadata["duration_seconds"])
            output = parsed.get("output")
    text = chat.text_of(output)
    extra["raw_output"] = text
    return chat.Entry("tool", text, MessageType.OBSERVATION, extra, tool_call_id=optional_str(payload.get("call_id")))


def sniff(name: str, head: bytes, text: str) -> bool:
    """A `.jsonl` whose first whole lines this reader accepts (a folder's listing)."""
    return sniff_lines(accepts, name, text)


def read(source: Source) -> Trajectory:
    """One pass over the lines: each record's head (`_Head`); the few records that shape the
    steps read whole; the response items' lines kept as spans, parsed when their step is built."""
    reader, fidelity = _Reader(source.content), chat.reconstructed()
    _scan(source, reader, fidelity)
    _whole_thread(source, reader, fidelity)
    trajectory = _trajectory(source, reader, fidelity)
    _sub_agents(source, reader, trajectory, fidelity)
    return trajectory


def _sub_agents(source: Source, reader: _Reader, trajectory: Trajectory, fidelity: Fidelity) -> None:
    """The sub-agents the run spawned (`spawn_agent`, Codex's multi-agent tools): each its own
    rollout, found beside this one by its thread id (its `session_meta` names this thread as its
    parent), a branch of the run linked to the step whose call spawned it (`agent_steps`)."""
    if not reader.spawned or source.folder:
        return
    steps = [index for index in range(len(reader.columns)) if reader.columns.is_step(index)]
    started: dict[str, int] = {}
    sessions = source.path.parents[3] if len(source.path.parents) > 3 else source.path.parent
    for entry, thread, path in reader.spawned:
        name = path.removeprefix("/root/")
        found = next(source.path.parent.glob(f"rollout-*{thread}.jsonl"), None) or \
            next(sessions.glob(f"*/*/*/rollout-*{thread}.jsonl"), None)
        number = bisect_right(steps, entry)
        if number:
            started.setdefault(name, number)
        if found is None:
            fidelity.notes.append(f"sub-agent {name} (thread {thread}): its rollout is not beside this one")
            continue
        fidelity.branches += 1
        fidelity.openable.append(Branch(f"subagent file {name}", str(found)))
    trajectory.info.raw["agent_steps"] = started
    fidelity.notes.append(f"{len(reader.spawned)} sub-agents spawned (s lists them, b opens them)")


def _whole_thread(source: Source, reader: _Reader, fidelity: Fidelity) -> None:
    """Whether the records are the thread's, all of them, in order: their ordinals (0.171), and
    how far Codex's thread history says the rollout reached (a rollout a migration cut short)."""
    info = reader.info
    for first, last in reader.gaps:
        info.warnings.append(f"records {first}..{last} of the thread are missing (by their ordinals)"
                             if last > first else f"record {first} of the thread is missing (by its ordinal)")
    if reader.back:
        info.warnings.append(f"{reader.back} records come after one numbered later (by their ordinals): "
                             "read in the file's order")
    thread = info.session.get("id")
    if not isinstance(thread, str) or source.folder:
        return
    from .codex_threads import projection

    reached = projection(source.path, thread)
    if reached is None:
        return
    offset, ordinal = reached
    size = source.path.stat().st_size  # bytes (a decoded text's length counts characters)
    if size < offset or 0 <= reader.last_ordinal < ordinal - 1:
        said = (f"cut short: Codex's thread history says its rollout reached record {ordinal - 1:,} (byte {offset:,}); "
                f"this file ends at record {reader.last_ordinal:,} (byte {size:,}): a migration or a copy cut it, "
                f"the thread's history (thread_history_1.sqlite#N) holds its conversation as Codex's app shows it")
        info.warnings.append(said)
        fidelity.notes.append(said)


_MODEL_REACH = 64 << 20
"""How far before the end's part `part` looks for the `turn_context` that names the model."""


def part(source: Source, at_end: bool) -> Trajectory | None:
    """The first or the last steps of a rollout, read from its first or last bytes alone (issue
    49: a 2 GB rollout's first screen does not wait for its 2.8 million lines): the same
    reading over those lines. The step at the cut may begin before it (the end's first, which
    is kept for what the next one shows of it and not shown: `ReadingDocument`) or go on past it
    (the start's last, left out). What the other steps show is exact, and so is their number
    from the start, or from the end: each starts and ends where the whole reading's does. None when that
    part holds fewer than two steps within `source.PART_MAX_BYTES`, or the file's text was decoded (its
    offsets are characters; when to read a part is the loader's: `PART_FROM_BYTES`)."""
    content = source.content
    if not isinstance(content, bytes | mmap.mmap):
        return None
    for start, end in part_bounds(content, at_end):
        reader, fidelity = _Reader(content, resumed=at_end), chat.reconstructed()
        if at_end:
            reader.columns.model_from, reader.columns.models = [0], [_model_before(content, start)]
        _scan(source, reader, fidelity, start, end)
        steps = sum(1 for index in range(len(reader.columns)) if reader.columns.is_step(index))
        if steps >= 2:
            if at_end:
                reader.info.warnings.clear()  # their line numbers count from the part: the whole reading says them
                _opening(source, reader.info)
                reader.info.model_name = reader.info.model_name or reader.columns.models[-1]
            return _trajectory(source, reader, fidelity, "end" if at_end else "start")
    return None


_OPENING_RECORDS = 20


def _opening(source: Source, info: TrajectoryInfo) -> None:
    """The session and the first model, from the file's first records (`part`), as the whole
    reading takes them."""
    for _, record in source.json_lines(limit=_OPENING_RECORDS):
        record = mapping(record)
        payload = mapping(record.get("payload"))
        if record.get("type") == "session_meta":
            info.session = _session(payload)
        elif record.get("type") == "turn_context":
            info.model_name = optional_str(payload.get("model"))
            return


def _model_before(content: Any, end: int) -> str | None:
    """The model the last `turn_context` before `end` names (within `_MODEL_REACH`), else None."""
    floor = max(0, end - _MODEL_REACH)
    while end > floor:
        found = content.rfind(b'"turn_context"', floor, end)
        if found == -1:
            return None
        start, stop = content.rfind(b"\n", 0, found) + 1, content.find(b"\n", found)
        try:
            record = mapping(loads(content[start:stop if stop != -1 else len(content)]))
        except ValueError:
            record = {}
        if record.get("type") == "turn_context":
            return optional_str(mapping(record.get("payload")).get("model"))
        end = start
    return None


def _scan(source: Source, reader: _Reader, fidelity: Fidelity, offset: int = 0, end: int | None = None) -> None:
    """Every line from `offset` (where a line starts) to `end` into `reader`."""
    info = reader.info
    for number, start, line in source.lines(offset, end):
        if isinstance(line, ValueError):  # too long to parse
            chat.skip_damaged(number, line, info, reader.tally)
            continue
        headed = False
        try:
            head = _decode_head(line)
            kind, payload_head = head.type, head.payload
            reader.ordinal(head.ordinal)
            headed = True
            if kind == "response_item" and payload_head is not None:
                reader.item(payload_head, (start, start + len(line)))
                continue
            if kind == "event_msg" and payload_head is not None:
                if payload_head.type == "token_count":
                    reader.token_count(payload_head.info)
                elif payload_head.type == "item_completed":
                    reader.completed(payload_head.item, (start, start + len(line)))
                elif payload_head.type == "thread_settings_applied":
                    _whole(reader, mapping(loads(line)), (start, start + len(line)), fidelity)
                else:
                    name = f"event_msg/{payload_head.type}"
                    reader.tally.skip(name, _WHY.get(name))
                continue
        except msgspec.MsgspecError:
            pass  # damaged, or a record of another shape: read whole, below
        try:
            record = mapping(loads(line))
        except ValueError as error:
            chat.skip_damaged(number, error, info, reader.tally)
            continue
        if not headed:  # a line whose head did not read: its ordinal from the record
            reader.ordinal(record.get("ordinal"))
        _whole(reader, record, (start, start + len(line)), fidelity)
    reader.flush()
    reader.tally.said(fidelity)


def _trajectory(source: Source, reader: _Reader, fidelity: Fidelity, part: str | None = None) -> Trajectory:
    """`chat.trajectory` over the columns: the steps and totals from the numbers, no entry made.
    `part`: the lines read are the file's `end` (the messages start at the first step's answer,
    the step at the cut, which `ReadingDocument` keeps out of sight: what lies between it and
    the next, a compaction, is found as the whole reading finds it), or its `start` (the step at
    the cut, the last, left out)."""
    columns, info = reader.columns, reader.info
    if columns.instructions is not None and len(columns) and columns.codes[0] in (_SYSTEM, _DEVELOPER) \
            and columns.entry(0).content == columns.instructions.content:
        columns.instructions = None  # the file has them as its first message too: counted once, as sent
        columns.codes[0] = _SYSTEM
    shift = 1 if columns.instructions is not None else 0
    steps = [index for index in range(len(columns)) if columns.is_step(index)]
    first, end = 0, len(columns) + shift
    if part == "end":
        first = steps[0] + shift
    elif part == "start":
        end = steps.pop() + shift
    info.model_stats.api_calls = len(steps)
    usage = columns.usage
    info.model_stats.prompt_tokens = sum(value for value in usage[0::4] if value != _NONE)
    info.model_stats.completion_tokens = sum(value for value in usage[1::4] if value != _NONE)
    fidelity.compactions = sum(1 for entry in columns.whole.values() if entry.kind == MessageType.COMPACTION)

    def build(index: int) -> Message:
        if shift and index == 0:
            assert columns.instructions is not None
            return columns.instructions.build()
        return columns.entry(index - shift).build()

    return chat.built(source, FORMAT, end - first, [index + shift - first for index in steps],
                      lambda index: build(index + first), info, fidelity)


def _whole(reader: _Reader, record: Mapping[str, Any], span: tuple[int, int], fidelity: Fidelity) -> None:
    """A record read whole: the steps' context (session, model, compaction, usage)."""
    info = reader.info
    kind, payload = record.get("type"), mapping(record.get("payload"))
    if kind == "response_item" and payload.get("type") == "additional_tools":
        _tools(reader, payload, fidelity)
        reader.tally.skip("response_item/additional_tools", _WHY["response_item/additional_tools"])
    elif kind == "response_item":
        context = payload.get("role") == "user" and chat.text_of(payload.get("content")).lstrip().startswith(
            _CONTEXT_OPENINGS)  # only a user message can be Codex's context
        reader.item(_PayloadHead(payload.get("type"), payload.get("role"), payload.get("name")), span, context)
    elif kind == "event_msg" and payload.get("type") == "token_count":
        reader.token_count(payload.get("info"))
    elif kind == "event_msg" and payload.get("type") == "thread_settings_applied":
        info.session["settings"] = dict(mapping(payload.get("thread_settings")))
        reader.tally.skip("event_msg/thread_settings_applied", _WHY["event_msg/thread_settings_applied"])
    elif kind == "event_msg" and payload.get("type") == "item_completed":
        item = mapping(payload.get("item"))
        reader.completed(_ItemHead(item.get("type"), item.get("id"), item.get("kind"), item.get("agent_thread_id"),
                                   item.get("agent_path")), span)
    elif kind == "event_msg":
        name = f"event_msg/{payload.get('type')}"
        reader.tally.skip(name, _WHY.get(name))
    elif kind == "session_meta":
        meta = mapping(payload.get("meta")) or payload
        info.session = _session(payload)
        base = meta.get("base_instructions")
        text = chat.text_of(base) if base else ""
        if text:
            reader.columns.instructions = chat.Entry("system", text, MessageType.SYSTEM, {"codex_role": "instructions"})
            reader.system = True
            fidelity.parts["system prompt"] = "recorded"
    elif kind == "turn_context":
        reader.flush()
        model = optional_str(payload.get("model")) or reader.columns.model_at(len(reader.columns))
        reader.columns.model_from.append(len(reader.columns))
        reader.columns.models.append(model)
        info.model_name = info.model_name or model
    elif kind == "token_usage_record":
        reader.usage_record(payload)
    elif kind == "world_state":
        state = mapping(payload.get("state"))
        if payload.get("full") or "world_state" not in info.raw:
            info.raw["world_state"] = dict(state)
        else:
            info.raw["world_state"] = {**info.raw["world_state"], **state}
        reader.tally.skip(kind, _WHY[kind])
    elif kind == "additional_tools":
        _tools(reader, payload, fidelity)
        reader.tally.skip(kind, _WHY[kind])
    elif kind == "compacted":
        reader.flush()
        replaced = payload.get("replacement_history")
        summary = chat.text_of(payload.get("message"))
        if not summary and isinstance(replaced, list):
            summary = "\n\n".join(chat.text_of(mapping(item).get("content")) for item in replaced)
        reader.whole(chat.compaction(summary, source="codex compacted"))
    else:
        reader.tally.skip(kind)


def _tools(reader: _Reader, payload: Mapping[str, Any], fidelity: Fidelity) -> None:
    """An `additional_tools` record: the tools Codex gave the model beyond its own, by name."""
    tools = payload.get("tools", payload.get("additional_tools"))
    if isinstance(tools, list):
        named = reader.info.raw.setdefault("tools", [])
        named.extend(tool for tool in tools if isinstance(tool, Mapping))
        fidelity.parts["tools"] = "recorded"
