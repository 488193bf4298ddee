"""Small timing helpers. Medians and p95 because the machine is shared and noisy."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def timed(action: Callable[[], object], runs: int) -> list[float]:
    """Seconds each of `runs` calls of `action` took."""
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        out.append(time.perf_counter() - start)
    return out


def summary_ms(samples: list[float], prefix: str) -> dict[str, float]:
    """`{prefix}_median_ms`, `{prefix}_p95_ms` of samples in seconds."""
    return {f"{prefix}_median_ms": ms(statistics.median(samples)), f"{prefix}_p95_ms": ms(p95(samples))}
