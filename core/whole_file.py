"""Writing a file whole or not at all, the one way swedeck does it: bytes to a temporary file
beside it, fsynced, renamed into place, and the folder fsynced, so a reader (or a crash)
sees the old file or the whole new one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_whole(path: Path, data: bytes) -> None:
    """`path` holds `data` afterwards, or what it held before: a reader never sees a part. The
    temporary file is mode 0600 (`tempfile.mkstemp`), so the result is the person's own only;
    it is removed when the write fails, and the error raised."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


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
