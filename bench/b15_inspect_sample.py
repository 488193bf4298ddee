"""B15 one huge Inspect sample (SPEC §11-§12, issue 49): an Inspect `.eval` whose one sample is
127 MB once decompressed (18,786 steps: its messages, a model and a tool event per step, and
the message pool the model events' input ranges point into).

`swedeck replay LOG --step -1` from process start, headless at 160x48, and the process's peak
RSS, median of 3. Goals (issue 49): the first screen within 2 s, peak RSS at most 400 MB.
"""

from __future__ import annotations

from pathlib import Path
from statistics import median

from .b2_replay_open import FORMATS_OUTPUT_CHARS, _content_bytes, _replay_ui
from .generate import write_inspect_eval
from .result import Result, at_most
from .stats import ms

MEGABYTES = 127


def run(quick: bool, workdir: Path) -> Result:
    megabytes = 20 if quick else MEGABYTES
    probe = write_inspect_eval(workdir / "probe.eval", 500, FORMATS_OUTPUT_CHARS)
    steps = round(500 * megabytes * 1e6 / _content_bytes(probe))
    path = write_inspect_eval(workdir / "sample.eval", steps, FORMATS_OUTPUT_CHARS)
    runs = [_replay_ui(path, 1, ["--step", "-1"]) for _ in range(3)]
    figures = {"sample_mb": round(_content_bytes(path) / 1e6, 1), "file_mb": round(path.stat().st_size / 1e6, 1),
               "steps": runs[0]["steps"], "last_step_ms": ms(median(run["first_screen_s"] for run in runs)),
               "peak_rss_mb": max(run["peak_rss_mb"] for run in runs)}
    return Result("B15", "one huge Inspect sample", figures,
                  notes={"how": "swedeck replay LOG --step -1 from process start, median of 3"},
                  goal={"last_step_ms": at_most(2000), "peak_rss_mb": at_most(400)})
