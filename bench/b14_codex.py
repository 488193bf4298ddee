"""B14 huge rollout (SPEC §11-§12, issue 49): a Codex rollout of about 2 GB.

`swedeck replay FILE --step -1` (the last step) from process start, headless at 160x48, and the
process's peak RSS, against a `.traj.jsonl` of 100 MB as the yardstick of the machine's speed
(a 2 GB `.traj.jsonl` is not read lazily either: no like-for-like exists). Goals (issue 49): the
first screen within 2 s, peak RSS at most 500 MB.
"""

from __future__ import annotations

from pathlib import Path
from statistics import median

from .b2_replay_open import FORMATS_OUTPUT_CHARS, _replay_ui, _sized
from .generate import write_codex, write_jsonl
from .result import Result, at_most
from .stats import ms

MEGABYTES = 2000
STEPS_PER_MB = 345
"""Steps of `write_codex` per MB of rollout (40,000 steps make 116 MB)."""


def run(quick: bool, workdir: Path) -> Result:
    megabytes = 200 if quick else MEGABYTES
    path = write_codex(workdir / "rollout.jsonl", round(STEPS_PER_MB * megabytes), FORMATS_OUTPUT_CHARS)
    yardstick = _sized(write_jsonl, workdir / "yardstick.traj.jsonl", 100)
    runs = [_replay_ui(path, 1, ["--step", "-1"]) for _ in range(3)]
    reference = [_replay_ui(yardstick, 1, ["--step", "-1"]) for _ in range(3)]
    first = median([run["first_screen_s"] for run in runs])
    whole = [run["whole_read_s"] for run in runs if "whole_read_s" in run]
    figures = {"mb": round(path.stat().st_size / 1e6, 1), "steps": runs[0]["steps"], "last_step_ms": ms(first),
               "steps_shown_first": runs[0]["steps_shown_first"],
               "whole_read_ms": ms(median(whole)) if whole else None,
               "peak_rss_mb": max(run["peak_rss_mb"] for run in runs),
               "jsonl_100mb_last_step_ms": ms(median([run["first_screen_s"] for run in reference]))}
    return Result("B14", "huge Codex rollout", figures,
                  notes={"how": "swedeck replay FILE --step -1 from process start, median of 3; a 100 MB .traj.jsonl "
                                "beside it as the machine's yardstick",
                         "whole": "the last steps (steps_shown_first) show from the rollout's end while the whole is "
                                  "read in a worker: whole_read_ms is when it is, from process start"},
                  goal={"last_step_ms": at_most(2000), "peak_rss_mb": at_most(500)})
