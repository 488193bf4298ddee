"""A zip's directory and members, read from its bytes (an Inspect `.eval`).

`zipfile` makes a `ZipInfo` of about 800 bytes for every member when it opens an archive: a
`.eval` of 900,000 members took 720 MB before a sample was read (issue 61.14). `Directory`
reads the central directory itself (ZIP64 too) and keeps, for the members a caller names, the
name and where its entry is (8 bytes); an entry is parsed again when its member is read.
`Directory.read` decompresses a member (stored, deflate, bzip2, and Inspect's zstd) into one
buffer of the size its entry says, a megabyte at a time, checking its CRC as `zipfile` does,
and refuses before reading a member whose stated size is more than a member may hold or more
than any compression reaches.

Standard library only (zstandard is imported for a zstd member): the replay's read-ahead uses
this while the UI imports.
"""

from __future__ import annotations

import mmap
import struct
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

MAX_MEMBER_BYTES = 512 << 20
"""One member (a sample, the header) decompresses to at most this many bytes: a zip or zstd bomb
that claims, or makes, more is refused rather than decompressed."""
MAX_MEMBERS = 1_000_000
"""More entries than this in a directory is not a log (a zip built to exhaust the reader)."""
MAX_RATIO = 1100
"""More than deflate can reach (about 1,032 to 1) and than zstd reaches on a real log's JSON
(bzip2's run lengths reach far more: a bzip2 member, which Inspect never writes, is bounded by
`MAX_MEMBER_BYTES` alone)."""

STORED, DEFLATED, BZIP2, ZSTD = 0, 8, 12, 93
"""The compression methods read (93: the zstd Inspect writes its `.eval` members with)."""
_CHUNK = 1 << 20

_END = struct.Struct("<4s4H2LH")
"""The end of central directory record: signature, disk numbers, entries here and in all, the
directory's size and offset, the comment's length."""
_END64_LOCATOR = struct.Struct("<4sLQL")
"""The ZIP64 end record's locator, just before the end record (zipfile reads the record before it too)."""
_END64 = struct.Struct("<4sQ2H2L4Q")
_ENTRY = struct.Struct("<4s4B4HL2L5H2L")
"""A central directory entry: signature, versions, flags, method, time, date, CRC, sizes,
the lengths of its name, extra field and comment, disk, attributes, its local header's offset."""
_LOCAL = struct.Struct("<4s2B4HL2L2H")


class BadZip(ValueError):
    """The bytes are not a zip, or its directory or a member is damaged; says which."""


class Member(NamedTuple):
    """One member as its directory entry says (`zipfile.ZipInfo`'s names for the same fields)."""

    filename: str
    compress_type: int
    flag_bits: int
    CRC: int
    compress_size: int
    file_size: int
    header_offset: int


class Directory:
    """The members of the zip `data` (bytes or a mapped file) whose names `keep` accepts, in
    the directory's order; `count` is how many members it holds in all."""

    def __init__(self, data: bytes | mmap.mmap, keep: Callable[[str], bool] = lambda name: True) -> None:
        self.data = data
        self.names: list[str] = []
        self._entries = array("Q")
        """Where each kept name's directory entry starts, in `data`."""
        self.count = 0
        start, end, self._shift = _directory(data)
        at = start
        unpack = _ENTRY.unpack_from
        names, entries = self.names, self._entries
        while at + _ENTRY.size <= end:  # the directory's own bytes say how many entries it holds
            if data[at:at + 4] != b"PK\x01\x02":
                raise BadZip(f"damaged directory entry at byte {at:,}")
            fields = unpack(data, at)
            flags, length, extra, comment = fields[5], fields[12], fields[13], fields[14]
            raw = data[at + 46:at + 46 + length]
            name = raw.decode("utf-8" if flags & 0x800 else "cp437", "replace")
            if keep(name):
                names.append(name)
                entries.append(at)
            self.count += 1
            if self.count > MAX_MEMBERS:
                raise BadZip(f"more than {MAX_MEMBERS:,} members in the archive: more than a log holds")
            at += 46 + length + extra + comment
        self._index: dict[str, int] | None = None

    def __contains__(self, name: str) -> bool:
        return name in self._positions()

    def _positions(self) -> dict[str, int]:
        if self._index is None:  # made when first asked: a caller that only lists names never pays for it
            self._index = {name: n for n, name in enumerate(self.names)}
        return self._index

    def member(self, name: str) -> Member:
        """The entry of member `name` (KeyError when the directory has none kept by that name)."""
        return self._parse(self._entries[self._positions()[name]], name)

    def _parse(self, at: int, name: str) -> Member:
        fields = _ENTRY.unpack_from(self.data, at)
        flags, method, crc, compressed, size = fields[5], fields[6], fields[9], fields[10], fields[11]
        length, extra, offset = fields[12], fields[13], fields[18]
        if 0xFFFFFFFF in (compressed, size, offset):  # ZIP64: the true values in the extra field
            size, compressed, offset = _zip64(self.data[at + 46 + length:at + 46 + length + extra],
                                              size, compressed, offset, name)
        return Member(name, method, flags, crc, compressed, size, offset + self._shift)

    def read(self, name: str) -> bytearray:
        """Member `name`'s bytes, decompressed into one buffer of the size its entry says (at most
        `MAX_MEMBER_BYTES`), its CRC checked (not a zstd member's: its frame checks itself)."""
        member = self.member(name)
        refused = too_large(member)
        if refused is not None:  # by what it says, before a buffer of that size is made
            raise BadZip(refused)
        if member.flag_bits & 0x1:
            raise BadZip(f"{name}: encrypted")
        chunks = _decompressed(member, self._raw(member))
        data = filled(chunks, member.file_size, name)
        if member.compress_type != ZSTD and zlib.crc32(data) != member.CRC:
            raise BadZip(f"{name}: its data does not match its CRC")
        return data

    def _raw(self, member: Member) -> Iterator[bytes]:
        """A member's compressed bytes, a megabyte at a time."""
        data, at = self.data, member.header_offset
        if at < 0 or data[at:at + 4] != b"PK\x03\x04":
            raise BadZip(f"{member.filename}: damaged zip entry")
        fields = _LOCAL.unpack_from(data, at)
        start = at + _LOCAL.size + fields[10] + fields[11]
        end = min(start + member.compress_size, len(data))  # what is missing is found short by `filled`
        if member.compress_type == STORED:
            end = min(end, start + member.file_size)  # read to the size it decompresses to, as zipfile does
        return (data[at:min(at + _CHUNK, end)] for at in range(start, end, _CHUNK))


def _directory(data: bytes | mmap.mmap) -> tuple[int, int, int]:
    """Where the central directory starts and ends in `data`, and how far every offset it gives
    is shifted (bytes before the zip, as a self-extracting archive has)."""
    tail = max(0, len(data) - (_END.size + 0xFFFF))
    at = data.rfind(b"PK\x05\x06", tail)
    if at < 0 or at + _END.size > len(data):
        raise BadZip("not a zip: no end of central directory")
    fields = _END.unpack_from(data, at)
    size, offset, before = fields[5], fields[6], at
    if at >= _END64_LOCATOR.size and data[at - _END64_LOCATOR.size:at - _END64_LOCATOR.size + 4] == b"PK\x06\x07":
        record = at - _END64_LOCATOR.size - _END64.size
        if record < 0 or data[record:record + 4] != b"PK\x06\x06":
            raise BadZip("damaged ZIP64 end of central directory")
        size, offset = _END64.unpack_from(data, record)[8:10]
        before = record
    shift = before - size - offset
    if shift < 0 or size > before:
        raise BadZip(f"the directory claims {size:,} bytes at {offset:,}: past its own end")
    start = offset + shift
    return start, start + size, shift


def _zip64(extra: bytes, size: int, compressed: int, offset: int, name: str) -> tuple[int, int, int]:
    at = 0
    while at + 4 <= len(extra):
        kind, length = struct.unpack_from("<2H", extra, at)
        if kind == 0x0001:
            values = iter(struct.unpack_from(f"<{length // 8}Q", extra, at + 4))
            try:
                size = next(values) if size == 0xFFFFFFFF else size
                compressed = next(values) if compressed == 0xFFFFFFFF else compressed
                offset = next(values) if offset == 0xFFFFFFFF else offset
            except StopIteration:
                raise BadZip(f"{name}: damaged ZIP64 extra field") from None
            return size, compressed, offset
        at += 4 + length
    raise BadZip(f"{name}: sizes past 4 GB without a ZIP64 extra field")


def too_large(member: Member) -> str | None:
    """Why a member's stated size is refused before reading: more than a member may hold, or
    more than its data can be (a 1.5 KB entry claiming 511 MB); None when it can be read."""
    if member.file_size > MAX_MEMBER_BYTES:
        return f"{member.filename}: {member.file_size:,} bytes once decompressed: more than {MAX_MEMBER_BYTES:,}"
    if member.compress_type == STORED and member.file_size > member.compress_size:
        return f"{member.filename}: stored, yet {member.file_size:,} bytes from {member.compress_size:,}"
    if member.compress_type != BZIP2 and member.file_size > member.compress_size * MAX_RATIO + 4096:
        return (f"{member.filename}: says {member.file_size:,} bytes from {member.compress_size:,} compressed: "
                "no compression reaches that")
    return None


def _decompressed(member: Member, raw: Iterator[bytes]) -> Iterator[bytes]:
    """The member's bytes, a megabyte at most at a time whatever its data makes (a bomb is
    never inflated whole: `filled` stops past the size the entry says)."""
    method = member.compress_type
    if method == STORED:
        return raw
    if method == DEFLATED:
        return _inflated(member, raw)
    if method == BZIP2:
        return _bunzipped(member, raw)
    if method == ZSTD:
        return _zstd(member, raw)
    raise BadZip(f"{member.filename}: compression method {method} (read: stored, deflate, bzip2, zstd)")


def _inflated(member: Member, raw: Iterator[bytes]) -> Iterator[bytes]:
    engine = zlib.decompressobj(-15)
    try:
        for chunk in raw:
            yield engine.decompress(chunk, _CHUNK)
            while engine.unconsumed_tail:
                yield engine.decompress(engine.unconsumed_tail, _CHUNK)
        yield engine.flush()
    except zlib.error as error:
        raise BadZip(f"{member.filename}: damaged data ({error})") from None


def _bunzipped(member: Member, raw: Iterator[bytes]) -> Iterator[bytes]:
    import bz2

    engine = bz2.BZ2Decompressor()
    try:
        for chunk in raw:
            yield engine.decompress(chunk, _CHUNK)
            while not engine.eof and not engine.needs_input:
                yield engine.decompress(b"", _CHUNK)
            if engine.eof:
                return
    except (OSError, EOFError) as error:
        raise BadZip(f"{member.filename}: damaged data ({error})") from None


def _zstd(member: Member, raw: Iterator[bytes]) -> Iterator[bytes]:
    import io

    import zstandard  # only for these logs

    compressed = b"".join(raw)
    # streamed, so the frame's own claimed size (a bomb's 3 GB) is never allocated up front
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(compressed)) as reader:
            yield from iter(lambda: reader.read(_CHUNK), b"")
    except zstandard.ZstdError as error:
        raise BadZip(f"{member.filename}: damaged zstd data ({error})") from None


def filled(chunks: Iterable[bytes], size: int, name: str) -> bytearray:
    """A member's bytes, written into one buffer of the size its entry says as they are
    decompressed (joining the chunks held the member twice over: 2 x 127 MB for one sample);
    BadZip when they come to more or less than that."""
    buffer, at = bytearray(size), 0
    for chunk in chunks:
        if at + len(chunk) > size:
            raise BadZip(f"{name}: decompresses past the {size:,} bytes its entry says")
        buffer[at:at + len(chunk)] = chunk
        at += len(chunk)
    if at < size:
        raise BadZip(f"{name}: {at:,} bytes where its entry says {size:,}")
    return buffer
