"""B6 output flood (SPEC §12): a command printing 100 MB.

Measured twice, each in a fresh process:
- the core path: swedeck's local environment runs the command with an output callback
  (as the UI streams it): memory growth, the streamed and kept sizes, and whether the
  model's copy is head+tail truncated;
- the live UI: `swedeck run --mode yolo` headless against the bench server, whose first
  answer is that command (`probes/ui_flood.py`): the longest event-loop stall and the
  whole process's memory growth from the command's start to the UI drawing its end.
"""

from __future__ import annotations

from pathlib import Path

from .probe import probe
from .result import Result, at_most, is_true
from .server_process import StreamServer
from .stats import ms

RUN = ["run", "-m", "openai/bench-model", "--mode", "yolo", "-t", "bench", "-c", "model.cost_tracking=ignore_errors",
       "-c", "environment.timeout=300"]


def run(quick: bool, workdir: Path) -> Result:
    size = 10_000_000 if quick else 100_000_000
    core = probe("output_flood", str(size), timeout=300)
    with StreamServer(workdir, [{"tokens": 20, "command": core["command"]}]) as server:
        ui = probe("ui_flood", str(size), "160", "48", *RUN, timeout=300,
                   env={"OPENAI_API_KEY": "sk-bench", "OPENAI_API_BASE": server.api_base})
    figures = {"bytes": size, "duration_ms": ms(core["duration_s"]), "streamed_chars": core["streamed_chars"],
               "output_chars": core["output_chars"], "model_chars": core["model_chars"],
               "model_got_head_and_tail": core["truncated"] and core["head_and_tail_kept"],
               "memory_growth_mb": core["growth_mb"], "peak_rss_mb": core["peak_rss_mb"],
               "ui_duration_ms": ms(ui["duration_s"]), "ui_longest_stall_ms": ms(ui["longest_stall_s"]),
               "ui_memory_growth_mb": round(ui["peak_rss_mb"] - ui["rss_before_mb"], 1),
               "ui_model_chars": ui["output_chars"], "ui_pane_lines": ui["pane_lines"],
               "ui_pane_last_line": ui["pane_last_line"][-80:]}
    notes = {"command": core["command"],
             "ui": "swedeck run headless at 160x48; from CommandStarted to the UI drawing CommandFinished; "
                   "the pane streams the first 2,000,000 characters and keeps its last 5,000 lines"}
    return Result("B6", "output flood", figures, notes=notes,
                  goal={"ui_longest_stall_ms": at_most(100), "memory_growth_mb": at_most(100),
                        "ui_memory_growth_mb": at_most(100), "model_got_head_and_tail": is_true()})
