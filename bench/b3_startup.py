"""B3 startup (SPEC §12): process start to the first frame of `swedeck replay` and
`swedeck run`, and that litellm is not imported before it.

Each figure is the median over fresh processes (`probes/first_frame.py`: the real command
line, headless at 160x48). Beside them, whole-process times of commands without a UI
(`python -c pass` is the interpreter's own share).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from .generate import write_jsonl
from .probe import ProbeFailed, probe
from .result import Result, at_most, is_true
from .stats import ms

SIZE = ("160", "48")
# Never reached: the session waits for a task before any query.
MODEL_ENV = {"OPENAI_API_KEY": "sk-bench", "OPENAI_API_BASE": "http://127.0.0.1:9/v1"}


def first_frames(args: list[str], runs: int) -> list[dict]:
    return [probe("first_frame", repr(time.time()), *SIZE, *args, env=MODEL_ENV, timeout=90) for _ in range(runs)]


def process_seconds(args: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, *args], capture_output=True, timeout=60)
        samples.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise ProbeFailed(f"{' '.join(args)} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return statistics.median(samples)


def ui_figures(name: str, args: list[str], runs: int, figures: dict, notes: dict) -> None:
    try:
        frames = first_frames(args, runs)
    except ProbeFailed as error:
        figures[f"{name}_first_frame_ms"] = None
        figures[f"{name}_litellm_before_first_frame"] = None
        notes[name] = f"not measurable yet: {error}"
        return
    figures[f"{name}_first_frame_ms"] = ms(statistics.median(frame["first_frame_s"] for frame in frames))
    figures[f"{name}_first_frame_max_ms"] = ms(max(frame["first_frame_s"] for frame in frames))
    figures[f"{name}_litellm_before_first_frame"] = any(frame["litellm_imported"] for frame in frames)
    figures[f"{name}_litellm_import_started_before_first_frame"] = any(
        frame["litellm_import_started"] for frame in frames)
    figures[f"{name}_screen"] = frames[0]["screen"]


def run(quick: bool, workdir: Path) -> Result:
    runs = 3 if quick else 7
    trajectory = write_jsonl(workdir / "small.traj.jsonl", steps=20, mean_output_chars=2000)
    figures: dict = {"runs": runs, "size": "x".join(SIZE)}
    notes: dict = {"first_frame": "headless: composed and rendered, not written to a terminal",
                   "litellm": "`*_litellm_before_first_frame`: fully imported by then (the goal); "
                              "`*_import_started_*`: a background import had begun (it competes for the GIL)"}
    ui_figures("replay", ["replay", str(trajectory)], runs, figures, notes)
    ui_figures("run", ["run", "-m", "openai/bench-model", "--env", "local"], runs, figures, notes)
    for name, args in (("python_pass", ["-c", "pass"]),
                       ("config_show", ["-m", "swedeck", "config", "show"]),
                       ("replay_print", ["-m", "swedeck", "replay", "--print", str(trajectory)])):
        try:
            figures[f"{name}_process_ms"] = ms(process_seconds(args, runs))
        except ProbeFailed as error:
            figures[f"{name}_process_ms"] = None
            notes[name] = str(error)
    imported = [figures[f"{name}_litellm_before_first_frame"] for name in ("replay", "run")]
    figures["litellm_kept_out"] = None if None in imported else not any(imported)
    return Result("B3", "startup", figures, notes=notes,
                  goal={"replay_first_frame_ms": at_most(400), "run_first_frame_ms": at_most(600),
                        "litellm_kept_out": is_true()})

