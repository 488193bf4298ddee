"""The benchmark harness runs end to end (SPEC §12). Speed is not asserted here: a
benchmark that is slow still passes; a harness that crashes or prints broken JSON fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO

KEYS = {"benchmark", "name", "figures", "goal", "meets_goal", "machine", "versions"}


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=REPO, env=os.environ.copy(),
                          capture_output=True, text=True, timeout=60)


def test_cheapest_benchmark_prints_one_json_line_with_its_figures():
    done = run_bench("--only", "B5", "--quick")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    record = json.loads(lines[0])
    assert KEYS <= set(record)
    assert record["benchmark"] == "B5"
    assert record["figures"]["messages"] == 2000
    assert record["figures"]["build_median_ms"] > 0
    assert record["goal"]["build_median_ms"] == {"max": 10}
    assert record["meets_goal"] in (True, False)
    assert record["machine"]["cpus"] >= 1
    assert record["versions"]["swedeck"]


def test_unknown_benchmark_is_a_usage_error():
    done = run_bench("--only", "B99")
    assert done.returncode == 2
    assert "unknown benchmark B99" in done.stderr
