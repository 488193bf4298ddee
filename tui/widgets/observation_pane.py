"""The observation pane: output of the running or selected command (SPEC §10.1).

Output goes into a `Log` (plain lines, no markup, bounded line count), so a flood of
output costs appended lines, not re-rendered text. Outputs of earlier commands are kept
(bounded) so clicking a command block in the transcript shows its output again.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from textual._line_split import line_split
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Size
from textual.widgets import Log, Static

from swedeck.core.environments.base import ExecutionResult
from swedeck.core.text import one_line

from .text import clean_output, literal

MAX_LINES = 5000
KEEP_OUTPUTS = 50
KEEP_CHARS = 200_000


class OutputLog(Log):
    """A `Log` that refreshes what one write added as one range of lines. Textual's refreshes
    each line on its own: a thousand lines of a flood cost 38 ms in its `write`, in the UI's
    thread, ahead of any key (B16). The private parts it uses are pinned by
    tests/test_private_apis.py (docs/private-apis.md)."""

    def write(self, data: str, scroll_end: bool | None = None) -> OutputLog:
        if data:
            lines = self._lines
            if not lines:
                lines.append("")
            first, width = len(lines) - 1, self._width
            for line, ending in line_split(data):
                lines[-1] += line
                width = max(width, cell_len(self._process_line(lines[-1])))
                if ending:
                    lines.append("")
            self._width = width
            self.refresh_lines(first, len(lines) - first)
            self.virtual_size = Size(width, self.line_count)
        if self.max_lines is not None and len(self._lines) > self.max_lines:
            self._prune_max_lines()
        if self.auto_scroll if scroll_end is None else scroll_end:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        return self


@dataclass
class CommandRecord:
    command: str
    output: str = ""
    """What the pane shows: streamed while the command runs, else its result's output."""
    result: ExecutionResult | None = None
    """None while the command runs."""

    def status(self) -> str:
        return self.result.status() if self.result else "running…"


class ObservationPane(Vertical):
    DEFAULT_CSS = """
    ObservationPane { border: round $panel; background: $background; }
    ObservationPane #obs-command { height: auto; max-height: 3; color: $foreground; text-style: bold; padding: 0 1; }
    ObservationPane #obs-status { height: 1; color: $text-muted; padding: 0 1; }
    ObservationPane #obs-status.-failed { color: $error; }
    ObservationPane #obs-status.-ok { color: $success; }
    ObservationPane Log { background: $background; scrollbar-size-vertical: 1; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "output"
        self.records: OrderedDict[str, CommandRecord] = OrderedDict()
        self.shown: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(literal("no command yet"), id="obs-command", markup=False)
        yield Static(id="obs-status", markup=False)
        yield OutputLog(max_lines=MAX_LINES, highlight=False, auto_scroll=True)

    def start(self, action_id: str, command: str) -> None:
        self.records[action_id] = CommandRecord(command)
        while len(self.records) > KEEP_OUTPUTS:
            self.records.popitem(last=False)
        self.show(action_id)

    def append(self, action_id: str, text: str) -> None:
        record = self.records.get(action_id)
        if record is None:
            return
        text = clean_output(text[-KEEP_CHARS:])
        record.output = (record.output + text)[-KEEP_CHARS:]
        if self.shown == action_id:
            self._write(text)

    def finish(self, action_id: str, command: str, result: ExecutionResult) -> None:
        record = self.records.get(action_id) or CommandRecord(command)
        self.records[action_id] = record
        streamed = bool(record.output)
        record.result = result
        if not streamed and result.output:
            record.output = clean_output(result.output)[-KEEP_CHARS:]
            if self.shown == action_id:
                self._write(record.output)
        if self.shown == action_id:
            self._status(record)

    def show(self, action_id: str) -> None:
        record = self.records.get(action_id)
        if record is None:
            return
        self.shown = action_id
        self.query_one("#obs-command", Static).update(literal("$ " + one_line(record.command, 300)))
        log = self.query_one(Log)
        log.clear()
        if record.output:
            self._write(record.output)
        self._status(record)

    def _write(self, text: str) -> None:
        """Append to the log only the lines it will keep (a flood arrives in big pieces)."""
        self.query_one(Log).write(last_lines(text, MAX_LINES))

    def _status(self, record: CommandRecord) -> None:
        status = self.query_one("#obs-status", Static)
        status.update(literal(record.status()))
        returncode = record.result.returncode if record.result else None
        status.set_class(record.result is not None and returncode != 0, "-failed")
        status.set_class(returncode == 0, "-ok")


def last_lines(text: str, count: int) -> str:
    """The last `count` lines of `text` (a trailing newline ends the last line)."""
    end = len(text) - 1 if text.endswith("\n") else len(text)
    start = end
    for _ in range(count):
        start = text.rfind("\n", 0, start)
        if start < 0:
            return text
    return text[start + 1:]
