"""B2 replay open (SPEC §12): a generated 5,000-step `.traj.jsonl` of ~50 MB.

Measured, each in a fresh interpreter (so peak memory is that reader's alone):
- swedeck's replay UI (`probes/replay_ui.py`): `swedeck replay FILE` and `--step -1`
  headless at 160x48, the first frame from process start, then random jumps, each from
  `go(step)` to the end of the frame that shows it; these figures carry the goals;
- the core path it stands on (`TrajectoryIndex`: line offsets, messages parsed on
  demand) and the full parse (`load_trajectory`) beside it;
- mini-swe-agent's inspector opening the same messages as its `.traj.json` (its Textual
  app, headless at 160x48).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from .generate import jsonl_to_mini, write_jsonl
from .probe import ProbeFailed, probe
from .result import Result, at_most
from .stats import ms

SIZE = (160, 48)
UI_NOTE = ("swedeck replay FILE [--step -1] headless at 160x48: first frame since the process started "
           "(interpreter and imports included; B3 has them alone); random jumps, then moves to the next step, "
           "each from go(step) to the end of the frame that shows it (Textual starts a frame up to 1/60 s "
           "after the change)")


def _ms_figures(prefix: str, data: dict) -> dict:
    """A probe's figures under `prefix`, seconds (`*_s`) turned into milliseconds (`*_ms`)."""
    out = {}
    for key, value in data.items():
        if key.endswith("_s"):
            out[f"{prefix}_{key[:-2]}_ms"] = ms(value)
        else:
            out[f"{prefix}_{key}"] = value
    return out


def run(quick: bool, workdir: Path) -> Result:
    steps, mean_output = (500, 9000) if quick else (5000, 9000)
    jumps = 10 if quick else 30
    live = write_jsonl(workdir / "bench.traj.jsonl", steps, mean_output)
    figures: dict = {"steps": steps, "file_mb": round(live.stat().st_size / 1e6, 1)}
    notes: dict = {"swedeck_ui": UI_NOTE,
                   "core": "index_* and full_*: from opening the file (interpreter and imports excluded)"}
    first = _replay_ui(live, jumps, [])
    last = _replay_ui(live, jumps, ["--step", "-1"])
    figures.update({"ui_first_screen_ms": ms(first["first_screen_s"]), "ui_last_screen_ms": ms(last["first_screen_s"]),
                    "ui_last_screen_step": last["shown_step"],
                    "ui_jump_median_ms": ms(statistics.median([first["jump_median_s"], last["jump_median_s"]])),
                    "ui_jump_max_ms": ms(max(first["jump_max_s"], last["jump_max_s"])),
                    "ui_next_step_median_ms": ms(statistics.median([first["next_median_s"], last["next_median_s"]])),
                    "ui_peak_rss_mb": max(first["peak_rss_mb"], last["peak_rss_mb"])})
    figures.update(_ms_figures("index", probe("replay_core", "index", str(live), str(jumps * 10))))
    figures.update(_ms_figures("full", probe("replay_core", "full", str(live), str(jumps * 10))))
    try:
        import minisweagent  # noqa: F401
    except ImportError:
        notes["mini"] = "mini-swe-agent is not installed (pip install '.[bench]')"
    else:
        mini = jsonl_to_mini(live, workdir / "bench.traj.json")
        try:
            figures.update(_ms_figures("mini", probe("replay_mini", str(mini), str(jumps), *map(str, SIZE))))
        except ProbeFailed as error:
            notes["mini"] = str(error)
        notes["mini_times"] = ("mini-swe-agent's TrajectoryInspector run headless with Textual's Pilot; "
                               "`mini_pilot_noop_ms` is what a key press costs the Pilot by itself")
    return Result("B2", "replay open", figures, notes=notes,
                  goal={"ui_first_screen_ms": at_most(500), "ui_last_screen_ms": at_most(500),
                        "ui_jump_median_ms": at_most(30)})


def _replay_ui(path: Path, jumps: int, options: list[str]) -> dict:
    return probe("replay_ui", repr(time.time()), *map(str, SIZE), str(jumps), str(path), *options, timeout=300)
