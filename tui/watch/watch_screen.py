"""`swedeck watch DIR` (SPEC §11.4): a live table of the trajectories under a folder.

The folder is walked once; then a thread worker waits on the file system's own change
notices (watchfiles: inotify on Linux) and looks only at the files that changed, and at the
live ones once a second (their rows age into `stale`), so 10,000 idle files cost nothing
and `q` is answered at once. Where notices are not available it scans every second. Only
new bytes are read (core.watch); the UI thread gets the changed rows and updates those
cells in place, never rebuilding the table. The worker only posts what it found (`Scanned`);
the state (`WatchState`) and the table change on the UI thread. Enter follows the selected trajectory in the replay view. A batch's folder
(`swedeck batch`) shows every instance, queued ones too, and the batch's totals.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from swedeck.core.batch.progress import VERDICT_WORDS
from swedeck.core.batch.verify import CLASSES, verifier_output
from swedeck.core.text import visible
from swedeck.core.trajectory.files import base_name, live_path
from swedeck.core.watch import DirectoryWatcher, WatchRow, WatchUpdate, status_text

from ..kit.view_screen import ViewScreen, background, css_beside
from ..replay.replay_screen import ReplayScreen
from ..widgets.fitted_footer import FittedFooter
from ..widgets.header_line import HeaderLine
from .watch_state import BatchLine, WatchState

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


class WatchScreen(WatchState, ViewScreen):
    CSS_PATH = css_beside(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "follow", "Follow", id="watch_follow", tooltip="Follow the selected trajectory in the replay view"),
        Binding("v", "next_filter", "Filter by verdict", id="watch_filter",
                tooltip="Show only the rows of the next verdict (then every row again)"),
        Binding("R", "rules", "Rules", id="watch_rules", show=False,
                tooltip="Approval rules (agent.rules): what they would have decided over the runs of this folder"),
        Binding("q", "quit_watch", "Quit", id="watch_quit", tooltip="Quit"),
        Binding("f1,question_mark", "app.help", "Help", id="watch_help", tooltip="This help"),
    ]
    WORK: ClassVar[dict[str, str]] = {"scan": "following the folder"}

    def __init__(self, watcher: DirectoryWatcher, interval_s: float = SCAN_INTERVAL_S,
                 rules: list[str] | None = None) -> None:
        super().__init__()
        self.rules = list(rules or [])
        """`agent.rules`: the approval rules `R` tries over the folder's runs."""
        self.watcher = watcher
        """The core's reader of the folder: used by the worker only."""
        self.interval_s = interval_s
        self._stop = threading.Event()
        self.set_reactive(WatchState.root, str(watcher.root))

    def compose(self) -> ComposeResult:
        yield HeaderLine(id="watch-header").data_bind(text=WatchState.header)
        table: DataTable[Any] = DataTable(cursor_type="row", zebra_stripes=True)
        for column in COLUMNS:
            table.add_column(column, key=column)
        yield table
        yield FittedFooter()

    def on_mount(self) -> None:
        self.follow_folder()

    def on_unmount(self) -> None:
        self._stop.set()

    class Scanned(Message):
        """What a scan of the folder found, from the worker."""

        def __init__(self, update: WatchUpdate, batch: BatchLine | None, notices: bool) -> None:
            super().__init__()
            self.update, self.batch, self.notices = update, batch, notices

    @background(exclusive=True, group="scan")
    def follow_folder(self) -> None:
        watch = _watchfiles()
        notices = watch is not None
        self._post(self.watcher.scan(), notices)
        if watch is not None:
            try:
                walked = False
                for changes in watch(self.watcher.root, stop_event=self._stop, yield_on_timeout=True,
                                     rust_timeout=int(self.interval_s * 1000), debounce=100, raise_interrupt=False):
                    # once more whole, now that notices flow: nothing made before they did is missed
                    self._post(self.watcher.scan({path for _, path in changes} if walked else None), notices)
                    walked = True
                return
            except (OSError, RuntimeError):  # no notices here (an inotify limit, a network mount): poll
                notices = False
        while not self._stop.wait(self.interval_s):
            self._post(self.watcher.scan(), notices)

    def _post(self, update: WatchUpdate, notices: bool) -> None:
        if self._stop.is_set():
            return
        batch = self.watcher.batch
        line = None if batch is None else BatchLine(len(batch.instances), batch.ended, batch.executor, batch.workers)
        self.post_message(self.Scanned(update, line, notices))

    def on_watch_screen_scanned(self, message: Scanned) -> None:
        update = message.update
        rows = dict(self.rows)
        for key in update.removed:
            rows.pop(key, None)
        for row in update.changed:
            rows[row.key] = row
        self.rows, self.batch_line, self.notices = rows, message.batch, message.notices
        self.draw(update)
        self.scans += 1

    def draw(self, update: WatchUpdate) -> None:
        """The table's cells for the rows that changed (the others are left as they are)."""
        table = self.query_one(DataTable)
        for key in update.removed:
            if key in table.rows:
                table.remove_row(key)
        for row in update.changed:
            if not self.shown(row):
                if row.key in table.rows:
                    table.remove_row(row.key)
                continue
            if row.key in table.rows:
                for column, value in zip(COLUMNS, cells(row), strict=True):
                    table.update_cell(row.key, column, value, update_width=True)  # "running" becomes "finished (…)"
            else:
                table.add_row(*cells(row), key=row.key)

    def selected(self) -> WatchRow | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.rows.get(key) if key is not None else None

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
        self.query_one(DataTable).clear()
        self.draw(WatchUpdate(changed=list(self.rows.values()), removed=[]))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_follow()

    def action_rules(self) -> None:
        from ..shared.rules_screen import RulesScreen  # on its key

        self.app.push_screen(RulesScreen(self.rules, [self.watcher.root]))

    def action_quit_watch(self) -> None:
        self._stop.set()  # the worker leaves its wait at once
        self.app.exit()

    def request_quit(self) -> None:
        self.action_quit_watch()


def _watchfiles() -> Callable[..., Any] | None:
    """watchfiles' `watch` (the file system's change notices), or None where it is missing."""
    try:
        from watchfiles import watch
    except ImportError:
        return None
    return watch
