"""The file a command is about to open, read in a thread while the command's modules import.

`swedeck replay FILE` spends its first few hundred milliseconds importing Textual and its
own UI, on one core; reading a 24 MB trajectory takes 20-40 ms more, most of it the kernel
copying it into fresh memory, with the GIL released. `ReadAhead.start(path)` begins that read
at once, in a thread; the command hands the `ReadAhead` to the app, which hands it to the
loader (`load_trajectory(..., ahead=)`). `take(path, info)` waits for the read and gives its
bytes only when the file is still the one that was read (same inode, size and modification
time, before and after the read, and when the loader looks), else None and the loader reads
the file itself. Nothing here reports an error: whatever goes wrong, the loader meets it
again and says so.

An Inspect `.eval` (a zip) is mapped by the loader and read member by member; ahead, the
thread decompresses the member of its first sample (`take_member`), stored or deflated: zlib
works with the GIL released, so that too overlaps the imports (issue 49, bench B2: 50-70 ms
of a 20 MB sample's open).

Kept light (the standard library alone), so that it starts before the heavy imports.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterable
from pathlib import Path

MAX_FILE_BYTES = 2 << 30
"""Larger files are refused rather than read into memory whole (the loader's limit too)."""
MAP_BYTES = 64 << 20
"""Files this large or larger are mapped by the loader, not read (issue 49): never read ahead."""

_Key = tuple[int, int, int, int]


def key(info: os.stat_result) -> _Key:
    """What says a file is the same one, unchanged."""
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def inspect_samples(names: Iterable[str]) -> list[str]:
    """The sample members of an Inspect `.eval` among a zip's `names`, in the order its samples
    are numbered (`PATH#N`): by epoch, then by sample id (two stable sorts by one small key each:
    a tuple a name held 150 MB over a directory of 900,000 samples)."""
    samples = [name for name in names if is_sample(name)]
    samples.sort(key=_sample_id)
    samples.sort(key=_epoch)
    return samples


def is_sample(name: str) -> bool:
    """A sample's member of an Inspect `.eval` (`samples/<id>_epoch_<n>.json`)."""
    return name.startswith("samples/") and name.endswith(".json")


def _sample_id(name: str) -> str:
    return name[8:-5].rpartition("_epoch_")[0]


def _epoch(name: str) -> int:
    epoch = name[8:-5].rpartition("_epoch_")[2]
    return int(epoch) if epoch.isdigit() else 0


def _zip(path: Path) -> bool:
    """A zip (Inspect's `.eval`): mapped by the loader, read member by member."""
    try:
        with path.open("rb") as handle:
            return handle.read(4) == b"PK\x03\x04"
    except OSError:
        return False


class ReadAhead:
    """One file's bytes, read in a thread; taken once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._done: list[tuple[_Key, str, bytes | bytearray]] = []
        """What was read: the file's key, the member's name ("" for the whole file), the bytes."""
        self._thread: threading.Thread | None = None

    @classmethod
    def start(cls, path: Path) -> ReadAhead:
        """Begin reading `path` in a thread, when it is a regular file of a sane size (else
        nothing is read, and `take` gives None)."""
        ahead = cls(path)
        try:
            info = path.stat()
        except OSError:
            return ahead
        if not stat.S_ISREG(info.st_mode):
            return ahead
        if _zip(path):
            read = ahead._read_first_sample
        elif info.st_size < MAP_BYTES:
            read = ahead._read
        else:
            return ahead
        ahead._thread = threading.Thread(target=read, name="swedeck-read-ahead", daemon=True)
        ahead._thread.start()
        return ahead

    @property
    def reading(self) -> bool:
        """A read was started and its bytes are not yet taken or dropped."""
        return self._thread is not None

    def wait(self) -> None:
        """Until the read has finished (tests)."""
        if self._thread is not None:
            self._thread.join()

    def take(self, path: Path, info: os.stat_result) -> bytes | None:
        """The bytes read ahead of `path`, when the file is still as they were read (`info`: its
        `stat` now); else None, and the caller reads it. Taken once: a second take is None."""
        data = self._taken(path, info, "")
        return bytes(data) if isinstance(data, bytearray) else data  # a whole file is read as bytes: no copy

    def take_member(self, path: Path, info: os.stat_result, name: str) -> bytes | bytearray | None:
        """Member `name` of the zip `path`, decompressed ahead, on the same terms as `take`."""
        return self._taken(path, info, name)

    def _taken(self, path: Path, info: os.stat_result, name: str) -> bytes | bytearray | None:
        thread, self._thread = self._thread, None
        if thread is None or path != self.path:
            self._thread = thread if path != self.path else None
            return None
        thread.join()
        done, self._done = self._done, []
        if not done:
            return None
        read_key, read_name, data = done[0]
        return data if read_key == key(info) and read_name == name else None

    def drop(self) -> None:
        """Forget what was read (the file is read another way: a live file's index)."""
        self._thread, self._done = None, []

    def _read(self) -> None:
        try:
            with self.path.open("rb") as handle:
                before = os.fstat(handle.fileno())
                data = handle.read(MAX_FILE_BYTES + 1)
                after = os.fstat(handle.fileno())
        except OSError:
            return
        if key(before) == key(after) and len(data) == after.st_size:  # not written to while it was read
            self._done.append((key(after), "", data))

    def _read_first_sample(self) -> None:
        import mmap

        from ..zip_members import DEFLATED, STORED, Directory

        try:
            with self.path.open("rb") as handle:
                before = os.fstat(handle.fileno())
                with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                    archive = Directory(data, is_sample)
                    names = inspect_samples(archive.names)
                    if not names or archive.member(names[0]).compress_type not in (STORED, DEFLATED):
                        return  # Inspect's zstd: another library's import, not made ahead
                    member = archive.read(names[0])  # refused as the reader refuses it; its CRC checked
                after = os.fstat(handle.fileno())
        except Exception:  # noqa: BLE001 - a damaged zip: the loader meets it again and says what
            return
        if key(before) == key(after):  # read whole, to the size its entry says, or refused
            self._done.append((key(after), names[0], member))
