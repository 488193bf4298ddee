"""Peak resident memory of this process."""

from __future__ import annotations

import resource
import sys


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return round(peak / (1 << 20 if sys.platform == "darwin" else 1 << 10), 1)


def rss_mb() -> float:
    """Current resident memory (Linux /proc; the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
    except OSError:
        return peak_rss_mb()
    import os
    return round(pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20), 1)
