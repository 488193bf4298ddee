"""Issue 61.14: swedeck reads a zip's directory itself (zipfile's `ZipInfo`s took 720 MB for a
`.eval` of 900,000 members). zipfile, the standard library's reader and writer, is the oracle:
every archive it writes, swedeck lists and reads as it does, ZIP64 and a prefix included."""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from conftest import swedeck_command
from support.measured import peak_of
from swedeck.core.zip_members import BadZip, Directory

_METHODS = {"stored": zipfile.ZIP_STORED, "deflate": zipfile.ZIP_DEFLATED, "bzip2": zipfile.ZIP_BZIP2}


def _written(path: Path, method: int, *, zip64: bool = False, prefix: bytes = b"", members: int = 5) -> bytes:
    with zipfile.ZipFile(path, "w", method) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"task": "t"}, "version": 2}))
        for n in range(members):
            body = json.dumps({"n": n, "text": "x" * (n * 997 % 50_000 if members < 100 else n % 7)}) * (3 if n % 2 else 1)
            with archive.open(f"samples/s{n}_epoch_{n % 3 + 1}.json", "w", force_zip64=zip64) as member:
                member.write(body.encode())
        archive.writestr("ünïcode/naïve.txt", "é")
        archive.writestr("empty", b"")
    data = prefix + path.read_bytes()
    path.write_bytes(data)
    return data


@pytest.mark.parametrize(("method", "shape"), [(method, shape) for method in sorted(_METHODS)
                                               for shape in ("plain", "zip64", "prefixed")]
                         + [("stored", "70,000 members")])
def test_every_archive_zipfile_writes_is_read_as_zipfile_reads_it(tmp_path, method, shape):
    path = tmp_path / "log.eval"
    data = _written(path, _METHODS[method], zip64=shape == "zip64", prefix=b"#!/bin/sh\nexit 0\n" * 50
                    if shape == "prefixed" else b"", members=70_000 if shape == "70,000 members" else 5)
    ours = Directory(data)
    with zipfile.ZipFile(path) as theirs:
        infos = theirs.infolist()
        assert ours.names == [info.filename for info in infos] and ours.count == len(infos)
        for info in infos[:40] + infos[-3:]:
            member = ours.member(info.filename)
            assert (member.compress_type, member.CRC, member.compress_size, member.file_size, member.header_offset) \
                == (info.compress_type, info.CRC, info.compress_size, info.file_size, info.header_offset)
            assert bytes(ours.read(info.filename)) == theirs.read(info)
    if shape == "70,000 members":  # more than the end record's 16-bit count: zipfile writes ZIP64 end records
        assert b"PK\x06\x06" in data[-200:]


def test_a_member_kept_by_name_alone_and_a_damaged_one_said_by_name(tmp_path):
    path = tmp_path / "log.eval"
    data = bytearray(_written(path, zipfile.ZIP_STORED))
    kept = Directory(bytes(data), lambda name: name.startswith("samples/"))
    assert kept.count == 8 and len(kept.names) == 5 and "header.json" not in kept
    with pytest.raises(KeyError):
        kept.member("header.json")
    name = kept.names[0]
    start = data.index(b'{"n": 0')
    data[start + 2] ^= 1  # one byte of the stored member changed: its CRC no longer matches
    with pytest.raises(BadZip, match=f"{name}: its data does not match its CRC"):
        Directory(bytes(data)).read(name)
    with pytest.raises(BadZip, match="not a zip"):
        Directory(b"PK\x03\x04" + b"\0" * 100)


def _many_members(path: Path, count: int) -> None:
    """A `.eval` of `count` stored sample members (the shape issue 61.14 opened), written by hand:
    zipfile takes minutes for a million."""
    header = json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}).encode()
    sample = json.dumps({"id": "s", "epoch": 1, "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": "done"}]}).encode()
    body, central = bytearray(), bytearray()
    for n, (name, data) in enumerate([("header.json", header)] + [(f"samples/s{n:07d}_epoch_1.json", sample)
                                                                   for n in range(count)]):
        encoded, crc = name.encode(), zlib.crc32(data)
        offset = len(body)
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, crc, len(data), len(data), len(encoded), 0)
        body += encoded + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0, crc, len(data), len(data),
                               len(encoded), 0, 0, 0, 0, 0, offset) + encoded
        del n
    entries = count + 1
    end64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, entries, entries, len(central), len(body))
    locator = struct.pack("<IIQI", 0x07064B50, 0, len(body) + len(central), 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, len(central), len(body), 0)
    path.write_bytes(bytes(body + central) + end64 + locator + end)


@pytest.mark.timeout(240)
def test_a_log_of_900000_members_opens_its_last_sample_in_bounded_memory(tmp_path):
    """Issue 61.14: `--print --step -1` of the last of 900,000 samples, within 500 MB (720 MB before)."""
    path = tmp_path / "many.eval"
    _many_members(path, 900_000)
    ran, peak_mb = peak_of([*swedeck_command(), "replay", f"{path}#900000", "--print", "--step", "-1"])
    assert ran.returncode == 0, ran.stderr
    assert "step 1/1" in ran.stdout and "done" in ran.stdout, ran.stdout[-500:]
    assert peak_mb < 500, peak_mb
