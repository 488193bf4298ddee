"""Measuring a command's own peak memory, and hand-made files that lie (issues 44 and 49)."""

from __future__ import annotations

import struct
import subprocess
import sys

MEASURED = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120)\n"
    "sys.stdout.write(done.stdout); sys.stderr.write(done.stderr)\n"
    "sys.stderr.write(f'PEAK_KB {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n')\n"
    "sys.exit(done.returncode)\n")


def peak_of(command: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """Runs `command` under a fresh parent that reports the command's own peak memory (MB)."""
    ran = subprocess.run([sys.executable, "-c", MEASURED, *command], capture_output=True, text=True, timeout=150)
    lines = ran.stderr.splitlines()
    peak = next(float(line.split()[1]) for line in reversed(lines) if line.startswith("PEAK_KB "))
    ran.stderr = "".join(line + "\n" for line in lines if not line.startswith("PEAK_KB "))
    return ran, peak / 1024


def raw_zip(entries: list[tuple[str, int, bytes, int, int]]) -> bytes:
    """A zip archive written by hand: each entry (name, method, its compressed bytes, the size it
    claims once decompressed, its CRC) exactly as given, so an entry can lie."""
    body, central = b"", b""
    for name, method, data, claimed, crc in entries:
        encoded = name.encode()
        offset = len(body)
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(data), claimed,
                            len(encoded), 0) + encoded + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, crc, len(data), claimed,
                               len(encoded), 0, 0, 0, 0, 0, offset) + encoded
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(body), 0)
    return body + central + end
