"""The file a command is about to open, read in a thread while the command's modules import.

`swedeck replay FILE` spends its first few hundred milliseconds importing Textual and its
own UI, on one core; reading a 24 MB trajectory takes 20-40 ms more, most of it the kernel
copying it into fresh memory, with the GIL released. `start(path)` begins that read at once,
in a thread; the loader's `take(path, info)` waits for it and uses its bytes only when the
file is still the one that was read (same inode, size and modification time, before and
after the read, and when the loader looks), else it reads the file itself. Nothing here
reports an error: whatever goes wrong, the loader meets it again and says so.

Kept light (the standard library alone), so that it starts before the heavy imports.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

MAX_FILE_BYTES = 2 << 30
"""Larger files are refused rather than read into memory whole (the loader's limit too)."""

_Key = tuple[int, int, int, int]
_reads: dict[Path, tuple[threading.Thread, list[tuple[_Key, bytes]]]] = {}
_lock = threading.Lock()


def key(info: os.stat_result) -> _Key:
    """What says a file is the same one, unchanged."""
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def start(path: Path) -> None:
    """Begin reading `path` in a thread, when it is a regular file of a sane size."""
    try:
        info = path.stat()
    except OSError:
        return
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
        return
    done: list[tuple[_Key, bytes]] = []
    thread = threading.Thread(target=_read, args=(path, done), name="swedeck-read-ahead", daemon=True)
    with _lock:
        _reads[path] = (thread, done)
    thread.start()


def take(path: Path, info: os.stat_result) -> bytes | None:
    """The bytes read ahead of `path`, when the file is still as they were read (`info`: its
    `stat` now); else None, and the caller reads it."""
    with _lock:
        entry = _reads.pop(path, None)
    if entry is None:
        return None
    thread, done = entry
    thread.join()
    if not done:
        return None
    read_key, data = done[0]
    return data if read_key == key(info) else None


def drop(path: Path) -> None:
    """Forget what was read ahead of `path` (it is read another way: a live file's index)."""
    with _lock:
        _reads.pop(path, None)


def _read(path: Path, done: list[tuple[_Key, bytes]]) -> None:
    try:
        with path.open("rb") as handle:
            before = os.fstat(handle.fileno())
            data = handle.read(MAX_FILE_BYTES + 1)
            after = os.fstat(handle.fileno())
    except OSError:
        return
    if key(before) == key(after) and len(data) == after.st_size:  # not written to while it was read
        done.append((key(after), data))
