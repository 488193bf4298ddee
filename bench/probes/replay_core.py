"""B2's core path: what a replay screen needs from a 50 MB `.traj.jsonl`.

    python -m bench.probes.replay_core index|full PATH JUMPS

`index`: `TrajectoryIndex` (line offsets, messages parsed on demand), what the replay UI
uses. `full`: `load_trajectory` (every line parsed, steps built), for comparison.
Step k of the generated file is messages 2k and 2k+1 (after system and task).
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time

from .memory import peak_rss_mb, rss_mb

START = time.perf_counter()


def step_messages(step: int) -> list[int]:
    return [2 * step, 2 * step + 1]


def run_index(path: str, jumps: int) -> dict:
    from swedeck.core.trajectory.index import TrajectoryIndex

    baseline = rss_mb()
    began = time.perf_counter()
    index = TrajectoryIndex(path)
    opened = time.perf_counter()
    first = [index.message(i) for i in range(4)]  # system, task, step 1
    first_screen = time.perf_counter()
    steps = (len(index) - 2) // 2
    last = [index.message(i) for i in step_messages(steps)]
    last_screen = time.perf_counter()
    rng = random.Random(7)
    samples = []
    for step in rng.sample(range(1, steps + 1), min(jumps, steps)):
        t = time.perf_counter()
        shown = [index.message(i) for i in step_messages(step)]
        samples.append(time.perf_counter() - t)
    assert first[2].extra.step == 1 and last[0].extra.step == steps and shown
    return {"messages": len(index), "steps": steps, "open_s": opened - began,
            "first_screen_s": first_screen - began, "last_screen_s": (opened - began) + (last_screen - first_screen),
            "jump_median_s": statistics.median(samples), "jump_max_s": max(samples),
            "baseline_rss_mb": baseline, "peak_rss_mb": peak_rss_mb()}


def run_full(path: str, jumps: int) -> dict:
    from swedeck.core.trajectory.loader import load_trajectory

    baseline = rss_mb()
    began = time.perf_counter()
    trajectory = load_trajectory(path)
    loaded = time.perf_counter()
    rng = random.Random(7)
    samples = []
    for number in rng.sample(range(1, len(trajectory.steps) + 1), min(jumps, len(trajectory.steps))):
        t = time.perf_counter()
        trajectory.step(number)
        samples.append(time.perf_counter() - t)
    return {"messages": len(trajectory.messages), "steps": len(trajectory.steps), "load_s": loaded - began,
            "jump_median_s": statistics.median(samples), "baseline_rss_mb": baseline, "peak_rss_mb": peak_rss_mb()}


MODES = {"index": run_index, "full": run_full}

if __name__ == "__main__":
    mode, path, jumps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print(json.dumps(MODES[mode](path, jumps)))
