"""B2 replay open (SPEC §12): a generated 5,000-step `.traj.jsonl` of ~50 MB.

Measured, each in a fresh interpreter (so peak memory is that reader's alone):
- swedeck's replay UI (`probes/replay_ui.py`): `swedeck replay FILE` and `--step -1`
  headless at 160x48, the first frame from process start, then random jumps, each from
  `go(step)` to the end of the frame that shows it; these figures carry the goals;
- the core path it stands on (`TrajectoryIndex`: line offsets, messages parsed on
  demand) and the full parse (`load_trajectory`) beside it;
- mini-swe-agent's inspector opening the same messages as its `.traj.json` (its Textual
  app, headless at 160x48);
- other tools' files (issue 13): for each format swedeck reads (mini-swe-agent v2
  `.traj.json`, swedeck `.traj.json`, SWE-agent `.traj`, swedeck `.traj.jsonl`), 5,000
  steps of the same content, and a 3-step file (`floor`: what both tools cost before any
  file does): `swedeck replay FILE --step -1` (its last step) against `mini-extra inspector`
  showing its first screen of the same content, both timed from process start in this run,
  RUNS pairs run back to back in alternating order; `formats_<format>_ratio` is the median of
  the pairs' ratios (swedeck's time over mini-swe-agent's), the times the medians of each side;
- other agents' records (issue 27): for ATIF, Claude Code, Codex, OpenHands and Inspect
  (`.json` and `.eval`), a file of about 20 MB (the same generated content): `swedeck replay
  FILE --step -1` against the same for a `.traj.jsonl` of the same size, both from process
  start, paired as above; `agents_<format>_ratio` is the format's time over the
  `.traj.jsonl`'s (goal: at most 1.2).
"""

from __future__ import annotations

import statistics
import time
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from .generate import (
    jsonl_to_mini,
    write_atif,
    write_claude_code,
    write_codex,
    write_inspect_eval,
    write_inspect_json,
    write_jsonl,
    write_mini_v2,
    write_openhands,
    write_sweagent,
    write_swedeck_json,
)
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
    goal = {"ui_first_screen_ms": at_most(500), "ui_last_screen_ms": at_most(500), "ui_jump_median_ms": at_most(30)}
    if "mini" not in notes:
        figures.update(_formats(workdir, 500 if quick else 5000, notes))
        goal.update({f"formats_{name}_ratio": at_most(0.5) for name in FORMATS})
        goal["formats_floor_ratio"] = at_most(1.0)
    figures.update(_agents(workdir, 4 if quick else 20, notes))
    goal.update({f"agents_{name}_ratio": at_most(1.2) for name in AGENTS})
    return Result("B2", "replay open", figures, notes=notes, goal=goal)


FORMATS = {"mini_v2_json": write_mini_v2, "swedeck_json": write_swedeck_json, "sweagent_traj": write_sweagent,
           "swedeck_jsonl": write_jsonl}
SUFFIXES = {"mini_v2_json": ".traj.json", "swedeck_json": ".traj.json", "sweagent_traj": ".traj",
            "swedeck_jsonl": ".traj.jsonl"}
RUNS = 7
FORMATS_OUTPUT_CHARS = 1400  # 5,000 steps of mini-swe-agent v2 come to about 22 MB, as in the file
FLOOR_STEPS = 3


def _paired(ours: Callable[[], float], theirs: Callable[[], float]) -> tuple[float, float, float]:
    """Both sides RUNS times, back to back in alternating order (a shared machine's speed drifts
    within a minute by more than the differences measured here): the median of each side's
    times, and the median of the pairs' ratios."""
    pairs = []
    for run in range(RUNS):
        if run % 2:
            first = theirs()
            pairs.append((ours(), first))
        else:
            first = ours()
            pairs.append((first, theirs()))
    return (statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs),
            statistics.median(a / b for a, b in pairs))


def _formats(workdir: Path, steps: int, notes: dict) -> dict:
    """Each format's last step in swedeck against mini-swe-agent's first screen of the same
    content, and both on a 3-step file (the floor)."""
    figures: dict = {}
    mini_file = write_mini_v2(workdir / "formats-mini.traj.json", steps, FORMATS_OUTPUT_CHARS)
    cases = {name: write(workdir / f"formats-{name}{SUFFIXES[name]}", steps, FORMATS_OUTPUT_CHARS)
             for name, write in FORMATS.items()}
    cases["floor"] = write_mini_v2(workdir / "formats-floor.traj.json", FLOOR_STEPS, FORMATS_OUTPUT_CHARS)
    for name, path in cases.items():
        # mini-swe-agent reads `messages`: our .traj.json as it is; the others as the same content in its format
        theirs = path if name in ("mini_v2_json", "swedeck_json", "floor") else mini_file
        ours, mini, ratio = _paired(partial(_last_step, path, []), partial(_mini_first_screen, theirs))
        figures.update({f"formats_{name}_mb": round(path.stat().st_size / 1e6, 1),
                        f"formats_{name}_swedeck_last_step_ms": ms(ours), f"formats_{name}_mini_first_screen_ms": ms(mini),
                        f"formats_{name}_ratio": round(ratio, 2)})
    notes["formats"] = (f"{steps} steps per format, {FLOOR_STEPS} for `floor`; both from process start (interpreter "
                        f"and imports included), {RUNS} pairs back to back in alternating order, medians; "
                        f"mini-swe-agent through its own command line (mini-extra inspector)")
    return figures


def _replay_ui(path: Path, jumps: int, options: list[str]) -> dict:
    return probe("replay_ui", repr(time.time()), *map(str, SIZE), str(jumps), str(path), *options, timeout=300)


AGENTS = {"atif": (write_atif, ".json"), "claude_code": (write_claude_code, ".jsonl"), "codex": (write_codex, ".jsonl"),
          "openhands": (write_openhands, ".json"), "inspect_json": (write_inspect_json, ".json"),
          "inspect_eval": (write_inspect_eval, ".eval")}


def _mini_first_screen(path: Path) -> float:
    """`mini-extra inspector FILE`'s first screen from process start."""
    return probe("mini_first_screen", repr(time.time()), *map(str, SIZE), str(path))["first_screen_s"]


def _last_step(path: Path, runs: list[dict]) -> float:
    """`swedeck replay FILE --step -1`'s first frame from process start (its figures added to `runs`)."""
    runs.append(_replay_ui(path, 1, ["--step", "-1"]))
    return runs[-1]["first_screen_s"]


def _content_bytes(path: Path) -> int:
    """The bytes a reader parses: a zip's members uncompressed, else the file."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as archive:
            return sum(member.file_size for member in archive.infolist())
    return path.stat().st_size


def _sized(write, path: Path, megabytes: float) -> Path:
    """`write` with as many steps as make about `megabytes` of content (scaled from a small one)."""
    probe_steps = 200
    small = _content_bytes(write(path, probe_steps, FORMATS_OUTPUT_CHARS))
    return write(path, max(1, round(probe_steps * megabytes * 1e6 / small)), FORMATS_OUTPUT_CHARS)


def _agents(workdir: Path, megabytes: float, notes: dict) -> dict:
    """Each other agent's format against a `.traj.jsonl` of the same size: the last step from process start."""
    figures: dict = {}
    for name, (write, suffix) in AGENTS.items():
        path = _sized(write, workdir / f"agents-{name}{suffix}", megabytes)
        ours = _sized(write_jsonl, workdir / f"agents-{name}-same-size.traj.jsonl", _content_bytes(path) / 1e6)
        runs: list[dict] = []
        theirs, jsonl, ratio = _paired(partial(_last_step, path, runs), partial(_last_step, ours, []))
        figures.update({f"agents_{name}_mb": round(_content_bytes(path) / 1e6, 1),
                        f"agents_{name}_steps": runs[0]["steps"],
                        f"agents_{name}_last_step_ms": ms(theirs),
                        f"agents_{name}_jsonl_last_step_ms": ms(jsonl),
                        f"agents_{name}_peak_rss_mb": max(run["peak_rss_mb"] for run in runs),
                        f"agents_{name}_ratio": round(ratio, 2)})
    notes["agents"] = (f"about {megabytes:g} MB of content per format (an .eval's members uncompressed: the same "
                       f"content as the others, in a smaller file); `swedeck replay FILE --step -1` "
                       f"from process start against a .traj.jsonl of the same size, {RUNS} pairs back to back "
                       f"in alternating order, medians")
    return figures
