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


def test_todays_figures_table_has_one_row_per_bounded_figure(tmp_path):
    """Issue 64.6: docs/performance.md's table is made from the benchmarks' own lines: one row
    per figure a goal bounds, its budget, today's value and whether it is met."""
    done = run_bench("--only", "B5", "--quick")
    results = tmp_path / "results.jsonl"
    failed = {"benchmark": "B99", "name": "broken", "figures": {}, "goal": {}, "notes": {"error": "boom"}}
    results.write_text(done.stdout + json.dumps(failed) + "\n")
    table = subprocess.run([sys.executable, "-m", "bench.table", str(results)], cwd=REPO, capture_output=True,
                           text=True, timeout=60)
    assert table.returncode == 0, table.stderr
    record = json.loads(done.stdout.splitlines()[0])
    rows = table.stdout.splitlines()
    assert rows[0] == "| benchmark | figure | budget | today | met |"
    bounded = [row for row in rows if row.startswith("| B5 ")]
    assert len(bounded) == len(record["goal"])
    build = next(row for row in bounded if "`build_median_ms`" in row)
    met = "yes" if record["figures"]["build_median_ms"] <= 10 else "**no**"
    assert "| <= 10 ms |" in build and build.endswith(f"| {met} |")
    assert rows[-1] == "| B99 broken | (every figure) | | failed: boom | no |"
