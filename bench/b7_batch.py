"""B7 batch throughput (SPEC §15): `swedeck batch` over trivial instances (one query, then
submit) against the local stream server, at 1, 2 and 4 workers, beside single
`swedeck run --headless` runs of the same task.

Figures, all from one run on this machine:
- `single_headless_s`: a whole `swedeck run --headless` process for one instance (Python,
  imports, litellm, the session): what running instances one by one costs each time.
- `per_instance_s`: the marginal time of one more instance in a 1-worker batch,
  `(wall(N) - wall(1)) / (N - 1)`: the session, the query and the files, litellm already loaded.
- `per_instance_over_single`: their ratio (goal ≤ 0.10: a batch instance costs a tenth of
  a fresh process or less).
- `instances_per_min_{1,2,4}`: whole-batch throughput (start-up included) at each width.
Local environment: the figures are swedeck's own overhead; a Docker instance adds its
container start (B4's `swedeck_docker_start_ms`).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .result import Result, at_most
from .server_process import StreamServer

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo done"


def _model_args(server: StreamServer) -> list[str]:
    return ["-m", "hosted_vllm/bench", "-c", f"model.model_kwargs={{api_base: '{server.api_base}'}}",
            "-c", "model.cost_tracking=ignore_errors"]


def _swedeck() -> list[str]:
    return [sys.executable, "-m", "swedeck"]


def _timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, env=os.environ)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} exited {done.returncode}: {done.stderr[-400:]}")
    return seconds


def _batch_wall(server: StreamServer, workdir: Path, count: int, workers: int, label: str) -> float:
    instances = workdir / f"{label}.jsonl"
    instances.write_text("".join(json.dumps({"instance_id": f"b7-{i:03d}", "problem_statement": "say done"}) + "\n"
                                 for i in range(count)))
    out = workdir / f"out-{label}"
    return _timed([*_swedeck(), "batch", str(instances), "-o", str(out), "--env", "local", "--cwd", str(workdir),
                   "-w", str(workers), *_model_args(server)], workdir)


def run(quick: bool, workdir: Path) -> Result:
    count = 6 if quick else 24
    repeats = 1 if quick else 3
    with StreamServer(workdir, [{"tokens": 5, "command": SUBMIT}]) as server:
        single = statistics.median(
            _timed([*_swedeck(), "run", "--headless", "-t", "say done", "--cwd", str(workdir),
                    "-o", str(workdir / f"single-{i}.traj.json"), *_model_args(server)], workdir)
            for i in range(repeats))
        one = statistics.median(_batch_wall(server, workdir, 1, 1, f"one-{i}") for i in range(repeats))
        walls = {workers: _batch_wall(server, workdir, count, workers, f"w{workers}") for workers in (1, 2, 4)}
    per_instance = (walls[1] - one) / (count - 1)
    figures = {
        "instances": count,
        "single_headless_s": round(single, 3),
        "batch_of_one_s": round(one, 3),
        "per_instance_s": round(per_instance, 3),
        "per_instance_over_single": round(per_instance / single, 3),
        **{f"instances_per_min_{w}": round(count / wall * 60, 1) for w, wall in walls.items()},
        **{f"batch_wall_s_{w}": round(wall, 2) for w, wall in walls.items()},
    }
    notes = {
        "per_instance_s": "marginal time of one more instance in a 1-worker batch, litellm already loaded",
        "environment": "local; a Docker instance adds its container start (B4)",
        "cores": "2 shared cores here: 4 workers cannot be twice as fast as 2",
    }
    return Result("B7", "batch throughput", figures, goal={"per_instance_over_single": at_most(0.10)}, notes=notes)
