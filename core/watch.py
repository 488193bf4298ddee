"""`swedeck watch DIR` without the drawing (SPEC §11.4): one row per trajectory under a
folder, kept up to date by reading only what changed.

A live `.traj.jsonl` is followed through a `TrajectoryIndex` (byte offsets; `refresh()`
reads only appended bytes) and only its new messages are parsed. A final `.traj.json`
(or another tool's file) is loaded once per change of its size or mtime. A session with
both files is shown once, by its final file. Files that cannot be read become rows with
status `error` and the reason: a bad file never stops the scan.

A batch's output folder (`swedeck batch`, SPEC §15) also has rows for the instances that
have no trajectory yet (`queued`) or never will (failed before it was written), read from
its `batch.json`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from .batch.output import STATE, BatchState, instance_trajectory, read_state
from .context_status import ContextStatus
from .cost import Prices, cost_of
from .messages import Message, MessageType
from .subagents import subagent_runs
from .trajectory.errors import TrajectoryError
from .trajectory.files import LIVE_SUFFIX, base_name
from .trajectory.index import TrajectoryIndex
from .trajectory.loader import TRAJECTORY_SUFFIXES, load_trajectory
from .trajectory.normalize import is_step

Status = Literal["running", "finished", "stale", "error", "queued"]
DEFAULT_STALE_AFTER_S = 60.0
LAST_ACTION_CHARS = 120


@dataclass(frozen=True)
class WatchRow:
    key: str
    """The session's path without its trajectory suffix: stable while `.jsonl` turns into `.json`."""
    name: str
    """Relative to the watched folder."""
    path: Path
    """The file the row was read from (the final file once there is one)."""
    status: Status
    steps: int = 0
    cost: float = 0.0
    context_left: float | None = None
    """Percent of the context window left at the last query, when known."""
    last_action: str = ""
    exit_status: str | None = None
    error: str | None = None
    verdict: str | None = None
    """A batch instance's class once it ended (`batch.verify.CLASSES`), from `batch.json`."""


@dataclass(frozen=True)
class WatchUpdate:
    changed: list[WatchRow]
    removed: list[str]
    """Keys of rows whose files are gone."""


@dataclass
class _Tally:
    """What a row shows, accumulated message by message."""

    steps: int = 0
    cost: float = 0.0
    context_left: float | None = None
    last_action: str = ""

    def add(self, message: Message) -> None:
        if not is_step(message):
            return
        self.steps += 1
        extra = message.extra
        self.cost += extra.cost or 0.0
        if extra.context and extra.context.left_percent is not None:
            self.context_left = extra.context.left_percent
        elif extra.context and extra.context.window and extra.context.prompt_tokens is not None:
            self.context_left = ContextStatus(extra.context.window, extra.context.prompt_tokens).left_percent
        if extra.actions:
            self.last_action = _one_line(extra.actions[-1].command)
        elif message.message_type == MessageType.ASSISTANT_MESSAGE:
            self.last_action = _one_line(message.text)


class _LiveFile:
    """A `.traj.jsonl` being written: its index and the tally of the messages seen so far."""

    def __init__(self, path: Path):
        self.index = TrajectoryIndex(path)
        self.tally = _Tally()
        self.parsed = 0
        self.ended: str | None = None
        self.size = -1
        self.changed_at = 0.0

    def catch_up(self) -> None:
        self.index.refresh()
        for number in range(self.parsed, len(self.index)):
            self.tally.add(self.index.message(number))
        self.parsed = len(self.index)
        for event in self.index.meta_events()[-1:]:
            if event.event == "end":  # a kept .jsonl records how the session ended
                self.ended = str(event.data.get("exit_status") or "ended")


@dataclass
class _FinalFile:
    signature: tuple[float, int]
    row: WatchRow


class DirectoryWatcher:
    """Scan a folder again and again; each `scan()` says which rows changed."""

    def __init__(self, root: str | Path, *, stale_after_s: float = DEFAULT_STALE_AFTER_S,
                 clock: Callable[[], float] = time.time, prices: Prices | None = None):
        self.root = Path(root).absolute()  # as a file watcher reports paths
        self.prices = prices or Prices()
        """What a finished run with usage and no cost of its own is priced at (`model.prices` over litellm's map)."""
        self.stale_after_s = stale_after_s
        self._clock = clock
        self._live: dict[Path, _LiveFile] = {}
        self._final: dict[Path, _FinalFile] = {}
        self.rows: dict[str, WatchRow] = {}
        self.batch: BatchState | None = None
        """The batch whose output this folder is, if it is one."""
        self._batch_signature: tuple[float, int] | None = None
        self._found: dict[str, Path] | None = None
        """Session key -> its file, as of the last scan."""
        self._scanning = threading.Lock()
        """One scan at a time: each reads and replaces the rows, the file caches and `_found`."""

    def scan(self, changed: Iterable[str | Path] | None = None) -> WatchUpdate:
        """Look again. `changed`: the paths a file watcher reported since the last scan (only
        those are looked at, and the live files, whose rows age into `stale`); None walks the
        whole folder. Scans from several threads take turns: each sees the rows the one before
        it left, so no change is reported twice or lost."""
        with self._scanning:
            return self._scan(changed)

    def _scan(self, changed: Iterable[str | Path] | None) -> WatchUpdate:
        keys = self._changed_keys(changed) if changed is not None and self._found is not None else None
        if keys is None or self._found is None:
            files = self._found = self._files()
            keys = set(files)
            previous: dict[str, WatchRow] = {}
        else:
            files = self._found
            keys |= {key for key, path in files.items() if path.name.endswith(LIVE_SUFFIX)}
            previous = {key: row for key, row in self.rows.items() if key in files}
        now = self._clock()
        new_rows = dict(previous)
        for key in keys:
            path = files.get(key)
            if path is None:
                new_rows.pop(key, None)
                continue
            live = path.name.endswith(LIVE_SUFFIX)
            new_rows[key] = self._live_row(key, path, now) if live else self._final_row(key, path)
        self._add_batch_rows(new_rows)
        new_rows = dict(sorted(new_rows.items()))
        for gone in set(self._live) - {p for p in files.values()}:
            del self._live[gone]
        for gone in set(self._final) - {p for p in files.values()}:
            del self._final[gone]
        rows_changed = [row for key, row in new_rows.items() if self.rows.get(key) != row]
        removed = [key for key in self.rows if key not in new_rows]
        self.rows = new_rows
        return WatchUpdate(changed=rows_changed, removed=removed)

    def _add_batch_rows(self, rows: dict[str, WatchRow]) -> None:
        """Rows for the batch's instances without a trajectory, in the batch's order."""
        try:
            stat = (self.root / STATE).stat()
        except OSError:
            self.batch = self._batch_signature = None
            return
        if (stat.st_mtime, stat.st_size) != self._batch_signature:
            self.batch = read_state(self.root) or self.batch  # a torn read keeps the last good state
            self._batch_signature = (stat.st_mtime, stat.st_size)
        if self.batch is None:
            return
        for instance_id, instance in self.batch.instances.items():
            path = instance_trajectory(self.root, instance_id)
            key = str(base_name(path))
            if key in rows:
                if instance.verdict and rows[key].verdict != instance.verdict:
                    rows[key] = replace(rows[key], verdict=instance.verdict)
                continue
            if instance.state == "failed":
                rows[key] = WatchRow(key, instance_id, path, "error", exit_status=instance.exit_status,
                                     error=instance.error or instance.exit_status, verdict=instance.verdict)
            elif instance.state in ("queued", "running"):  # running: its file is not written yet
                rows[key] = WatchRow(key, instance_id, path, "queued" if instance.state == "queued" else "running")

    def _changed_keys(self, changed: Iterable[str | Path]) -> set[str] | None:
        """The session keys whose files changed, with `_found` brought up to date; None when a
        change is not one trajectory file (a folder came or went): then the whole folder is
        walked again."""
        assert self._found is not None
        keys: set[str] = set()
        for raw in changed:
            path = Path(raw)
            if path.name == STATE and path.parent == self.root:
                continue  # batch.json: read by signature on every scan
            if any(part.startswith(".") for part in self._relative_parts(path)[:-1]):
                continue  # inside a hidden folder (a batch's `.previous` runs): not a session of this folder
            if not path.name.endswith(TRAJECTORY_SUFFIXES) or path.name.startswith(".") or path.is_dir():
                if path.name.startswith(".") and not path.is_dir():
                    continue  # a writer's temp file
                return None
            key = str(base_name(path))
            keys.add(key)
            current = _session_file(Path(key))
            if current is None:
                self._found.pop(key, None)
            else:
                self._found[key] = current
        return keys

    def _files(self) -> dict[str, Path]:
        """Session key -> its file; the final file wins over the live one."""
        found: dict[str, Path] = {}
        for folder, dirs, names in os.walk(self.root):
            dirs[:] = [name for name in dirs if not name.startswith(".")]  # a batch's `.previous` runs
            for name in names:
                if not name.endswith(TRAJECTORY_SUFFIXES) or name.startswith("."):
                    continue
                path = Path(folder) / name
                key = str(base_name(path))
                if key not in found or found[key].name.endswith(LIVE_SUFFIX):
                    found[key] = path
        return dict(sorted(found.items()))

    def _relative_parts(self, path: Path) -> tuple[str, ...]:
        try:
            return path.relative_to(self.root).parts
        except ValueError:
            return path.parts

    def _name(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def _live_row(self, key: str, path: Path, now: float) -> WatchRow:
        try:
            stat = path.stat()
            live = self._live.get(path)
            if stat.st_size == 0:  # just created, header not written yet
                return WatchRow(key, self._name(path), path, self._activity(stat.st_mtime, now))
            if live is None:
                live = self._live[path] = _LiveFile(path)
            if stat.st_size != live.size:
                seen_before = live.size >= 0
                live.catch_up()
                live.size = stat.st_size
                # growth seen by this watcher is activity now, whatever the file's mtime says
                live.changed_at = now if seen_before else stat.st_mtime
            live.changed_at = max(live.changed_at, stat.st_mtime)
        except (TrajectoryError, OSError) as error:
            self._live.pop(path, None)
            return WatchRow(key, self._name(path), path, "error", error=_reason(error))
        tally = live.tally
        status: Status = "finished" if live.ended else self._activity(live.changed_at, now)
        return WatchRow(key, self._name(path), path, status, steps=tally.steps, cost=tally.cost,
                        context_left=tally.context_left, last_action=tally.last_action, exit_status=live.ended)

    def _activity(self, changed_at: float, now: float) -> Status:
        return "running" if now - changed_at < self.stale_after_s else "stale"

    def _final_row(self, key: str, path: Path) -> WatchRow:
        try:
            stat = path.stat()
        except OSError as error:
            return WatchRow(key, self._name(path), path, "error", error=_reason(error))
        signature = (stat.st_mtime, stat.st_size)
        cached = self._final.get(path)
        if cached is not None and cached.signature == signature:
            return cached.row
        try:
            trajectory = load_trajectory(path)
        except TrajectoryError as error:
            row = WatchRow(key, self._name(path), path, "error", error=error.reason)
        else:
            tally = _Tally()
            for message in trajectory.messages:
                tally.add(message)
            cost = trajectory.info.model_stats.instance_cost or tally.cost
            if not cost:  # no figure of its own (another agent's file): priced from its usage, its subagents' too
                cost = cost_of(trajectory, self.prices, subagent_runs(trajectory)).total_usd
            row = WatchRow(key, self._name(path), path, "finished", steps=len(trajectory.steps),
                           cost=cost, context_left=tally.context_left,
                           last_action=tally.last_action, exit_status=trajectory.info.exit_status or "unknown")
        self._final[path] = _FinalFile(signature, row)
        return row


def _session_file(base: Path) -> Path | None:
    """The file a session is shown by: a final file if there is one, else its live file."""
    for suffix in (".traj.json", ".traj", LIVE_SUFFIX):
        candidate = base.with_name(base.name + suffix)
        if candidate.is_file():
            return candidate
    return None


def status_text(row: WatchRow) -> str:
    """The status cell: `finished` says how it ended."""
    if row.status == "finished":
        return f"finished: {row.exit_status}" if row.exit_status else "finished"
    return row.status


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LAST_ACTION_CHARS else text[: LAST_ACTION_CHARS - 1] + "…"


def _reason(error: Exception) -> str:
    if isinstance(error, TrajectoryError):
        return error.reason
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error)
