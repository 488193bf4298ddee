"""Writing a file whole or not at all: bytes to a temporary file beside it, renamed into place."""

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
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
