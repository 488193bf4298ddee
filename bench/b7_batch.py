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

Scaling (issue 30): the server answers after `LATENCY_S` (1 s, as a real model takes), so
an instance mostly waits, as real ones do. `scaled_per_min_{1,4,16}`: instances a minute
at 1, 4 and 16 workers on local threads (start-up included); `scaled_linear_ratio_{4,16}`:
that rate over `workers x` the 1-worker rate (goal at 16: at least 0.8); `peak_rss_mb_{w}`
is the batch process's peak memory, and `rss_per_running_instance_mb` the growth from 1 to
16 workers over the 15 more instances running at once. `ray_per_min_{4,16}` and
`ray_linear_ratio_{4,16}`: the same instances on a Ray cluster of two nodes started on
this machine (`ray start --head`, a second `ray start --address`), against the 1-worker
local rate.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .result import Result, at_least, at_most
from .server_process import StreamServer

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo done"
LATENCY_S = 1.0


def _model_args(server: StreamServer) -> list[str]:
    return ["-m", "hosted_vllm/bench", "-c", f"model.model_kwargs={{api_base: '{server.api_base}'}}",
            "-c", "model.cost_tracking=ignore_errors"]


def _swedeck() -> list[str]:
    return [sys.executable, "-m", "swedeck"]


def _timed(argv: list[str], cwd: Path) -> float:
    return _timed_rss(argv, cwd)[0]


def _timed_rss(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Seconds the command took, and its peak resident memory in MB (this run's child alone)."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env=os.environ)
    _, rusage_status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(rusage_status)
    if process.returncode != 0:
        stderr = process.stderr.read() if process.stderr else ""
        raise RuntimeError(f"{' '.join(argv[:4])} exited {process.returncode}: {stderr[-400:]}")
    return seconds, usage.ru_maxrss / 1024


def _batch_wall(server: StreamServer, workdir: Path, count: int, workers: int, label: str) -> float:
    return _batch(server, workdir, count, workers, label)[0]


def _batch(server: StreamServer, workdir: Path, count: int, workers: int, label: str) -> tuple[float, float]:
    instances = workdir / f"{label}.jsonl"
    instances.write_text("".join(json.dumps({"instance_id": f"b7-{i:03d}", "problem_statement": "say done"}) + "\n"
                                 for i in range(count)))
    out = workdir / f"out-{label}"
    return _timed_rss([*_swedeck(), "batch", str(instances), "-o", str(out), "--env", "local", "--cwd", str(workdir),
                       "-w", str(workers), *_model_args(server)], workdir)


def _scaling(workdir: Path, quick: bool) -> dict:
    """Instances a minute at 1, 4 and 16 workers when each answer takes LATENCY_S."""
    counts = {1: 4, 4: 8, 16: 16} if quick else {1: 8, 4: 32, 16: 64}
    figures: dict = {"scaled_latency_s": LATENCY_S}
    rates, rss = {}, {}
    with StreamServer(workdir, [{"tokens": 5, "command": SUBMIT, "latency_s": LATENCY_S}]) as server:
        for workers, count in counts.items():
            wall, rss[workers] = _batch(server, workdir, count, workers, f"scaled-w{workers}")
            rates[workers] = count / wall * 60
            figures[f"scaled_instances_{workers}"] = count
            figures[f"scaled_per_min_{workers}"] = round(rates[workers], 1)
            figures[f"peak_rss_mb_{workers}"] = round(rss[workers], 1)
        for workers in (4, 16):
            figures[f"ray_per_min_{workers}"] = _ray(server, workdir, counts[workers], workers, figures)
    for workers in (4, 16):
        figures[f"scaled_linear_ratio_{workers}"] = round(rates[workers] / (workers * rates[1]), 2)
        ray_rate = figures.get(f"ray_per_min_{workers}")
        if ray_rate:
            figures[f"ray_linear_ratio_{workers}"] = round(ray_rate / (workers * rates[1]), 2)
    figures["rss_per_running_instance_mb"] = round((rss[16] - rss[1]) / 15, 1)
    return figures


def _ray(server: StreamServer, workdir: Path, count: int, workers: int, figures: dict) -> float | None:
    """Instances a minute on a Ray cluster of two nodes started here (`ray start --head`, then a
    second `ray start --address`), each offering 8 CPUs to Ray; None (and a note) when Ray is
    not installed or the cluster does not start."""
    import secrets
    import shutil
    import socket
    import tempfile

    ray_cli = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")
    if ray_cli is None:
        figures["ray_note"] = "ray is not installed (pip install '.[batch]')"
        return None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ray_tmp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # Ray's socket paths must be short
    env = {**os.environ, "RAY_TMPDIR": ray_tmp, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    common = ["--num-cpus", "8", "--disable-usage-stats"]
    try:
        subprocess.run([ray_cli, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
                        "--include-dashboard", "false", *common], check=True, capture_output=True, env=env, timeout=180)
        subprocess.run([ray_cli, "start", "--address", f"127.0.0.1:{port}", "--node-ip-address", "127.0.0.1",
                        *common], check=True, capture_output=True, env=env, timeout=180)
        instances = workdir / f"ray-{workers}.jsonl"
        instances.write_text("".join(json.dumps({"instance_id": f"r7-{i:03d}", "problem_statement": "say done"}) + "\n"
                                     for i in range(count)))
        start = time.perf_counter()
        done = subprocess.run([*_swedeck(), "batch", str(instances), "-o", str(workdir / f"out-ray-{workers}"),
                               "--env", "local", "--cwd", str(workdir), "-w", str(workers), "--executor", "ray",
                               "--address", f"127.0.0.1:{port}", *_model_args(server)],
                              cwd=workdir, capture_output=True, text=True, timeout=900, env=env)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            figures["ray_note"] = f"the Ray batch exited {done.returncode}: {done.stderr[-300:]}"
            return None
        return round(count / wall * 60, 1)
    except (subprocess.SubprocessError, OSError) as error:
        figures["ray_note"] = f"the two-node cluster did not start: {error}"
        return None
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)
        shutil.rmtree(ray_tmp, ignore_errors=True)


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
    figures.update(_scaling(workdir, quick))
    notes = {
        "scaled": (f"each answer after {LATENCY_S:g} s, as a real model's; start-up included; more instances at "
                   "more workers so each worker runs several"),
        "per_instance_s": "marginal time of one more instance in a 1-worker batch, litellm already loaded",
        "environment": "local; a Docker instance adds its container start (B4)",
        "cores": "2 shared cores here: 4 workers cannot be twice as fast as 2",
    }
    return Result("B7", "batch throughput", figures, notes=notes,
                  goal={"per_instance_over_single": at_most(0.10), "scaled_linear_ratio_16": at_least(0.8)})
