"""B16 live stress (SPEC §12, issue 49): a live session resumed from a 10,000-step history,
the model streaming at 100 tokens a second and a command printing a megabyte a second,
while a key is pressed every 50 ms (`probes/ui_stress.py`): `up`, which scrolls the focused
transcript a line (what a person reading back while the model streams presses), and, in a
second session, `s`, which swaps the panes' split, so that every press lays out and paints both
panes.

Figures for each key: keypress to paint (median, p99, max), the event loop's longest stall, the
peak RSS; and the same key on a 10-step history in the same run, so that any cost that grows with the
history shows as the difference (the issue: no work proportional to history length per
frame). Goals (issue 49): p99 at most 50 ms, peak RSS at most 500 MB.
"""

from __future__ import annotations

from pathlib import Path

from .generate import write_jsonl
from .probe import probe
from .result import Result, at_most
from .server_process import StreamServer
from .stats import ms

STEPS = 10_000
TOKENS = 400
"""Tokens of each of the two answers: 4 s each at 100 tok/s."""
FLOOD = ("for i in $(seq 50); do head -c 100000 /dev/zero | tr '\\0' x | fold -w 100; sleep 0.1; done; "
         "echo flood-done")
"""A megabyte a second for 5 s: 100 KB of 100-character lines every 0.1 s."""
KEYS = ("up", "s")
INTERVAL_S = 0.05


def _session(workdir: Path, history: Path, key: str) -> dict:
    script = [{"tokens": TOKENS, "tokens_per_s": 100, "command": FLOOD},
              {"tokens": TOKENS, "tokens_per_s": 100, "command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}]
    with StreamServer(workdir, script) as server:
        return probe("ui_stress", key, str(INTERVAL_S), "160", "48", "run", "--resume", str(history),
                     "-m", "openai/bench-model", "--mode", "yolo", "-t", "go on", "-c", "model.cost_tracking=ignore_errors",
                     "-c", "environment.timeout=300", "-o", str(workdir / f"out-{history.stem}.traj.json"), timeout=300,
                     env={"OPENAI_API_KEY": "sk-bench", "OPENAI_API_BASE": server.api_base})


def _p(values: list[float], fraction: float) -> float:
    return values[min(len(values) - 1, int(fraction * len(values)))] if values else 0.0


def run(quick: bool, workdir: Path) -> Result:
    steps = 1_000 if quick else STEPS
    histories = {"": write_jsonl(workdir / "history.traj.jsonl", steps, 400),
                 "small_": write_jsonl(workdir / "small.traj.jsonl", 10, 400)}
    figures: dict = {"history_steps": steps}
    for key in KEYS:
        for prefix, history in histories.items():
            ran = _session(workdir, history, key)
            name = f"{prefix}{key}_"
            figures.update({f"{name}presses": ran["presses"], f"{name}median_ms": ms(_p(ran["latencies_s"], 0.5)),
                            f"{name}p99_ms": ms(_p(ran["latencies_s"], 0.99)),
                            f"{name}max_ms": ms(max(ran["latencies_s"], default=0)),
                            f"{name}longest_stall_ms": ms(ran["longest_stall_s"]), f"{name}peak_rss_mb": ran["peak_rss_mb"]})
    return Result("B16", "live stress", figures,
                  notes={"how": f"swedeck run --resume HISTORY headless at 160x48, a key every {INTERVAL_S * 1000:.0f} "
                                f"ms from the first token to the session's end, one session per key and history; two "
                                f"answers of {TOKENS} tokens at 100 tok/s, the first command printing 1 MB/s for 5 s"},
                  goal={"up_p99_ms": at_most(50), "s_p99_ms": at_most(50), "up_peak_rss_mb": at_most(500)})
