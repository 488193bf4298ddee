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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zipfile import ZipInfo

MAX_FILE_BYTES = 2 << 30
"""Larger files are refused rather than read into memory whole (the loader's limit too)."""
MAP_BYTES = 64 << 20
"""Files this large or larger are mapped by the loader, not read (issue 49): never read ahead."""

MAX_MEMBER_BYTES = 512 << 20
"""One member of an Inspect `.eval` (a sample, the header) decompresses to at most this many
bytes: a zip or zstd bomb that claims, or makes, more is refused rather than decompressed (the
reader's limit, and the read-ahead's)."""

_Key = tuple[int, int, int, int]


def key(info: os.stat_result) -> _Key:
    """What says a file is the same one, unchanged."""
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def inspect_samples(names: Iterable[str]) -> list[str]:
    """The sample members of an Inspect `.eval` among a zip's `names`, in the order its samples
    are numbered (`PATH#N`): by epoch, then by sample id."""
    return sorted((name for name in names if name.startswith("samples/") and name.endswith(".json")),
                  key=_sample_order)


def _sample_order(name: str) -> tuple[int, str]:
    stem = name.removeprefix("samples/").removesuffix(".json")
    sample, _, epoch = stem.rpartition("_epoch_")
    return (int(epoch) if epoch.isdigit() else 0, sample)


_ZIP_STORED = 0
"""zipfile's ZIP_STORED (zipfile is imported in the reading thread, not on the way to the first frame)."""
MAX_RATIO = 1100
"""More than deflate can reach (about 1,032 to 1) and than zstd reaches on a real log's JSON."""


def implausible(member: ZipInfo) -> str | None:
    """Why a zip member's stated size cannot be its data's (a 1.5 KB entry claiming 511 MB), so
    that no buffer of that size is made before reading; None when it can be."""
    if member.compress_type == _ZIP_STORED and member.file_size > member.compress_size:
        return f"{member.filename}: stored, yet {member.file_size:,} bytes from {member.compress_size:,}"
    if member.file_size > member.compress_size * MAX_RATIO + 4096:
        return (f"{member.filename}: says {member.file_size:,} bytes from {member.compress_size:,} compressed: "
                "no compression reaches that")
    return None


def filled(chunks: Iterable[bytes], size: int, name: str) -> bytearray:
    """A zip member's bytes, written into one buffer of the size its entry says as they are
    decompressed (joining the chunks held the member twice over: 2 x 127 MB for one sample);
    ValueError when they come to more or less than that."""
    buffer, at = bytearray(size), 0
    for chunk in chunks:
        if at + len(chunk) > size:
            raise ValueError(f"{name}: decompresses past the {size:,} bytes its entry says")
        buffer[at:at + len(chunk)] = chunk
        at += len(chunk)
    if at < size:
        raise ValueError(f"{name}: {at:,} bytes where its entry says {size:,}")
    return buffer


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
        import zipfile  # here, in the thread: not on the way to the first frame

        try:
            with self.path.open("rb") as handle:
                before = os.fstat(handle.fileno())
                with zipfile.ZipFile(handle) as archive:
                    names = inspect_samples(archive.namelist())
                    if not names:
                        return
                    member = archive.getinfo(names[0])
                    if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) \
                            or member.file_size > MAX_MEMBER_BYTES or implausible(member):
                        return  # Inspect's zstd (another library), or refused by the reader
                    with archive.open(member) as stream:  # its CRC checked; a MB at a time, into one buffer
                        data = filled(iter(lambda: stream.read(1 << 20), b""), member.file_size, member.filename)
                after = os.fstat(handle.fileno())
        except Exception:  # noqa: BLE001 - a damaged zip: the loader meets it again and says what
            return
        if key(before) == key(after):  # `filled` gave the size the entry says, or raised
            self._done.append((key(after), names[0], data))
