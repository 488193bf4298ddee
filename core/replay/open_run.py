"""One open trajectory (issue 64.1): what a view does between opening a file and drawing a step.

`OpenRun` owns, for one file:

- opening it: a large file's start or end first (`document.open_document(part=…)`), then
  the whole read in a thread of its own, its progress said as it goes, and what the person
  asked for meanwhile (a go-to, a search) kept until the whole is read (`when_read`);
- the token curve, each step priced on the way (`cost.RunningCost`), read in its thread;
- the places a search finds (`search_places`), read from the open document where it is read
  whole, from a reader of their own where it is lazy;
- a step's prompt, worked out in a thread past `PROMPT_IN_WORKER` messages of history;
- the export of the open run (ATIF or a page), in a thread;
- follow: new steps of a growing file, and the final file a live one became;
- the memory policy of an open file: what it made lives while it is open, so it is frozen
  out of the collector's walks; collections are held while the curve is read, and what the
  previous file made is let go when another opens.

It reports through one callable, as `Session.run(emit)` does (`Progress`, `Read`,
`CurvePoints`, `PromptReady`, `Exported`, `Failed`), from its own threads: a front end hands
each to its UI's thread (the TUI posts it as a message). It is paced by what it is given
(`Pacing`: the TUI's steps aside while a key is handled), never by asking a UI, and it
never touches one. The replay, the diff (one per run), the what-if dialog and the export
use it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..cost import Prices, RunningCost, StepCost
from ..startup.read_ahead import ReadAhead
from ..trajectory.errors import TrajectoryError
from ..trajectory.model import Trajectory
from ..trajectory.readers.source import Stopped
from .document import LoadedDocument, ReadingDocument, ReplayDocument, final_of, open_document
from .search import matching_steps
from .token_curve import token_curve

if TYPE_CHECKING:
    from ..export.share import Exported as Export
    from ..prompt_view import StepPrompt

PROMPT_IN_WORKER = 2_000
"""A step whose history holds more messages than this has its prompt worked out in a thread
(`prompt`): the last step of a 103,000-step rollout is 34 s of building messages and counting
their tokens."""
READ_PROGRESS_S = 0.25
"""How often the whole reading of a large file says how far it is."""
CURVE_BATCH_S = 0.5
"""How often the token curve's thread hands on its points (each batch redraws a chart)."""
CURVE_BATCH_POINTS = 200
CURVE_YIELD_EVERY = 200
CURVE_QUIET_EVERY = 10
"""How often the curve's thread looks whether a key is being handled (`Pacing.quiet`), and waits."""
CURVE_YIELD_S = 0.002
"""The curve's thread sleeps this long every so many steps: a thread that never blocks keeps
the GIL from the UI's thread for its whole switch interval, again and again (bench: jumps of
45,000-step files took 100-280 ms while it ran)."""


# --- what paces it -----------------------------------------------------------------------


class Quiet(Protocol):
    def wait(self) -> None:
        """Return once no key is being handled (at once when none is)."""


class Pacing(Protocol):
    """What paces an open run's threads beside a UI (`tui/kit/pacing.Pacing`)."""

    @property
    def quiet(self) -> Quiet: ...

    def worker_pace(self, every_quiet: int, every_yield: int, yield_s: float) -> Callable[[int], None]: ...

    def hold(self) -> None:
        """Leave the collector's collections off while a large file's objects are made."""

    def release(self) -> None:
        """Let them run again."""

    def freeze(self) -> None:
        """What is alive now lives as long as the open file."""

    def thaw(self) -> None:
        """What was frozen may be garbage now."""


class _NoKeys:
    def wait(self) -> None:
        return None


class Unpaced:
    """No UI beside it: nothing to step aside for (a command, a test)."""

    quiet: Quiet = _NoKeys()

    def worker_pace(self, every_quiet: int, every_yield: int, yield_s: float) -> Callable[[int], None]:
        return lambda number: None

    def hold(self) -> None:
        return None

    def release(self) -> None:
        return None

    def freeze(self) -> None:
        return None

    def thaw(self) -> None:
        return None


# --- what it reports ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunEvent:
    run: OpenRun


@dataclass(frozen=True, slots=True)
class Progress(RunEvent):
    """How much of a large file the whole reading has passed, 0 to 1."""

    done: float


@dataclass(frozen=True, slots=True)
class Read(RunEvent):
    """A large file read whole (`document`), or why it could not be (`error`): `OpenRun.adopt`
    takes it on the UI's thread."""

    reading: ReadingDocument
    document: LoadedDocument | None
    error: str | None


class CurveEntry(NamedTuple):
    """One step of the token curve as a view draws it."""

    step: int
    tokens: int
    label: str
    """The step list's line after its number (`CurvePoint.label`)."""
    mark: str
    cost: StepCost


@dataclass(frozen=True, slots=True)
class CurvePoints(RunEvent):
    """Points of the token curve, in batches, from its thread; `done` with the last."""

    generation: int
    points: list[CurveEntry]
    done: bool


@dataclass(frozen=True, slots=True)
class PromptReady(RunEvent):
    """A step's prompt worked out in a thread (`OpenRun.prompt`)."""

    generation: int
    step: int
    prompt: StepPrompt
    processors: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Exported(RunEvent):
    """What the export did: a line to tell the person, and whether it failed."""

    text: str
    failed: bool


@dataclass(frozen=True, slots=True)
class Failed(RunEvent):
    """A thread's work raised: `work` names it (`curve`, `prompt`)."""

    work: str
    error: BaseException


Emit = Callable[[RunEvent], None]


class WholeReadFailed(Exception):
    """The whole of a large file could not be read (its message says the file and why)."""


@dataclass(frozen=True)
class Followed:
    """What `follow` found: steps added, or the final file the live one became (then open)."""

    new: int = 0
    final: Path | None = None


# --- the run -----------------------------------------------------------------------------


def _history(trajectory: Trajectory, step: int) -> int:
    """How many messages step `step`'s prompt is built from (past the last step: all of them)."""
    steps = trajectory.steps
    return steps[step - 1].prompt_end if 0 < step <= len(steps) else len(trajectory.messages)


def read_whole(shown: ReplayDocument | None) -> LoadedDocument | None:
    """`shown` where it is a file read whole: not a lazy document (its file position is the
    UI's), and not a large file's part."""
    return shown if isinstance(shown, LoadedDocument) and not isinstance(shown, ReadingDocument) else None


def worker_document(shown: ReplayDocument | None, path: Path) -> ReplayDocument:
    """What a thread reads `path` through: the open document when it was read whole (only read
    from, never parsed a second time beside the UI's); else a reader of its own."""
    return read_whole(shown) or open_document(path)


@dataclass
class _Work:
    """One kind of thread work: a newer start supersedes the one running (`generation`)."""

    generation: int = 0

    def start(self) -> int:
        self.generation += 1
        return self.generation


@dataclass(eq=False)
class OpenRun:
    path: Path
    emit: Emit
    pacing: Pacing = field(default_factory=Unpaced)
    prices: Callable[[], Prices] = Prices
    """The prices a step's dollars come from, asked for in the curve's thread (a config read then)."""
    document: ReplayDocument | None = None
    """What is open: a large file's part while it is read whole, then the whole."""

    def __post_init__(self) -> None:
        self._closed = threading.Event()
        self._read = threading.Event()
        """The whole reading's thread ended (its progress is said until then)."""
        self._adopted = False
        """`adopt` took its end, on the UI's thread: the part is no longer what is being read."""
        self._deferred: list[Callable[[], None]] = []
        self._curve = _Work()
        self._prompt = _Work()

    @classmethod
    def of(cls, trajectory: Trajectory, emit: Emit, pacing: Pacing | None = None) -> OpenRun:
        """A run already read whole (the diff's two, what-if's)."""
        return cls(trajectory.path, emit, pacing or Unpaced(), document=LoadedDocument(trajectory))

    # --- opening -----------------------------------------------------------------------------

    def open(self, wanted: int, ahead: ReadAhead | None = None) -> int | None:
        """Open the file (`TrajectoryError` names it and why not) at step `wanted` (negative:
        from the end): the step of the open document to show, or None where a large file's
        part does not hold it (its nearest end is shown; ask again `when_read`)."""
        self.pacing.thaw()  # what the previous file made: collectable again once unreferenced
        # a large file whose start or end reads alone shows it at once, read whole by `start` (issue 49)
        document = self.document = open_document(self.path, ahead, part="end" if wanted < 0 else "start")
        # what the file became lives while it is open: out of the collector's full walks (a
        # 45,000-step file is millions of objects, and each walk holds the GIL for the length of it)
        self.pacing.freeze()
        if isinstance(document, ReadingDocument):
            document.pace(self.pacing.quiet.wait)  # the reading steps aside while a key is handled
            return self.place_in_part(wanted)
        count = document.step_count
        return min(max(count + 1 + wanted if wanted < 0 else wanted, 1), count) if count else None

    def start(self) -> None:
        """Begin the background work of an open file: the whole reading of a large file's
        part (the curve follows it, `adopt`), else the token curve. After the first frame: it
        competes for the GIL (bench B2). Nothing once closed (the person left before it began)."""
        document = self.document
        if self._closed.is_set():
            return
        if isinstance(document, ReadingDocument):
            if not self._read.is_set():
                self._thread(self._read_whole, document, name="read")
                self._thread(self._say_progress, document, name="progress")
        elif document is not None:
            self.start_curve()

    @property
    def reading(self) -> ReadingDocument | None:
        """The part shown while the whole file is read (None: nothing is being read). A part
        stays one until its whole is taken on the UI's thread (`adopt`), not when its thread ends."""
        document = self.document
        return document if isinstance(document, ReadingDocument) and not self._adopted else None

    def place_in_part(self, number: int) -> int | None:
        """Where step `number` of the file (negative: from the end) is among a reading's
        steps, or None when it is not among them, or not known before the whole is read."""
        document = self.document
        assert isinstance(document, ReadingDocument)
        count = document.step_count
        if document.at_end:
            return count + 1 + number if -count <= number < 0 else None
        return number if 0 < number <= count else None

    def when_read(self, then: Callable[[], None] | None = None) -> bool:
        """Whether the file is still being read whole; then `then` is done once it is (after
        what was asked before it: `adopt` hands them back in order)."""
        if self.reading is None:
            return False
        if then is not None:
            self._deferred.append(then)
        return True

    def _read_whole(self, reading: ReadingDocument) -> None:
        try:
            document = reading.finish()
        except Stopped:
            return  # the file was left
        except TrajectoryError as error:
            self._tell(Read(self, reading, None, str(error)))
        except Exception as error:  # noqa: BLE001 - said for its own file (not left reading for ever), as a damaged one is
            self._tell(Read(self, reading, None, f"{reading.path}: the whole file could not be read "
                                                 f"({type(error).__name__}: {error})"))
        else:
            self._tell(Read(self, reading, document, None))
        finally:
            self._read.set()

    def _say_progress(self, reading: ReadingDocument) -> None:
        while not self._read.wait(READ_PROGRESS_S) and not self._closed.is_set():
            self._tell(Progress(self, reading.progress))

    def adopt(self, event: Read, place: int) -> tuple[int, list[Callable[[], None]]]:
        """On the UI's thread: the whole file, read, is the open document from now on. `place`
        (a step of the part shown) is the same step's number in the whole; what was asked
        meanwhile comes back to be done, in order. `WholeReadFailed` says why it could not be."""
        reading, deferred = event.reading, self._deferred
        self._deferred, self._adopted = [], True
        if event.document is None:
            raise WholeReadFailed(event.error or f"{self.path}: cannot be read")
        self.document = event.document
        self.pacing.freeze()
        shown = reading.step_count
        return (event.document.step_count - (shown - place) if reading.at_end else place), deferred

    def current(self, event: RunEvent) -> bool:
        """Whether `event` is still of what is open (not of a part read since, a curve started
        again, a prompt asked for again)."""
        if event.run is not self or self._closed.is_set():
            return False
        if isinstance(event, Read):
            return event.reading is self.document
        if isinstance(event, CurvePoints):
            return event.generation == self._curve.generation
        return not isinstance(event, PromptReady) or event.generation == self._prompt.generation

    def trajectory(self) -> Trajectory:
        """The whole run (a prompt, what-if, a fork, the subagents): `TrajectoryError` where it
        cannot be read; not while a part is shown (`when_read` first)."""
        assert self.document is not None and self.reading is None
        return self.document.trajectory()

    # --- the token curve ---------------------------------------------------------------------

    def start_curve(self) -> None:
        """Read the token curve (again, from its first step), superseding one running."""
        if self._closed.is_set():
            return
        self._thread(self._read_curve, self.document, self.path, self._curve.start(), name="curve")

    def _read_curve(self, shown: ReplayDocument | None, path: Path, generation: int) -> None:
        # No full collection while it runs: each walked what the steps made, 90-190 ms, 40 times
        # over a 45,000-step file, keys waiting behind them (a view still collects the young
        # generations as points come). Released however it ends.
        pacing = self.pacing
        pacing.hold()
        try:
            document = worker_document(shown, path)
            priced = RunningCost(self.prices(), document.info.model_name)
            batch: list[CurveEntry] = []
            sent = time.monotonic()
            pace = pacing.worker_pace(CURVE_QUIET_EVERY, CURVE_YIELD_EVERY, CURVE_YIELD_S)
            for point in token_curve(document):
                if self._closed.is_set() or generation != self._curve.generation:
                    return  # left, or started again: `q` never waits for it
                batch.append(CurveEntry(point.step, point.tokens, point.label, point.mark,
                                        priced.add(point.usage, point.model)))
                pace(point.step)  # while a key is handled the GIL is the UI's, and every so often anyway
                if len(batch) >= CURVE_BATCH_POINTS and time.monotonic() - sent >= CURVE_BATCH_S:
                    self._tell(CurvePoints(self, generation, batch, done=False))
                    batch, sent = [], time.monotonic()
            self._tell(CurvePoints(self, generation, batch, done=True))
        except Exception as error:  # noqa: BLE001 - said by the view (`Failed`), the app goes on
            self._tell(Failed(self, "curve", error))
        finally:
            pacing.release()

    # --- search, prompt, export ------------------------------------------------------------------

    def search_places(self, query: str) -> Iterator[int]:
        """The steps that match `query`, in order, for a search worker: read from the open
        document where it is read whole (a 97 MB ATIF file parsed a second time took 200 MB),
        else from a reader of its own; a key waits for no step of it (issue 49)."""
        return matching_steps(worker_document(self.document, self.path), query, pause=self.pacing.quiet.wait)

    def prompt(self, step: int, processors: list[dict[str, Any]], window: int | None, *, trust_file: bool = False,
               what_if: bool = False, emit: Emit | None = None) -> StepPrompt | None:
        """Step `step`'s prompt with `processors` (`what_if`: the candidates, labelled so): now,
        or past `PROMPT_IN_WORKER` messages of history None, and `PromptReady` (to `emit`, else
        the run's) once its thread has worked it out; a newer request supersedes it."""
        from ..prompt_view import step_prompt  # not at import: the processors' models (bench B2)
        from .what_if import what_if_prompt

        trajectory = self.trajectory()
        chosen = [dict(processor) for processor in processors]
        history = _history(trajectory, step)

        def work() -> StepPrompt:
            if what_if:
                return what_if_prompt(trajectory, step, chosen, window)
            return step_prompt(trajectory, step, chosen, window, trust_file=trust_file)
        if history <= PROMPT_IN_WORKER:
            return work()
        generation = self._prompt.start()
        tell = emit or self._tell

        def in_thread() -> None:
            try:
                prompt = work()
            except Exception as error:  # noqa: BLE001 - said by the view (`Failed`)
                tell(Failed(self, "prompt", error))
                return
            if generation == self._prompt.generation and not self._closed.is_set():
                tell(PromptReady(self, generation, step, prompt, chosen))
        self._thread(in_thread, name="prompt")
        return None

    def history_at(self, step: int) -> int:
        """How many messages of history step `step`'s prompt is built from (what `prompt` weighs)."""
        return _history(self.trajectory(), step)

    def export(self, out: Path, prices: Callable[[], dict[str, dict[str, float]]]) -> None:
        """Write the open run to `out` (a `.html` name a page, any other ATIF) in a thread;
        `Exported` says what was written or why not. A run read whole is written from what
        is open; a live file, or a large one while it is read whole, is read again by its path.
        Said even after the run is closed (the person moved on: what was written still is)."""
        shown = self.document

        def in_thread() -> None:
            from ..errors import SwedeckError
            from ..export.share import default_kind, export, write_export

            try:
                whole = read_whole(shown)
                trajectory = whole.trajectory() if whole is not None else None
                result: Export = export(self.path, default_kind(out), prices=prices(), trajectory=trajectory)
                write_export(out, result)
            except (SwedeckError, TrajectoryError, OSError) as error:
                self.emit(Exported(self, f"export failed: {error}", failed=True))
                return
            except Exception as error:  # noqa: BLE001 - said as a failed export, the app goes on
                self.emit(Exported(self, f"export failed: {type(error).__name__}: {error}", failed=True))
                return
            lost = f"; not held: {len(result.losses)} kinds (swedeck export --json lists them)" if result.losses else ""
            self.emit(Exported(self, f"wrote {out} ({result.version}, {result.steps} steps){lost}", failed=False))
        self._thread(in_thread, name="export")

    # --- follow ------------------------------------------------------------------------------

    def follow(self) -> Followed:
        """What a growing file added since (`refresh`); where a live file is gone because its
        session ended, the final file it became, open from now on. `TrajectoryError` where the
        file cannot be read (and became no final file)."""
        assert self.document is not None
        try:
            return Followed(new=self.document.refresh())
        except TrajectoryError:
            final = final_of(self.path)
            if final is None:
                raise
        self.document, self.path = open_document(final), final
        return Followed(final=final)

    def answering(self) -> str | None:
        """A record's answer as it streams (`swedeck record` writes it beside the record)."""
        from ..record.live import streaming_answer  # a followed file's, not at import

        return streaming_answer(self.path)

    # --- the end -----------------------------------------------------------------------------

    def close(self) -> None:
        """Nobody looks at this run any more: its reading and threads stop at their next step."""
        self._closed.set()
        document = self.document
        if isinstance(document, ReadingDocument):
            document.stop()
        self._deferred = []

    def _tell(self, event: RunEvent) -> None:
        if not self._closed.is_set():
            self.emit(event)

    @staticmethod
    def _thread(target: Callable[..., None], *args: object, name: str) -> None:
        threading.Thread(target=target, args=args, name=f"open-run-{name}", daemon=True).start()
