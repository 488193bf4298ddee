"""Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`).

Each line is a record; `user`, `assistant` and `system` records form a tree by `uuid` /
`parentUuid`. The conversation is the chain from the last leaf of the main line (not a
sidechain) up to the root; a compact boundary (`system`, `subtype: compact_boundary`) has no
`parentUuid` but a `logicalParentUuid`, which the walk follows. Other leaves (a rewound
branch, a sidechain's Task run) are branches, not shown as steps: `PATH#<leaf uuid>` opens
the chain to one of them; subagent files (`<session>/subagents/agent-*.jsonl`) are their own
trajectories beside it, and branches of this one.

One model call is written as several `assistant` records, one per content block (thinking,
text, tool_use), all with the same `message.id`: they are one step. Tool results come back
as `user` records of `tool_result` blocks, one tool message each. The user record after a
compact boundary (`isCompactSummary`) is the summary the history was replaced with: a
compaction marker, with the boundary's `preTokens`. Usage is the provider's
(`message.usage`): the prompt is `input_tokens + cache_creation_input_tokens +
cache_read_input_tokens`, cached the last. Claude Code does not store its system prompt or
tool list: both are `unknown`; the messages are `reconstructed`.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import mmap
import operator
import re
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Annotated, Any, cast

import msgspec

from ...messages import MessageType, ModelStats
from ..coerce import mapping, optional_str
from ..files import inside_folder
from ..lazy import OnDemand
from ..model import Branch, Fidelity, Numbered, StepFacts, Trajectory, TrajectoryFormat, TrajectoryInfo
from ..parse import loads
from . import chat
from .source import Source, part_bounds, sniff_lines, span

FORMAT: TrajectoryFormat = "claude-code"
JOINED = True
"""Its files are joined with the record `swedeck record` made of the same run (`trajectory/join.py`)."""
BRANCHES = True
"""Branches inside a file open as `PATH#NAME` (a sidechain, a rewound answer, an embedded subagent)."""
_MESSAGE_TYPES = ("user", "assistant", "system")
_CHAIN_TYPES = (*_MESSAGE_TYPES, "attachment")
"""Records of the uuid chain: the messages, and Claude Code's attachments between them (2.1:
the environment, the date, the tools and agents added, what the model was told beside the
person's words; each rendered into the request as a system or user message)."""
_WHY = {
    "attachment": "Claude Code's records of context it did not render into the request (its session context)",
    "prompt_snapshot": "the system prompt each call was sent: the first is the run's system message",
    "cost-state": "the session's own cost (totalCostUSD, per model): read as the agent's total",
    "tools-used": "the tools the session used so far (the tools' calls are the steps')",
    "atis-latch": "Claude Code's internal state",
    "queue-operation": "the person's prompts and task notifications queued and taken: each taken one is in the "
                       "conversation",
    "last-prompt": "the latest prompt and the leaf it led to (the main line ends there too)",
}


def accepts(source: Source) -> bool:
    if source.folder or source.data:
        return False
    for _, record in source.json_lines(limit=8):
        if isinstance(record, Mapping) and "sessionId" in record and "uuid" in record and record.get("type") in _MESSAGE_TYPES:
            return True
    return False


def sniff(name: str, head: bytes, text: str) -> bool:
    """A `.jsonl` whose first whole lines this reader accepts (a folder's listing)."""
    return sniff_lines(accepts, name, text)


class _Part(msgspec.Struct, gc=False):
    """Part of a record read as a struct (what a reader needs of it, the rest passed over),
    read as the record's `dict` would be: `get` gives None for a field it does not hold. Not
    followed by the collector: a head holds no cycle, and a million are made and dropped."""

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)  # a reader asks for fields only: no method is named as one


class _Head(_Part):
    """A record's fields the tree needs, read without building the record (issue 49: a session's
    subagent runs, most of a large file, are never parsed whole when the main line is opened)."""

    type: Any = None
    uuid: Any = None
    parentUuid: Any = None
    logicalParentUuid: Any = None
    isSidechain: Any = None
    subtype: Any = None
    summary: Any = None

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


_decode_head = msgspec.json.Decoder(_Head).decode
_FULL_TYPES = ("api-request-shape", "api-request-blob", "api-request")
ROWS_OF_ALL = 16 << 20
"""A file smaller than this (16 MB) is read for every record's figures, its sidechains' too (a
subagent's file is all sidechain: a session's 404 of them are summed in a second)."""


class _Lines:
    """The file's lines by position: each record's head at once, the whole record when asked.
    Where each line is, kept as two arrays of offsets (a million records, not a million tuples)."""

    def __init__(self, source: Source) -> None:
        self.content = source.content
        self.starts, self.ends = array("q"), array("q")
        self.columns: _Columns | None = _Columns()
        """The plan's figures of each record read for them as the lines were (`_scan`); None once planned."""
        self._full: dict[int, Mapping[str, Any]] = {}
        self._last_index, self._last_record = -1, {}  # type: tuple[int, Mapping[str, Any]]

    def full(self, index: int) -> Mapping[str, Any]:
        record = self._full.get(index)
        if record is None:
            if self._last_index == index:  # the entries of one record (its tool results) read it once
                return self._last_record
            record = loads(self.line(index))
            self._last_index, self._last_record = index, record
        return record

    def line(self, index: int) -> Any:
        return span(self.content, self.starts[index], self.ends[index])

    def main_heads(self, indices: Iterable[int]) -> Iterator[Any]:
        """Each record's `_MainHead`, or the record whole where it does not fit one."""
        content, starts, ends, kept = self.content, self.starts, self.ends, self._full
        for index in indices:
            head: Any = kept.get(index) if kept else None
            if head is None:
                try:
                    head = _decode_main(span(content, starts[index], ends[index]))
                except msgspec.MsgspecError:
                    head = self.full(index)
            yield head

    def planning(self, chain: list[int]) -> tuple[_Columns, array[int]]:
        """The columns, and the row of each record of `chain` in them (those read for the tree
        alone read now); the lines no longer hold the columns (the entries hold the lines)."""
        columns, self.columns = cast(_Columns, self.columns), None
        row_of = columns.row_of
        missing = [index for index in chain if row_of[index] < 0]
        for index, head in zip(missing, self.main_heads(missing), strict=True):
            row_of[index] = columns.add(head)
        return columns, array("l", map(row_of.__getitem__, chain))

    def said(self, index: int) -> Any:
        """Record `index`'s `_Said`, or the record whole where it does not fit one."""
        kept = self._full.get(index)
        if kept is not None:
            return kept
        try:
            return _decode_said(self.line(index))
        except msgspec.MsgspecError:
            return self.full(index)

    def keep(self, index: int, record: Mapping[str, Any]) -> None:
        self._full[index] = record


_NONE_BEFORE = object()
"""What the record before the first is named (nothing is)."""


def _scan(source: Source, info: TrajectoryInfo, tally: chat.Tally, requests: _Requests,
          titles: list[str], start: int = 0, part: bool = False) -> tuple[_Tree, _Lines]:
    """One pass over the lines (from `start`, where a line starts): the tree of the message
    records (in file order; each head dropped once its place in the tree is known), the request
    records and titles; damaged lines said and counted, as `json_lines` does. `part`: the
    records of a file's end, from `start`."""
    lines = _Lines(source)
    tree = _Tree(lines.full, part=part)
    columns = cast(_Columns, lines.columns)
    # Each record is read once for the tree and the plan's figures (`_Columns`), but a record of a
    # sidechain in a large file (a subagent's run inside it: most of it, issue 49), read for the
    # tree alone; its figures are read when a branch's plan needs them. Which one a record is
    # shows only once it is read: records come in runs, so each is read as the one before was.
    every = len(source.content) < ROWS_OF_ALL
    main = True
    starts, starts_append, ends_append = lines.starts, lines.starts.append, lines.ends.append
    named_append, uuids_append, sidechain_append = tree.named.append, tree.uuids.append, tree.sidechain.append
    rows_append, add = columns.row_of.append, columns.add
    last: Any = _NONE_BEFORE
    for number, line_start, line in source.lines(start):
        if isinstance(line, ValueError):  # too long to parse
            chat.skip_damaged(number, line, info, tally)
            continue
        end = line_start + len(line)
        try:
            head: Any = _decode_main(line) if main or every else _decode_head(line)
        except msgspec.MsgspecError:
            try:
                record = loads(line)
            except ValueError as error:
                chat.skip_damaged(number, error, info, tally)
                continue
            if not isinstance(record, Mapping):
                tally.skip(type(record).__name__)
                continue
            head = record  # not the shape the head expects (a field of another type): read whole
        struct = isinstance(head, _Head)
        kind, uuid = (head.type, head.uuid) if struct else (head.get("type"), head.get("uuid"))
        if kind in _CHAIN_TYPES and type(uuid) is str:
            if struct:
                named, sidechain = head.parentUuid, head.isSidechain
                if named is None and head.subtype == "compact_boundary":
                    named = head.logicalParentUuid
            else:
                named, sidechain = _parent(head), head.get("isSidechain")
                lines.keep(len(starts), head)
            starts_append(line_start)  # its place and its tree's (inline: a million lines)
            ends_append(end)
            named_append(True if named == last else named)
            uuids_append(uuid)
            sidechain_append(1 if sidechain else 0)
            last = uuid
            rows_append(-1 if type(head) is _Head else add(head))
            main = not sidechain
        elif kind == "summary":
            titles.append(str(head.get("summary") or ""))
            tally.skip("summary")
        elif kind in _FULL_TYPES and requests.add(kind, line, lines.content, line_start, end):
            continue
        elif kind == "cost-state":
            _cost_state(info, loads(line))
            tally.skip(kind, _WHY[kind])
        else:
            tally.skip(kind, _WHY.get(str(kind)))
    tree.done()
    return tree, lines


def read(source: Source) -> Trajectory:
    tally = chat.Tally()
    info = TrajectoryInfo()
    requests = _Requests()
    titles: list[str] = []
    tree, lines = _scan(source, info, tally, requests, titles)
    if source.branch is not None and source.branch not in tree.position:
        raise ValueError(f"#{source.branch}: no record with that uuid in this session")
    main = [i for i in tree.leaves if not tree.sidechain[i]] or tree.leaves  # a subagent file: all sidechain
    leaf = tree.position[source.branch] if source.branch is not None else main[-1] if main else None
    chain = tree.chain(leaf)
    fidelity = chat.reconstructed(branches=max(0, len(tree.leaves) - 1))
    if tree.implied:
        fidelity.notes.append(f"{tree.implied} records name no parent in this file (parentUuid null or not found): "
                              "each continues the record before it")
    fidelity.openable = [Branch(tree.label(other), f"{source.path}#{tree.full(other).get('uuid')}")
                         for other in tree.leaves if other != leaf]
    sidechain = tree.sidechain.count(1)
    if sidechain:
        fidelity.notes.append(f"{sidechain} sidechain records (subagent runs inside this file) are kept as branches")
    subagents = _subagent_files(source)
    if subagents:
        fidelity.branches += len(subagents)
        fidelity.openable += [Branch(f"subagent file {path.stem}", str(path)) for path in subagents]
        fidelity.notes.append(f"{len(subagents)} subagent files beside it (b opens them, as branches): "
                              + ", ".join(path.name for path in subagents[:5]))
    if titles:
        fidelity.notes.append(f"session title: {titles[-1][:120]}")
    del tree  # its uuids (a million strings) are not held while the plan is made
    plan = _Plan(requests.requests, info.model_stats)
    columns, rows = lines.planning(chain)
    entries = _planned(lines, chain, rows, columns, tally, plan=plan)  # each entry built from its records when shown
    info.session = _session(lines.said(chain[0]) if chain else {})
    info.model_name = next((columns.answer(row)[1] for row in rows if columns.kind(row) == _ASSISTANT), None)
    del columns, rows  # planned: not held beside the entries
    tally.said(fidelity)
    # Claude Code's own request records name the main line's messages by their content: read whole for them
    prompts = requests.prompts(plan.refs, chain if requests.requests else [], lines.full, fidelity)
    info.raw["outline"] = plan.outline
    trajectory = chat.trajectory(source, FORMAT, entries, info, fidelity, recorded_prompts=prompts,
                                 provenance=lambda number: "recorded" if number in prompts else None)
    trajectory.rebuilt_requests = requests.bodies
    trajectory.facts = plan.facts
    return trajectory


_OPENING_RECORDS = 50
"""The first records `part` reads for the session and the model, as the whole reading takes them."""


def part(source: Source, at_end: bool) -> Trajectory | None:
    """The main line's last steps, read from the session's end alone (issue 49: a 100 MB session
    with 400 subagent runs inside it shows its last step without its uuid tree): the same
    reading over the records of its last bytes, the main line followed back from its last leaf
    until a record whose parent is before them; its first step may have begun before them (it
    is kept for what the next one shows of it, not shown: `ReadingDocument`). The last leaf, and the chain back from it, are the whole reading's: a record's
    children come after it. None for a file's start (the main line is the path to the last
    leaf: where it goes is known at the end), for a branch, when the end holds fewer than two
    whole main-line steps within `source.PART_MAX_BYTES`, or the file's text was decoded (its
    offsets are characters). A session with Claude Code's own request records shows its end
    without them (its steps' prompts are rebuilt over the whole file: they come with it)."""
    content = source.content
    if not at_end or source.branch is not None or not isinstance(content, bytes | mmap.mmap):
        return None
    for start, _ in part_bounds(content, at_end=True):
        tally, info, requests = chat.Tally(), TrajectoryInfo(), _Requests()
        tree, lines = _scan(source, info, tally, requests, [], start, part=True)  # its request records join when the whole is read
        main = [i for i in tree.leaves if not tree.sidechain[i]]
        chain = tree.chain(main[-1]) if main else []
        if not chain or chain[0] not in tree.cut:
            continue  # no main line here, or one that begins in the part: read more
        columns, rows = lines.planning(chain)
        entries = _planned(lines, chain, rows, columns, tally, task=True)
        starts = [index for index, entry in enumerate(entries) if entry.is_step]
        if len(starts) < 2:
            continue
        info.warnings.clear()  # their line numbers count from the part: the whole reading says them
        _opening(source, info)
        fidelity = chat.reconstructed()
        # from the answer of the step at the cut (kept out of sight: `ReadingDocument`)
        return _built(source, entries[starts[0]:], [step - starts[0] for step in starts], info, fidelity)
    return None


def _built(source: Source, entries: list[chat.Entry], starts: list[int], info: TrajectoryInfo,
           fidelity: Fidelity) -> Trajectory:
    return chat.built(source, FORMAT, len(entries), starts, lambda index: entries[index].build(), info, fidelity)


def _session(record: Any) -> dict[str, Any]:
    """What a record of the main line says of the session: its id, folder, CLI version and branch."""
    return {key: record.get(key) for key in ("sessionId", "cwd", "version", "gitBranch") if record.get(key)}


def _opening(source: Source, info: TrajectoryInfo) -> None:
    """The session and the model from the file's first records, as the whole reading takes
    them from the main line's first (they are the file's first but where a session was forked)."""
    for _, record in source.json_lines(limit=_OPENING_RECORDS):
        record = mapping(record)
        if record.get("type") not in _MESSAGE_TYPES or record.get("isSidechain"):
            continue
        if not info.session:
            info.session = _session(record)
        model = optional_str(mapping(record.get("message")).get("model")) if record.get("type") == "assistant" else None
        if model:
            info.model_name = model
            return


class _CallInput(_Part):
    """Of a tool call's input, what says it is a shell command (`chat.shell_command`)."""

    command: Any = msgspec.UNSET
    cmd: Any = msgspec.UNSET


class _Block(_Part):
    type: Any = None
    name: Any = None
    input: _CallInput | None = None


_Count = Annotated[int, msgspec.Meta(ge=0, le=chat.MAX_COUNT)] | None


class _UsageHead(_Part):
    """A call's usage where each figure is a count (checked as it is decoded: no Python runs
    per figure, a million records); a usage of any other shape fails the head, and its record
    is read whole (`_usage`)."""

    input_tokens: _Count = 0
    output_tokens: _Count = 0
    cache_read_input_tokens: _Count = 0
    cache_creation_input_tokens: _Count = 0


class _MessageHead(_Part):
    id: Any = None
    model: Any = None
    usage: _UsageHead | None = None
    stop_reason: Any = None
    content: str | list[_Block | str] | None = None
    """Each block's type (its text, input and output are passed over)."""


class _AttachmentHead(_Part):
    type: Any = None
    cliPrefix: Any = None


class _ToolResultHead(_Part):
    agentId: Any = None


class _MainHead(_Head):
    """What the main line's plan needs of a record (`_planned`), the tree's fields and more:
    the rest is read when its entry is built."""

    isMeta: Any = None
    promptSource: Any = None
    """`system`: a user record Claude Code wrote itself (a task notification), not the person's words."""
    attachment: _AttachmentHead | None = None
    renderedRole: Any = None
    isCompactSummary: Any = None
    compactMetadata: Any = None
    requestRef: Any = None
    toolUseResult: _ToolResultHead | str | None = None
    """What a tool call returned, beside its result (an `Agent` call: the subagent it started); a list: read whole."""
    message: _MessageHead | None = None


_decode_main = msgspec.json.Decoder(_MainHead).decode
_NO_MESSAGE = _MessageHead()


class _Said(_Part):
    """What a record of the main line says of the session (`_session`) and its time: read of
    its first and last records alone (not of a million)."""

    sessionId: Any = None
    cwd: Any = None
    version: Any = None
    gitBranch: Any = None
    timestamp: Any = None


_decode_said = msgspec.json.Decoder(_Said).decode


# What the plan needs of each record of the main line, taken once from its head into columns
# (issue 61.14: the plan read a million heads through `get`, each a Python call): its kind, then per kind.
_ASSISTANT, _BOUNDARY, _SYSTEM, _TURN_SYSTEM, _TURN_USER, _SNAPSHOT, _ATTACHMENT, _SUMMARY, _USER = range(1, 10)
_META, _PROMPTED, _LISTED, _SAID, _PREFIXED = 1, 2, 4, 8, 16
"""Flags: `isMeta`; `promptSource: system`; content a list; a block that is no tool result; a
snapshot's `cliPrefix`."""


class _Columns:
    """The plan's figures of records, a row each (`row_of`: a record's, by its position among the
    lines; -1 until read), packed in few numbers (a million records: a call per row, not one per
    figure). Strings that repeat (an answer's model and stop reason, subtypes) are numbers into
    one list; the rare ones (a request reference, a subagent's id, a boundary's figure) sit in
    dicts by row."""

    def __init__(self) -> None:
        self.row_of = array("l")
        self.rows = array("q")
        """Four per row: its kind, flags and label (`code`: `kind | flags << 8 | label << 16`, the
        label a system record's subtype or an attachment's type, a number into `words`); an
        assistant record's `message.id` hashed (0: none; one call's records share it); its tool
        calls (a user record's tool results) and shell commands, as `calls | shells << 32` (the
        sum of two rows' is their sums'); an assistant record's slot in `answers` (-1: none)."""
        self.answers = array("q")
        """Five per slot: prompt, completion, cached, cache write tokens (a prompt of -1: no
        usage), and its model and stop reason (a number into `pairs`)."""
        self.words: Numbered[str | None] = Numbered(None)
        self.pairs: Numbered[tuple[str | None, str | None]] = Numbered()
        self.refs: dict[int, str] = {}
        self.agents: dict[int, str] = {}
        self.pre_tokens: dict[int, int] = {}

    def kind(self, row: int) -> int:
        return self.rows[4 * row] & 255

    def label(self, row: int) -> str | None:
        return self.words.values[self.rows[4 * row] >> 16]

    def answer(self, row: int) -> tuple[tuple[int, int, int, int], str | None, str | None]:
        """An assistant record's usage figures (`answers`), model and stop reason."""
        slot = self.rows[4 * row + 3]
        prompt, completion, cached, written, pair = self.answers[5 * slot:5 * slot + 5]
        return (prompt, completion, cached, written), *self.pairs.values[pair]

    def add(self, head: Any) -> int:
        """A record's row, from its head (a `_MainHead`; a record read whole is read as one first)."""
        if type(head) is not _MainHead:
            head = _as_head(head)
        row = len(self.rows) >> 2
        kind, message = head.type, head.message
        if kind == "assistant":  # a million of them: inline
            if message is None:
                message = _NO_MESSAGE
            named, calls, shells = message.id, 0, 0
            try:
                identity = (hash(named) or 1) if named else 0
            except TypeError:  # an id that is a list or an object: none
                identity = 0
            content = message.content
            if type(content) is list:
                for block in content:
                    if type(block) is _Block and block.type in _CALLS:
                        calls += 1
                        shells += _shell(block)
            if head.requestRef is not None:
                self.refs[row] = str(head.requestRef)
            model, stop = message.model, message.stop_reason
            answer = (model if type(model) is str else optional_str(model),
                      stop if type(stop) is str else optional_str(stop))
            pair = self.pairs.number(answer)
            slot = len(self.answers) // 5
            usage = message.usage
            if usage is None:
                self.answers.extend((-1, 0, 0, 0, pair))
            else:  # as `_usage` reads it (each figure a count: checked as it was decoded)
                read, written = usage.cache_read_input_tokens or 0, usage.cache_creation_input_tokens or 0
                prompt, completion = (usage.input_tokens or 0) + read + written, usage.output_tokens or 0
                if prompt > chat.MAX_COUNT:  # as `chat.usage` takes the sum: past any provider's count, none
                    prompt = 0
                self.answers.extend((prompt, completion, read, written, pair) if prompt or completion or read
                                    else (-1, 0, 0, 0, pair))
            self.rows.extend((_ASSISTANT, identity, calls | shells << 32, slot))
            return row
        flags = calls = label = 0
        if kind == "system":
            code = _BOUNDARY if head.subtype == "compact_boundary" else _SYSTEM
            if code == _BOUNDARY:
                metadata = head.compactMetadata
                pre = metadata.get("preTokens") if isinstance(metadata, Mapping) else None
                self.pre_tokens[row] = pre if isinstance(pre, int) else 0
            else:
                label = self.words.number(str(head.subtype or "message"))
        elif kind == "attachment":
            attachment, role = head.attachment, head.renderedRole
            if role == "system":
                code = _TURN_SYSTEM
            elif role == "user":
                code = _TURN_USER
            elif attachment is not None and attachment.type == "prompt_snapshot":
                code = _SNAPSHOT
                flags = _PREFIXED if attachment.cliPrefix else 0
            else:
                code = _ATTACHMENT
                label = self.words.number(str(attachment.type if attachment is not None and attachment.type else "unknown"))
        elif head.isCompactSummary:
            code = _SUMMARY
        else:
            code = _USER
            result = head.toolUseResult
            agent = result.agentId if type(result) is _ToolResultHead else None
            if isinstance(agent, str) and agent:
                self.agents[row] = agent
            flags = (_META if head.isMeta else 0) | (_PROMPTED if head.promptSource == "system" else 0)
            content = message.content if message is not None else None
            if type(content) is list:
                flags |= _LISTED
                for block in content:
                    if type(block) is _Block and block.type == "tool_result":
                        calls += 1
                if calls < len(content):
                    flags |= _SAID
        self.rows.extend((code | flags << 8 | label << 16, 0, calls, -1))
        return row


_NOTHING: Any = MappingProxyType({})
"""The `extra` of a planned entry that knows nothing more yet (read, never written: one for all)."""


class _Later(chat.Later, gc=False):
    """An entry of the main line, from its records read whole. `how`: a model call (`records`:
    its records), a compaction's summary (`before`: the boundary's figure), or entry `position`
    of a user record (`first`: it may be the task). Not followed by the collector: it holds no
    cycle, and a session has hundreds of thousands."""

    lines: Any = None
    at: int | tuple[int, ...] = ()
    """Its record's position, or its records' (a session's 200,000 entries are one record each)."""
    how: str = "response"
    position: int = 0
    first: bool = False
    before: int | None = None

    @property
    def records(self) -> tuple[int, ...]:
        return (self.at,) if isinstance(self.at, int) else self.at

    def make(self) -> chat.Entry:
        full = self.lines.full
        if self.how == "response":
            return _response([full(index) for index in self.records])
        record = full(self.records[0])
        if self.how == "attachment":
            return _attachment([full(index) for index in self.records])
        if self.how == "snapshot":  # Claude Code's prefix line, then its system prompt's parts
            snapshot = mapping(record.get("attachment"))
            prompt = snapshot.get("systemPrompt")
            blocks = [snapshot.get("cliPrefix"), "\n\n".join(part for part in prompt if isinstance(part, str))
                      if isinstance(prompt, list) else prompt]  # its parts are one block, as Claude Code sends them
            return chat.Entry("system", chat.text_of([{"type": "text", "text": block} for block in blocks
                                                      if isinstance(block, str) and block]), MessageType.SYSTEM,
                              {"agent_context": "Claude Code's system prompt (its snapshot)"})
        if self.how == "compaction":
            return chat.compaction(chat.text_of(mapping(record.get("message")).get("content")), before=self.before,
                                   source="claude-code compact")
        return _user(record, mapping(record.get("message")), self.first)[self.position]


class _Plan(msgspec.Struct):
    """What the whole reading's plan keeps beside the entries: each step's request id, by
    step (one string with the request's own), and the usage's totals."""

    requests: Mapping[str, _Request]
    stats: ModelStats
    refs: list[str | None] = msgspec.field(default_factory=list)
    facts: StepFacts = msgspec.field(default_factory=StepFacts)
    """Each step's model, usage and calls (the summary and the cost read them, not the steps)."""
    slots: array[int] = msgspec.field(default_factory=lambda: array("q"))
    """Each step's answer (its last record's slot in `_Columns.answers`), as the plan goes."""
    counts: array[int] = msgspec.field(default_factory=lambda: array("q"))
    """Each step's tool calls and shell commands, as `_Columns.rows` keeps them."""
    outline: dict[str, Any] = msgspec.field(default_factory=lambda: {
        "cached_tokens": 0, "cache_write_tokens": 0, "models": [], "first_at": None, "last_at": None, "stop": None,
        "agent_steps": {}})
    """The run in outline (`core/subagents.py` reads it, not every step): the cache's tokens, the
    models that answered, its first and last timestamps, how its last answer stopped, and the
    step whose call started each subagent (its result's `toolUseResult.agentId`)."""

    def request(self, columns: _Columns, first: int) -> None:
        """A model call's request (its first record's, row `first`)."""
        ref = columns.refs.get(first)
        self.refs.append(self.requests[ref].id if ref is not None and ref in self.requests else ref)

    def summed(self, columns: _Columns) -> None:
        """Every step planned: the usage's totals, the models that answered, how the last answer
        stopped, and each step's facts, over the columns at once (a million steps)."""
        slots, answers, count = self.slots, columns.answers, len(self.slots)
        prompt, completion, cached, written, pair = (array("q", map(answers[figure::5].__getitem__, slots))
                                                     for figure in range(5))
        stats, outline = self.stats, self.outline
        stats.api_calls += count
        stats.prompt_tokens += sum(prompt) + prompt.count(-1)  # -1: no usage (its other figures 0)
        stats.completion_tokens += sum(completion)
        outline["cached_tokens"] += sum(cached)
        outline["cache_write_tokens"] += sum(written)
        models, stops = [model for model, _ in columns.pairs.values], [stop for _, stop in columns.pairs.values]
        outline["models"] += [model for model in dict.fromkeys(map(models.__getitem__, pair)) if model]
        outline["stop"] = next((stop for stop in map(stops.__getitem__, reversed(pair)) if stop), None)
        if not columns.refs:
            self.refs = [None] * count
        counts = self.counts
        self.facts = StepFacts(prompt, completion, cached, written, array("q", (both & 0xFFFFFFFF for both in counts)),
                               array("q", (both >> 32 for both in counts)), pair, models)

    def saw(self, lines: _Lines, chain: list[int]) -> None:
        """The main line's first and last times: of the first record, and the last, that has one
        (read from their heads alone)."""
        for order in (chain, reversed(chain)):
            for index in order:
                at = lines.said(index).get("timestamp")
                if isinstance(at, str):
                    self.outline["first_at" if order is chain else "last_at"] = at
                    break


def _planned(lines: _Lines, chain: list[int], rows: array[int], columns: _Columns, tally: chat.Tally,
             task: bool = False, plan: _Plan | None = None) -> list[chat.Entry]:
    """The main line's entries from its records' figures (`rows`: each chain record's row in
    `columns`): each entry's role, type, usage and request now, its text when it is shown. One
    model call is the run of `assistant` records of one `message.id`; a user record is a tool
    message per `tool_result` block, then its text; the user record after a compact boundary
    (`isCompactSummary`) is a compaction marker, with the boundary's `preTokens`. `task`: the
    task was before these records (a file's end). `plan`: what the whole reading keeps of each
    step beside its entry (its request, usage)."""
    figures = columns.rows
    entries: list[chat.Entry] = []
    append = entries.append
    pre_tokens: int | None = None
    snapshot: int | None = None
    prefixed = False
    turn: _Later | None = None
    """The latest system turn of attachments: the next one joins it unless a message came between."""
    if plan is not None and chain:
        plan.saw(lines, chain)
    place, count = 0, len(chain)
    while place < count:  # by place on the chain; `at`, the record's position among the lines; `row`, its figures'
        at, row = chain[place], rows[place]
        code = figures[4 * row]
        kind, flags = code & 255, code >> 8 & 255
        if kind == _ASSISTANT:
            first_row, counts, identity = row, figures[4 * row + 2], figures[4 * row + 1]
            records: int | tuple[int, ...] = at
            # the records after it of the same message (only an assistant row has an identity)
            while identity and place + 1 < count and figures[4 * rows[place + 1] + 1] == identity:
                place += 1
                row = rows[place]
                counts += figures[4 * row + 2]
                records = (*(records if isinstance(records, tuple) else (records,)), chain[place])
            called = counts & 0xFFFFFFFF
            if plan is not None:  # the step's request and usage, kept beside the entry (which holds neither: 200,000 steps)
                if columns.refs:
                    plan.request(columns, first_row)
                plan.slots.append(figures[4 * row + 3])  # its answer, summed when all are planned (`_Plan.summed`)
                plan.counts.append(counts)
            append(_Later("assistant", "", MessageType.ACTION if called else MessageType.ASSISTANT_MESSAGE,
                          _NOTHING, lines=lines, at=records))
        elif kind == _BOUNDARY:
            pre_tokens = columns.pre_tokens.get(row, 0)
        elif kind == _SYSTEM:
            tally.skip(f"system/{columns.label(row)}")
        elif kind in (_TURN_SYSTEM, _TURN_USER):
            if kind == _TURN_SYSTEM and turn is not None and entries and entries[-1] is turn:
                turn.at = (*turn.records, at)  # one system turn, as Claude Code sends it
            else:
                role = "system" if kind == _TURN_SYSTEM else "user"
                later = _Later(role, "", MessageType.USER_MESSAGE, _NOTHING, lines=lines, at=at, how="attachment")
                append(later)
                turn = later if kind == _TURN_SYSTEM else turn
        elif kind == _SNAPSHOT:
            if snapshot is None or (not prefixed and flags & _PREFIXED):
                snapshot, prefixed = at, bool(flags & _PREFIXED)  # the first whole one
            tally.skip("attachment/prompt_snapshot", _WHY["prompt_snapshot"])
        elif kind == _ATTACHMENT:
            tally.skip(f"attachment/{columns.label(row)}", _WHY["attachment"])
        elif kind == _SUMMARY:
            append(_Later("user", "", MessageType.COMPACTION, _NOTHING, lines=lines, at=at,
                          how="compaction", before=pre_tokens or None))
            pre_tokens = None
        else:
            if plan is not None and columns.agents:  # an `Agent`/`Task` call's result
                agent = columns.agents.get(row)
                if agent is not None:
                    plan.outline["agent_steps"].setdefault(agent, plan.stats.api_calls + len(plan.slots))
            first = not flags & (_META | _PROMPTED) and not task
            results = figures[4 * row + 2] if flags & _LISTED else 0
            for position in range(results):
                append(_Later("tool", "", MessageType.OBSERVATION, _NOTHING, lines=lines, at=at, how="user",
                              position=position, first=first))
            if not flags & _LISTED or flags & _SAID:
                append(_Later("user", "", MessageType.TASK if first else MessageType.USER_MESSAGE, _NOTHING,
                              lines=lines, at=at, how="user", position=results, first=first))
                task = task or first
        place += 1
    if snapshot is not None and not _system_first(entries):
        entries.insert(0, _Later("system", "", MessageType.SYSTEM, _NOTHING, lines=lines, at=snapshot, how="snapshot"))
    if plan is not None:
        plan.summed(columns)
    return entries


def _system_first(entries: list[chat.Entry]) -> bool:
    """Whether the entries start with a system message already."""
    return bool(entries) and entries[0].kind == MessageType.SYSTEM


_CALLS = ("tool_use", "server_tool_use")


def _shell(block: _Block) -> bool:
    """A tool call's block is a shell command's, as `_response` makes its action (`chat.call`)."""
    arguments = block.input
    if arguments is None:
        return False
    command = arguments.command if arguments.command is not msgspec.UNSET else \
        arguments.cmd if arguments.cmd is not msgspec.UNSET else None
    name = block.name if type(block.name) is str else str(block.name or "")
    if type(command) is str:  # the usual call: its name alone decides
        return _shell_tool(name)
    return chat.shell_command(name, {"command": command}) is not None


_shell_tool = functools.lru_cache(maxsize=256)(chat.shell_tool)
"""`chat.shell_tool`, once per name (a session's tools are a handful, its calls a million)."""


def _usage(usage: Any) -> Any:
    """A call's usage as `_response` reads it from its last record."""
    usage = mapping(usage)
    if not usage:
        return None
    # each figure a count or 0 before they are added (a string or a list there reads as missing, as elsewhere)
    read, created = chat.count(usage.get("cache_read_input_tokens")), chat.count(usage.get("cache_creation_input_tokens"))
    return chat.usage(chat.count(usage.get("input_tokens")) + read + created, usage.get("output_tokens"), read, created)


def _as_head(record: Mapping[str, Any]) -> _MainHead:
    """A record read whole (it did not fit `_MainHead`: a field of another type) as the head
    the plan reads (`_Columns.add`): each part of the wrong type read as missing."""
    message, attachment, result = (mapping(record.get(key)) for key in ("message", "attachment", "toolUseResult"))
    return _MainHead(type=record.get("type"), subtype=record.get("subtype"), isMeta=record.get("isMeta"),
                     promptSource=record.get("promptSource"), renderedRole=record.get("renderedRole"),
                     isCompactSummary=record.get("isCompactSummary"), compactMetadata=record.get("compactMetadata"),
                     requestRef=record.get("requestRef"),
                     attachment=_AttachmentHead(type=attachment.get("type"), cliPrefix=attachment.get("cliPrefix"))
                     if attachment else None,
                     toolUseResult=_ToolResultHead(agentId=result.get("agentId")) if result else None,
                     message=_message_head(message) if message else None)


def _message_head(message: Mapping[str, Any]) -> _MessageHead:
    usage, content = mapping(message.get("usage")), message.get("content")
    counts = {name: chat.count(usage.get(name)) for name in _UsageHead.__struct_fields__}
    return _MessageHead(id=message.get("id"), model=message.get("model"), stop_reason=message.get("stop_reason"),
                        usage=_UsageHead(**counts) if usage else None,
                        content=[_block_head(block) for block in content] if isinstance(content, list)
                        else content if isinstance(content, str) else None)


def _block_head(block: Any) -> _Block | str:
    """A content block as `_Block` (a string stays one; anything else is a block of no type)."""
    if isinstance(block, str):
        return block
    block = mapping(block)
    arguments = block.get("input")
    if isinstance(arguments, str):  # as `chat.call` reads it
        try:
            arguments = json.loads(arguments)
        except ValueError:
            arguments = None
    arguments = mapping(arguments)
    return _Block(type=block.get("type"), name=block.get("name"),
                  input=_CallInput(**{key: arguments[key] for key in ("command", "cmd") if key in arguments})
                  if arguments else None)


def _parent(record: Mapping[str, Any]) -> str | None:
    parent = record.get("parentUuid")
    if parent is None and record.get("subtype") == "compact_boundary":
        parent = record.get("logicalParentUuid")
    return parent if isinstance(parent, str) else None


class _Tree:
    """The session's records as a tree over their positions in the file (a uuid can repeat: a
    resumed session copies records). A record's parent is the latest earlier record with the
    uuid it names; a record that names none found in the file (the first one, and any after it
    that Claude Code, or whatever wrote the file, left unlinked) continues the record before
    it, except a sidechain's first record, which starts its own run. Over the records of a
    file's end (`part`), a record whose parent is not among them, or whose record before is
    not, starts a run that is `cut`: what came before it is not known."""

    def __init__(self, full: Callable[[int], Mapping[str, Any]], part: bool = False):
        self.full = full
        """A record read whole, by position (a branch's label reads its last one)."""
        self.part = part
        self.named: list[Any] = []
        """What each record names as its parent (`_parent`), as the scan appends it: `True`
        for the record before it (the usual chain: no string kept), else what it names (a
        uuid, or None). Read by `done`, then let go."""
        self.uuids: list[str] = []
        """Each record's uuid, as the scan appends it; let go by `done` (`position` has them)."""
        self.sidechain = bytearray()
        """1 for a record of a sidechain (a subagent's run inside the file)."""
        self.parent = array("q")
        """Each record's parent's position, -1 for none (`done`)."""
        self.position: dict[str, int] = {}
        """Each uuid's latest position: what `PATH#uuid` opens."""
        self.implied = 0
        self.cut: set[int] = set()
        self.leaves: list[int] = []
        """The records nothing continues from, in file order: the main line's end and each
        branch's (`done`)."""
        self._depth: array[int] | None = None


    def _found(self, index: int, named: Any, position: Mapping[str, int]) -> int:
        """The parent of record `index`, which names `named`: the record `position` has of that
        uuid, if it is before it."""
        parent = position.get(named, -1) if type(named) is str else -1
        return parent if 0 <= parent < index else self._unlinked(index, type(named) is str, bool(self.sidechain[index]))

    def _unlinked(self, index: int, named: bool, sidechain: bool) -> int:
        """The parent of record `index`, which names none found before it (`named`: it names one)."""
        if self.part and (named or index == 0):
            self.cut.add(index)
            return -1
        if index == 0 or sidechain:
            return -1
        self.implied += 1
        return index - 1

    def done(self) -> None:
        """Every record added (`named`, `uuids`, `sidechain`, appended by the scan: a million
        records, no call each): each one's parent, the latest record before it with the uuid it
        names; each uuid's latest position; the leaves."""
        named, count = self.named, len(self.uuids)
        self.position = dict(zip(self.uuids, range(count), strict=True))
        if len(self.position) == count:  # no uuid repeats: each parent the record before, or the one its uuid names
            self.parent = array("q", range(-1, count - 1))
            for index in itertools.compress(range(count), map(operator.is_not, named, itertools.repeat(True))):
                self.parent[index] = self._found(index, named[index], self.position)
        else:  # a resumed session copies records: each one's parent the latest before it of that uuid
            self.position.clear()
            for index, (name, uuid) in enumerate(zip(named, self.uuids, strict=True)):
                self.parent.append(index - 1 if name is True else self._found(index, name, self.position))
                self.position[uuid] = index
        self.named, self.uuids = [], []
        continued = bytearray(count)
        for parent in self.parent:
            if parent >= 0:
                continued[parent] = 1
        self.leaves = [index for index, child in enumerate(continued) if not child]

    def depth(self, index: int) -> int:
        """Records from the root to record `index` (parents come earlier: one pass, for all, when first asked)."""
        if self._depth is None:
            depth = self._depth = array("q")
            for parent in self.parent:
                depth.append(1 if parent < 0 else depth[parent] + 1)
        return self._depth[index]

    def chain(self, leaf: int | None) -> list[int]:
        """The positions from the root to `leaf` (parents always come earlier: no cycle)."""
        chain: list[int] = []
        while leaf is not None and leaf >= 0:
            chain.append(leaf)
            leaf = self.parent[leaf]
        chain.reverse()
        return chain

    def label(self, leaf: int) -> str:
        """What a branch is, for the list `b` shows: a sidechain (a Task's run) or a rewound line,
        its length, and the first words of its last message."""
        record = self.full(leaf)
        kind = "sidechain" if record.get("isSidechain") else "branch"
        words = " ".join(_words(mapping(record.get("message")).get("content")).split())[:60]
        return f"{kind} of {self.depth(leaf)} records" + (f", ending {words!r}" if words else "")


def _words(content: Any) -> str:
    """A record's content as a person reads it, for a branch's label: its text, a tool call as
    `Bash: ls`, a tool result as its output (never the blocks' JSON)."""
    if not isinstance(content, list):
        return chat.text_of(content)
    words = []
    for block in content:
        if isinstance(block, str):
            words.append(block)
            continue
        block = mapping(block)
        if block.get("type") in ("tool_use", "server_tool_use"):
            name = str(block.get("name") or "")
            _, action = chat.call("", name, block.get("input") or {})
            words.append(f"{name}: {action.command}" if action.unknown.get("shell") else action.command)
        elif block.get("type") == "tool_result":
            words.append(chat.text_of(block.get("content")))
        elif block.get("type") in ("thinking", "redacted_thinking"):
            continue
        else:
            words.append(chat.text_of(block.get("text")) if block.get("type") == "text" else f"[{block.get('type')}]")
    return " ".join(word for word in words if word)


def _subagent_files(source: Source) -> list[Any]:
    folder = source.path.with_suffix("") / "subagents"
    return sorted(path for path in folder.glob("*.jsonl") if inside_folder(path, folder)) if folder.is_dir() else []


def _response(group: list[Mapping[str, Any]]) -> chat.Entry:
    texts, reasoning, calls = [], [], []
    for record in group:
        content = mapping(record.get("message")).get("content")
        for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            block = {"type": "text", "text": block} if isinstance(block, str) else mapping(block)
            if block.get("type") == "text":
                texts.append(str(block.get("text") or ""))
            elif block.get("type") in ("thinking", "redacted_thinking"):
                reasoning.append(str(block.get("thinking") or "[redacted thinking]"))
            elif block.get("type") in ("tool_use", "server_tool_use"):
                calls.append(chat.call(str(block.get("id") or ""), str(block.get("name") or ""), block.get("input") or {}))
    last = mapping(group[-1].get("message"))
    return chat.assistant("\n".join(texts), calls, reasoning="\n".join(reasoning) or None,
                          usage=_usage(last.get("usage")),
                          finish_reason=optional_str(last.get("stop_reason")), model=optional_str(last.get("model")),
                          uuids=[record.get("uuid") for record in group], timestamp_text=optional_str(group[0].get("timestamp")),
                          request_ref=optional_str(group[0].get("requestRef")))


_REMINDER = re.compile(r"\A<system-reminder>\n?(.*?)\n?</system-reminder>\Z", re.DOTALL)


def _attachment(records: list[Mapping[str, Any]]) -> chat.Entry:
    """Attachments Claude Code rendered into the request, as it sends them: a user-role one as
    its text, consecutive system-role ones as one system turn (each without its reminder tags,
    joined by a blank line); labelled as Claude Code's own context."""
    texts = []
    for record in records:
        rendered = record.get("rendered")
        parts = rendered if isinstance(rendered, list) else [rendered]
        text = "\n".join(chat.text_of(mapping(part).get("content")) if isinstance(part, Mapping) else chat.text_of(part)
                         for part in parts if part is not None)
        if record.get("renderedRole") == "system":
            found = _REMINDER.match(text)
            text = found.group(1) if found else text
        texts.append(text)
    first = records[0]
    role = "system" if first.get("renderedRole") == "system" else "user"
    kinds = [mapping(record.get("attachment")).get("type") for record in records]
    return chat.Entry(role, "\n\n".join(texts), MessageType.USER_MESSAGE,
                      {"uuid": first.get("uuid"), "agent_context": "Claude Code's context", "attachment": kinds})


def _cost_state(info: TrajectoryInfo, record: Any) -> None:
    """`cost-state`: the session's own total cost and per-model usage, as Claude Code counts them."""
    record = mapping(record)
    total = record.get("totalCostUSD")
    if isinstance(total, int | float) and not isinstance(total, bool):
        models = mapping(record.get("modelUsage"))
        info.raw["agent_cost"] = {"total_usd": float(total), "by_model": {
            str(name): dict(mapping(usage)) for name, usage in models.items()},
            "unknown_model_cost": bool(record.get("hasUnknownModelCost"))}


def _user(record: Mapping[str, Any], message: Mapping[str, Any], first: bool) -> list[chat.Entry]:
    """A user record's entries: a tool message per `tool_result` block, then its text (the
    task when `first`: no task before it, and not Claude Code's own words)."""
    content = message.get("content")
    extra = {"uuid": record.get("uuid")}
    agent = mapping(record.get("toolUseResult")).get("agentId")
    if isinstance(agent, str) and agent:
        extra["agent_id"] = agent  # the subagent an `Agent`/`Task` call started (its `subagents/agent-ID.jsonl`)
    if record.get("isMeta"):
        extra["is_meta"] = True  # Claude Code's own words in the person's turn (a caveat, a command's output)
    elif record.get("promptSource") == "system":  # a prompt Claude Code queued itself (a task notification)
        origin = mapping(record.get("origin")).get("kind")
        extra["agent_context"] = f"Claude Code's {str(origin).replace('-', ' ')}" if origin else "Claude Code's prompt"
    if not isinstance(content, list):
        return [chat.Entry("user", chat.text_of(content), MessageType.TASK if first else MessageType.USER_MESSAGE, extra)]
    out, texts = [], []
    for block in content:
        if isinstance(block, str):  # a bare string in the list: text, as the API takes it
            texts.append(block)
            continue
        block = mapping(block)
        if block.get("type") == "tool_result":
            text = chat.text_of(block.get("content"))
            result = {**extra, "raw_output": text}
            if block.get("is_error"):
                result["tool_error"] = {"type": None, "message": text}
            out.append(chat.Entry("tool", text, MessageType.OBSERVATION, result,
                                  tool_call_id=optional_str(block.get("tool_use_id"))))
        else:
            texts.append(chat.text_of(block) if block.get("type") == "text" else f"[{block.get('type')}]")
    if texts:
        out.append(chat.Entry("user", "\n".join(texts), MessageType.TASK if first else MessageType.USER_MESSAGE, extra))
    return out


def _wire_body(request: Mapping[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """A request's body as Claude Code sent it, as far as its records give it: the parameters
    (`params`, its `betas` are a header), the system prompt, the tools, the messages, and the
    cache marks at the paths `cacheControl` names."""
    params = request.get("params")
    if isinstance(params, str):
        try:
            params = json.loads(params)
        except ValueError:
            params = None
    whole: dict[str, Any] = {key: value for key, value in (params if isinstance(params, Mapping) else {}).items()
                             if key != "betas"}
    whole.update(json.loads(json.dumps(body)))  # a copy: the marks below never reach the prompt's messages
    for message in whole.get("messages") or []:  # a system turn: blocks in its blob, a string on the wire
        content = message.get("content") if isinstance(message, dict) else None
        if message.get("role") == "system" and isinstance(content, list) and all(
                isinstance(block, dict) and set(block) == {"type", "text"} for block in content):
            message["content"] = "".join(str(block["text"]) for block in content)
    for mark in request.get("cacheControl") or []:
        path: Any = mark.get("path") if isinstance(mark, Mapping) else None
        value = mark.get("value") if isinstance(mark, Mapping) else None
        if not isinstance(path, list) or not path:
            continue
        target: Any = whole
        try:
            for key in path[:-1]:
                target = target[key]
            if isinstance(target[path[-1]], str):  # a system prompt given as text: a block, to carry the mark
                target[path[-1]] = {"type": "text", "text": target[path[-1]]}
            target[path[-1]]["cache_control"] = value
        except (TypeError, KeyError, IndexError):
            continue
    return whole


def message_hash(message: Mapping[str, Any]) -> bytes:
    """Claude Code's name for a message in its `api-request` records: the SHA-256 of its JSON,
    keys sorted, no spaces, characters as they are (its digest: `name` reads a record's hex)."""
    return hashlib.sha256(json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                          .encode("utf-8", "surrogatepass")).digest()


def name(written: Any) -> bytes | str:
    """A message's name as a request record writes it: the digest of a lowercase SHA-256 hex
    (32 bytes held, not a 64-character string), anything else as it is (never anyone's digest)."""
    text = str(written)
    if len(text) == 64:
        try:
            digest = bytes.fromhex(text)
        except ValueError:
            return text
        if digest.hex() == text:
            return digest
    return text


class Known(Mapping[bytes | str, Mapping[str, Any]]):
    """Messages by their name: the blobs, and the transcript's own messages by where their
    records are (read again when a prompt is built): a person's by its record's position, an
    answer by its records' positions."""

    def __init__(self, blobs: Mapping[bytes | str, Mapping[str, Any]], full: Callable[[int], Mapping[str, Any]]) -> None:
        self.blobs, self.full = blobs, full
        self.places: dict[bytes | str, int | tuple[int, ...]] = {}
        """A person's message: its record's position; an answer: `~position` of its one record,
        or its records' positions (a session's 200,000 messages, each held in a few bytes)."""

    def __getitem__(self, key: bytes | str) -> Mapping[str, Any]:
        if key in self.blobs:
            return self.blobs[key]
        place = self.places[key]
        if isinstance(place, int) and place >= 0:
            return {"role": "user", "content": mapping(self.full(place).get("message")).get("content")}
        return {"role": "assistant", "content": [block for index in ((~place,) if isinstance(place, int) else place)
                                                 for block in mapping(self.full(index).get("message")).get("content") or []]}

    def __contains__(self, key: object) -> bool:
        return key in self.blobs or key in self.places

    def __iter__(self) -> Any:
        return iter({**dict.fromkeys(self.blobs), **dict.fromkeys(self.places)})

    def __len__(self) -> int:
        return len(set(self.blobs) | set(self.places))


_UNSAID = "(not a message's name)"
"""A request record's name for a message it does not say (its `tail` not a list, its `keep`
not a number): no message has it, so the request is never rebuilt, never "recorded"."""


class _Request(msgspec.Struct, gc=False):
    """What an `api-request` record says of its messages, and where it is in the file (its
    parameters and cache marks are read again from there, for `--wire`)."""

    id: str
    base: str | None = None
    keep: int = 0
    tail: tuple[bytes | str, ...] = ()
    shapeHash: str | None = None
    start: int = 0
    end: int = 0


class _RequestRecord(_Part):
    """An `api-request` record's fields the chain needs, read without its parameters."""

    id: str
    base: Any = None
    keep: Any = 0
    tail: Any = None
    shapeHash: Any = None


_decode_request = msgspec.json.Decoder(_RequestRecord).decode


EAGER_PROMPTS = 300
"""A session with more recorded requests than this has each step's built when it is asked for."""


class _Requests:
    """Claude Code's own record of its requests (2.1.x): `api-request-shape` (the system prompt
    and tools, by `shapeHash`), `api-request-blob` (a message, by its hash), and `api-request`
    (the parameters, the request it continues (`base`), how many of that one's messages it
    keeps (`keep`) and the hashes of the messages after them (`tail`)). A message the file
    holds as a transcript record (an answer, a tool result) has no blob: its hash is computed
    here. What they give, and what not, is in docs/trajectory-format.md."""

    def __init__(self) -> None:
        self.shapes: dict[str, Mapping[str, Any]] = {}
        self.blobs: dict[bytes | str, Mapping[str, Any]] = {}
        self.requests: dict[str, _Request] = {}
        self.bodies: Mapping[int, dict[str, Any]] = {}
        """Step -> its request's body as rebuilt (`prompt --wire`)."""
        self.mismatched = 0
        """Blobs whose hash is not their message's (never used: a request naming one is rebuilt from the transcript)."""
        self.content: Any = b""
        """The file the request records are in (each read again whole for `--wire`)."""

    def add(self, kind: Any, line: Any, content: Any, start: int, end: int) -> bool:
        """A request record, the line at [start, end) of `content`."""
        if kind == "api-request":
            try:
                head: Any = _decode_request(line)
            except msgspec.MsgspecError:
                head = mapping(loads(line))
                if not isinstance(head.get("id"), str):
                    return False
            base, keep, tail = head.get("base"), head.get("keep"), head.get("tail")
            base = self.requests[base].id if isinstance(base, str) and base in self.requests else \
                str(base) if base else None  # one string for the id and each base naming it
            shape = head.get("shapeHash")
            names = () if tail is None else tuple(map(name, tail)) if isinstance(tail, list) else (_UNSAID,)
            if base and not isinstance(keep, int):  # how much of the base it keeps is not said: not rebuilt
                names = (*names, _UNSAID)
            self.requests[head.get("id")] = _Request(head.get("id"), base, keep if isinstance(keep, int) else 0, names,
                                                     sys.intern(str(shape)) if shape else None, start, end)
            self.content = content
            return True
        record = loads(line)
        if not isinstance(record, Mapping):
            return False
        if kind == "api-request-shape" and isinstance(record.get("shapeHash"), str):
            self.shapes[record["shapeHash"]] = mapping(record.get("shape"))
        elif kind == "api-request-blob" and isinstance(record.get("hash"), str):
            message = mapping(record.get("message"))
            key = name(record["hash"])
            if message_hash(message) == key:
                self.blobs[key] = message
            else:  # a blob is its message's name: one that is not is not the message the request sent
                self.mismatched += 1
        else:
            return False
        return True

    def prompts(self, refs: list[str | None], chain: list[int], full: Callable[[int], Mapping[str, Any]],
                fidelity: Fidelity) -> Mapping[int, list[Any]]:
        """Each step's prompt, rebuilt from the request records where they name every message.
        `refs`: each step's request id; `chain`: the main line's records by position, `full` reads one whole. A message the
        transcript holds is known by its hash and found again in its records when a prompt is
        built (a session's every answer and tool result are not all held at once)."""
        if not self.requests:
            return {}
        from .api_requests import prompt_entries  # the Messages wire format's reading, shared with `swedeck record`

        known = Known(self.blobs, full)
        answers: dict[str, list[int]] = {}
        for index in chain:
            record = full(index)
            message = mapping(record.get("message"))
            if record.get("type") == "assistant" and isinstance(message.get("id"), str):
                answers.setdefault(message["id"], []).append(index)
            elif record.get("type") == "user":
                known.places[message_hash({"role": "user", "content": message.get("content")})] = index
        for indices in answers.values():
            content = [block for index in indices for block in mapping(full(index).get("message")).get("content") or []]
            known.places[message_hash({"role": "assistant", "content": content})] = \
                ~indices[0] if len(indices) == 1 else tuple(indices)
        del answers
        missing = 0
        resolvable: dict[str, bool] = {}
        planned: dict[int, _Request] = {}
        for number, ref in enumerate(refs, start=1):
            request = self.requests.get(ref) if ref else None
            if request is None:
                continue
            if not self._resolvable(request, known, resolvable) or self.shapes.get(str(request.shapeHash or "")) is None:
                missing += 1
                continue
            planned[number] = request
        del resolvable

        def body(number: int) -> dict[str, Any]:
            request = planned[number]
            shape = self.shapes[str(request.shapeHash or "")]
            return {"system": shape.get("system"), "tools": shape.get("tools"),
                    "messages": self._messages(request, known, set()) or []}

        def prompt(number: int) -> list[Any]:
            return [entry.build() for entry in prompt_entries("anthropic", body(number))]

        # Each request holds every message before it: built whole for every step, a session of
        # thousands of steps made millions of messages (issue 63: 40 MB, 24 GB). A long session's
        # prompts and bodies are built when a step's are asked for.
        prompts: Mapping[int, list[Any]]
        if len(planned) <= EAGER_PROMPTS:
            prompts = {number: prompt(number) for number in planned}
            self.bodies = {number: _wire_body(self.record_of(planned[number]), body(number)) for number in planned}
        else:
            prompts = OnDemand(planned, prompt, keep=16)
            self.bodies = OnDemand(planned, lambda number: _wire_body(self.record_of(planned[number]), body(number)),
                                   keep=16)
        if prompts:
            fidelity.parts.update({"system prompt": "recorded", "tools": "recorded"})
            if len(prompts) == len(refs):
                fidelity.prompt = "recorded"
            fidelity.notes.append(f"{len(prompts)} of {len(refs)} steps' requests rebuilt from Claude Code's own "
                                  "api-request records (system prompt without its billing line, tools, messages)")
        if missing:
            fidelity.notes.append(f"{missing} api-request records name a message this file does not hold: "
                                  "those steps are rebuilt from the transcript")
        if self.mismatched:
            fidelity.notes.append(f"{self.mismatched} api-request-blob records whose hash is not their message's: "
                                  "not used (a request that names one is rebuilt from the transcript, not recorded)")
        return prompts

    def record_of(self, request: _Request) -> Mapping[str, Any]:
        """The request's record whole (its parameters, its cache marks)."""
        try:
            return mapping(loads(span(self.content, request.start, request.end)))
        except ValueError:
            return {}

    def _resolvable(self, request: _Request, known: Mapping[bytes | str, Mapping[str, Any]],
                    done: dict[str, bool]) -> bool:
        """Whether the request's every message is known (its tail's, and its base's, found along
        the chain without recursion); each request's answer kept in `done` (linear in the chain)."""
        chain: list[_Request] = []
        link: _Request | None = request
        on_chain: set[str] = set()
        while link is not None and link.id not in done:
            if link.id in on_chain:  # a loop
                for item in chain:
                    done[item.id] = False
                return False
            on_chain.add(link.id)
            chain.append(link)
            base = link.base
            link = self.requests.get(base) if base else None
            if base and link is None:
                done[base] = False
                link = _Request(base)
        ok = True if link is None else done[link.id]
        for item in reversed(chain):
            ok = ok and all(name in known for name in item.tail)
            done[item.id] = ok
        return done[request.id]

    def _messages(self, request: _Request, known: Mapping[bytes | str, Mapping[str, Any]],
                  seen: set[str]) -> list[Mapping[str, Any]] | None:
        """The request's messages: its base's first `keep`, then its `tail`; None where one is
        missing or the chain loops. Read along the chain without recursion (a session of
        thousands of requests, each continuing the last)."""
        chain = [request]
        seen.add(request.id)
        while chain[-1].base:
            base = str(chain[-1].base)
            earlier = self.requests.get(base)
            if earlier is None or base in seen:
                return None
            seen.add(base)
            chain.append(earlier)
        messages: list[Mapping[str, Any]] = []
        for link in reversed(chain):
            messages = messages[:link.keep] if link.base else []
            for key in link.tail:
                message = known.get(key)
                if message is None:
                    return None
                messages.append(message)
        return messages
