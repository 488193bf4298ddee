"""What the readers of other agents' records share (SPEC §9.3): their records become chat
`Entry`s (a message before it is built), and the entries one `Trajectory`.

Each format names its tools its own way (Claude Code's `Bash`, Codex's `shell` with an argv
list, OpenHands' `execute_bash`, Inspect's `bash` with `cmd`); `call` turns a recorded tool
call into the OpenAI shape swedeck keeps and into an `Action`. A shell command becomes the
action's command (and `shell=True`, which fork uses to map it onto swedeck's `bash` tool);
any other tool is shown as text, `name arguments`.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from ...messages import Action, Message, MessageType, Usage
from ..lazy import MessageList, StepList
from ..model import Fidelity, Provenance, Trajectory, TrajectoryFormat, TrajectoryInfo
from ..normalize import build_message, counts_as_step
from .source import Source

SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "execute_bash", "terminal", "local_shell",
                         "run_shell_command", "shell_command", "container.exec", "bash_command", "cmd"})
"""Tool names (lower case) whose `command` / `cmd` argument is a shell command line."""
_SHELLS = ("bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash")


class Entry(msgspec.Struct):
    """One message before it is built: chat fields, its type, and swedeck's `extra`."""

    role: str
    content: Any
    kind: MessageType
    extra: dict[str, Any] = msgspec.field(default_factory=dict)
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    name: str | None = None

    def build(self) -> Message:
        record: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            record["tool_calls"] = self.tool_calls
        if self.tool_call_id:
            record["tool_call_id"] = self.tool_call_id
        if self.name:
            record["name"] = self.name
        return build_message(record, self.extra, self.kind)

    @property
    def is_step(self) -> bool:
        return counts_as_step(self.role, self.kind)


class Later(Entry):
    """An entry made when its message is built (issue 49: a reader plans its entries from the
    records' heads, and reads a record whole only when its step is shown). Its role, type and
    what the plan knew (usage, a request) are set now; `make` reads the rest, and what the plan
    set wins over what `make` gives."""

    def make(self) -> Entry:
        raise NotImplementedError

    def build(self) -> Message:
        made = self.make()
        made.kind = self.kind
        made.extra = {**made.extra, **self.extra}
        return made.build()


def shell_tool(name: str) -> bool:
    """Whether a tool of this name is a shell (`shell_command`)."""
    return name.lower().rsplit("__", 1)[-1] in SHELL_TOOLS


def shell_command(name: str, arguments: Any) -> str | None:
    """The command line of a shell tool's call, or None when the tool is not a shell. A shell
    tool an MCP server offers is one too (`mcp__acp__Bash`: Claude Code's Bash under its ACP
    adapter); only its `command` is the command (its description and timeout are not)."""
    if not shell_tool(name) or not isinstance(arguments, Mapping):
        return None
    command = arguments.get("command", arguments.get("cmd"))
    if isinstance(command, str):
        return command
    if isinstance(command, list) and all(isinstance(part, str) for part in command) and command:
        if len(command) == 3 and command[0] in _SHELLS and command[1] in ("-c", "-lc", "-l -c"):
            return str(command[2])
        return shlex.join(command)
    return None


def call(call_id: str, name: str, arguments: Any) -> tuple[dict[str, Any], Action]:
    """A recorded tool call in the OpenAI shape swedeck keeps, and the action it asked for."""
    parsed = arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            parsed = arguments
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    tool_call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
    command = shell_command(name, parsed)
    if command is not None:
        return tool_call, Action(command=command, tool_call_id=call_id, unknown={"tool": name, "shell": True})
    if isinstance(parsed, Mapping):
        rendered = " ".join(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                            for value in parsed.values())
    else:
        rendered = "" if parsed is None else str(parsed)
    return tool_call, Action(command=f"{name} {rendered}".strip(), tool_call_id=call_id,
                             unknown={"tool": name, "shell": False})


def assistant(content: Any, calls: Sequence[tuple[dict[str, Any], Action]] = (), **extra: Any) -> Entry:
    """A model response: its text, its tool calls, and `extra` (usage, reasoning, cost...)."""
    actions = tuple(action for _, action in calls)
    kind = MessageType.ACTION if actions else MessageType.ASSISTANT_MESSAGE
    extra = {key: value for key, value in extra.items() if value is not None}
    if actions:
        extra["actions"] = actions
    return Entry("assistant", content, kind, extra, [tool_call for tool_call, _ in calls] or None)


MAX_COUNT = 10 ** 15
"""A token count past this is no provider's (a 400-digit number in a file): not taken as a count,
so no figure derived from it (% of the window, cost) overflows."""


def count(value: Any) -> int:
    """A recorded token count, or 0 where the value is not one (a bool, a negative, past `MAX_COUNT`)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT else 0


def usage(prompt: Any, completion: Any, cached: Any = 0, cache_write: Any = 0, reasoning: Any = 0) -> Usage | None:
    """Provider-reported usage, or None when the record has no prompt count."""
    numbers = [count(value) for value in (prompt, completion, cached)]
    if not any(numbers):
        return None
    return Usage(prompt_tokens=numbers[0], completion_tokens=numbers[1], cached_tokens=numbers[2],
                 cache_write_tokens=count(cache_write) or None, reasoning_tokens=count(reasoning) or None)


def text_of(content: Any) -> str:
    """The text of a content field in any of the formats' shapes (a string, a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        for key in ("text", "content", "output", "reasoning", "thinking"):
            if isinstance(content.get(key), str | list):
                return text_of(content[key])
        return json.dumps(content, ensure_ascii=False)
    if isinstance(content, list):
        return "\n".join(part for part in (text_of(item) for item in content) if part)
    return str(content)


def compaction(summary: str, *, before: int | None = None, after: int | None = None,
               forgotten: Sequence[int] | None = None, source: str = "") -> Entry:
    """A compaction marker: the history before it was replaced by `summary` (or, with
    `forgotten`, those message indices were dropped)."""
    extra: dict[str, Any] = {"compaction_source": source}
    if before is not None:
        extra["tokens_before"] = before
    if after is not None:
        extra["tokens_after"] = after
    if forgotten is not None:
        extra["forgotten"] = list(forgotten)
    return Entry("user", summary, MessageType.COMPACTION, extra)


def reconstructed(**more: Any) -> Fidelity:
    """The fidelity of a record that keeps the conversation alone: each prompt rebuilt from it,
    the system prompt and tools unknown (a reader that finds them says so after)."""
    return Fidelity(prompt="reconstructed", parts={"system prompt": "unknown", "tools": "unknown",
                                                   "messages": "reconstructed"}, **more)


def skip_damaged(number: int, error: ValueError, info: TrajectoryInfo, tally: Tally) -> None:
    """A JSONL line that is not JSON: skipped with a warning naming it, and counted."""
    info.warnings.append(f"line {number}: damaged, skipped ({str(error).splitlines()[0][:200]})")
    tally.skip("(damaged line)")


class Tally:
    """Records a reader did not turn into messages, by type: shown in the fidelity panel."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.why: dict[str, str] = {}
        """Why a type is not shown, where the reader says: what it took from those records, or
        what they repeat."""

    def skip(self, kind: Any, why: str | None = None) -> None:
        key = str(kind) if kind is not None else "(no type)"
        self.counts[key] += 1
        if why is not None:
            self.why[key] = why

    def said(self, fidelity: Any) -> None:
        """The counts and reasons into `fidelity` (`Fidelity.skipped`, `Fidelity.why`)."""
        fidelity.skipped = self.as_dict()
        fidelity.why = dict(sorted(self.why.items()))

    def as_dict(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))


def trajectory(source: Source, format: TrajectoryFormat, entries: list[Entry], info: TrajectoryInfo,
               fidelity: Fidelity, *, provenance: Callable[[int], Provenance | None] | None = None,
               recorded_prompts: Mapping[int, Sequence[Message]] | None = None) -> Trajectory:
    """The trajectory of a list of entries: one step per model response."""
    starts = [index for index, entry in enumerate(entries) if entry.is_step]
    if not info.model_stats.api_calls:  # no totals recorded: the sum of the recorded usage
        info.model_stats.api_calls = len(starts)
        for entry in entries:
            recorded = entry.extra.get("usage")
            if recorded is not None:
                info.model_stats.prompt_tokens += recorded.prompt_tokens
                info.model_stats.completion_tokens += recorded.completion_tokens
            if isinstance(entry.extra.get("cost"), float):
                info.model_stats.instance_cost += entry.extra["cost"]
    fidelity.compactions = sum(1 for entry in entries if entry.kind == MessageType.COMPACTION)
    return built(source, format, len(entries), starts, lambda index: entries[index].build(), info, fidelity,
                 provenance=provenance, recorded_prompts=recorded_prompts)


def built(source: Source, format: TrajectoryFormat, size: int, starts: list[int], build: Callable[[int], Message],
          info: TrajectoryInfo, fidelity: Fidelity, *, provenance: Callable[[int], Provenance | None] | None = None,
          recorded_prompts: Mapping[int, Sequence[Message]] | None = None) -> Trajectory:
    """The trajectory of `size` messages, message i made by `build(i)` when first read; step k
    starts at message `starts[k - 1]` (a reader that keeps its entries in columns, not as a list
    of `Entry`s, gives them here: Codex's)."""
    fidelity.unit = source.unit
    messages = MessageList(size, starts, lambda start, end: [build(i) for i in range(start, end)], source.path)
    provenances = [provenance(number) if provenance else None for number in range(1, len(starts) + 1)]
    return Trajectory(path=source.path, format=format, messages=messages,
                      steps=StepList(messages, starts, provenance=provenances), info=info, fidelity=fidelity,
                      recorded_prompts=recorded_prompts if recorded_prompts is not None else {})
