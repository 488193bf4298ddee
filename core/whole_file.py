"""Writing a file whole or not at all, the one way swedeck does it: bytes to a temporary file
beside it, fsynced, renamed into place, and the folder fsynced, so a reader (or a crash)
sees the old file or the whole new one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_whole(path: Path, data: bytes | Iterable[bytes], *, shared: bool = False) -> int:
    """`path` holds `data` afterwards, or what it held before: a reader never sees a part. The
    temporary file is mode 0600 (`tempfile.mkstemp`), so the result is the person's own only,
    unless `shared` (an export, made to be shared: the mode a new file gets, 0644 under the
    usual umask); it is removed when the write fails (or making its chunks does), and the error
    raised. `data`: the bytes, or chunks of them written as they are made. Returns the bytes written."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    size = 0
    if shared:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(handle, 0o666 & ~umask)
    try:
        with os.fdopen(handle, "wb") as stream:
            for chunk in [data] if isinstance(data, bytes | bytearray) else data:
                stream.write(chunk)
                size += len(chunk)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)
    return size


def _fsync_folder(folder: Path) -> None:
    """The rename itself made durable; some filesystems refuse fsync on folders (the rename is still done)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
