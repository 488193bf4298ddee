"""B2 replay open (SPEC §12): a generated 5,000-step `.traj.jsonl` of ~50 MB.

Until the replay UI is driven here, this measures the core path it stands on
(`TrajectoryIndex`: line offsets, messages parsed on demand) and the full parse
(`load_trajectory`) beside it, against mini-swe-agent's inspector opening the same
messages as its `.traj.json` (its Textual app, headless at 160x48). Each runs in a fresh
interpreter, so peak memory is that reader's alone.
"""

from __future__ import annotations

from pathlib import Path

from .generate import jsonl_to_mini, write_jsonl
from .probe import ProbeFailed, probe
from .result import Result, at_most
from .stats import ms

SIZE = (160, 48)
UI_MISSING = ("swedeck's replay UI is not driven here yet (its first frame is in B3): "
              "the core path it reads through (TrajectoryIndex) stands in for it")


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
    notes: dict = {"swedeck_ui": UI_MISSING, "goal": "judged on the core path until the replay UI exists",
                   "times": "first/last screen: from opening the file (interpreter and imports excluded, see B3)"}
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
    figures["first_screen_ms"] = figures["index_first_screen_ms"]
    figures["last_screen_ms"] = figures["index_last_screen_ms"]
    figures["jump_ms"] = figures["index_jump_median_ms"]
    figures["peak_rss_mb"] = figures["index_peak_rss_mb"]
    return Result("B2", "replay open", figures, notes=notes,
                  goal={"first_screen_ms": at_most(500), "last_screen_ms": at_most(500), "jump_ms": at_most(30)})
