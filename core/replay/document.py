"""A trajectory opened for replay (SPEC §11.1): what one step shows, found lazily.

A swedeck `.traj.jsonl` is indexed (byte offsets and roles of its lines) and a step's
messages are parsed when the step is shown, so the first screen of a 50 MB file does not
wait for the whole file; `refresh()` follows a growing file by reading only new bytes.
Every other file is one JSON document: it is loaded once by the common loader.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import msgspec

from ..messages import Action, Message
from ..startup.read_ahead import ReadAhead
from ..trajectory.compaction import compaction_position
from ..trajectory.compaction import label as compaction_label
from ..trajectory.errors import TrajectoryError
from ..trajectory.fidelity import prompt_provenance
from ..trajectory.files import FINAL_SUFFIX, LIVE_SUFFIX, base_name
from ..trajectory.lazy import LazySequence, StepList
from ..trajectory.loader import Reading, load_trajectory, open_reading
from ..trajectory.losses import kept_text, loss_at
from ..trajectory.model import Step, Trajectory, TrajectoryFormat, TrajectoryInfo
from ..trajectory.readers.api_requests import record_fidelity
from ..trajectory.readers.swedeck_jsonl import apply_end, header_info, processors_of
from .live_index import RoleIndex


class StepView(msgspec.Struct, frozen=True):
    """What the replay screen shows for one step."""

    number: int
    """1-based."""
    assistant: Message
    actions: tuple[Action, ...]
    observations: list[Message]
    prompt_end: int
    prompt_tokens: int | None
    """Prompt tokens of this query as the file records them (None: not recorded; see
    the token curve's estimate)."""
    estimated: bool
    """The recorded figure is itself an estimate (the provider sent no usage during the run)."""
    cached_tokens: int
    window: int | None
    cost: float | None
    provenance: str | None = None
    """How this query's prompt is known: `recorded`, `reconstructed` or `unknown` (SPEC §9.3)."""
    compaction: str | None = None
    """`compacted: 180,000 -> 12,000` when the history was compacted just before this query."""
    compaction_detail: str = ""
    """What that compaction kept of what it replaced, and the gap between the figure the agent
    acted on and the provider's count (`acted on … · kept: paths 2/2 · …`): the meter says it."""
    processors: str | None = None
    """The hash of the processors this query's prompt was built with, as recorded."""


class ReplayDocument(Protocol):
    path: Path
    format: TrajectoryFormat

    @property
    def step_count(self) -> int: ...
    @property
    def info(self) -> TrajectoryInfo: ...
    def step(self, number: int) -> StepView: ...
    def messages_before(self, end: int) -> list[Message]: ...
    def refresh(self) -> int: ...
    def trajectory(self) -> Trajectory: ...


def _view(messages: Sequence[Message], step: Step, previous_answer: int,
          previous: Callable[[], Step | None] = lambda: None, history: bool = True) -> StepView:
    """`previous_answer`: the position of the step before's answer (-1: none); `previous`, that
    step (read only after a compaction, for the provider's count beside the agent's figure);
    `history`: `messages` hold the whole history (not a file's last steps alone), so what a
    compaction kept of it can be said."""
    assistant = messages[step.message_index]
    usage, context = step.usage, step.context
    tokens = usage.prompt_tokens if usage and usage.prompt_tokens else None
    estimated = bool(usage and usage.estimated) if tokens is not None else False
    if tokens is None and context and context.prompt_tokens:
        tokens = context.prompt_tokens
    compaction, detail = _compaction(messages, previous_answer, step.message_index, previous, history)
    return StepView(number=step.index, assistant=assistant, actions=step.actions,
                    observations=[messages[i] for i in step.observation_indices], prompt_end=step.prompt_end,
                    prompt_tokens=tokens, estimated=estimated, cached_tokens=usage.cached_tokens if usage else 0,
                    window=context.window if context else None, cost=step.cost, processors=step.processors,
                    compaction=compaction, compaction_detail=detail)


def _answer_before(steps: Sequence[Step], number: int) -> int:
    """Where step `number - 1`'s answer is (-1: none), without reading it where the steps are
    lazy (a damaged answer shows on its own step, not on the next)."""
    if number < 2:
        return -1
    return steps.starts[number - 2] if isinstance(steps, StepList) else steps[number - 2].message_index


def _compaction(messages: Sequence[Message], previous_answer: int, answer: int,
                previous: Callable[[], Step | None] = lambda: None, history: bool = True) -> tuple[str | None, str]:
    """The label of the compaction just before this query (`compaction_position`), with what
    it kept of what it replaced (`losses.kept_text`) and, for another agent's, the gap between
    the figure it acted on and the provider's last count (`trigger_gap`)."""
    try:
        position = compaction_position(messages, previous_answer, answer)
        if position is None:
            return None, ""
        found = messages[position]
        kept = kept_text(loss_at(messages, position)) if found.extra.undoes is None and history else ""
        gap = trigger_gap(found, previous())
    except TrajectoryError:
        return None, ""  # a damaged message before it: its own step shows the damage, this one shows itself
    return compaction_label(found), " · ".join(part for part in (gap, kept) if part)


def trigger_gap(marker: Message, previous: Step | None) -> str:
    """`acted on 180,000 · provider's last count 176,500 (gap +3,500)`: another agent's
    compaction whose file records the figure it compacted at (Claude Code's `preTokens`),
    beside the provider's count of the call before it. swedeck's own markers carry the meter's
    number itself (`tokens_before` is the `next ≈` the trigger read), so they have no gap."""
    before = marker.extra.tokens_before
    if before is None or not marker.extra.unknown.get("compaction_source") or previous is None \
            or previous.usage is None or previous.usage.estimated or not previous.usage.prompt_tokens:
        return ""
    provider = previous.usage.prompt_tokens + previous.usage.completion_tokens
    return f"acted on {before:,} · provider's last count {provider:,} (gap {before - provider:+,})"


class LoadedDocument:
    """A file read whole (a `.json` is one document); steps are viewed on demand."""

    def __init__(self, trajectory: Trajectory):
        self._trajectory = trajectory
        self.path = trajectory.path
        self.format = trajectory.format

    @property
    def step_count(self) -> int:
        return len(self._trajectory.steps)

    @property
    def info(self) -> TrajectoryInfo:
        return self._trajectory.info

    history = True
    """The messages hold the whole history before each step."""

    def step(self, number: int) -> StepView:
        trajectory = self._trajectory
        step = trajectory.steps[number - 1]
        view = _view(trajectory.messages, step, _answer_before(trajectory.steps, number),
                     lambda: trajectory.steps[number - 2] if number > 1 else None, self.history)
        if trajectory.fidelity is None and not trajectory.recorded_prompts:
            return view  # swedeck's, mini-swe-agent's and SWE-agent's files: as they always showed
        return msgspec.structs.replace(view, provenance=prompt_provenance(trajectory, step.index))

    def messages_before(self, end: int) -> list[Message]:
        return list(self._trajectory.messages[:end])

    def refresh(self) -> int:
        return 0

    def trajectory(self) -> Trajectory:
        return self._trajectory


class ReadingDocument(LoadedDocument):
    """A large file's first or last steps (`at_end`), shown while the whole file is read
    (`loader.Reading`, issue 49): they are numbered here from the first of them; the last
    ones' numbers in the file are known when `finish()` is done. The first step of a file's
    end may have begun before it: it is not shown, only read by the step after it (the
    provider's count before a compaction). `trajectory()` is only these steps': what needs the
    whole file (a prompt, what-if, a fork, a search) waits for `finish()`."""

    def __init__(self, reading: Reading):
        super().__init__(reading.preview)
        self.reading = reading
        self.at_end = reading.at_end
        self.history = not reading.at_end  # what a compaction kept of the whole history is said once it is read
        self.hidden = 1 if reading.at_end else 0

    @property
    def step_count(self) -> int:
        return super().step_count - self.hidden

    def step(self, number: int) -> StepView:
        return msgspec.structs.replace(super().step(number + self.hidden), number=number)

    @property
    def progress(self) -> float:
        """How much of the file the whole reading has passed, 0 to 1."""
        return self.reading.progress

    def finish(self) -> LoadedDocument:
        """The whole file's document (in a worker's thread: seconds for a 2 GB rollout);
        `TrajectoryError` when the file cannot be read, `Stopped` after `stop()`."""
        return LoadedDocument(self.reading.finish())

    def stop(self) -> None:
        """Nobody waits for the whole reading any more (the person left the file)."""
        self.reading.stop()

    def pace(self, wait: Callable[[], None]) -> None:
        """`wait` is called every so many lines of the whole reading (in its thread): it may wait."""
        self.reading.source.pace = wait


class LiveDocument:
    """A swedeck `.traj.jsonl`, indexed, parsed per step, able to follow appends."""

    format: TrajectoryFormat = "swedeck-jsonl"

    def __init__(self, path: Path):
        self.path = path
        self.index = RoleIndex(path)
        self._messages = _IndexedMessages(self.index)
        self._full: Trajectory | None = None

    @property
    def step_count(self) -> int:
        return len(self.index.steps)

    @property
    def info(self) -> TrajectoryInfo:
        info = header_info(self.index.header)
        apply_end(info, self.index.meta_events())
        if self.index.torn_tail:
            info.warnings.append("the last line is incomplete (being written, or cut off)")
        return info

    def step(self, number: int) -> StepView:
        # A new StepList each time: the last step grows while the session is written.
        steps = StepList(self._messages, self.index.steps)
        return _view(self._messages, steps[number - 1], _answer_before(steps, number),
                     lambda: steps[number - 2] if number > 1 else None)

    def messages_before(self, end: int) -> list[Message]:
        return [self.index.message(i) for i in range(end)]

    def refresh(self) -> int:
        before = self.step_count
        self.index.refresh()
        return self.step_count - before

    def trajectory(self) -> Trajectory:
        """The whole file parsed (prompt inspector, what-if, search, fork); cached until it grows
        (a message, or an event: a record's subagent call adds no message to the main line). A
        record's side calls and subagent runs are its branches as they come (`s`, `b`)."""
        count = len(self.index)
        events = self.index.meta_events()
        if self._full is None or len(self._full.messages) != count or len(self._full.meta_events) != len(events):
            messages = [self.index.message(i) for i in range(count)]
            self._full = Trajectory(path=self.path, format="swedeck-jsonl", messages=messages,
                                    steps=StepList(messages, list(self.index.steps)), info=self.info, meta_events=events,
                                    processors=processors_of(events), fidelity=record_fidelity(events, str(self.path)))
        return self._full


class _IndexedMessages(LazySequence[Message]):
    """The messages of a live file as a sequence, each parsed when read."""

    noun = "message"

    def __init__(self, index: RoleIndex):
        self._index = index

    def __len__(self) -> int:
        return len(self._index)

    def _item(self, index: int) -> Message:
        return self._index.message(index)


def final_of(path: Path) -> Path | None:
    """The final `.traj.json` a live file became: its session ended, and its `.jsonl` was
    removed (SPEC §11.4: `--follow` goes on there, no step lost)."""
    if not path.name.endswith(LIVE_SUFFIX) or path.exists():
        return None
    base = base_name(path)
    final = base.with_name(base.name + FINAL_SUFFIX)
    return final if final.is_file() else None


def open_document(path: str | Path, ahead: ReadAhead | None = None, *, part: str | None = None) -> ReplayDocument:
    """A replay document for any supported file; `TrajectoryError` names the file and reason.
    `ahead`: its bytes, read while the command's modules imported (`startup.read_ahead`).
    `part` (`start`, `end`): a large file whose start or end reads alone (`loader.open_reading`)
    opens as a `ReadingDocument` of that part, its whole reading left to the caller's worker."""
    path = Path(path)
    if path.name.endswith(".jsonl") and path.is_file():
        try:
            document = LiveDocument(path)
        except TrajectoryError:
            pass  # not a swedeck live file: the loader says what it is or why it cannot be read
        except OSError as error:
            raise TrajectoryError(path, error.strerror or str(error)) from None
        else:
            if ahead is not None:
                ahead.drop()  # indexed by its lines, never read whole
            return document
        reading = open_reading(path, at_end=part == "end", ahead=ahead) if part is not None else None
        if reading is not None:
            return ReadingDocument(reading)
    return LoadedDocument(load_trajectory(path, lazy=True, ahead=ahead))
