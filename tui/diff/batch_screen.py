"""Two batches side by side (SPEC §16): every instance with how it ended in A and in B, the
ones whose outcome differs first; Enter opens the pair's diff (`q` there comes back)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from swedeck.core.diff.batch import BatchComparison, InstancePair
from swedeck.core.text import visible

from ..kit.view_screen import ViewScreen, css_beside
from ..widgets.fitted_footer import FittedFooter
from ..widgets.text import literal


class BatchDiffScreen(ViewScreen):
    CSS_PATH = css_beside(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_pair", "Diff the pair", id="batch_diff_open", tooltip="Open the pair's diff"),
        Binding("q", "quit_diff", "Quit", id="batch_diff_quit", tooltip="Quit"),
        Binding("f1,question_mark", "app.help", "Help", id="batch_diff_help", tooltip="This help")]

    def __init__(self, comparison: BatchComparison, open_pair: Callable[[InstancePair], None]) -> None:
        super().__init__()
        self.comparison = comparison
        self.open_pair = open_pair
        """Called with an `InstancePair`: pushes that pair's diff view."""

    def compose(self) -> ComposeResult:
        yield Static(id="batch-diff-header", markup=False)
        yield DataTable(id="batch-diff-table", cursor_type="row", zebra_stripes=True)
        yield FittedFooter()

    def on_mount(self) -> None:
        comparison = self.comparison
        self.query_one("#batch-diff-header", Static).update(literal(
            f"A {comparison.a} ↔ B {comparison.b}\n{len(comparison.pairs)} instances · {comparison.differing} "
            "with another outcome (first) · Enter: the pair's diff"))
        table = self.query_one(DataTable)
        table.add_columns("", "instance", "A", "B", "A steps", "B steps")
        for pair in comparison.pairs:
            # Rich `Text` cells: a folder's instance ids and labels are its words, never markup
            table.add_row(*(Text(visible(cell)) for cell in (
                "≠" if pair.differs else "=", pair.instance_id, pair.a.label(), pair.b.label(), str(pair.a.steps),
                str(pair.b.steps))), key=pair.instance_id)
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open_pair()

    def action_open_pair(self) -> None:
        table = self.query_one(DataTable)
        if not self.comparison.pairs:
            return
        pair = self.comparison.pairs[table.cursor_row]
        missing = [name for name, outcome in (("A", pair.a), ("B", pair.b)) if outcome.trajectory is None]
        if missing:
            self.notify(visible(f"{pair.instance_id}: no trajectory in {' and '.join(missing)}"), severity="warning",
                        markup=False)
            return
        self.open_pair(pair)

    def action_quit_diff(self) -> None:
        self.app.exit()
