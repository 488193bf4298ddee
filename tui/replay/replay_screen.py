"""The replay view (SPEC §11.1): the live layout, read-only, for one saved trajectory.

Steps are read from the document when shown (a `.traj.jsonl` is indexed, not parsed); the
token curve is computed in a thread worker and drawn as it grows. Anything wrong with a
file is an error view naming the file and the reason; in a folder L/H still move on.

What it shows is state in Textual vars (`ReplayState`, its base class) that the widgets
`data_bind` to; the moves, go-to, search, fork and quit are the diff's too
(`shared/step_browser.py`); workers only post messages, and one that fails says so (the
kit); the modal views (`t` the prompt inspector shared with the live screen, `p` what-if,
`i` fidelity, `b` branches) get what they show from the core.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import msgspec
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Key
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static

from swedeck.core.cost import Prices, RunningCost, StepCost
from swedeck.core.errors import UsageError
from swedeck.core.meter import model_window, step_meter
from swedeck.core.replay.document import (
    LoadedDocument,
    ReadingDocument,
    ReplayDocument,
    StepView,
    final_of,
    open_document,
)
from swedeck.core.replay.search import matching_steps
from swedeck.core.replay.step_text import command_lines, model_text, opening, output_text
from swedeck.core.replay.token_curve import token_curve
from swedeck.core.startup.read_ahead import ReadAhead
from swedeck.core.subagents import RunNode, agent_steps, subagent_files
from swedeck.core.text import visible
from swedeck.core.trajectory.errors import TrajectoryError
from swedeck.core.trajectory.fidelity import fidelity_of, summary, summary_lines
from swedeck.core.trajectory.files import run_label
from swedeck.core.trajectory.model import Branch, Trajectory
from swedeck.core.trajectory.readers.source import Stopped

from ..kit.pacing import pacing_of
from ..kit.view_screen import background, css_beside
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
from .replay_state import OpenedFile, ReplayState

FOLLOW_INTERVAL_S = 0.5
PLAY_TOKENS_PER_SECOND = 80
PLAY_TICK_S = 0.05


__all__ = ["ForkRequest", "ReplayScreen", "ReplaySettings"]


READ_PROGRESS_S = 0.25
"""How often the header says how much of a large file its worker has read."""
CURVE_BATCH_S = 0.5
"""How often the token curve's worker hands its points to the UI (each batch redraws the chart)."""
CURVE_YIELD_EVERY = 200
CURVE_QUIET_EVERY = 10
"""How often the worker looks whether a key is being handled (`kit.pacing`), and waits."""
CURVE_YIELD_S = 0.002
"""The curve's worker sleeps this long every so many steps: a thread that never blocks keeps
the GIL from the UI's thread for its whole switch interval, again and again (bench: jumps of
45,000-step files took 100-280 ms while it ran)."""


class ReplaySettings(msgspec.Struct, frozen=True):
    """What the replay takes from the person's config besides `ui`."""

    processors: list[dict[str, Any]]
    fork_model: str | None
    rules: list[str] = msgspec.field(default_factory=list)
    """`agent.rules`: the approval rules `R` tries over the open file."""
    prices: dict[str, dict[str, float]] = msgspec.field(default_factory=dict)
    """`model.prices`: each step's dollars are priced with them over litellm's map."""


def worker_document(shown: ReplayDocument | None, path: Path) -> ReplayDocument:
    """What a worker reads `path` through: the open document when it was read whole (only read
    from, never parsed a second time beside the UI's); else a reader of its own, as a lazy
    document's file position is the UI's."""
    return shown if isinstance(shown, LoadedDocument) else open_document(path)


class ReplayScreen(ReplayState, StepBrowser):
    CSS_PATH = css_beside(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [*REPLAY_BINDINGS]
    GOTO_PROMPT = "go to step (negative counts from the end)"
    WORK: ClassVar[dict[str, str]] = {"search": "the search", "curve": "the token curve", "export": "the export",
                                      "reading": "the reading of the whole file", "prompt": "the step's prompt"}

    def __init__(self, paths: list[Path], *, start_step: int | None = None, follow: bool = False,
                 play: bool = False, processors: list[dict[str, Any]] | None = None, file_index: int = 0,
                 fork_model: str | None = None, trust_file: bool = False, branch: str | None = None,
                 verifier: tuple[str, str] | None = None, settings: Callable[[], ReplaySettings] | None = None,
                 ahead: ReadAhead | None = None) -> None:
        super().__init__()
        self._ahead = ahead
        """The first file's bytes, read while the command's modules imported: for its first opening only."""
        self._leaving = threading.Event()
        """Set when the screen goes: the token curve's worker stops (issue 62.3: `q` leaves at once)."""
        self._settings = settings
        self._settings_lock = threading.Lock()
        """Where `processors` and `fork_model` come from when they are first needed (`t`, `p`, `b`,
        `f`): the person's config, read after the first frame, not before it (bench B2)."""
        self.verifier = verifier
        """(title, text): a batch instance's verifier output, shown beside the command output (`swedeck watch`)."""
        self.set_reactive(ReplayState.branch, branch)
        self.trust_file = trust_file
        """`--trust-trajectory`: run a custom_filter the file records (else it is shown, not run)."""
        self._fork_model = fork_model
        self.paths = paths
        self.set_reactive(ReplayState.files, len(paths))
        self.set_reactive(ReplayState.file_index, file_index)
        self.set_reactive(ReplayState.following, follow)
        self.set_reactive(ReplayState.playing, play)
        self.start_step = start_step
        self._processors = list(processors or [])
        self._prices: dict[str, dict[str, float]] = {}
        self.costs: dict[int, StepCost] = {}
        """Each step's dollars and the run's up to it, as the curve's worker prices them (issue 65)."""
        self.document: ReplayDocument | None = None
        self._play_shown = 0
        self.view: StepView | None = None
        self.window: int | None = None
        self._progress_timer: Timer | None = None
        self._after_reading: list[Callable[[], None]] = []
        """What the person asked for that needs the whole of a file still read (a go-to, a search), in order."""

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

    def _settled(self) -> None:
        """Read the config's processors, model and prices now, once (a config that cannot be read
        is said, and the replay goes on without them). From the UI's thread or the curve's worker
        (which reads it first, off the UI's thread: the config's import is 125 ms)."""
        with self._settings_lock:
            settings, self._settings = self._settings, None
            if settings is None:
                return
            try:
                loaded = settings()
            except UsageError as error:
                said = partial(self.notify, visible(str(error)), title="The config cannot be read", severity="error",
                               markup=False)
                if threading.current_thread() is threading.main_thread():
                    said()
                else:
                    self.app.call_from_thread(said)
                return
            self._processors, self._fork_model = list(loaded.processors), loaded.fork_model
            self._prices = dict(loaded.prices)
            self._rules = list(loaded.rules)

    @property
    def processors(self) -> list[dict[str, Any]]:
        """The person's configured processors (what-if and the prompt inspector start from them)."""
        self._settled()
        return self._processors

    @property
    def fork_model(self) -> str | None:
        """The model a fork (`f`) continues with; None: `f` says how to name one."""
        self._settled()
        return self._fork_model

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

    def open_file(self, index: int) -> None:
        self.workers.cancel_group(self, "search")
        self._stop_reading()
        self.file_index = index
        self.document, self.view = None, None
        self.curve, self.curve_points, self.matches, self.searching = {}, [], [], False
        self.costs = {}
        self.opened = OpenedFile(self.path.name)
        self.query_one(TokenChart).marks = {}
        self.error = None
        steps = self.step_list
        steps.clear()
        pacing_of(self.app).thaw()  # the previous file's objects: collectable again once unreferenced
        wanted = self.start_step if self.start_step is not None and index == self.file_index else 1
        self.start_step = None
        try:
            ahead, self._ahead = self._ahead, None
            # a large file whose start or end reads alone shows it at once, read whole in a worker (issue 49)
            self.document = open_document(self.path, ahead, part="end" if wanted < 0 else "start")
        except TrajectoryError as error:
            self.show_error(str(error))
            return
        # what the file became lives while it is open: out of the collector's full walks (a
        # 45,000-step file is millions of objects, and each walk holds the GIL for the length of it)
        pacing_of(self.app).freeze()
        self._opened()
        self.window = model_window(self.document.info.model_name)
        count = self.document.step_count
        steps.set_count(count)
        if count == 0:
            self.show_error(f"{self.path}: no steps to show (no assistant message yet)")
            return
        if isinstance(self.document, ReadingDocument):
            self._start_reading(self.document, wanted)
            return
        wanted = count + 1 + wanted if wanted < 0 else wanted
        self.go(min(max(wanted, 1), count), force=True)
        # After the first frame: reading every step for the curve competes for the GIL (bench B2).
        self.call_after_refresh(self.read_curve, self.path, self.document)

    # --- a large file, read whole in a worker while its start or end is shown ----------------

    def _start_reading(self, document: ReadingDocument, wanted: int) -> None:
        document.pace(pacing_of(self.app).quiet.wait)  # the reading steps aside while a key is handled
        self.step_list.from_end = document.at_end
        self.reading = ReadProgress(document.progress, document.at_end)
        self._progress_timer = self.set_interval(READ_PROGRESS_S, self._read_progress)
        place = self._place_in_part(wanted)
        if place is None:
            self._after_reading.append(lambda: self.goto(wanted))
            place = document.step_count if document.at_end else 1
        self.go(place, force=True)
        self.call_after_refresh(self.read_whole, document)  # after the first frame: it competes for the GIL (bench B2)

    def _place_in_part(self, number: int) -> int | None:
        """Where step `number` of the file (negative: from the end) is among a reading's steps,
        or None when it is not among them, or not known before the whole is read."""
        document = self.document
        assert isinstance(document, ReadingDocument)
        count = document.step_count
        if document.at_end:
            return count + 1 + number if -count <= number < 0 else None
        return number if 0 < number <= count else None

    def _read_progress(self) -> None:
        if isinstance(self.document, ReadingDocument) and self.reading is not None:
            self.reading = ReadProgress(self.document.progress, self.reading.from_end)

    def _wait_for_reading(self, what: str, then: Callable[[], None] | None = None) -> bool:
        """Whether the open file is still being read whole; then `what` is said to wait for it,
        and `then` is done when it is read (after what was asked before it)."""
        if not isinstance(self.document, ReadingDocument) or self.reading is None:
            return False
        if then is not None:
            self._after_reading.append(then)
        self.notify(visible(f"{what} when the whole file is read ({self.reading.done:.0%} so far)"), markup=False)
        return True

    def _stop_reading(self) -> None:
        if isinstance(self.document, ReadingDocument):
            self.document.stop()
        if self._progress_timer is not None:
            self._progress_timer.stop()
        self._progress_timer = None
        self.reading, self._after_reading = None, []

    def on_unmount(self) -> None:
        self._stop_reading()
        self._leaving.set()  # the curve's worker stops at its next point: `q` never waits for it

    class Read(Message):
        """A large file read whole by its worker (`document`), or why it cannot be (`error`)."""

        def __init__(self, reading: ReadingDocument, document: LoadedDocument | None, error: str | None) -> None:
            super().__init__()
            self.reading, self.document, self.error = reading, document, error

    @background(group="reading")
    def read_whole(self, reading: ReadingDocument) -> None:
        try:
            document = reading.finish()
        except Stopped:
            return  # the person left the file
        except TrajectoryError as error:
            self.post_message(self.Read(reading, None, str(error)))
            return
        except Exception as error:  # noqa: BLE001 - said for its own file (not left reading for ever), as a damaged one is
            self.post_message(self.Read(reading, None, f"{reading.path}: the whole file could not be read "
                                                       f"({type(error).__name__}: {error})"))
            return
        self.post_message(self.Read(reading, document, None))

    def on_replay_screen_read(self, message: Read) -> None:
        reading = message.reading
        if reading is not self.document:
            return  # a file left since
        then = self._after_reading
        self._stop_reading()
        if message.document is None:
            self.show_error(message.error or f"{self.path}: cannot be read")
            return
        shown, place = reading.step_count, self.step
        self.document = message.document
        pacing_of(self.app).freeze()
        self._opened()
        count = self.document.step_count
        steps = self.step_list
        steps.from_end = False
        steps.set_count(count)
        self.go(count - (shown - place) if reading.at_end else place, force=True)
        for asked in then:
            asked()
        self.call_after_refresh(self.read_curve, self.path, self.document)

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
        if isinstance(self.document, ReadingDocument) and self.reading is not None:
            place = self._place_in_part(number)
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
        return self.path

    def search_places(self, source: object, query: str) -> Iterator[int]:
        assert isinstance(source, Path)
        # the open document, as the token curve's worker reads (a 97 MB ATIF file parsed a second
        # time took 200 MB); results for a file no longer open are dropped (`search_source`)
        document = worker_document(self.document, source)
        # a key waits for no step of the search (issue 49: search next p99 was 294-298 ms while it ran)
        return matching_steps(document, query, pause=pacing_of(self.app).quiet.wait)

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

    class CurvePoints(Message):
        """Points of a file's token curve, from the worker that reads them."""

        def __init__(self, path: Path, points: list[tuple[int, int, str, str, StepCost]]) -> None:
            super().__init__()
            self.path = path
            self.points = points

    @background(exclusive=True, group="curve")
    def read_curve(self, path: Path, shared: ReplayDocument | None = None) -> None:
        # No full collection while it runs: each walked what the steps made, 90-190 ms, 40 times
        # over a 45,000-step file, keys waiting behind them (the young generations are still
        # collected: `on_replay_screen_curve_points`). Released however it ends (a cancelled
        # worker runs to its end too); what it made lives while the file is open: frozen.
        pacing = pacing_of(self.app)
        pacing.hold()
        try:
            self._read_curve(path, shared)
        finally:
            pacing.release()

    def _read_curve(self, path: Path, shared: ReplayDocument | None) -> None:
        document = worker_document(shared, path)
        self._settled()  # the config's prices (issue 65)
        priced = RunningCost(Prices(self._prices), document.info.model_name)
        batch: list[tuple[int, int, str, str, StepCost]] = []
        sent = time.monotonic()
        pace = pacing_of(self.app).worker_pace(CURVE_QUIET_EVERY, CURVE_YIELD_EVERY, CURVE_YIELD_S)
        for point in token_curve(document):
            if self._leaving.is_set():  # the person left: the app ends without waiting for the curve
                return
            batch.append((point.step, point.tokens, point.label, point.mark, priced.add(point.usage, point.model)))
            pace(point.step)  # while a key is handled the GIL is the UI's, and every so often anyway
            if len(batch) >= 200 and time.monotonic() - sent >= CURVE_BATCH_S:  # a few redraws a second, at most
                self.post_message(self.CurvePoints(path, batch))
                batch, sent = [], time.monotonic()
        self.post_message(self.CurvePoints(path, batch))

    def on_replay_screen_curve_points(self, message: CurvePoints) -> None:
        path, points = message.path, message.points
        if path != self.path:
            return
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
        if self.view is not None and any(point[0] == self.step for point in points):
            self._meter()  # the estimate and the dollars of the shown step just arrived

    # --- follow and play ------------------------------------------------------------------

    def poll(self) -> None:
        if self.document is None:
            return
        self._answering()
        at_end = self.step == self.step_count
        try:
            new = self.document.refresh()
        except TrajectoryError as error:
            final = final_of(self.path)
            if final is None:
                self.show_error(str(error))
            else:
                self._go_on_in(final, at_end)
            return
        if not new:
            return
        self.step_list.set_count(self.step_count)
        self._opened()
        if self.step == 0 or at_end:
            self.go(self.step_count)
        self.read_curve(self.path)

    def _answering(self) -> None:
        """A record's answer as it streams (`swedeck record` writes it beside the record)."""
        from swedeck.core.record.live import streaming_answer  # a followed file's, after the first frame

        self.answering = streaming_answer(self.path)

    def watch_answering(self, answering: str | None) -> None:
        if self.document is None or self.error or self.step != self.step_count:
            return
        if answering is None:
            self.show_step()
            return
        self.query_one("#model-text", Static).update(highlighted(
            f"(step {self.step_count + 1}, as it streams)\n{answering}", self.search_text))
        self.query_one("#model-command", Static).update("")

    def _go_on_in(self, final: Path, at_end: bool) -> None:
        """The session ended and its live file became `final`: show that, from the same step."""
        try:
            document = open_document(final)
        except TrajectoryError as error:
            self.show_error(str(error))
            return
        self.paths[self.file_index] = final
        self.document, self.following = document, False
        self._opened()
        self.step_list.set_count(document.step_count)
        self.go(document.step_count if at_end or self.step > document.step_count else self.step, force=True)
        self.notify(visible(f"the session ended: now showing {final.name}"), markup=False)
        self.read_curve(final)

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
        if trajectory is None:
            return
        from ..shared.prompt_inspector import open_step_prompt  # on its key, not before the first frame

        step = self.step
        open_step_prompt(self, trajectory, step, self.processors, self._window(), trust_file=self.trust_file,
                         still=lambda: self.step == step)

    _rules: list[str] = []

    def action_rules(self) -> None:
        from ..shared.rules_screen import RulesScreen  # on its key, not before the first frame

        self._settled()
        self.app.push_screen(RulesScreen(self._rules, [self.path]))

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
        self._settled()
        return Prices(self._prices)

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
        if self.document is None:
            self.notify("nothing to export here", severity="warning")
            return
        source = str(self.path)

        def answer(value: str | None) -> None:
            if value and value.strip():
                self.notify(visible(f"exporting to {value.strip()}…"), markup=False)
                self.run_export(source, value.strip())
        suggestion = f"{self.path.name.split('#')[0].removesuffix('.json').removesuffix('.jsonl')}.atif.json"
        self.app.push_screen(AskScreen("export to (a .html name writes a page; any other, ATIF)", suggestion), answer)

    class Exported(Message):
        """What the export worker did: a line to tell the person, and whether it failed."""

        def __init__(self, text: str, failed: bool) -> None:
            super().__init__()
            self.text, self.failed = text, failed

    @background(group="export")
    def run_export(self, source: str, target: str) -> None:
        from swedeck.core.errors import SwedeckError
        from swedeck.core.export.share import default_kind, export, write_export

        out = Path(target).expanduser()
        try:
            self._settled()
            result = export(source, default_kind(out), prices=self._prices)
            write_export(out, result)
        except (SwedeckError, TrajectoryError, OSError) as error:
            self.post_message(self.Exported(f"export failed: {error}", failed=True))
            return
        lost = f"; not held: {len(result.losses)} kinds (swedeck export --json lists them)" if result.losses else ""
        self.post_message(self.Exported(f"wrote {out} ({result.version}, {result.steps} steps){lost}", failed=False))

    def on_replay_screen_exported(self, message: Exported) -> None:
        self.notify(visible(message.text), severity="error" if message.failed else "information", markup=False,
                    timeout=8)

    def action_what_if(self) -> None:
        trajectory = self._trajectory()
        if trajectory is not None:
            from .what_if_screen import WhatIfScreen  # with the processors' models (not at the first frame)

            self.app.push_screen(WhatIfScreen(trajectory, self.step, self.processors, self._window()))

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
