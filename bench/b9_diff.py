"""B9 diff (SPEC §16, issue 29): `swedeck diff A B` on two 500-step runs against `swedeck
replay A`, both from process start to their first frame (headless at 160x48, the median of
RUNS, in one run): `diff_over_replay_ms` is the difference (goal: at most 1 s). A is a
`.traj.jsonl` and B the same content as a mini-swe-agent v2 file, so the diff reads both
formats whole and aligns 500 steps; the replay indexes A without parsing it. And two
500-instance batch folders (`batch.json`, `preds.json` with 2 KB patches, a final
trajectory per instance) compared by `swedeck diff DIR_A DIR_B --print` as a process
(`batch_print_ms`, goal: at most 30 s) and by the core alone (`batch_compare_ms`).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
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
    figures.update(_batches(workdir, 50 if quick else 500))
    figures.update(_nway(workdir, 10 if quick else 50))
    notes["nway"] = ("issue 66: 5 variants of each of the instances, about 30 steps each (`write_jsonl` with 28-32 "
                     "steps), every variant aligned with the first and every pair's divergence classed (`diff.nway`), "
                     "in one process, and printed; the 5-way view's first frame of one instance; 5 batch folders of "
                     "the instances compared and printed")
    return Result("B9", "diff", figures, notes=notes,
                  goal={"diff_over_replay_ms": at_most(1000), "batch_print_ms": at_most(30000),
                        "nway_aligned_s": at_most(10), "nway_view_first_frame_ms": at_most(1500)})


def _nway(workdir: Path, instances: int) -> dict:
    """5 variants x `instances` instances: aligned, classed and printed; one instance's view."""
    import io
    from contextlib import redirect_stdout

    from swedeck.commands.diff import _nway_text
    from swedeck.core.diff.nway import compare
    from swedeck.core.trajectory.loader import load_trajectory

    folder = workdir / "nway"
    folder.mkdir()
    paths = [[write_jsonl(folder / f"i{number}-v{variant}.traj.jsonl", 28 + (number + variant) % 5, 600)
              for variant in range(5)] for number in range(instances)]
    started = time.perf_counter()
    with redirect_stdout(io.StringIO()) as out:
        for variants in paths:
            print(_nway_text(compare([load_trajectory(path, lazy=True) for path in variants])))
    aligned = time.perf_counter() - started
    view = statistics.median(_first_frame("diff", *map(str, paths[0])) for _ in range(RUNS))
    batches = [_batch(folder / f"batch-{variant}", instances, variant) for variant in range(5)]
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "swedeck", "diff", *map(str, batches), "--print"], check=True,
                   capture_output=True, timeout=300)
    return {"nway_trajectories": 5 * instances, "nway_aligned_s": round(aligned, 2), "nway_printed_chars": len(out.getvalue()),
            "nway_view_first_frame_ms": ms(view), "nway_batches_print_ms": ms(time.perf_counter() - started)}


def _batch(folder: Path, count: int, variant: int) -> Path:
    folder.mkdir()
    instances, preds = {}, {}
    for number in range(count):
        instance_id = f"proj__repo-{number:04d}"
        submitted = (number + variant) % 7 != 0
        instances[instance_id] = {"state": "done", "exit_status": "Submitted" if submitted else "LimitsExceeded",
                                  "cost": 0.01, "steps": 20, "duration_s": 30.0, "error": None, "warnings": []}
        preds[instance_id] = {"instance_id": instance_id, "model_name_or_path": "bench",
                              "model_patch": ("diff --git a/x b/x\n" + "+line\n" * 300) if submitted else ""}
        (folder / instance_id).mkdir()
        (folder / instance_id / f"{instance_id}.traj.json").write_text("{}")
    (folder / "batch.json").write_text(json.dumps({"model": "bench", "executor": "local", "workers": 1,
                                                   "instances": instances, "started_at": 0, "updated_at": 0,
                                                   "ended": True, "pid": 0}))
    (folder / "preds.json").write_text(json.dumps(preds))
    return folder


def _batches(workdir: Path, count: int) -> dict:
    from swedeck.core.diff.batch import compare_batches

    a, b = _batch(workdir / "batch-a", count, 0), _batch(workdir / "batch-b", count, 3)
    started = time.perf_counter()
    comparison = compare_batches(a, b)
    core = time.perf_counter() - started
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "swedeck", "diff", str(a), str(b), "--print"], check=True,
                   capture_output=True, timeout=300)
    whole = time.perf_counter() - started
    return {"batch_instances": count, "batch_differing": comparison.differing, "batch_compare_ms": ms(core),
            "batch_print_ms": ms(whole)}
