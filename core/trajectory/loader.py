"""One loader for every trajectory format (SPEC §9.3).

The format is found by content, not by the file name. Whatever goes wrong inside a reader
becomes a `TrajectoryError` naming the file and the reason: a damaged file must never
show a traceback.
"""

from __future__ import annotations

import mmap
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from ..errors import UsageError
from ..startup.read_ahead import MAP_BYTES, MAX_FILE_BYTES, ReadAhead
from . import readers
from .errors import TrajectoryError
from .files import inside_folder
from .model import Trajectory
from .readers import Reader, Source, sniffs, sniffs_part
from .readers.codex_threads import MAGIC as SQLITE_MAGIC
from .readers.source import MappedFile, Stopped

TRAJECTORY_SUFFIXES = (".traj.jsonl", ".traj.json", ".traj")




def load_trajectory(path: str | Path, *, lazy: bool = False, ahead: ReadAhead | None = None) -> Trajectory:
    """The trajectory in any supported file. Readers build messages when they are read;
    unless `lazy`, every message is built here, so a damaged one is reported now. The
    replay UI opens files lazily and shows a damaged step as an error when it is reached.
    `ahead`: the file's bytes, read while the command's modules imported (`startup.read_ahead`)."""
    path, unit = split_unit(Path(path))
    source = _source(path, unit, ahead)
    return _read(source, _reader_of(source), lazy)


def _reader_of(source: Source) -> Reader:
    """The reader that takes the file; `TrajectoryError` says why none does."""
    path = source.path
    if not source.folder and not source.data and source.blank:
        raise TrajectoryError(path, "the file is empty")
    with _said(path):
        reader = next((reader for reader in readers.READERS if _accepts(reader, source)), None)
        if reader is None:
            _ = source.document  # not JSON at all gives the JSON error as the reason
            if source.folder:
                raise ValueError("a folder with no trajectory swedeck reads (a Harbor trial's agent/trajectory.json, "
                                 "an OpenHands events/ folder)")
            raise ValueError("not a trajectory: no swedeck header, no `messages`, `history` or `trajectory`, "
                             "and none of the other agents' formats swedeck reads (docs/trajectory-format.md)")
        if source.branch is not None and not reader.branches:
            raise ValueError(f"#{source.branch}: a {reader.FORMAT} file has no branches to open")
    return reader


def _read(source: Source, reader: Reader, lazy: bool) -> Trajectory:
    with _said(source.path):
        trajectory = reader.read(source)
        if reader.joined:
            from .join import join  # the record `swedeck record` made of the same run, if any

            join(trajectory, load_trajectory)
        if not lazy:
            for _ in trajectory.messages:
                pass
            for _ in trajectory.steps:
                pass
    return trajectory


@contextmanager
def _said(path: Path) -> Iterator[None]:
    """Whatever goes wrong in a reader, as a `TrajectoryError` naming the file and the reason."""
    try:
        yield
    except (TrajectoryError, Stopped):
        raise
    except ValueError as error:
        raise TrajectoryError(path, _reason(error)) from None
    except Exception as error:  # noqa: BLE001 - a malformed file can break a reader anywhere; say so, no traceback
        raise TrajectoryError(path, f"unexpected content ({type(error).__name__}: {_reason(error)})") from None


class Reading:
    """A large file whose first or last steps are shown while the whole is read (issue 49: a
    2 GB rollout's 2.8 million lines take seconds; its start or end, milliseconds). `preview`
    is the trajectory of its first or last bytes (`at_end`): its steps are the file's first
    ones, or its last ones, in order; the last ones' numbers from the end are exact, from the
    start unknown until the whole is read. `finish()` reads the whole, in the caller's thread,
    while `progress` says how far it got."""

    def __init__(self, source: Source, reader: Reader, preview: Trajectory, at_end: bool) -> None:
        self.source, self.reader, self.preview, self.at_end = source, reader, preview, at_end
        self.path = source.path
        source.read_to = 0  # where the part's reading got to is not the whole's

    @property
    def progress(self) -> float:
        """How much of the file the whole reading has passed, 0 to 1."""
        size = len(self.source.content)
        return min(1.0, self.source.read_to / size) if size else 1.0

    def finish(self) -> Trajectory:
        """The whole file's trajectory (`load_trajectory(path, lazy=True)`'s); `Stopped` when
        `stop()` ended it."""
        return _read(self.source, self.reader, lazy=True)

    def stop(self) -> None:
        self.source.stop()


PART_FROM_BYTES = 16 << 20
"""A file this large, of a format whose part reads alone, shows that part while the whole is
read (below it the whole reads in about the time of a first frame: 20 MB of Claude Code took
1.44x a `.traj.jsonl`'s first frame whole, bench B2)."""


def open_reading(path: str | Path, at_end: bool, ahead: ReadAhead | None = None) -> Reading | None:
    """A `Reading` of a file of `PART_FROM_BYTES` or more, whose reader can read a part of it
    alone (`part(source, at_end)`: Codex rollouts, Claude Code sessions' ends), from its end or
    its start (`ahead`: its bytes, read while the command's modules imported); None for any
    other file (told by its first bytes), for one `swedeck record` recorded (its prompts are
    joined over the whole file), and for one whose part does not read (the whole reading then
    says what is wrong)."""
    path, unit = split_unit(Path(path))
    try:
        if unit != 1 or not path.is_file() or path.stat().st_size < PART_FROM_BYTES \
                or not sniff(path, sniffs_part):  # its first bytes say (no other file is read here)
            return None
        source = _source(path, unit, ahead)
        if not isinstance(source.content, bytes | MappedFile):
            return None  # text decoded from UTF-8: its offsets are characters
        reader = _reader_of(source)
        if reader.part is None:
            return None
        with _said(path):
            preview = reader.part(source, at_end)
            if preview is not None and reader.joined:
                from .join import record_of

                if record_of(preview) is not None:
                    return None  # the record's prompts are joined by answer, over the whole file
    except TrajectoryError:
        return None
    return Reading(source, reader, preview, at_end) if preview is not None else None


def named_path(spec: str | Path) -> Path:
    """A trajectory the command line names (`PATH`, `PATH#N`, `PATH#NAME`); nothing at PATH is a
    usage error (exit 2), in one line, the same for every subcommand. What is there but cannot
    be read is the reader's `TrajectoryError` (exit 1)."""
    path = Path(spec)
    base, _unit = split_unit(path)
    if not base.exists() and not base.is_symlink():
        raise UsageError(f"{spec}: no such file or folder")
    return path


def split_unit(path: Path) -> tuple[Path, int | str]:
    """`log.eval#3` is run 3 of `log.eval` (an Inspect log's samples, an OpenHands evaluation's
    instances), and `session.jsonl#NAME` the branch NAME inside it (`Branch.target`), where
    the name with its `#` is not itself a file."""
    base, mark, name = path.name.rpartition("#")
    if not mark or not base or not name or path.exists():
        return path, 1
    if name.isdigit():
        return (path.with_name(base), int(name)) if int(name) >= 1 else (path, 1)
    return (path.with_name(base), name) if path.with_name(base).exists() else (path, 1)


def _source(path: Path, unit: int | str, ahead: ReadAhead | None = None) -> Source:
    if isinstance(unit, str):
        source = _source(path, 1, ahead)
        source.branch = unit
        return source
    if path.is_dir():
        return Source(path=path, folder=True, unit=unit)
    info = check_regular_file(path)  # never opened otherwise (a FIFO would block the open)
    with path.open("rb") as handle:
        head = handle.read(16)
    if head == SQLITE_MAGIC:  # a database (Codex's thread history): its reader opens it read-only by its path
        return Source(path=path, data=head, unit=unit)
    mapped = _mapped(path, info.st_size)
    if mapped is not None and mapped[:4] == b"PK\x03\x04":  # a zip (Inspect's `.eval`): its directory and the members asked for are read
        member = partial(ahead.take_member, path, info) if ahead is not None else None  # its first sample, ahead
        return Source(path=path, data=mapped, unit=unit, ahead=member)  # type: ignore[arg-type]
    if mapped is not None:  # a large text file: its lines are found and parsed in the mapping
        _check_text(path, mapped[:8192])
        return Source(path=path, content=mapped, unit=unit)
    data = _read_bytes(path, ahead)
    if data.startswith(b"PK\x03\x04"):  # a zip archive: Inspect's `.eval`
        return Source(path=path, data=data, unit=unit)
    return Source(path=path, content=_content(path, data), unit=unit)


def _mapped(path: Path, size: int) -> mmap.mmap | None:
    """A zip file (of any size) or a file of `MAP_BYTES` or more mapped, not read (issue 49: a
    1 GB `.eval` opens its sample list from the zip's directory and one sample's member, a 2 GB
    rollout is indexed line by line, in bounded memory); None for any other file."""
    try:
        with path.open("rb") as handle:
            if size < MAP_BYTES and handle.read(4) != b"PK\x03\x04":
                return None
            return MappedFile(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None  # read the usual way, which says what is wrong


def is_trajectory_file(path: Path) -> bool:
    return path.is_file() and path.name.endswith(TRAJECTORY_SUFFIXES)


def trajectory_files(folder: Path) -> list[Path]:
    """The trajectories under a folder (recursively): swedeck's, mini-swe-agent's and
    SWE-agent's by name, other agents' records by a look at their first bytes (`sniff`),
    and OpenHands v1 event folders (`events/`) as one trajectory each."""
    found: list[Path] = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() and not inside_folder(path, folder):
            continue  # a folder is data: a link out of it (to /etc/shadow) is not one of its records
        if path.parent.name == "events" and path.name.startswith("event-"):
            if path.parent not in found:
                found.append(path.parent)
        elif is_trajectory_file(path) or (path.is_file() and sniff(path)):
            found.append(path)
    return found


_SNIFF_BYTES = 65536


def sniff(path: Path, by: Callable[[str, bytes, str], bool] = sniffs) -> bool:
    """Whether a `.json`, `.jsonl` or `.eval` file is another agent's record swedeck reads,
    from its first bytes (a folder of 1,000 files is not parsed whole to list it): each
    reader's own `sniff` says (`by`: which readers ask)."""
    if not path.name.endswith((".json", ".jsonl", ".eval")) or path.name.startswith("."):
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return False
    text = head.decode("utf-8", errors="replace")
    if len(head) == _SNIFF_BYTES:
        text = text[: text.rfind("\n") + 1]
    return by(path.name, head, text)


def _accepts(reader: Reader, source: Source) -> bool:
    try:
        return reader.accepts(source)
    except ValueError:  # not JSON: this reader does not apply, the next may
        return False


def _read_bytes(path: Path, ahead: ReadAhead | None = None) -> bytes:
    info = check_regular_file(path)  # says "no such file" and "a folder" itself
    data = ahead.take(path, info) if ahead is not None else None  # read while the replay's modules imported
    if data is not None:
        return data
    try:
        return path.read_bytes()
    except OSError as error:
        raise TrajectoryError(path, error.strerror or str(error)) from None


def _content(path: Path, data: bytes) -> str | bytes:
    """The file's text; its bytes when they are ASCII alone (decoded when a reader asks: `Source.text`)."""
    _check_text(path, data[:8192])
    if data.isascii():
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TrajectoryError(path, f"not UTF-8 text (byte {error.start})") from None


def _check_text(path: Path, head: bytes) -> None:
    if b"\x00" in head:
        raise TrajectoryError(path, "a binary file, not JSON")


def check_regular_file(path: Path) -> os.stat_result:
    """A trajectory is a regular file of a sane size: a FIFO would block the reader for ever,
    a device (`/dev/zero` behind a symlink) would never end. Returns its `stat`."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise TrajectoryError(path, "no such file") from None
    except OSError as error:
        raise TrajectoryError(path, error.strerror or str(error)) from None
    if stat.S_ISDIR(info.st_mode):
        raise TrajectoryError(path, "it is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode) else "not a regular file"
        raise TrajectoryError(path, f"{kind}, not a trajectory file")
    if info.st_size > MAX_FILE_BYTES:
        raise TrajectoryError(path, f"{info.st_size:,} bytes: larger than {MAX_FILE_BYTES:,}")
    return info


def _reason(error: Exception) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."
