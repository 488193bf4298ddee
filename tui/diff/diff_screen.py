"""The diff view (SPEC §16): two runs in two columns, their steps aligned (`core.diff.align`),
the first divergence shown at open, each side's thought, commands and output with the lines
the other side lacks set apart, the two context curves in one chart, and both runs' totals.

Each run is an open run, as the replay's file is (`core/replay/open_run.OpenRun`): its token
curve read in its thread, a long history's prompt worked out there, both reported through
`kit.run_events`. State is in Textual vars (`DiffState`, beside this file) the header binds
to; the moves, go-to, search (a worker over the core's `step_matches`), fork and quit are the
replay's (`shared/step_browser.py`); the prompt inspector is the replay's
(`open_step_prompt`); `f`/`F` end the app with a fork of A's or B's step.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from swedeck.core.diff.align import Alignment, Row, step_key, totals_line
from swedeck.core.diff.lines import changed_lines
from swedeck.core.meter import model_window
from swedeck.core.replay.document import LoadedDocument, StepView
from swedeck.core.replay.open_run import CurvePoints, Failed, OpenRun, PromptReady
from swedeck.core.replay.search import step_matches
from swedeck.core.replay.step_text import command_lines, model_text, output_text
from swedeck.core.text import visible
from swedeck.core.trajectory.model import Trajectory

from ..kit.pacing import pacing_of
from ..kit.run_events import RunEventMessage, posting
from ..kit.view_screen import css_beside
from ..shared.highlight import highlighted
from ..shared.prompt_inspector import open_step_prompt, shown_prompt
from ..shared.step_browser import StepBrowser
from ..widgets.fitted_footer import FittedFooter
from ..widgets.header_line import HeaderLine
from ..widgets.step_list import StepList
from ..widgets.text import literal
from ..widgets.text_view import TextView
from .bindings import DIFF_BINDINGS
from .diff_state import DiffState
from .dual_curve import DualCurve

MARKS = {"same": "=", "changed": "≠", "a_only": "<", "b_only": ">"}


@dataclass(frozen=True)
class Side:
    """One run in the view: what opens it, and the trajectory read."""

    name: str
    path: str
    trajectory: Trajectory


class DiffScreen(DiffState, StepBrowser):
    CSS_PATH = css_beside(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [*DIFF_BINDINGS]
    GOTO_PROMPT = "go to step (of A)"
    SEARCH_PROMPT = "search both runs' thoughts, commands and output"
    WORK: ClassVar[dict[str, str]] = {"search": "the search", "curve": "the token curves",
                                      "prompt": "the step's prompt"}

    def __init__(self, a: Side, b: Side, alignment: Alignment, processors: list[dict[str, Any]] | None = None,
                 fork_model: str | None = None, why: str = "") -> None:
        super().__init__()
        self.why = why
        """Why the runs parted, in words (`diff.nway`), under their totals."""
        self.sides = {"a": a, "b": b}
        self.alignment = alignment
        self.processors = list(processors or [])
        self.fork_model = fork_model
        self.curves: dict[str, dict[int, int]] = {"a": {}, "b": {}}
        self.runs: dict[str, OpenRun] = {}
        """Each side's run, open while the view is (its steps as the replay shows them, its curve, a prompt)."""
        self.set_reactive(DiffState.rows, len(alignment.rows))
        self.set_reactive(DiffState.names, (a.name, b.name))
        self.set_reactive(DiffState.first_divergence, alignment.first_divergence)

    def compose(self) -> ComposeResult:
        yield HeaderLine(id="diff-header").data_bind(text=DiffState.header)
        with Horizontal(id="diff-body"):
            yield StepList(id="diff-rows")
            for key in ("a", "b"):
                with Vertical(id=f"side-{key}", classes="diff-side"):
                    with VerticalScroll(classes="diff-model"):
                        yield Static(id=f"model-{key}", markup=False)
                    yield TextView(id=f"output-{key}", classes="diff-output")
        yield DualCurve(id="diff-curve")
        yield Static(id="diff-totals", markup=False)
        yield FittedFooter()

    def on_mount(self) -> None:
        self.runs = {key: OpenRun.of(side.trajectory, posting(self), pacing_of(self.app))
                     for key, side in self.sides.items()}
        rows = self.query_one(StepList)
        rows.set_count(len(self.alignment.rows))
        rows.set_commands({index + 1: self._row_label(row) for index, row in enumerate(self.alignment.rows)})
        named = {key: replace(getattr(self.alignment, key), path=side.name) for key, side in self.sides.items()}
        self.query_one("#diff-totals", Static).update(literal(
            totals_line("A", named["a"]) + "\n" + totals_line("B", named["b"]) + (f"\n{self.why}" if self.why else "")))
        first = self.alignment.divergences()
        self.row = first[0] if first else 0  # the first divergence, at open
        self.watch_row()
        for run in self.runs.values():
            run.start_curve()

    def on_unmount(self) -> None:
        for run in self.runs.values():
            run.close()

    # --- rows ------------------------------------------------------------------------------

    def _row_label(self, row: Row) -> str:
        side, number = ("a", row.a) if row.a is not None else ("b", row.b)
        assert number is not None
        side_run = self.sides[side].trajectory
        command = step_key(side_run, side_run.steps[number - 1])
        left = "-" if row.a is None else str(row.a)
        right = "-" if row.b is None else str(row.b)
        numbers = left if left == right else f"{left}|{right}"  # one number where both runs are at the same step
        return f"{MARKS[row.kind]} {numbers} {command}"

    @property
    def here(self) -> int:
        return self.row + 1

    @property
    def count(self) -> int:
        return len(self.alignment.rows)

    def go(self, number: int) -> None:
        """Show row `number` (1-based, as the search and go-to number them)."""
        if self.alignment.rows:
            self.row = min(max(number, 1), len(self.alignment.rows)) - 1

    def goto(self, number: int) -> None:
        """The first row at or after step `number` of A."""
        index = next((i for i, row in enumerate(self.alignment.rows) if row.a is not None and row.a >= number), None)
        if index is not None:
            self.go(index + 1)

    def search_places(self, source: object, query: str) -> Iterator[int]:
        """The rows where either run's step matches (the core's `step_matches`), each run read by
        its own document here: the UI's documents stay on the UI thread."""
        documents = {key: LoadedDocument(side.trajectory) for key, side in self.sides.items()}
        for index, row in enumerate(self.alignment.rows):
            for key in ("a", "b"):
                number = getattr(row, key)
                if number is not None and step_matches(documents[key].step(number), query):
                    yield index + 1
                    break

    def searched(self) -> None:
        self.watch_row()

    def watch_row(self) -> None:
        if not self.alignment.rows:
            return
        row = self.alignment.rows[self.row]
        views = {key: self._view(key, getattr(row, key)) for key in ("a", "b")}
        texts = {key: (model_text(view), command_lines(view), output_text(view) if view.observations else "")
                 if view is not None else None for key, view in views.items()}
        if texts["a"] is not None and texts["b"] is not None:
            model_a, model_b = changed_lines(texts["a"][0] + "\n" + texts["a"][1], texts["b"][0] + "\n" + texts["b"][1])
            out_a, out_b = changed_lines(texts["a"][2], texts["b"][2])
            changed = {"a": (model_a, out_a), "b": (model_b, out_b)}
        else:
            changed = {"a": (frozenset(), frozenset()), "b": (frozenset(), frozenset())}
        for key in ("a", "b"):
            panel = self.query_one(f"#side-{key}")
            number = getattr(row, key)
            side = self.sides[key]
            panel.set_class(number is None, "-missing")
            panel.border_title = visible(f"{key.upper()} · " + (
                f"step {number}/{len(side.trajectory.steps)}" if number is not None else "no step here"))
            text = texts[key]
            if text is None:
                self.query_one(f"#model-{key}", Static).update(Content(
                    f"({key.upper()} took no step here: the other run did this one alone)"))
                self.query_one(f"#output-{key}", TextView).update("")
                continue
            self.query_one(f"#model-{key}", Static).update(highlighted(text[0] + "\n" + text[1], self.search_text,
                                                                       changed[key][0]))
            self.query_one(f"#output-{key}", TextView).update(text[2] or "(no output)", self.search_text, changed[key][1])
        self.query_one(StepList).highlight(self.row)
        self.query_one(DualCurve).set_here(self.row)

    def _view(self, key: str, number: int | None) -> StepView | None:
        document = self.runs[key].document
        assert document is not None
        return None if number is None else document.step(number)

    def on_step_list_highlighted(self, event: StepList.Highlighted) -> None:
        if event.index != self.row:
            self.go(event.index + 1)

    # --- the curves ------------------------------------------------------------------------

    def on_run_event_message(self, message: RunEventMessage) -> None:
        event = message.event
        key = next((key for key, run in self.runs.items() if run is event.run), None)
        if key is None or not event.run.current(event):
            return
        if isinstance(event, CurvePoints):
            self.curves[key].update((point.step, point.tokens) for point in event.points)
            if event.done:
                self._draw_curves()
        elif isinstance(event, PromptReady):
            row = self.alignment.rows[self.row] if self.alignment.rows else None
            shown_prompt(self, event, still=row is not None and getattr(row, key) == event.step)
        elif isinstance(event, Failed):
            self.say_failed(event.work, event.error)

    def _draw_curves(self) -> None:
        rows = self.alignment.rows
        self.query_one(DualCurve).set_points([self.curves["a"].get(row.a) if row.a else None for row in rows],
                                             [self.curves["b"].get(row.b) if row.b else None for row in rows])

    # --- actions ---------------------------------------------------------------------------

    def action_next_divergence(self) -> None:
        later = [index for index in self.alignment.divergences() if index > self.row]
        if later:
            self.go(later[0] + 1)
        else:
            self.notify("no divergence after this one", severity="warning")

    def action_previous_divergence(self) -> None:
        earlier = [index for index in self.alignment.divergences() if index < self.row]
        if earlier:
            self.go(earlier[-1] + 1)

    def action_prompt(self, key: str) -> None:
        row = self.alignment.rows[self.row] if self.alignment.rows else None
        number = getattr(row, key) if row is not None else None
        if number is None:
            self.notify(f"{key.upper()} took no step here", severity="warning")
            return
        window = model_window(self.sides[key].trajectory.info.model_name)
        open_step_prompt(self, self.runs[key], number, self.processors, window)  # a long history's in its thread

    def action_fork(self, key: str) -> None:
        row = self.alignment.rows[self.row] if self.alignment.rows else None
        number = getattr(row, key) if row is not None else None
        if number is None:
            self.notify(f"{key.upper()} took no step here to fork from", severity="warning")
            return
        side = self.sides[key]
        self.fork(Path(side.path), number, self.fork_model, "open the diff with -m NAME or set model.model_name",
                  side.trajectory.info, lambda: side.trajectory)

    def action_patches(self) -> None:
        from .patch_screen import PatchScreen

        self.app.push_screen(PatchScreen(*(side.trajectory.info.submission for side in self.sides.values())))
