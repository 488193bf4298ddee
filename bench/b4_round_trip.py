"""B4 command round trip (SPEC §12): `true` in swedeck's local and docker environments,
side by side with mini-swe-agent's LocalEnvironment and DockerEnvironment.

swedeck keeps one bash session per environment (a builtin costs no process spawn);
mini-swe-agent starts `bash -c` per command locally and `docker exec` (the CLI) per
command in docker, so its figures are mostly process-spawn and docker-exec cost.
"""

from __future__ import annotations

import logging
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from swedeck.core.config import EnvironmentConfig
from swedeck.core.environments import get_environment

from .result import Result, at_most
from .stats import ms, p95, timed

IMAGE = "swedeck-test:latest"
COMMAND = "true"


def _measure(make: Callable[[], tuple[Callable[[], object], Callable[[], None]]], runs: int, figures: dict,
             notes: dict, prefix: str) -> None:
    """`make()` starts an environment and gives (one round trip, close)."""
    try:
        start = time.perf_counter()
        once, close = make()
        figures[f"{prefix}_start_ms"] = ms(time.perf_counter() - start)
    except Exception as error:  # noqa: BLE001 - e.g. no Docker engine here: report, don't fail
        figures.update({f"{prefix}_median_ms": None, f"{prefix}_p95_ms": None})
        notes[prefix] = f"not measured: {type(error).__name__}: {error}"
        return
    try:
        once()  # warm-up: first command pays for lazy setup
        samples = timed(once, runs)
    finally:
        close()
    figures[f"{prefix}_median_ms"] = ms(statistics.median(samples))
    figures[f"{prefix}_p95_ms"] = ms(p95(samples))


def _swedeck(kind: str):
    def make():
        extra = {"image": IMAGE} if kind == "docker" else {}
        env = get_environment(EnvironmentConfig(environment_class=kind, **extra), f"bench-b4-{kind}")
        env.start()

        def once():
            result = env.execute(COMMAND, timeout=30)
            if result.returncode != 0:
                raise RuntimeError(f"`{COMMAND}` returned {result.returncode}: {result.output[:200]}")
        return once, env.close
    return make


def _mini(kind: str):
    def make():
        if kind == "docker":
            from minisweagent.environments.docker import DockerEnvironment
            env = DockerEnvironment(image=IMAGE, interpreter=["bash", "-c"], logger=_quiet_logger())
            close = lambda: _remove(env)  # noqa: E731
        else:
            from minisweagent.environments.local import LocalEnvironment
            env = LocalEnvironment()
            close = lambda: None  # noqa: E731

        def once():
            result = env.execute({"command": COMMAND})
            if result["returncode"] != 0:
                raise RuntimeError(f"mini-swe-agent `{COMMAND}` returned {result['returncode']}: {result['output'][:200]}")
        return once, close
    return make


def _remove(env) -> None:
    """Remove mini-swe-agent's container now: its own cleanup stops it in the background,
    which outlives the benchmark (its `sleep` ignores SIGTERM, so that takes 10 s)."""
    subprocess.run([env.config.executable, "rm", "-f", env.container_id], capture_output=True, timeout=60)
    env.container_id = None


def _quiet_logger() -> logging.Logger:
    """mini-swe-agent logs container starts to stdout, which would break the JSON lines."""
    logger = logging.getLogger("bench.minisweagent")
    logger.disabled = True
    return logger


def _ratio(figures: dict, mine: str, theirs: str) -> float | None:
    a, b = figures.get(f"{mine}_median_ms"), figures.get(f"{theirs}_median_ms")
    return round(b / a, 1) if a and b else None


def run(quick: bool, workdir: Path) -> Result:
    runs = {"local": 30 if quick else 300, "docker": 10 if quick else 100}
    mini_runs = {"local": 20 if quick else 100, "docker": 5 if quick else 30}
    figures: dict = {"runs": runs, "mini_runs": mini_runs}
    notes: dict = {}
    for kind in ("local", "docker"):
        _measure(_swedeck(kind), runs[kind], figures, notes, f"swedeck_{kind}")
        try:
            import minisweagent  # noqa: F401
        except ImportError:
            figures.update({f"mini_{kind}_median_ms": None, f"mini_{kind}_p95_ms": None})
            notes[f"mini_{kind}"] = "mini-swe-agent is not installed (pip install '.[bench]')"
        else:
            _measure(_mini(kind), mini_runs[kind], figures, notes, f"mini_{kind}")
        figures[f"{kind}_mini_over_swedeck"] = _ratio(figures, f"swedeck_{kind}", f"mini_{kind}")
    notes["ratio"] = "`*_mini_over_swedeck`: mini-swe-agent's median divided by swedeck's (>1: swedeck is faster)"
    notes["mini_docker"] = notes.get("mini_docker", "interpreter `bash -c` (its default `bash -lc` reads login files)")
    return Result("B4", "command round trip", figures,
                  goal={"swedeck_local_median_ms": at_most(5), "swedeck_docker_median_ms": at_most(60)}, notes=notes)
