"""Writing into a batch's output folder, which is data (SPEC §13, §15): another process, or a
tampered copy, may have put symlinks where swedeck writes its files. A file is never written
through a symlink, and a folder that is a symlink is never written into: the link itself is
replaced by a file or folder of swedeck's own."""

from __future__ import annotations

import os
from pathlib import Path


def real_folder(folder: Path) -> Path:
    """`folder`, made a real folder of its own: a symlink in its place is removed (never followed)."""
    if folder.is_symlink():
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_text(path: Path, text: str) -> None:
    """`text` into `path` (0600), replacing a symlink there rather than writing through it, in a
    folder that is not a symlink; raises OSError when it cannot."""
    if path.parent.is_symlink():
        raise OSError(f"{path.parent} is a symlink: not written into")
    if path.is_symlink():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(text)
