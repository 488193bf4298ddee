"""`swedeck watch DIR` (SPEC §11.4): a live table of the trajectories under a folder.

The folder is walked once; then a thread worker waits on the file system's own change
notices (watchfiles: inotify on Linux) and looks only at the files that changed, and at the
live ones once a second (their rows age into `stale`), so 10,000 idle files cost nothing
and `q` is answered at once. Where notices are not available it scans every second. Only
new bytes are read (core.watch); the UI thread gets the changed rows and updates those
cells in place, never rebuilding the table. Enter follows the selected trajectory in the replay view. A batch's folder
(`swedeck batch`) shows every instance, queued ones too, and the batch's totals.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from swedeck.core.batch.progress import VERDICT_WORDS
from swedeck.core.batch.verify import CLASSES, verifier_output
from swedeck.core.text import visible
from swedeck.core.trajectory.files import base_name, live_path
from swedeck.core.watch import DirectoryWatcher, WatchRow, WatchUpdate, status_text

from ..replay.replay_screen import ReplayScreen
from ..widgets.fitted_footer import FittedFooter
from ..widgets.text import literal

SCAN_INTERVAL_S = 1.0
COLUMNS = ("name", "status", "verdict", "steps", "cost", "context left", "last action")
FILTERS: tuple[str | None, ...] = (None, *CLASSES)
"""What `v` cycles through: every row, then the rows of one class."""


def cells(row: WatchRow) -> tuple[Text, ...]:
    """The row's cells as Rich `Text` (literal: never markup), which DataTable measures, so
    each column is as wide as its content; Textual `Content` cells were measured as 0 and
    cut to the header's width ("runnin", "$0.0")."""
    context = "–" if row.context_left is None else f"{row.context_left:.0f}%"
    status = status_text(row) if row.status != "error" else f"error: {row.error}"
    style = {"running": "bold", "stale": "italic", "error": "reverse", "queued": "dim"}.get(row.status, "")
    verdict = Text(VERDICT_WORDS.get(row.verdict, row.verdict) if row.verdict else "–",
                   style={"resolved": "bold", "infra_failure": "reverse"}.get(row.verdict or "", ""))
    return (Text(visible(row.name)), Text(visible(status), style=style), verdict, Text(str(row.steps)),
            Text(f"${row.cost:.2f}"), Text(context), Text(visible(row.last_action)))


class WatchScreen(Screen[None]):
    DEFAULT_CSS = """
    WatchScreen #watch-header { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    WatchScreen DataTable { height: 1fr; }
    """
    BINDINGS = [Binding("enter", "follow", "Follow", id="watch_follow"),
                Binding("v", "next_filter", "Filter by verdict", id="watch_filter"),
                Binding("q", "quit_watch", "Quit", id="watch_quit")]

    def __init__(self, watcher: DirectoryWatcher, interval_s: float = SCAN_INTERVAL_S) -> None:
        super().__init__()
        self.watcher = watcher
        self.interval_s = interval_s
        self.scans = 0
        self.notices = False
        """The folder is followed by the file system's change notices (else by polling)."""
        self._stop = threading.Event()
        self.filter: str | None = None
        """The class whose rows are shown (`v`); None: every row."""

    def compose(self) -> ComposeResult:
        yield Static(literal(f"watching {self.watcher.root}"), id="watch-header", markup=False)
        table: DataTable[Any] = DataTable(cursor_type="row", zebra_stripes=True)
        for column in COLUMNS:
            table.add_column(column, key=column)
        yield table
        yield FittedFooter()

    def on_mount(self) -> None:
        self.follow_folder()

    def on_unmount(self) -> None:
        self._stop.set()

    @work(thread=True, exclusive=True, exit_on_error=False, group="scan")
    def follow_folder(self) -> None:
        watch = _watchfiles()
        self.notices = watch is not None
        self._post(self.watcher.scan())
        if watch is not None:
            try:
                walked = False
                for changes in watch(self.watcher.root, stop_event=self._stop, yield_on_timeout=True,
                                     rust_timeout=int(self.interval_s * 1000), debounce=100, raise_interrupt=False):
                    # once more whole, now that notices flow: nothing made before they did is missed
                    self._post(self.watcher.scan({path for _, path in changes} if walked else None))
                    walked = True
                return
            except (OSError, RuntimeError):  # no notices here (an inotify limit, a network mount): poll
                self.notices = False
        while not self._stop.wait(self.interval_s):
            self._post(self.watcher.scan())

    def _post(self, update: WatchUpdate) -> None:
        if not self._stop.is_set():
            self.app.call_from_thread(self.apply, update)

    def apply(self, update: WatchUpdate) -> None:
        table = self.query_one(DataTable)
        for key in update.removed:
            if key in table.rows:
                table.remove_row(key)
        for row in update.changed:
            if self.filter is not None and row.verdict != self.filter:
                if row.key in table.rows:
                    table.remove_row(row.key)
                continue
            if row.key in table.rows:
                for column, value in zip(COLUMNS, cells(row), strict=True):
                    table.update_cell(row.key, column, value, update_width=True)  # "running" becomes "finished (…)"
            else:
                table.add_row(*cells(row), key=row.key)
        self.scans += 1
        counts: dict[str, int] = {}
        for row in self.watcher.rows.values():
            counts[row.status] = counts.get(row.status, 0) + 1
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        verdicts: dict[str, int] = {}
        for row in self.watcher.rows.values():
            if row.verdict:
                verdicts[row.verdict] = verdicts.get(row.verdict, 0) + 1
        if verdicts:
            summary += " · " + ", ".join(f"{VERDICT_WORDS.get(k, k)} {verdicts[k]}" for k in CLASSES if k in verdicts)
        if self.filter is not None:
            summary += f" · showing {VERDICT_WORDS.get(self.filter, self.filter)} (v: next)"
        batch = self.watcher.batch
        if batch is not None:
            cost = sum(row.cost for row in self.watcher.rows.values())
            ended = "ended" if batch.ended else f"{batch.executor}, {batch.workers} workers"
            summary = f"batch of {len(batch.instances)} ({ended}) · {summary} · ${cost:.2f}"
        self.query_one("#watch-header", Static).update(literal(f"watching {self.watcher.root} · {summary}"))

    def selected(self) -> WatchRow | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.watcher.rows.get(key) if key is not None else None

    def action_follow(self) -> None:
        row = self.selected()
        if row is not None and not row.path.exists() and not live_path(base_name(row.path)).exists():
            self.notify(f"{row.name}: no trajectory yet ({row.status})", severity="warning")
        elif row is not None:
            said = verifier_output(row.path.parent) if row.verdict else None
            verifier = None if said is None else (f"verifier: {VERDICT_WORDS.get(row.verdict or '', row.verdict)}", said)
            self.app.push_screen(ReplayScreen([row.path], start_step=-1, follow=row.status != "finished",
                                              verifier=verifier))

    def action_next_filter(self) -> None:
        """Show only the rows of the next class (then every row again)."""
        self.filter = FILTERS[(FILTERS.index(self.filter) + 1) % len(FILTERS)]
        table = self.query_one(DataTable)
        table.clear()
        self.apply(WatchUpdate(changed=list(self.watcher.rows.values()), removed=[]))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_follow()

    def action_quit_watch(self) -> None:
        self._stop.set()  # the worker leaves its wait at once
        self.app.exit()


def _watchfiles() -> Callable[..., Any] | None:
    """watchfiles' `watch` (the file system's change notices), or None where it is missing."""
    try:
        from watchfiles import watch
    except ImportError:
        return None
    return watch
