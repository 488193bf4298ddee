"""B9 diff (SPEC §16, issue 29): `swedeck diff A B` on two 500-step runs against `swedeck
replay A`, both from process start to their first frame (headless at 160x48, the median of
RUNS, in one run): `diff_over_replay_ms` is the difference (goal: at most 1 s). A is a
`.traj.jsonl` and B the same content as a mini-swe-agent v2 file, so the diff reads both
formats whole and aligns 500 steps; the replay indexes A without parsing it.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from .generate import write_jsonl, write_mini_v2
from .probe import probe
from .result import Result, at_most
from .stats import ms

RUNS = 3
SIZE = ("160", "48")


def _first_frame(*args: str) -> float:
    return float(probe("first_frame", repr(time.time()), *SIZE, *args, timeout=120)["first_frame_s"])


def run(quick: bool, workdir: Path) -> Result:
    steps = 100 if quick else 500
    a = write_jsonl(workdir / "a.traj.jsonl", steps, 1400)
    b = write_mini_v2(workdir / "b.traj.json", steps, 1400)
    diff = statistics.median(_first_frame("diff", str(a), str(b)) for _ in range(RUNS))
    replay = statistics.median(_first_frame("replay", str(a)) for _ in range(RUNS))
    figures = {"steps": steps, "diff_first_frame_ms": ms(diff), "replay_first_frame_ms": ms(replay),
               "diff_over_replay_ms": ms(diff - replay)}
    notes = {"diff": f"A .traj.jsonl and B mini-swe-agent v2, {steps} steps each, same content; median of {RUNS}"}
    return Result("B9", "diff", figures, notes=notes, goal={"diff_over_replay_ms": at_most(1000)})
