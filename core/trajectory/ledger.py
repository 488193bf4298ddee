"""What a compaction's replaced part touched, kept word for word beside the model's summary
(SPEC §17, issue 48): found without a model, so a summary that forgets a path, a command or a
failing test cannot lose it.

From the replaced messages: the files read, written or created (the commands' arguments that
look like paths, a tool's `path` / `file_path` arguments), the commands with their exit status,
the failing tests' names (pytest's `FAILED path::test`, unittest's `FAIL: test (module.Class)`),
the last error line of each command that failed, and the person's own words. Bounded by
`max_tokens`: the newest entries of each kind first, and a cut says how many older ones went.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..messages import Message, MessageType
from ..tokens import count_text

_PATH = re.compile(r"^(?:\.{0,2}/)?[\w.@+-]+(?:/[\w.@+-]+)*\.[A-Za-z0-9]{1,8}$|^(?:\.{0,2}/)?[\w.@+-]+(?:/[\w.@+-]+)+/?$")
_FAILED_TEST = re.compile(r"^(?:FAILED|ERROR)\s+(\S+::\S+)|^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)", re.MULTILINE)
_ERROR_LINE = re.compile(r"\w*(?:Error|Exception)\b|\berror:|\bfatal:|Traceback", re.IGNORECASE)
_WEAK_ERROR_LINE = re.compile(r"failed|not found|no such|denied", re.IGNORECASE)
"""A line that says something failed, when no line names an error (a summary line, a shell's words)."""
_PATH_KEYS = ("path", "file_path", "filename", "file", "notebook_path")


@dataclass
class Ledger:
    files: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    """`command` (exit N), in the order they ran."""
    failing_tests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """`command`: its last error line."""
    words: list[str] = field(default_factory=list)
    """What the person said."""
    cut: int = 0
    """Entries left out to keep within the bound (the oldest of each kind)."""

    def empty(self) -> bool:
        return not (self.files or self.commands or self.failing_tests or self.errors or self.words)

    def text(self) -> str:
        parts = ["What the replaced part touched, kept word for word (swedeck's ledger):"]
        for title, items in (("Files", self.files), ("Commands", self.commands), ("Failing tests", self.failing_tests),
                             ("Errors", self.errors), ("The person said", self.words)):
            if items:
                parts.append(f"{title}:\n" + "\n".join(f"- {item}" for item in items))
        if self.cut:
            parts.append(f"({self.cut} older entries cut to keep the ledger short)")
        return "\n".join(parts)


_TITLES = {"Files": "files", "Commands": "commands", "Failing tests": "failing_tests", "Errors": "errors",
           "The person said": "words"}


def parse_ledger(text: str) -> Ledger:
    """A ledger as `Ledger.text` wrote it (a compaction marker keeps its text), read back."""
    found = Ledger()
    items: list[str] | None = None
    for line in text.splitlines():
        title = line[:-1] if line.endswith(":") else None
        if title in _TITLES:
            items = getattr(found, _TITLES[title])
        elif items is not None and line.startswith("- "):
            items.append(line[2:])
        elif items is not None and items and not line.startswith("("):
            items[-1] += "\n" + line  # an entry of several lines (the person's words)
        else:
            cut = re.match(r"\((\d+) older entries cut", line)
            if cut:
                found.cut += int(cut.group(1))
    return found


def ledger_of(messages: Iterable[Message], max_tokens: int = 1000) -> Ledger:
    """The ledger of the replaced messages, within `max_tokens`. A compaction among them (an
    earlier one, replaced by this) carries its own ledger forward: what it kept is kept again,
    so a path or a failing test survives any number of compactions (issue 62.1)."""
    whole = Ledger()
    commands: dict[str, str] = {}  # tool call id -> command
    for message in messages:
        kind = message.message_type
        if kind == MessageType.COMPACTION:
            earlier = parse_ledger(message.extra.ledger or "")
            for mine, theirs in zip(_kinds(whole), _kinds(earlier), strict=True):
                for item in theirs:
                    _once(mine, item)
            whole.cut += earlier.cut
            continue
        if message.role == "assistant":
            for action in message.extra.actions:
                if action.tool_call_id:
                    commands[action.tool_call_id] = action.command
                _add_files(whole.files, action.command, action.unknown)
        elif message.role == "tool" or kind == MessageType.OBSERVATION:
            command = message.extra.command or commands.get(message.tool_call_id or "", "")
            output = message.extra.raw_output if message.extra.raw_output is not None else message.text
            code = message.extra.returncode
            if command:
                _once(whole.commands, f"`{command}`" + (f" (exit {code})" if code is not None else ""))
            for match in _FAILED_TEST.finditer(output):
                _once(whole.failing_tests, match.group(1) or f"{match.group(3)}.{match.group(2)}")
            if code not in (None, 0) and command:
                lines = output.splitlines()[::-1]
                last = next((line.strip() for line in lines if _ERROR_LINE.search(line)),
                            next((line.strip() for line in lines if _WEAK_ERROR_LINE.search(line)), ""))
                if last:
                    _once(whole.errors, f"`{command}`: {last[:300]}")
        elif kind in (MessageType.USER_MESSAGE, MessageType.TASK) and message.role == "user":
            if message.text.strip():
                _once(whole.words, message.text.strip()[:1000])
    return _bounded(whole, max_tokens)


def _add_files(files: list[str], command: str, arguments: dict[str, object]) -> None:
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            _once(files, value)
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    for word in words:
        word = word.split("::", 1)[0].rstrip(",;:)").lstrip("(>")
        if word and not word.startswith("-") and "://" not in word and _PATH.match(word):
            _once(files, word)


def _once(items: list[str], item: str) -> None:
    if item not in items:
        items.append(item)


def _bounded(whole: Ledger, max_tokens: int) -> Ledger:
    """The ledger within `max_tokens`. The commands, errors and the person's words give way
    first (the oldest entry of the longest of them), then the paths and the failing tests: those
    a summary loses most often are kept longest. Each kind keeps its newest. Far from the bound
    an entry's own count is taken off; near it the whole text is counted, as the bound is on it."""
    ledger = Ledger(list(whole.files), list(whole.commands), list(whole.failing_tests), list(whole.errors),
                    list(whole.words), whole.cut)
    if count_text(ledger.text()) <= max_tokens:
        return ledger
    cost = {item: count_text(f"- {item}\n") for kind in _kinds(ledger) for item in kind}
    total = count_text(ledger.text())
    while not ledger.empty() and total > max_tokens:
        first = [kind for kind in (ledger.commands, ledger.errors, ledger.words) if kind]
        longest = max(first or [kind for kind in (ledger.files, ledger.failing_tests) if kind], key=len)
        total -= cost[longest.pop(0)]
        ledger.cut += 1
        if total <= max_tokens + max_tokens // 10 + 20:  # near the bound the text itself is counted, each time
            total = count_text(ledger.text())
    return ledger


def _kinds(ledger: Ledger) -> tuple[list[str], ...]:
    return ledger.files, ledger.commands, ledger.failing_tests, ledger.errors, ledger.words
