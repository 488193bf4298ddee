"""B13 huge (SPEC §11-§12, issue 49): a Claude Code session of about 100 MB whose 400 subagent
runs are sidechains inside it, against a `.traj.jsonl` of the same size.

`swedeck replay FILE --step -1` (its main line's last step) from process start, headless at
160x48, and the process's peak RSS; the same for a `.traj.jsonl` of the same size; RUNS pairs
back to back in alternating order, medians. Goals (issue 49): the first screen at most 1.2x of
the `.traj.jsonl`'s, and peak RSS at most 300 MB.

Then (issue 63) a Claude Code 2.1.332-style session of about 400 MB with its own request
records (an `api-request-blob` and an `api-request` per call): its last step from process
start in at most 2 s, and at most 300 MB over the whole read (REQUEST_RUNS runs, medians; the
peak the largest).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from .b2_replay_open import FORMATS_OUTPUT_CHARS, _paired, _replay_ui, _sized
from .generate import write_claude_code_requests, write_claude_code_with_sidechains, write_jsonl
from .result import Result, at_most
from .stats import ms

MEGABYTES = 100
SIDECHAINS = 400
REQUESTS_MEGABYTES = 400
REQUEST_RUNS = 3


def _last_step(path: Path, runs: list[dict]) -> float:
    runs.append(_replay_ui(path, 1, ["--step", "-1"]))
    return float(runs[-1]["first_screen_s"])


def run(quick: bool, workdir: Path) -> Result:
    megabytes = 20 if quick else MEGABYTES
    small = write_claude_code_with_sidechains(workdir / "probe.jsonl", 2000, FORMATS_OUTPUT_CHARS)
    steps = max(SIDECHAINS * 2, round(2000 * megabytes * 1e6 / small.stat().st_size))
    path = write_claude_code_with_sidechains(workdir / "huge.jsonl", steps, FORMATS_OUTPUT_CHARS)
    size = path.stat().st_size
    same = _sized(write_jsonl, workdir / "same-size.traj.jsonl", size / 1e6)
    ours: list[dict] = []
    theirs: list[dict] = []
    huge, jsonl, paired = _paired(partial(_last_step, path, ours), partial(_last_step, same, theirs))
    figures = {"mb": round(size / 1e6, 1), "jsonl_mb": round(same.stat().st_size / 1e6, 1), "sidechains": SIDECHAINS,
               "main_steps": ours[0]["steps"], "last_step_ms": ms(huge), "jsonl_last_step_ms": ms(jsonl),
               "ratio": round(paired, 2), "peak_rss_mb": max(run["peak_rss_mb"] for run in ours),
               "jsonl_peak_rss_mb": max(run["peak_rss_mb"] for run in theirs),
               "steps_shown_first": ours[0].get("steps_shown_first"),
               "whole_read_ms": ms(sorted(run["whole_read_s"] for run in ours)[len(ours) // 2])
               if all("whole_read_s" in run for run in ours) else None}
    figures.update(_with_requests(workdir, 40 if quick else REQUESTS_MEGABYTES, 1 if quick else REQUEST_RUNS))
    return Result("B13", "huge Claude Code session", figures,
                  notes={"how": "swedeck replay FILE --step -1 from process start, paired with a .traj.jsonl of the "
                                "same size, medians",
                         "whole": "the main line's last steps (steps_shown_first) show from the session's end while "
                                  "the whole is read in a worker: whole_read_ms is when it is, from process start"},
                  goal={"ratio": at_most(1.2), "peak_rss_mb": at_most(300), "requests_last_step_ms": at_most(2000),
                        "requests_peak_rss_mb": at_most(300)})


def _with_requests(workdir: Path, megabytes: int, runs: int) -> dict[str, float | int]:
    """The session with its own request records: its size and steps, its last step's first
    screen (median), the whole read's end (median) and the peak RSS (the largest)."""
    small = write_claude_code_requests(workdir / "requests-probe.jsonl", 1000, FORMATS_OUTPUT_CHARS)
    steps = round(1000 * megabytes * 1e6 / small.stat().st_size)
    path = write_claude_code_requests(workdir / "requests.jsonl", steps, FORMATS_OUTPUT_CHARS)
    made = [_replay_ui(path, 1, ["--step", "-1"]) for _ in range(runs)]
    middle = len(made) // 2
    return {"requests_mb": round(path.stat().st_size / 1e6, 1), "requests_steps": made[0]["steps"],
            "requests_last_step_ms": ms(sorted(run["first_screen_s"] for run in made)[middle]),
            "requests_whole_read_ms": ms(sorted(run.get("whole_read_s", 0.0) for run in made)[middle]),
            "requests_peak_rss_mb": max(run["peak_rss_mb"] for run in made)}

