"""Three or more runs compared (issue 66, SPEC §16): the reference's steps in order, each with the
step every other run took there, in columns that fit the terminal (where they do not, the
reference and the chosen run, `]`/`[` switching which); each run's first divergence marked
(`◆`) and classed above the rows; every run's context curve in one chart. Enter opens the
reference and the chosen run in the two-run view (`q` there comes back)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Static

from swedeck.core.diff.nway import Comparison, first_rows, parts, place, rows
from swedeck.core.replay.open_run import CurvePoints, Failed, OpenRun
from swedeck.core.text import one_line, visible

from ..kit.pacing import pacing_of
from ..kit.run_events import RunEventMessage, posting
from ..kit.view_screen import ViewScreen, css_beside
from ..widgets.fitted_footer import FittedFooter
from ..widgets.text import literal
from .many_curve import ManyCurve, mark

MARKS = {"same": "=", "changed": "≠", "a_only": "<", "b_only": ">"}
COLUMN = 34
"""The narrowest a run's column is drawn (its mark, step and the start of its command)."""


class ManyRunsScreen(ViewScreen):
    CSS_PATH = css_beside(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_pair", "Diff the pair", id="many_diff_open",
                tooltip="The reference and the chosen run in the two-run view"),
        Binding("right_square_bracket", "other_run(1)", "Next run", id="many_diff_next_run",
                tooltip="Choose the next run (shown where not every run fits)"),
        Binding("left_square_bracket", "other_run(-1)", "Previous run", id="many_diff_previous_run", show=False,
                tooltip="Choose the previous run"),
        Binding("d", "next_divergence", "Next divergence", id="many_diff_next_divergence",
                tooltip="The next row where the chosen run parts from the reference"),
        Binding("q", "quit_diff", "Quit", id="many_diff_quit", tooltip="Quit"),
        Binding("f1,question_mark", "app.help", "Help", id="many_diff_help", tooltip="This help")]
    WORK: ClassVar[dict[str, str]] = {"curve": "the token curves"}

    def __init__(self, paths: list[str], comparison: Comparison, pair_screen: Callable[[int], Screen[Any]]) -> None:
        super().__init__()
        self.paths = paths
        self.comparison = comparison
        self.rows = rows(comparison)
        self.pair_screen = pair_screen
        """A run's number (1..n-1) -> the two-run view of it against the reference."""
        self.chosen = 1
        self.shown: list[int] = []
        """The other runs drawn as columns, in order."""
        self.first = first_rows(self.rows, len(paths))
        """Each run's first row that is not the reference's step (its first divergence)."""

    def compose(self) -> ComposeResult:
        yield Static(id="many-diff-header", markup=False)
        yield DataTable(id="many-diff-table", cursor_type="row", zebra_stripes=True)
        yield ManyCurve(id="many-diff-curve")
        yield FittedFooter()

    def on_mount(self) -> None:
        self._header()
        self._columns()
        self.query_one(DataTable).focus()
        # each run's token curve, as the replay's and the pair view's are read (`OpenRun`)
        self.runs = [OpenRun.of(run, posting(self), pacing_of(self.app)) for run in self.comparison.runs]
        self.curves: list[dict[int, int]] = [{} for _ in self.runs]
        self._curves_read: set[int] = set()
        for run in self.runs:
            run.start_curve()

    def on_unmount(self) -> None:
        for run in self.runs:
            run.close()

    def on_resize(self) -> None:
        self._columns()

    def _header(self) -> None:
        lines = [f"{len(self.paths)} runs · R {Path(self.paths[0]).name} (the reference) · "
                 f"{len(self.comparison.runs[0].steps)} steps · Enter: R and ▸ in two columns"]
        for found in self.comparison.divergences:
            i, j = found.pair
            if i != 0:
                continue
            name = Path(self.paths[j]).name
            said = "never parts from R" if found.step is None else \
                f"parts at step {found.step} of R: {found.cls}"
            lines.append(f"{'▸' if j == self.chosen else ' '} {mark(j)} {name}: {len(self.comparison.runs[j].steps)} "
                         f"steps, {said}")
        header = self.query_one("#many-diff-header", Static)
        header.styles.height = len(lines)
        header.update(literal("\n".join(lines)))

    def _fitting(self) -> list[int]:
        """The other runs that fit beside the reference: all where the width allows, else the
        chosen one and those after it that fit."""
        others = list(range(1, len(self.paths)))
        room = max(1, (self.size.width - COLUMN - 2) // (COLUMN + 2))
        if room >= len(others):
            return others
        start = others.index(self.chosen)
        return (others[start:] + others[:start])[:room]

    def _columns(self) -> None:
        shown = self._fitting()
        table = self.query_one(DataTable)
        if shown == self.shown and table.row_count:
            return
        self.shown = shown
        row = self.here
        table.clear(columns=True)
        table.add_column("R", key="R")
        for run in shown:
            table.add_column(("▸ " if run == self.chosen else "") + f"{run}: {Path(self.paths[run]).name}", key=str(run))
        width = max(COLUMN, (self.size.width - 4) // (len(shown) + 1) - 2)
        for index, entry in enumerate(self.rows):
            if entry["ref_step"] is None and not any(place(entry, run) for run in shown):
                continue  # a step of a run not shown, alone
            reference = "" if entry["ref_step"] is None else \
                f"{entry['ref_step']:>3} {one_line(entry['ref_command'] or '', width - 4)}"
            cells = [Text(visible(reference))]  # a run's commands are its words, never markup
            for run in shown:
                other = place(entry, run)
                cells.append(Text(visible(self._cell(run, index, other, width))))
            table.add_row(*cells, key=str(index))
        self.go(row if row else self.first.get(self.chosen) or 0)

    @property
    def here(self) -> int:
        """The aligned row (of `nway.rows`) under the cursor."""
        table = self.query_one(DataTable)
        if not table.row_count:
            return 0
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return int(key) if key is not None else 0

    def go(self, index: int) -> None:
        """The cursor on aligned row `index`, or the shown row nearest before it."""
        table = self.query_one(DataTable)
        shown = [int(str(key.value)) for key in table.rows]
        before = [place for place, at in enumerate(shown) if at <= index]
        if shown:
            table.move_cursor(row=before[-1] if before else 0)

    def _cell(self, run: int, index: int, other: dict[str, Any] | None, width: int) -> str:
        if other is None:
            return ""
        first = "◆" if self.first.get(run) == index else " "
        step = "-" if other["step"] is None else str(other["step"])
        said = f"{first}{MARKS[other['kind']]} {step:>3}{'*' if other['output_differs'] else ' '}"
        return f"{said} {one_line(other['command'] or '', width - len(said) - 1)}".rstrip()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.query_one(ManyCurve).set_here(int(str(event.row_key.value)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open_pair()

    # --- the curves ------------------------------------------------------------------------

    def on_run_event_message(self, message: RunEventMessage) -> None:
        event = message.event
        index = next((index for index, run in enumerate(self.runs) if run is event.run), None)
        if index is None or not event.run.current(event):
            return
        if isinstance(event, Failed):
            self.say_failed(event.work, event.error)
            return
        if not isinstance(event, CurvePoints):
            return
        self.curves[index].update((point.step, point.tokens) for point in event.points)
        if event.done:
            self._curves_read.add(index)
            if len(self._curves_read) == len(self.runs):
                self._draw_curves(self.curves)

    def _draw_curves(self, tokens: list[dict[int, int]]) -> None:
        """Every run's curve over the aligned rows, once all are read."""
        series: list[list[int | None]] = [[tokens[0].get(row["ref_step"]) if row["ref_step"] else None
                                           for row in self.rows]]
        for run in range(1, len(tokens)):
            values = []
            for row in self.rows:
                other = place(row, run)
                values.append(tokens[run].get(other["step"]) if other is not None and other["step"] else None)
            series.append(values)
        self.query_one(ManyCurve).set_points(series)

    # --- actions ---------------------------------------------------------------------------

    def action_other_run(self, step: int) -> None:
        """Choose the next (or previous) run: the one Enter opens, and shown where not all fit."""
        self.choose((self.chosen - 1 + step) % (len(self.paths) - 1) + 1)

    def choose(self, run: int) -> None:
        self.chosen = run
        self.shown = []
        self._header()
        self._columns()

    def action_next_divergence(self) -> None:
        later = [index for index, row in enumerate(self.rows) if index > self.here
                 and parts(row, self.chosen)]
        if later:
            self.go(later[0])
        else:
            self.notify(f"run {self.chosen} does not part from the reference after this row", severity="warning")

    def action_open_pair(self) -> None:
        self.app.push_screen(self.pair_screen(self.chosen))

    def action_quit_diff(self) -> None:
        """Quit; opened from the batches' list: back to it."""
        if self.app.screen_stack[0] is not self:
            self.app.pop_screen()
        else:
            self.app.exit()
