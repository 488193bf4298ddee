"""B2's comparison: mini-swe-agent's inspector (a Textual app) opening the same content.

    python -m bench.probes.replay_mini PATH JUMPS WIDTH HEIGHT

Runs its `TrajectoryInspector` headless and times what a person waits for: the app built
(it parses the whole file in its constructor) and mounted with step 1 shown, `$` (last
step), and `right` (next step).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from .memory import peak_rss_mb, rss_mb


async def measure(path: Path, jumps: int, size: tuple[int, int]) -> dict:
    from minisweagent.run.utilities.inspector import TrajectoryInspector

    baseline = rss_mb()
    began = time.perf_counter()
    app = TrajectoryInspector([path])
    built = time.perf_counter()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        first_screen = time.perf_counter()
        await pilot.press("$")
        await pilot.pause()
        last_screen = time.perf_counter()
        await pilot.press("0")
        await pilot.pause()
        samples = []
        for _ in range(jumps):
            t = time.perf_counter()
            await pilot.press("right")
            await pilot.pause()
            samples.append(time.perf_counter() - t)
        steps = app.n_steps
        t = time.perf_counter()
        await pilot.press("f12")  # unbound: what pressing and waiting costs by itself
        await pilot.pause()
        noop = time.perf_counter() - t
    return {"steps": steps, "load_s": built - began, "first_screen_s": first_screen - began,
            "last_screen_s": (first_screen - began) + (last_screen - first_screen),
            "jump_median_s": statistics.median(samples), "jump_max_s": max(samples), "pilot_noop_s": noop,
            "baseline_rss_mb": baseline, "peak_rss_mb": peak_rss_mb()}


if __name__ == "__main__":
    path, jumps, width, height = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(asyncio.run(measure(path, jumps, (width, height)))))
