"""swedeck's live file read a window at a time (issue 61: 2.5 million tiny steps, 295 MB).

Turning each of millions of lines into a `Message` at open costs minutes and gigabytes. A
mapped file is read here in windows of `WINDOW` bytes: each window's lines are decoded at C
speed for their heads alone (role, message type, whether a demonstration), which says where
each step starts; `meta` events are kept whole (they are few, and the reader's tables need
them). A message is built from its line when something reads it (`lazy.MessageList`), from
its window split again then. A window msgspec will not read as lines of heads (a damaged
line, a torn last line, a blank line, an unknown role) is read line by line, each line whole,
as the reader of smaller files does, so the warnings are the same.
"""

from __future__ import annotations

import itertools
import mmap
from array import array
from bisect import bisect_right
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import msgspec

from ...actions import actions_of, is_shell, text_action_count
from ...messages import Message, MessageType, answered_by, content_text
from ..lazy import Kept
from ..model import Numbered, StepFacts
from ..normalize import counts_as_step
from ..parse import loads
from .source import _GIVE_BACK, MAX_LINE_BYTES, Source, Stopped, _find_line_end, _give_back, too_long

WINDOW = 1 << 20
"""Bytes decoded at a time; a message is built from its window split again (about a ms)."""

_ROLES = frozenset(("system", "user", "assistant", "tool", "exit", "meta"))


_Count = Annotated[int, msgspec.Meta(ge=0)]


class _UsageHead(msgspec.Struct, gc=False):
    """Of a message's usage, what its step's facts need: each a count (any other value, even one
    `Usage` would take, reads the window line by line: `_slow`)."""

    prompt_tokens: _Count = 0
    completion_tokens: _Count = 0
    cached_tokens: _Count = 0
    cache_write_tokens: _Count | None = None
    estimated: bool = False


class _ActionHead(msgspec.Struct, gc=False):
    shell: Any = True
    """Kept in the action's `unknown` (`Action`): False for a call that is no shell command."""


class _HeadExtra(msgspec.Struct, gc=False):
    message_type: Any = None
    is_demo: Any = None
    usage: _UsageHead | None = None
    model: str | None = None
    actions: list[_ActionHead] | None = None


_NO_EXTRA = _HeadExtra()


class _Head(msgspec.Struct, gc=False):
    role: Any = None
    extra: _HeadExtra | None = None
    tool_calls: list[msgspec.Raw] | None = None
    content: msgspec.Raw = msgspec.Raw(b"null")
    """Read when its step's commands are in its text (no actions or tool calls recorded)."""


_heads = msgspec.json.Decoder(_Head).decode_lines


class Windows:
    """Where each window of the file starts and ends, the index of its first message, and,
    for a window with lines that are not messages (`meta` events, damaged lines), which of
    its non-blank lines are messages."""

    def __init__(self, content: Any) -> None:
        self.content = content
        self.starts = array("q")
        self.ends = array("q")
        self.first_message = array("q")
        self.picked: dict[int, list[int]] = {}
        """Window -> the positions of its message lines among its non-blank lines, where not all are."""
        self._lines: Kept[int, list[bytes]] = Kept(4)
        self.compactions: list[int] = []
        """The positions of the compaction markers (`MessageList.compactions`)."""

    def add(self, start: int, end: int, first_message: int, picked: list[int] | None) -> None:
        if picked is not None:
            self.picked[len(self.starts)] = picked
        self.starts.append(start)
        self.ends.append(end)
        self.first_message.append(first_message)

    def line(self, index: int) -> bytes:
        """The line of message `index`."""
        window = bisect_right(self.first_message, index) - 1
        lines = self._lines.get(window)
        if lines is None:
            chunk = self.content[self.starts[window]:self.ends[window]]
            lines = [line for line in chunk.split(b"\n") if line and not line.isspace()]
            if window in self.picked:
                lines = [lines[position] for position in self.picked[window]]
            self._lines.keep(window, lines)
        return lines[index - self.first_message[window]]


class Facts:
    """Each step's facts (`model.StepFacts`: its model, usage, tool calls and shell commands,
    what the summary and the cost read of every step) as the windows are read: from the head
    of its answer's line (`heads`), or from its message where its window was read whole
    (`message`); each what the step built says (`lazy.StepList`)."""

    def __init__(self) -> None:
        self.prompt, self.completion, self.cached, self.written = (array("q") for _ in range(4))
        self.calls, self.shells, self.models = array("q"), array("q"), array("q")
        self.estimated = bytearray()
        self.names: Numbered[str | None] = Numbered(None)
        self.whole = True
        """False once a step's usage holds a figure the facts do not keep (a negative): its steps are read then."""

    def heads(self, steps: list[_Head]) -> None:
        """Steps of a window read by their heads, in order (2.5 million tiny steps: a window's at once where it can)."""
        extras = [head.extra or _NO_EXTRA for head in steps]
        usages = [extra.usage for extra in extras]
        if usages.count(None) == len(usages):  # none recorded (as in a file written by hand)
            self.prompt.extend(itertools.repeat(-1, len(steps)))
            for column in (self.completion, self.cached, self.written):
                column.extend(itertools.repeat(0, len(steps)))
            self.estimated.extend(bytes(len(steps)))
        else:
            for usage in usages:
                self._usage(usage)
        models = [extra.model for extra in extras]
        if models.count(models[0]) == len(models):
            self.models.extend(itertools.repeat(self.names.number(models[0]), len(models)))
        else:
            self.models.extend(map(self.names.number, models))
        actions = [extra.actions for extra in extras]
        if not any(actions) and not any(head.tool_calls for head in steps):  # each step's commands fenced in its text
            counts = [_fenced(head.content) for head in steps]
            self.calls.extend(counts)
            self.shells.extend(counts)
            return
        for head, listed in zip(steps, actions, strict=True):
            if listed:
                self.calls.append(len(listed))
                self.shells.append(sum(1 for action in listed if action.shell))
                continue
            count = len(head.tool_calls) if head.tool_calls else _fenced(head.content)
            self.calls.append(count)
            self.shells.append(count)

    def _usage(self, usage: Any) -> None:
        if usage is None:
            self.prompt.append(-1)
            self.completion.append(0)
            self.cached.append(0)
            self.written.append(0)
            self.estimated.append(0)
            return
        if min(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, usage.cache_write_tokens or 0) < 0:
            self.whole = False
        self.prompt.append(usage.prompt_tokens)
        self.completion.append(usage.completion_tokens)
        self.cached.append(usage.cached_tokens)
        self.written.append(usage.cache_write_tokens or 0)
        self.estimated.append(1 if usage.estimated and usage.prompt_tokens else 0)

    def message(self, message: Message) -> None:
        """A step from its message (its window read line by line)."""
        self._usage(message.extra.usage)
        self.models.append(self.names.number(answered_by(message, None)))
        actions = actions_of(message)
        self.calls.append(len(actions))
        self.shells.append(sum(map(is_shell, actions)))

    def done(self) -> StepFacts | None:
        return StepFacts(self.prompt, self.completion, self.cached, self.written, self.calls, self.shells,
                         self.models, self.names.values, self.estimated) if self.whole else None


def _fenced(content: msgspec.Raw) -> int:
    """The commands fenced in a message's text (`actions.text_actions`), from its content's JSON."""
    text = msgspec.json.decode(content)
    return text_action_count(text if isinstance(text, str) else content_text(text if isinstance(text, list) else None))


def read_windows(source: Source, meta: Callable[[Mapping[str, Any], int], None],
                 warn: Callable[[str], None]) -> tuple[Windows, int, array[int], StepFacts | None]:
    """The file's windows, its message count, the message index each step starts at, and the
    steps' facts (None where a step's usage holds a figure they do not keep);
    `meta(record, message_count)` is called for each `meta` event after the header, in order.
    `source.content` is the file's bytes (mapped)."""
    content: Any = source.content
    size = len(content)
    windows = Windows(content)
    facts = Facts()
    starts: array[int] = array("q")
    messages, pos, line_number, given_back = 0, 0, 1, 0
    mapped = content if isinstance(content, mmap.mmap) else None
    while pos < size:
        if source.stopped:
            raise Stopped(source.path)
        source.read_to = pos
        stop = min(size, pos + WINDOW)
        end = stop if stop == size else content.rfind(b"\n", pos, stop) + 1
        if end <= pos:  # a line longer than the window: its end found a window at a time, each given back
            if mapped is not None:
                newline, given_back = _find_line_end(mapped, pos, given_back)
            else:
                newline = content.find(b"\n", pos)
            line_end = size if newline == -1 else newline
            end = min(size, line_end + 1)
            if line_end - pos > MAX_LINE_BYTES:
                warn(f"line {line_number} is damaged ({too_long(line_end - pos)}); skipped")
                pos, line_number = end, line_number + 1
                continue
        chunk = content[pos:end]
        lines_in_chunk = chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        heads = _fast(chunk, lines_in_chunk)
        if heads is None:
            messages = _slow(chunk, pos, end, line_number, end == size, messages, windows, starts, meta, warn, facts)
        else:
            messages = _heads_read(chunk, pos, end, heads, messages, windows, starts, meta, facts)
        line_number += lines_in_chunk
        pos = end
        if source.pace is not None:
            source.pace()
        if mapped is not None and pos - given_back >= _GIVE_BACK:
            given_back = _give_back(mapped, given_back, pos)
    source.read_to = size
    return windows, messages, starts, facts.done()


def _fast(chunk: bytes, lines_in_chunk: int) -> list[_Head] | None:
    """Each line's head, when every line of the window is a record msgspec reads, with a known role."""
    try:
        heads = _heads(chunk)
        if len(heads) != lines_in_chunk or not {head.role for head in heads} <= _ROLES:
            return None  # a blank line, two values on a line, an unknown role: line by line
    except (msgspec.MsgspecError, TypeError):  # TypeError: a role that is a list or an object
        return None
    return heads


def _marks(head: _Head) -> tuple[Any, bool]:
    extra = head.extra
    return (None, False) if extra is None else (extra.message_type, bool(extra.is_demo))


def _heads_read(chunk: bytes, pos: int, end: int, heads: list[_Head], messages: int, windows: Windows,
                starts: array[int], meta: Callable[[Mapping[str, Any], int], None], facts: Facts) -> int:
    """A window whose every line's head msgspec read: steps from the heads, `meta` lines parsed whole."""
    first = 1 if pos == 0 else 0  # the header
    if not any(head.role == "meta" for head in heads[first:]):
        stepped = [i for i, head in enumerate(heads[first:]) if head.role == "assistant"
                   and counts_as_step("assistant", *_marks(head))]
        starts.extend([messages + i for i in stepped])
        if stepped:
            facts.heads([heads[first + i] for i in stepped])
        windows.compactions.extend([messages + i for i, head in enumerate(heads[first:])
                                    if head.extra is not None and head.extra.message_type == "compaction"])
        windows.add(pos, end, messages, list(range(1, len(heads))) if first else None)
        return messages + len(heads) - first
    lines = chunk.split(b"\n")
    picked: list[int] = []
    start = messages
    for position in range(first, len(heads)):
        head = heads[position]
        if head.role == "meta":
            meta(loads(lines[position]), messages)
            continue
        if head.role == "assistant" and counts_as_step("assistant", *_marks(head)):
            starts.append(messages)
            facts.heads([head])
        if head.extra is not None and head.extra.message_type == "compaction":
            windows.compactions.append(messages)
        picked.append(position)
        messages += 1
    windows.add(pos, end, start, picked)
    return messages


def _slow(chunk: bytes, pos: int, end: int, line_number: int, at_end: bool, messages: int, windows: Windows,
          starts: array[int], meta: Callable[[Mapping[str, Any], int], None], warn: Callable[[str], None],
          facts: Facts) -> int:
    """A window read line by line, each line whole (the warnings of the reader of small files)."""
    picked: list[int] = []
    position = -1
    parts = chunk.split(b"\n")
    last = len(parts) - 1 - (1 if chunk.endswith(b"\n") else 0)
    for offset, line in enumerate(parts):
        if not line or line.isspace():
            continue
        position += 1
        number = line_number + offset
        if number == 1:
            continue  # the header
        try:
            record = loads(line)
            if not isinstance(record, Mapping):
                raise ValueError(f"a {type(record).__name__}, not an object")
            if record.get("role") == "meta":
                meta(record, messages)
                continue
            message = Message.from_record(record)
        except ValueError as error:
            reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
            if at_end and offset == last:
                warn(f"line {number} is incomplete (the session was cut off mid-write); skipped")
            else:
                warn(f"line {number} is damaged ({reason}); skipped")
            continue
        if counts_as_step(message.role, message.message_type, bool(message.extra.unknown.get("is_demo"))):
            starts.append(messages)
            facts.message(message)
        if message.message_type == MessageType.COMPACTION:
            windows.compactions.append(messages)
        picked.append(position)
        messages += 1
    windows.add(pos, end, messages - len(picked), picked)
    return messages


def build_block(windows: Windows) -> Callable[[int, int], list[Message]]:
    def build(start: int, end: int) -> list[Message]:
        return [Message.from_record(loads(windows.line(index))) for index in range(start, end)]
    return build
