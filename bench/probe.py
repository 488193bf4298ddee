"""Run a measurement in a fresh interpreter (`bench/probes/<name>.py`), so import costs,
peak memory and the event loop belong to that measurement alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class ProbeFailed(RuntimeError):
    pass


def probe(name: str, *args: str, timeout: float = 120, env: dict[str, str] | None = None) -> dict:
    """The JSON object the probe prints as its last stdout line."""
    done = subprocess.run([sys.executable, "-m", f"bench.probes.{name}", *args], cwd=ROOT,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = " / ".join(done.stderr.strip().splitlines()[-2:]) or "no output"
        raise ProbeFailed(f"probe {name} exited {done.returncode}: {tail}")
    return json.loads(lines[-1])
