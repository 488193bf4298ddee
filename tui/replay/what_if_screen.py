"""`p` in replay (SPEC §11.1): toggle history processors and see, for the selected step and
as a curve over all steps, the prompt the model would have seen and the tokens saved."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static
from textual.worker import Worker, get_current_worker

from swedeck.core.errors import SwedeckError
from swedeck.core.prompt_view import StepPrompt, step_summary
from swedeck.core.replay.open_run import Failed, OpenRun, PromptReady
from swedeck.core.replay.what_if import starting_processors, total_saved, what_if_curve

from ..kit.run_events import RunEventMessage, posting
from ..kit.view_screen import ViewModal, background, css_beside
from ..widgets.text import literal
from ..widgets.token_chart import TokenChart


class WhatIfScreen(ViewModal[None]):
    CSS_PATH = css_beside(__file__)
    BINDINGS = [Binding("escape,q,p", "dismiss", "Close"),
                *[Binding(str(n), f"toggle_processor({n - 1})", f"Toggle {n}", show=False) for n in range(1, 10)],
                Binding("plus", "bump(1)", "n+1", show=False), Binding("minus", "bump(-1)", "n-1", show=False)]

    def __init__(self, run: OpenRun, step: int, processors: list[dict[str, Any]],
                 window: int | None = None) -> None:
        super().__init__()
        self.run = run
        """The replay's open run, read whole: the step's prompt is its (`OpenRun.prompt`)."""
        self.trajectory = trajectory = run.trajectory()
        self.step = step
        self.window = window
        self.processors = starting_processors(trajectory, step, processors)
        self.prompt: StepPrompt | None = None
        """The step's prompt for the chosen processors (None while a worker works it out)."""
        self.curve: list[int] = []
        self.run_saved: int | None = None
        """Tokens the chosen processors save over the whole run (None until the curve is computed)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="what-if-box"):
            yield Static(id="what-if-list", markup=False)
            yield Static(id="what-if-figures", markup=False)
            yield Static(id="what-if-run", markup=False)
            yield TokenChart(unit="tokens saved", id="what-if-curve")
            yield Static(Content("1-9 toggle a processor · +/- change the first number parameter of the first "
                                 "active one · curve: tokens saved per step · Esc closes"), id="what-if-hint",
                         markup=False)

    def on_mount(self) -> None:
        self.refresh_figures()

    def refresh_figures(self) -> None:
        rows = []
        for number, processor in enumerate(self.processors, start=1):
            params = ", ".join(f"{k}={v}" for k, v in processor.items() if k not in ("type", "enabled"))
            box = "[x]" if processor["enabled"] else "[ ]"
            rows.append(f"{number} {box} {processor['type']}({params})")
        self.query_one("#what-if-list", Static).update(literal("\n".join(rows)))  # a file's values, shown as text
        chosen = self.processors_chosen()
        try:  # past `PROMPT_IN_WORKER` messages, worked out in the run's thread (each message built and counted)
            prompt = self.run.prompt(self.step, chosen, self.window, what_if=True, emit=posting(self))
        except SwedeckError as error:  # a config swedeck refuses (a file's recorded one): said, not raised
            self.prompt = None
            self.query_one("#what-if-figures", Static).update(
                literal(f"step {self.step}'s prompt could not be computed: {type(error).__name__}: {error}"))
        else:
            if prompt is not None:
                self._show_prompt(prompt)
            else:
                self.prompt = None
                self.query_one("#what-if-figures", Static).update(
                    Content(f"working out step {self.step}'s prompt: {self.run.history_at(self.step):,} messages…"))
        self.query_one("#what-if-run", Static).update(Content("whole run: computing…"))
        self.compute_curve(chosen)

    def _show_prompt(self, prompt: StepPrompt) -> None:
        self.prompt = prompt
        self.query_one("#what-if-figures", Static).update(literal(step_summary(prompt)))

    def on_run_event_message(self, message: RunEventMessage) -> None:
        event = message.event
        if not event.run.current(event):
            return
        if isinstance(event, PromptReady) and event.processors == self.processors_chosen():
            self._show_prompt(event.prompt)  # else worked out for a choice since changed
        elif isinstance(event, Failed):
            self._failed(event.work, event.error)

    def processors_chosen(self) -> list[dict[str, Any]]:
        return [dict(processor) for processor in self.processors]

    @background(exclusive=True, group="curve")
    def compute_curve(self, processors: list[dict[str, Any]]) -> None:
        worker = get_current_worker()
        points = []
        for point in what_if_curve(self.trajectory, processors):
            if worker.is_cancelled:  # a newer choice of processors superseded this one: its result must not win
                return
            points.append(point)
        if not worker.is_cancelled:
            self.post_message(self.CurveDone(processors, [point.saved for point in points], total_saved(points)))

    class CurveDone(Message):
        """The whole run's savings for the chosen processors, from the worker that computed them."""

        def __init__(self, processors: list[dict[str, Any]], saved: list[int], total: int) -> None:
            super().__init__()
            self.processors, self.saved, self.total = processors, saved, total

    def on_what_if_screen_curve_done(self, message: CurveDone) -> None:
        if message.processors != self.processors:
            return  # computed for a choice since changed: the newer one's curve is on its way
        saved, total = message.saved, message.total
        self.curve = saved
        self.run_saved = total
        chart = self.query_one(TokenChart)
        chart.points, chart.current = saved, self.step
        self.query_one("#what-if-run", Static).update(
            Content(f"whole run: {total:,} tokens saved over {len(saved)} queries"))

    WORK: ClassVar[dict[str, str]] = {"prompt": "the step's prompt", "curve": "the whole run's savings"}

    def worker_failed(self, worker: Worker[Any]) -> bool:
        """A worker raised: the figure it was working out says so, not "computing…" for ever."""
        self._failed(worker.group, worker.error)
        return True

    def _failed(self, work: str, error: BaseException | None) -> None:
        said = f"could not be computed: {type(error).__name__}: {error}"
        if work == "curve":
            self.query_one("#what-if-run", Static).update(literal(f"whole run: {said}"))
        else:
            self.query_one("#what-if-figures", Static).update(literal(f"step {self.step}'s prompt {said}"))

    def action_toggle_processor(self, index: int) -> None:
        if index < len(self.processors):
            self.processors[index]["enabled"] = not self.processors[index]["enabled"]
            self.refresh_figures()

    def action_bump(self, delta: int) -> None:
        for processor in self.processors:
            if not processor["enabled"]:
                continue
            for key, value in processor.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    processor[key] = max(1, value + delta)
                    self.refresh_figures()
                    return
