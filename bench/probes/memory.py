"""Resident memory of this process: now, and its peak.

The peak comes from `/proc/self/status` (`VmHWM`, this program's own high-water mark) where
there is one. `getrusage`'s `ru_maxrss` is not used on Linux: it survives `execve`, so a
probe started by a large bench process reported the parent's size as its own peak (B6 read
170 MB of "growth" after B2 had loaded 50 MB in the parent; alone it was under 1 MB).
"""

from __future__ import annotations

import os
import resource
import sys


def peak_rss_mb() -> float:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)  # kB
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return round(peak / (1 << 20 if sys.platform == "darwin" else 1 << 10), 1)


def rss_mb() -> float:
    """Current resident memory (Linux /proc; the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
    except OSError:
        return peak_rss_mb()
    return round(pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20), 1)
