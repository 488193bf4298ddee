"""B19 huge inputs (issue 61): a run's last step from files far larger than the replay's
others, as `swedeck replay FILE --print --step -1` prints it (the whole file read: its
summary and its cost count every step), from process start, and the process's peak RSS (its own `VmHWM`):

- a swedeck `.traj.jsonl` of 2.5 million tiny steps (about 300 MB, `generate.write_tiny_steps`);
- a Claude Code session of 1 million records (about 610 MB, `generate.write_claude_code`);
- an Inspect `.eval` of 900,000 stored sample members (`generate.write_inspect_members`).

Each the median of RUNS runs (the RSS the largest). Beside the two JSONL files, the floor of
this machine: the same file's lines each decoded by msgspec alone, from process start (what
no reader of every line goes under); the ratio is the one to compare across machines. Goals
(issue 61): at most 5 s and 500 MB each.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .generate import write_claude_code, write_inspect_members, write_tiny_steps
from .probe import ROOT, ProbeFailed
from .result import Result, at_most
from .stats import ms

RUNS = 3
TINY_STEPS = 2_500_000
CLAUDE_CODE_STEPS = 333_333
"""Three records a step: a million."""
MEMBERS = 900_000

_FLOOR = """
import sys, msgspec
decode = msgspec.json.decode
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        decode(line)
"""


def _seconds(args: list[str]) -> tuple[float, str]:
    """Seconds of a fresh process running `args`, from its start to its end, and its stdout."""
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise ProbeFailed(f"{' '.join(args[-3:])} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return seconds, done.stdout


def _measured(name: str, path: Path, runs: int, floor: bool) -> dict[str, float]:
    """The last step printed (`probes/print_step.py`: the command line in a process of its own,
    which says its own peak RSS: `getrusage` of a child counts its parent's size, kept across `exec`)."""
    made = [_seconds([sys.executable, "-m", "bench.probes.print_step", str(path)]) for _ in range(runs)]
    seconds = statistics.median(run[0] for run in made)
    figures = {f"{name}_mb": round(path.stat().st_size / 1e6, 1), f"{name}_last_step_ms": ms(seconds),
               f"{name}_peak_rss_mb": max(json.loads(run[1].strip().splitlines()[-1])["peak_rss_mb"] for run in made)}
    if floor:
        under = statistics.median(_seconds([sys.executable, "-c", _FLOOR, str(path)])[0] for _ in range(runs))
        figures[f"{name}_decode_floor_ms"] = ms(under)
        figures[f"{name}_ratio_to_floor"] = round(seconds / under, 2)
    return figures


def run(quick: bool, workdir: Path) -> Result:
    scale = 20 if quick else 1
    tiny = write_tiny_steps(workdir / "tiny.traj.jsonl", TINY_STEPS // scale)
    claude = write_claude_code(workdir / "claude.jsonl", CLAUDE_CODE_STEPS // scale, 20)
    members = write_inspect_members(workdir / "members.eval", MEMBERS // scale)
    runs = 1 if quick else RUNS
    figures: dict[str, float] = {}
    for name, path, floor in (("tiny", tiny, True), ("claude_code", claude, True), ("eval", members, False)):
        figures.update(_measured(name, path, runs, floor))
        path.unlink()  # 1 GB in all: not kept past its measure
    goal = {f"{name}_{figure}": at_most(bound) for name in ("tiny", "claude_code", "eval")
            for figure, bound in (("last_step_ms", 5000), ("peak_rss_mb", 500))}
    return Result("B19", "huge inputs", figures, goal=goal,
                  notes={"how": "swedeck replay FILE --print --step -1 from process start, medians of RUNS, peak RSS "
                                "the largest; the floor: each line decoded by msgspec alone"})
