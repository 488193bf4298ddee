"""The replay view (SPEC §11.1): the live layout, read-only, for one saved trajectory.

A view: layout, keys and drawing a step. What happens between opening a file and drawing a
step is the open run's (`core/replay/open_run.OpenRun`, one per file shown): a large file's
part then its whole, the token curve and each step's dollars, the search's places, a long
history's prompt, the export, follow. It reports from its threads through `kit.run_events`;
this view draws what it reports. Anything wrong with a file is an error view naming the file
and the reason; in a folder L/H still move on.

What it shows is state in Textual vars (`ReplayState`, its base class) that the widgets
`data_bind` to; the moves, go-to, search, fork and quit are the diff's too
(`shared/step_browser.py`); the modal views (`t` the prompt inspector shared with the live
screen, `p` what-if, `i` fidelity, `b` branches, `s` subagents) get what they show from the core.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Key
from textual.widgets import Static

from swedeck.core.cost import Prices, StepCost
from swedeck.core.errors import UsageError
from swedeck.core.meter import model_window, step_meter
from swedeck.core.replay.document import ReplayDocument, StepView
from swedeck.core.replay.open_run import (
    CurveEntry,
    CurvePoints,
    Exported,
    Failed,
    OpenRun,
    Progress,
    PromptReady,
    Read,
    WholeReadFailed,
)
from swedeck.core.replay.step_text import command_lines, model_text, opening, output_text
from swedeck.core.startup.read_ahead import ReadAhead
from swedeck.core.subagents import RunNode, agent_steps, subagent_files
from swedeck.core.text import visible
from swedeck.core.trajectory.errors import TrajectoryError
from swedeck.core.trajectory.fidelity import fidelity_of, summary, summary_lines
from swedeck.core.trajectory.files import run_label
from swedeck.core.trajectory.model import Branch, Trajectory

from ..kit.pacing import pacing_of
from ..kit.run_events import RunEventMessage, posting
from ..kit.view_screen import css_beside
from ..shared.fork import ForkRequest
from ..shared.highlight import highlighted
from ..shared.step_browser import StepBrowser
from ..widgets.context_meter import ContextMeter
from ..widgets.fitted_footer import FittedFooter
from ..widgets.pane_text import PaneText
from ..widgets.step_list import StepList
from ..widgets.text import literal
from ..widgets.text_view import TextView
from ..widgets.token_chart import TokenChart
from .bindings import REPLAY_BINDINGS
from .header import ReadProgress, ReplayHeaderBar
from .replay_settings import ReplaySettings, SettingsOnce
from .replay_state import OpenedFile, ReplayState

FOLLOW_INTERVAL_S = 0.5
PLAY_TOKENS_PER_SECOND = 80
PLAY_TICK_S = 0.05


__all__ = ["ForkRequest", "ReplayScreen", "ReplaySettings"]


class ReplayScreen(ReplayState, StepBrowser):
    CSS_PATH = css_beside(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [*REPLAY_BINDINGS]
    GOTO_PROMPT = "go to step (negative counts from the end)"
    WORK: ClassVar[dict[str, str]] = {"search": "the search", "curve": "the token curve", "prompt": "the step's prompt"}

    def __init__(self, paths: list[Path], *, start_step: int | None = None, follow: bool = False,
                 play: bool = False, processors: list[dict[str, Any]] | None = None, file_index: int = 0,
                 fork_model: str | None = None, trust_file: bool = False, branch: str | None = None,
                 verifier: tuple[str, str] | None = None, settings: Callable[[], ReplaySettings] | None = None,
                 ahead: ReadAhead | None = None) -> None:
        super().__init__()
        self._ahead = ahead
        """The first file's bytes, read while the command's modules imported: for its first opening only."""
        self.settings = SettingsOnce(settings, ReplaySettings(list(processors or []), fork_model),
                                     self._config_unreadable)
        """The person's processors, fork model, rules and prices: the config, read when first needed."""
        self.verifier = verifier
        """(title, text): a batch instance's verifier output, shown beside the command output (`swedeck watch`)."""
        self.set_reactive(ReplayState.branch, branch)
        self.trust_file = trust_file
        """`--trust-trajectory`: run a custom_filter the file records (else it is shown, not run)."""
        self.paths = paths
        self.set_reactive(ReplayState.files, len(paths))
        self.set_reactive(ReplayState.file_index, file_index)
        self.set_reactive(ReplayState.following, follow)
        self.set_reactive(ReplayState.playing, play)
        self.start_step = start_step
        self.costs: dict[int, StepCost] = {}
        """Each step's dollars and the run's up to it, as the open run's curve prices them (issue 65)."""
        self.run: OpenRun | None = None
        """The file shown, open (`core/replay/open_run.py`); None while none is."""
        self._play_shown = 0
        self.view: StepView | None = None
        self.window: int | None = None

    # --- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield ReplayHeaderBar(id="replay-header").data_bind(info=ReplayState.header)
        yield Static(id="replay-error", markup=False)
        with Horizontal(id="replay-body"):
            yield StepList(id="replay-steps")
            with Vertical(id="replay-model"):
                with VerticalScroll(id="model-scroll"):
                    yield PaneText(id="model-text", markup=False)
                    yield PaneText(id="model-command", markup=False)
            with Vertical(id="replay-output"):
                yield TextView(id="output-text")
            if self.verifier is not None:
                with Vertical(id="replay-verifier"):
                    yield TextView(id="verifier-text")
        yield TokenChart(id="replay-curve").data_bind(points=ReplayState.curve_points, current=ReplayState.step)
        yield ContextMeter(id="replay-meter").data_bind(status=ReplayState.meter_status, notes=ReplayState.meter_notes)
        yield FittedFooter()

    def _config_unreadable(self, error: UsageError) -> None:
        """Said, and the replay goes on without the config (from the UI's thread or the curve's)."""
        said = partial(self.notify, visible(str(error)), title="The config cannot be read", severity="error",
                       markup=False)
        if threading.current_thread() is threading.main_thread():
            said()
        else:
            self.app.call_from_thread(said)

    @property
    def processors(self) -> list[dict[str, Any]]:
        """The person's configured processors (what-if and the prompt inspector start from them)."""
        return self.settings.get().processors

    @property
    def fork_model(self) -> str | None:
        """The model a fork (`f`) continues with; None: `f` says how to name one."""
        return self.settings.get().fork_model

    @property
    def step_list(self) -> StepList:
        return self.query_one(StepList)

    @property
    def meter(self) -> ContextMeter:
        return self.query_one(ContextMeter)

    def on_mount(self) -> None:
        self.meter.processors = None  # a step's processors are in `t`, not here
        self.query_one("#replay-model").border_title = "model output"
        self.query_one("#replay-output").border_title = "output"
        if self.verifier is not None:
            title, text = self.verifier
            self.query_one("#replay-verifier").border_title = title
            self.query_one("#verifier-text", TextView).update(text)
        self.open_file(self.file_index)
        if self.following:
            self.set_interval(FOLLOW_INTERVAL_S, self.poll)
        if self.playing:
            self.set_interval(PLAY_TICK_S, self.play_tick)

    # --- files --------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self.paths[self.file_index]

    @property
    def document(self) -> ReplayDocument | None:
        """What is open of the file shown: a large file's part while it is read whole, then the whole."""
        return self.run.document if self.run is not None else None

    def open_file(self, index: int) -> None:
        self.workers.cancel_group(self, "search")
        self._leave_run()
        self.file_index = index
        self.view = None
        self.curve, self.curve_points, self.matches, self.searching = {}, [], [], False
        self.costs = {}
        self.opened = OpenedFile(self.path.name)
        self.query_one(TokenChart).marks = {}
        self.error = None
        steps = self.step_list
        steps.clear()
        wanted = self.start_step if self.start_step is not None and index == self.file_index else 1
        self.start_step = None
        run = self.run = OpenRun(self.path, posting(self), pacing_of(self.app), self.price_list)
        try:
            ahead, self._ahead = self._ahead, None
            place = run.open(wanted, ahead)
        except TrajectoryError as error:
            self.show_error(str(error))
            return
        document = run.document
        assert document is not None
        self._opened()
        self.window = model_window(document.info.model_name)
        count = document.step_count
        steps.set_count(count)
        if count == 0:
            self.show_error(f"{self.path}: no steps to show (no assistant message yet)")
            return
        reading = run.reading
        if reading is not None:  # a large file: its start or end, read whole by the run (issue 49)
            steps.from_end = reading.at_end
            self.reading = ReadProgress(reading.progress, reading.at_end)
            if place is None:
                run.when_read(lambda: self.goto(wanted))
                place = reading.step_count if reading.at_end else 1
        self.go(place or 1, force=True)
        self.call_after_refresh(run.start)  # after the first frame: it competes for the GIL (bench B2)

    def _leave_run(self) -> None:
        if self.run is not None:
            self.run.close()
        self.run, self.reading = None, None

    def on_unmount(self) -> None:
        self._leave_run()  # its reading and curve stop at their next step: `q` never waits for them

    def _wait_for_reading(self, what: str, then: Callable[[], None] | None = None) -> bool:
        """Whether the open file is still being read whole; then `what` is said to wait for it,
        and `then` is done when it is read (after what was asked before it)."""
        if self.run is None or not self.run.when_read(then):
            return False
        done = self.reading.done if self.reading is not None else 0.0
        self.notify(visible(f"{what} when the whole file is read ({done:.0%} so far)"), markup=False)
        return True

    # --- what the open run reports ---------------------------------------------------------

    def on_run_event_message(self, message: RunEventMessage) -> None:
        event = message.event
        if isinstance(event, Exported):  # of any file shown here: what was written still is
            self.notify(visible(event.text), severity="error" if event.failed else "information", markup=False,
                        timeout=8)
            return
        run = self.run
        if run is None or not run.current(event):
            return  # a file left since, a curve started again
        if isinstance(event, Progress):
            if self.reading is not None:
                self.reading = ReadProgress(event.done, self.reading.from_end)
        elif isinstance(event, Read):
            self._read(run, event)
        elif isinstance(event, CurvePoints):
            self._curve_points(event.points)
        elif isinstance(event, PromptReady):
            # the inspector's modules: on `t`, not at the first frame
            from ..shared.prompt_inspector import shown_prompt

            shown_prompt(self, event, still=event.step == self.step)
        elif isinstance(event, Failed):
            self.say_failed(event.work, event.error)

    def _read(self, run: OpenRun, event: Read) -> None:
        """The whole of a large file, read: shown from the same step, then what was asked meanwhile."""
        self.reading = None
        try:
            place, then = run.adopt(event, self.step)
        except WholeReadFailed as error:
            self.show_error(str(error))
            return
        self._opened()
        steps = self.step_list
        steps.from_end = False
        steps.set_count(self.step_count)
        self.go(place, force=True)
        for asked in then:
            asked()
        self.call_after_refresh(run.start_curve)

    def _opened(self) -> None:
        """The open document's name, format, model and step count, for the header."""
        document = self.document
        assert document is not None
        self.opened = OpenedFile(run_label(self.path, document.info.raw), document.format, document.info.model_name,
                                 document.step_count)

    def show_error(self, message: str) -> None:
        self.error = message

    def watch_error(self, error: str | None) -> None:
        view = self.query_one("#replay-error", Static)
        view.update(literal(error or ""))
        view.display = error is not None
        self.query_one("#replay-body").display = error is None

    # --- steps --------------------------------------------------------------------------

    @property
    def step_count(self) -> int:
        return self.document.step_count if self.document else 0

    @property
    def here(self) -> int:
        return self.step

    @property
    def count(self) -> int:
        return self.step_count

    def goto(self, number: int) -> None:
        run = self.run
        if run is not None and run.reading is not None:
            place = run.place_in_part(number)
            if place is None:
                self._wait_for_reading(f"step {number}: shown", lambda: self.goto(number))
                return
            self.go(place)
            return
        self.go(self.step_count + 1 + number if number < 0 else number)

    def search(self, text: str) -> None:
        if text and self._wait_for_reading(f"the search for {text!r}: started", lambda: self.search(text)):
            return
        super().search(text)

    def search_source(self) -> object:
        return self.run  # results for a file no longer open are dropped

    def search_places(self, source: object, query: str) -> Iterator[int]:
        assert isinstance(source, OpenRun)
        return source.search_places(query)

    def searched(self) -> None:
        if self.document is not None and not self.error:
            self.show_step()

    def go(self, number: int, force: bool = False) -> None:
        if not self.step_count:
            return
        number = min(max(number, 1), self.step_count)
        if number != self.step:
            self.step = number  # watch_step shows it
        elif force:
            self.watch_step()

    def watch_step(self) -> None:
        self._play_shown = 0
        self.show_step()

    def show_step(self) -> None:
        assert self.document is not None
        try:
            view = self.document.step(self.step)
        except TrajectoryError as error:
            self.show_error(str(error))
            return
        self.error = None
        text = model_text(view)
        if self.playing:
            text = text[: self._play_shown]
        if view.number == 1 and not (self.reading and self.reading.from_end):
            # the task at the top of step 1 (of the file: not the first of its last steps); a
            # damaged message before it is its own step's to show
            try:
                text = opening(view, self.document.messages_before(view.prompt_end)) + text
            except TrajectoryError:
                pass
        self.query_one("#model-text", Static).update(highlighted(text, self.search_text))
        self.query_one("#model-command", Static).update(highlighted(command_lines(view), self.search_text))
        output = "" if self.playing and self._play_shown < len(model_text(view)) else output_text(view)
        self.query_one("#output-text", TextView).update(output, self.search_text)
        self.view = view
        self._meter()
        self.step_list.highlight(self.step - 1)  # ours, not the person's: no message

    def _meter(self) -> None:
        if self.view is not None:
            self.meter_status, self.meter_notes = step_meter(self.view, self.curve.get(self.step), self.window,
                                                             self.costs.get(self.step))

    def on_step_list_highlighted(self, event: StepList.Highlighted) -> None:
        if event.index + 1 != self.step:
            self.go(event.index + 1)

    # --- token curve ----------------------------------------------------------------------

    def _curve_points(self, points: list[CurveEntry]) -> None:
        commands = {}
        chart = self.query_one(TokenChart)
        marks = dict(chart.marks)
        tokens_of = {}
        costs = {}
        for step, tokens, command, mark, cost in points:
            tokens_of[step] = tokens
            self.costs[step] = cost
            if cost.dollars is not None:
                costs[step] = cost.dollars
            if command:
                commands[step] = command
            if mark:
                marks[step] = mark
        self.step_list.set_commands(commands, costs)
        chart.window, chart.marks = self._window(), marks
        self.add_curve(tokens_of)
        pacing_of(self.app).collect_young()  # while collections are held, a dialog's widgets are still collected
        if self.view is not None and any(point.step == self.step for point in points):
            self._meter()  # the estimate and the dollars of the shown step just arrived

    # --- follow and play ------------------------------------------------------------------

    def poll(self) -> None:
        run = self.run
        if run is None or run.document is None:
            return
        self.answering = run.answering()
        at_end = self.step == self.step_count
        try:
            followed = run.follow()
        except TrajectoryError as error:
            self.show_error(str(error))
            return
        if followed.final is not None:  # the session ended and its live file became this one
            self.paths[self.file_index], self.following = followed.final, False
            self._opened()
            self.step_list.set_count(self.step_count)
            self.go(self.step_count if at_end or self.step > self.step_count else self.step, force=True)
            self.notify(visible(f"the session ended: now showing {followed.final.name}"), markup=False)
        elif not followed.new:
            return
        else:
            self.step_list.set_count(self.step_count)
            self._opened()
            if self.step == 0 or at_end:
                self.go(self.step_count)
        run.start_curve()

    def watch_answering(self, answering: str | None) -> None:
        if self.document is None or self.error or self.step != self.step_count:
            return
        if answering is None:
            self.show_step()
            return
        self.query_one("#model-text", Static).update(highlighted(
            f"(step {self.step_count + 1}, as it streams)\n{answering}", self.search_text))
        self.query_one("#model-command", Static).update("")

    def play_tick(self) -> None:
        if not self.playing or self.document is None or self.error:
            return
        view = self.document.step(self.step)
        full = len(model_text(view))
        if self._play_shown < full:
            self._play_shown += max(1, int(PLAY_TOKENS_PER_SECOND * 4 * PLAY_TICK_S))  # ~4 characters a token
            self.show_step()
        elif self.step < self.step_count:
            self.go(self.step + 1)
        else:
            self.playing = False
            self.show_step()

    def on_key(self, event: Key) -> None:
        if self.playing:  # any key stops playing (and does nothing else)
            self.playing = False
            event.stop()
            event.prevent_default()
            self.show_step()

    # --- actions ----------------------------------------------------------------------------

    def action_next_file(self) -> None:
        if self.file_index + 1 < len(self.paths):
            self.step = 0
            self.open_file(self.file_index + 1)

    def action_previous_file(self) -> None:
        if self.file_index > 0:
            self.step = 0
            self.open_file(self.file_index - 1)

    def _trajectory(self) -> Trajectory | None:
        if self.document is None or self.error:
            self.notify("nothing to inspect here", severity="warning")
            return None
        if self._wait_for_reading("this needs every step before this one: press its key again"):
            return None
        try:
            return self.document.trajectory()
        except TrajectoryError as error:
            self.notify(visible(str(error)), severity="error", markup=False)
            return None

    def action_prompt(self) -> None:
        trajectory = self._trajectory()
        if trajectory is None or self.run is None:
            return
        from ..shared.prompt_inspector import open_step_prompt  # on its key, not before the first frame

        open_step_prompt(self, self.run, self.step, self.processors, self._window(), trust_file=self.trust_file)

    def action_rules(self) -> None:
        from ..shared.rules_screen import RulesScreen  # on its key, not before the first frame

        self.app.push_screen(RulesScreen(self.settings.get().rules, [self.path]))

    def action_fidelity(self) -> None:
        from .fidelity_screen import FidelityScreen  # on its key, not before the first frame
        trajectory = self._trajectory()
        if trajectory is not None:
            self.app.push_screen(FidelityScreen(summary_lines(summary(trajectory))))

    def action_branches(self) -> None:
        from .branch_screen import BranchScreen  # on its key, not before the first frame
        trajectory = self._trajectory()
        if trajectory is None:
            return
        branches = fidelity_of(trajectory).openable
        if not branches:
            self.notify("no branch beside this run (subagents, sidechains)", severity="warning")
            return

        def chosen(branch: Branch | None) -> None:
            if branch is not None:
                self._open_beside(Path(branch.target), branch.label)
        self.app.push_screen(BranchScreen(branches), chosen)

    def price_list(self) -> Prices:
        """The config's prices over litellm's map (from any thread: the config is read once)."""
        return Prices(self.settings.get().prices)

    def action_subagents(self) -> None:
        from .subagent_screen import SubagentScreen  # on its key, not before the first frame
        trajectory = self._trajectory()
        if trajectory is None:
            return

        def chosen(node: RunNode | None) -> None:
            if node is not None:
                self._open_beside(Path(node.target), f"subagent {node.id}")
        self.app.push_screen(SubagentScreen(trajectory, self.price_list), chosen)

    def action_child(self) -> None:
        """The subagent this step's call started, in place (`q` there comes back here)."""
        trajectory = self._trajectory()
        if trajectory is None:
            return
        started = [agent for agent, step in agent_steps(trajectory).items() if step == self.step]
        files = dict(subagent_files(trajectory))
        found = [agent for agent in started if agent in files]
        if not found:
            self.notify("this step's calls started no subagent this file keeps beside it" if not started else
                        visible(f"the subagent {started[0]} has no file beside this run"), severity="warning",
                        markup=False)
            return
        if len(found) > 1:
            self.notify(visible(f"this step started {len(found)} subagents: {', '.join(found)}; s lists them all"),
                        markup=False)
        self._open_beside(Path(files[found[0]]), f"subagent {found[0]}")

    def _open_beside(self, path: Path, label: str) -> None:
        self.app.push_screen(ReplayScreen([path], processors=self.processors, fork_model=self.fork_model,
                                          trust_file=self.trust_file, branch=label))

    def action_export(self) -> None:
        from ..shared.ask_screen import AskScreen  # on its key, not before the first frame
        run = self.run
        if run is None or run.document is None:
            self.notify("nothing to export here", severity="warning")
            return

        def answer(value: str | None) -> None:
            if value and value.strip():
                self.notify(visible(f"exporting to {value.strip()}…"), markup=False)
                run.export(Path(value.strip()).expanduser(), lambda: self.settings.get().prices)
        suggestion = f"{self.path.name.split('#')[0].removesuffix('.json').removesuffix('.jsonl')}.atif.json"
        self.app.push_screen(AskScreen("export to (a .html name writes a page; any other, ATIF)", suggestion), answer)

    def action_what_if(self) -> None:
        trajectory = self._trajectory()
        if trajectory is not None:
            from .what_if_screen import WhatIfScreen  # with the processors' models (not at the first frame)

            assert self.run is not None
            self.app.push_screen(WhatIfScreen(self.run, self.step, self.processors, self._window()))

    def _window(self) -> int | None:
        """The window the meter shows for this step: recorded with it, else the model's from the map."""
        return (self.view.window if self.view is not None else None) or self.window

    def action_fork(self) -> None:
        if self.document is None or self.error or not self.step:
            return
        if self._wait_for_reading("a fork needs every step before this one: press f again"):
            return
        self.fork(self.path, self.step, self.fork_model,
                  "open the replay with -m NAME (e.g. -m openai/gpt-4o) or set model.model_name",
                  self.document.info, self.document.trajectory)
