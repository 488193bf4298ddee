"""The diff view (SPEC §16): two runs in two columns, their steps aligned (`core.diff.align`),
the first divergence shown at open, each side's thought, commands and output with the lines
the other side lacks set apart, the two context curves in one chart, and both runs' totals.

State is in Textual vars (`DiffState`) the header binds to; the curve is computed in a
worker that only posts a message; the prompt inspector is the replay's and the live
screen's (`PromptInspector.at_step`); `f`/`F` end the app with a fork of A's or B's step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content, Span
from textual.dom import DOMNode
from textual.message import Message
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.widgets import Static

from swedeck.core.diff.align import Alignment, Row, step_key, totals_line
from swedeck.core.diff.lines import changed_lines
from swedeck.core.prompt_view import step_prompt
from swedeck.core.replay.document import LoadedDocument, StepView
from swedeck.core.replay.search import next_match
from swedeck.core.replay.step_text import model_text, output_text
from swedeck.core.replay.token_curve import token_curve
from swedeck.core.text import visible
from swedeck.core.trajectory.model import Trajectory

from ..replay.ask_screen import AskScreen
from ..replay.replay_screen import ForkRequest
from ..screens.help_screen import HelpScreen
from ..screens.prompt_inspector import PromptInspector
from ..widgets.fitted_footer import FittedFooter
from ..widgets.step_list import StepList
from ..widgets.text import literal
from ..widgets.text_view import TextView
from .bindings import DIFF_BINDINGS
from .dual_curve import DualCurve

MARKS = {"same": "=", "changed": "≠", "a_only": "<", "b_only": ">"}
CHANGED = "bold underline"


@dataclass(frozen=True)
class Side:
    """One run in the view: what opens it, the trajectory, and its steps as the replay shows them."""

    name: str
    path: str
    trajectory: Trajectory
    document: LoadedDocument


class HeaderLine(Static):
    """The header, bound to `DiffState.header`; paths and names shown literally."""

    text: reactive[str] = reactive("")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, **kwargs)

    def watch_text(self, text: str) -> None:
        self.update(literal(text))


class DiffState(DOMNode):
    row: var[int] = var(0, init=False)
    """The aligned row shown (0-based)."""
    header: var[str] = var("")
    search_text: var[str] = var("")
    matches: var[list[int]] = var(list)
    """Rows whose steps (either side) hold the search."""


class DiffScreen(DiffState, Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [*DIFF_BINDINGS]
    DEFAULT_CSS = """
    DiffScreen { layout: vertical; }
    #diff-header { height: auto; max-height: 3; padding: 0 1; background: $panel; text-style: bold; }
    #diff-body { height: 1fr; }
    #diff-rows { width: 24%; min-width: 22; max-width: 36; border: round $panel; }
    .diff-side { width: 1fr; border: round $accent; }
    .diff-side.-missing { border: round $panel; }
    .diff-model { height: auto; max-height: 45%; }
    .diff-model Static { padding: 0 1; }
    .diff-output { height: 1fr; border-top: solid $panel; }
    #diff-totals { height: auto; max-height: 4; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, a: Side, b: Side, alignment: Alignment, processors: list[dict[str, Any]] | None = None,
                 fork_model: str | None = None) -> None:
        super().__init__()
        self.sides = {"a": a, "b": b}
        self.alignment = alignment
        self.processors = list(processors or [])
        self.fork_model = fork_model
        self.curves: dict[str, dict[int, int]] = {"a": {}, "b": {}}

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
        rows = self.query_one(StepList)
        rows.set_count(len(self.alignment.rows))
        rows.set_commands({index + 1: self._row_label(row) for index, row in enumerate(self.alignment.rows)})
        named = {key: replace(getattr(self.alignment, key), path=side.name) for key, side in self.sides.items()}
        self.query_one("#diff-totals", Static).update(literal(
            totals_line("A", named["a"]) + "\n" + totals_line("B", named["b"])))
        first = self.alignment.divergences()
        self.row = first[0] if first else 0  # the first divergence, at open
        self.watch_row()
        self.compute_curves()

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

    def go(self, row: int) -> None:
        if self.alignment.rows:
            self.row = min(max(row, 0), len(self.alignment.rows) - 1)

    def watch_row(self) -> None:
        if not self.alignment.rows:
            self._header()
            return
        row = self.alignment.rows[self.row]
        views = {key: self._view(key, getattr(row, key)) for key in ("a", "b")}
        texts = {key: (model_text(view), self._commands(view), output_text(view) if view.observations else "")
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
            self.query_one(f"#model-{key}", Static).update(_marked(text[0] + "\n" + text[1], changed[key][0], self.search_text))
            self.query_one(f"#output-{key}", TextView).update(text[2] or "(no output)", self.search_text, changed[key][1])
        self.query_one(StepList).highlight(self.row)
        self.query_one(DualCurve).set_here(self.row)
        self._header()

    def _view(self, key: str, number: int | None) -> StepView | None:
        return None if number is None else self.sides[key].document.step(number)

    @staticmethod
    def _commands(view: StepView) -> str:
        return "\n".join(f"$ {action.command}" for action in view.actions) or "(no command)"

    def _header(self) -> None:
        first = self.alignment.first_divergence
        parts = [f"A {self.sides['a'].name} ↔ B {self.sides['b'].name}",
                 f"row {self.row + 1}/{len(self.alignment.rows)}",
                 "the runs never part" if first is None else f"first divergence: step {first} of A"]
        if self.search_text:
            parts.append(f"/{self.search_text}: {len(self.matches)} rows")
        self.header = " · ".join(parts)

    def on_step_list_highlighted(self, event: StepList.Highlighted) -> None:
        if event.index != self.row:
            self.go(event.index)

    # --- the curves ------------------------------------------------------------------------

    class Curves(Message):
        def __init__(self, curves: dict[str, dict[int, int]]) -> None:
            super().__init__()
            self.curves = curves

    @work(thread=True, exclusive=True, exit_on_error=False)
    def compute_curves(self) -> None:
        curves = {key: {point.step: point.tokens for point in token_curve(LoadedDocument(side.trajectory))}
                  for key, side in self.sides.items()}
        self.post_message(self.Curves(curves))

    def on_diff_screen_curves(self, message: Curves) -> None:
        self.curves = message.curves
        rows = self.alignment.rows
        self.query_one(DualCurve).set_points([self.curves["a"].get(row.a) if row.a else None for row in rows],
                                             [self.curves["b"].get(row.b) if row.b else None for row in rows])

    # --- actions ---------------------------------------------------------------------------

    def action_next_row(self) -> None:
        self.go(self.row + 1)

    def action_previous_row(self) -> None:
        self.go(self.row - 1)

    def action_first_row(self) -> None:
        self.go(0)

    def action_last_row(self) -> None:
        self.go(len(self.alignment.rows) - 1)

    def action_next_divergence(self) -> None:
        later = [index for index in self.alignment.divergences() if index > self.row]
        if later:
            self.go(later[0])
        else:
            self.notify("no divergence after this one", severity="warning")

    def action_previous_divergence(self) -> None:
        earlier = [index for index in self.alignment.divergences() if index < self.row]
        if earlier:
            self.go(earlier[-1])

    def action_goto(self) -> None:
        def answer(value: str | None) -> None:
            if value and value.strip().isdigit():
                wanted = int(value)
                index = next((i for i, row in enumerate(self.alignment.rows) if row.a is not None and row.a >= wanted),
                             None)
                if index is not None:
                    self.go(index)
        self.app.push_screen(AskScreen("go to step (of A)"), answer)

    def action_search(self) -> None:
        def answer(value: str | None) -> None:
            if value is not None:
                self.search(value)
        self.app.push_screen(AskScreen("search both runs' thoughts, commands and output", self.search_text), answer)

    def search(self, text: str) -> None:
        self.search_text = text
        needle = text.casefold()
        found = []
        if needle:
            for index, row in enumerate(self.alignment.rows):
                for key in ("a", "b"):
                    view = self._view(key, getattr(row, key))
                    if view is not None and needle in (model_text(view) + "\n" + self._commands(view) + "\n"
                                                       + output_text(view)).casefold():
                        found.append(index)
                        break
        self.matches = found
        target = next_match(found, self.row)
        if target is not None and self.row not in found:
            self.go(target)
        else:
            self.watch_row()
        if text and not found:
            self.notify(visible(f"no step matches {text!r}"), severity="warning", markup=False)

    def action_next_match(self) -> None:
        target = next_match(self.matches, self.row)
        if target is not None:
            self.go(target)

    def action_previous_match(self) -> None:
        target = next_match(self.matches, self.row, forward=False)
        if target is not None:
            self.go(target)

    def action_prompt(self, key: str) -> None:
        row = self.alignment.rows[self.row] if self.alignment.rows else None
        number = getattr(row, key) if row is not None else None
        if number is None:
            self.notify(f"{key.upper()} took no step here", severity="warning")
            return
        side = self.sides[key]
        self.app.push_screen(PromptInspector.at_step(step_prompt(side.trajectory, number, self.processors)))

    def action_fork(self, key: str) -> None:
        row = self.alignment.rows[self.row] if self.alignment.rows else None
        number = getattr(row, key) if row is not None else None
        if number is None:
            self.notify(f"{key.upper()} took no step here to fork from", severity="warning")
            return
        if not self.fork_model:
            self.notify("A fork continues with a model: open the diff with -m NAME or set model.model_name.",
                        title="No model to fork with", severity="error", markup=False)
            return
        self.app.exit(ForkRequest(Path(self.sides[key].path), number))

    def action_patches(self) -> None:
        from .patch_screen import PatchScreen

        self.app.push_screen(PatchScreen(*(side.trajectory.info.submission for side in self.sides.values())))

    def action_quit_diff(self) -> None:
        if self.app.screen_stack[0] is not self:  # opened from two batches' list: back to it
            self.app.pop_screen()
        else:
            self.app.exit()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(DIFF_BINDINGS, {}))


def _marked(text: str, lines: frozenset[int], query: str) -> Content:
    """Literal text with the lines in `lines` set apart and the search marked."""
    text = visible(text)
    spans = []
    position = 0
    for number, line in enumerate(text.split("\n")):
        if number in lines and line:
            spans.append(Span(position, position + len(line), CHANGED))
        position += len(line) + 1
    if query:
        lower, needle = text.casefold(), query.casefold()
        if len(lower) == len(text):
            start = lower.find(needle)
            while start != -1 and len(spans) < 2000:
                spans.append(Span(start, start + len(needle), "reverse bold"))
                start = lower.find(needle, start + len(needle))
    return Content(text, spans)
