"""One loader for every trajectory format (SPEC §9.3).

The format is found by content, not by the file name. Whatever goes wrong inside a reader
becomes a `TrajectoryError` naming the file and the reason: a damaged file must never
show a traceback.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import TrajectoryError
from .model import Trajectory
from .readers import READERS, Reader, Source

TRAJECTORY_SUFFIXES = (".traj.jsonl", ".traj.json", ".traj")


def load_trajectory(path: str | Path, *, lazy: bool = False) -> Trajectory:
    """The trajectory in any supported file. Readers build messages when they are read;
    unless `lazy`, every message is built here, so a damaged one is reported now. The
    replay UI opens files lazily and shows a damaged step as an error when it is reached."""
    path = Path(path)
    source = Source(path=path, text=_read_text(path))
    if not source.text.strip():
        raise TrajectoryError(path, "the file is empty")
    try:
        reader = next((reader for reader in READERS if _accepts(reader, source)), None)
        if reader is None:
            _ = source.document  # not JSON at all gives the JSON error as the reason
            raise ValueError("not a trajectory: no swedeck header, no `messages`, `history` or `trajectory`")
        trajectory = reader.read(source)
        if not lazy:
            for _ in trajectory.messages:
                pass
            for _ in trajectory.steps:
                pass
        return trajectory
    except TrajectoryError:
        raise
    except ValueError as error:
        raise TrajectoryError(path, _reason(error)) from None
    except Exception as error:  # noqa: BLE001 - a malformed file can break a reader anywhere; say so, no traceback
        raise TrajectoryError(path, f"unexpected content ({type(error).__name__}: {_reason(error)})") from None


def is_trajectory_file(path: Path) -> bool:
    return path.is_file() and path.name.endswith(TRAJECTORY_SUFFIXES)


def trajectory_files(folder: Path) -> list[Path]:
    """The trajectory files under a folder (recursively), by name."""
    return sorted(p for p in folder.rglob("*") if is_trajectory_file(p))


def _accepts(reader: Reader, source: Source) -> bool:
    try:
        return reader.accepts(source)
    except ValueError:  # not JSON: this reader does not apply, the next may
        return False


MAX_FILE_BYTES = 2 << 30
"""Larger files are refused rather than read into memory whole."""


def _read_text(path: Path) -> str:
    check_regular_file(path)  # says "no such file" and "a folder" itself
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TrajectoryError(path, error.strerror or str(error)) from None
    if b"\x00" in data[:8192]:
        raise TrajectoryError(path, "a binary file, not JSON")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TrajectoryError(path, f"not UTF-8 text (byte {error.start})") from None


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
