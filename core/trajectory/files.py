"""File plumbing of the writer: names, private (0600) files, appends that survive a crash,
and the atomic replace of the final file."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

from .. import paths
from ..whole_file import write_whole

LIVE_SUFFIX = ".traj.jsonl"
FINAL_SUFFIX = ".traj.json"
_KNOWN_SUFFIXES = (LIVE_SUFFIX, FINAL_SUFFIX, ".jsonl", ".json", ".traj")


def base_name(path: Path) -> Path:
    """`x.traj.jsonl`, `x.traj.json` and `x` all name the session `x`."""
    for suffix in _KNOWN_SUFFIXES:
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            return path.with_name(path.name[: -len(suffix)])
    return path


def live_path(base: Path) -> Path:
    """The session's file while it runs: `base.traj.jsonl`."""
    return base.with_name(base.name + LIVE_SUFFIX)


def final_path(base: Path) -> Path:
    """The session's file once it has ended: `base.traj.json`."""
    return base.with_name(base.name + FINAL_SUFFIX)


def default_base(session_id: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    # Session ids start with their own timestamp (`20261121-021949-3fa2c1`): keep the unique tail.
    short = session_id.rsplit("-", 1)[-1][:8]
    return paths.trajectories_dir() / f"{stamp}-{short or 'session'}"


def unused_base(base: Path) -> Path:
    """`base`, or `base-2`, `base-3`, … : the first whose live and final files do not exist."""
    candidate, number = base, 1
    while live_path(candidate).exists() or final_path(candidate).exists():
        number += 1
        candidate = base.with_name(f"{base.name}-{number}")
    return candidate


def remove_orphan_temps(path: Path) -> None:
    """Drop the temp files an atomic write of `path` left behind when its process was killed
    (`write_atomically` names them `.<name>.<random>.tmp`). Only the holder of `path`'s lock
    calls this, so no other writer's temp file is removed."""
    try:
        for temp in path.parent.glob(f".{path.name}.*.tmp"):
            temp.unlink(missing_ok=True)
    except OSError:
        pass


def resolve_base(output: str | Path | None, session_id: str) -> Path:
    if output is None or str(output) == "":
        return default_base(session_id)
    output = Path(output).expanduser()
    if output.is_dir():
        return output / default_base(session_id).name
    return base_name(output)


def open_private(path: Path, *, truncate: bool) -> int:
    """A file descriptor for appending, mode 0600 whether the file is new or not."""
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if truncate else 0)
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def json_line(record: Any) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def append_durably(fd: int, data: bytes) -> None:
    """Write all bytes, then fsync, so a reader (or a crash) sees whole lines."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    os.fsync(fd)


def cut_torn_tail(path: Path) -> None:
    """Drop an incomplete last line (the process died mid-write) so appends start clean."""
    with open(path, "rb+") as handle:
        data = handle.read()
        if not data or data.endswith(b"\n"):
            return
        last_line = data[data.rfind(b"\n") + 1:]
        try:
            json.loads(last_line)
        except ValueError:
            handle.truncate(data.rfind(b"\n") + 1)
        else:
            handle.write(b"\n")


def write_atomically(path: Path, record: Any) -> None:
    """`record` as indented JSON, written whole or not at all (`whole_file.write_whole`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, (json.dumps(record, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))


def run_label(path: Path, raw_info: dict[str, Any]) -> str:
    """The name a person knows a run by: its file's name; a Harbor trial's `agent/trajectory.json`
    by its trial's folder, with the trial's reward (`raw_info`: the trajectory's `info.raw`),
    so a job's trials are told apart in a folder's replay."""
    if path.name == "trajectory.json" and path.parent.name == "agent" and path.parent.parent.name:
        rewards = raw_info.get("rewards")
        shown = ", ".join(f"{key}={value}" for key, value in rewards.items()) if isinstance(rewards, dict) else ""
        return path.parent.parent.name + (f" ({shown})" if shown else "")
    return path.name


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of `path`, read as data: only a regular file (a FIFO would block, a device never
    end), and at most `limit` bytes. Raises FileNotFoundError when there is none, ValueError
    saying why it is not read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise ValueError(f"{path.name}: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path.name}: not a regular file (a FIFO, a device or a folder), not read")
        if info.st_size > limit:
            raise ValueError(f"{path.name}: {info.st_size:,} bytes, more than {limit:,}: not read")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise ValueError(f"{path.name}: more than {limit:,} bytes: not read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_in_folder(path: Path, folder: Path, limit: int) -> bytes:
    """The bytes of a file a record's folder holds (a Harbor trial's `result.json`, a reward, an
    OpenHands event, a subagent's file), read as data (`read_bounded`), and only inside `folder`
    (a symlink out of it, to `/etc/shadow`, is refused). Raises ValueError saying why not."""
    if not inside_folder(path, folder):
        raise ValueError(f"{path.name}: points outside {folder.name}/, not read")
    try:
        return read_bounded(path, limit)
    except FileNotFoundError:
        raise ValueError(f"{path.name}: no such file") from None


def inside_folder(path: Path, folder: Path) -> bool:
    """Whether `path` (its symlinks followed) lies inside `folder`."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):
        return False
