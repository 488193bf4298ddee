"""Three or more batches of the same instances (issue 66, SPEC §16): every instance with how it
ended in each run, the ones whose outcomes differ first, each run's resolved, unresolved and
cost above; Enter opens that instance's runs in the N-run view (`q` there comes back)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Static

from swedeck.core.diff.batch import ManyBatches, differ
from swedeck.core.text import visible

from ..kit.view_screen import ViewScreen, css_beside
from ..widgets.fitted_footer import FittedFooter
from ..widgets.text import literal


class ManyBatchesScreen(ViewScreen):
    CSS_PATH = css_beside(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_runs", "Diff the runs", id="many_batches_open",
                tooltip="The instance's runs compared, in the N-run view"),
        Binding("q", "quit_diff", "Quit", id="many_batches_quit", tooltip="Quit"),
        Binding("f1,question_mark", "app.help", "Help", id="many_batches_help", tooltip="This help")]

    def __init__(self, many: ManyBatches, runs_screen: Callable[[list[str]], Screen[Any]]) -> None:
        super().__init__()
        self.many = many
        self.runs_screen = runs_screen
        """The trajectories of one instance (two or more) -> their diff view."""

    def compose(self) -> ComposeResult:
        yield Static(id="many-batches-header", markup=False)
        yield DataTable(id="many-batches-table", cursor_type="row", zebra_stripes=True)
        yield FittedFooter()

    def on_mount(self) -> None:
        many = self.many
        differing = sum(1 for _, outcomes in many.rows if differ(outcomes))
        lines = [f"{len(many.folders)} batches · {len(many.rows)} instances · {differing} with outcomes that differ "
                 "(first) · Enter: the instance's runs"]
        lines += [f"run {run['run']}: {Path(run['folder']).name} · {run['resolved']} resolved, {run['unresolved']} "
                  f"unresolved, ${run['cost']:.4f}" for run in many.summary()]
        header = self.query_one("#many-batches-header", Static)
        header.styles.height = len(lines)
        header.update(literal("\n".join(lines)))
        table = self.query_one(DataTable)
        table.add_columns("", "instance", *(f"run {index}" for index in range(len(many.folders))))
        for name, outcomes in many.rows:
            # Rich `Text` cells: a folder's instance ids and labels are its words, never markup
            cells = ["≠" if differ(outcomes) else "=", name,
                     *(outcome.label() + (f" · {outcome.steps} steps" if outcome.steps else "") for outcome in outcomes)]
            table.add_row(*(Text(visible(cell)) for cell in cells), key=name)
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open_runs()

    def action_open_runs(self) -> None:
        if not self.many.rows:
            return
        name, outcomes = self.many.rows[self.query_one(DataTable).cursor_row]
        found = [outcome.trajectory for outcome in outcomes if outcome.trajectory is not None]
        missing = [str(run) for run, outcome in enumerate(outcomes) if outcome.trajectory is None]
        if len(found) < 2:
            self.notify(visible(f"{name}: a trajectory in {len(found)} of the runs: nothing to compare"),
                        severity="warning", markup=False)
            return
        if missing:
            self.notify(visible(f"{name}: no trajectory in run {', '.join(missing)}: the others compared"),
                        markup=False)
        self.app.push_screen(self.runs_screen(found))

    def action_quit_diff(self) -> None:
        self.app.exit()
