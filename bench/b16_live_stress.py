"""B16 live stress (SPEC §12, issue 49): a live session resumed from a 10,000-step history
(compacted every 300 steps, as a session that long is: its whole history would be 2 million
tokens, more than any model's window) runs 300 quick steps, which fill its transcript to the
300 children it keeps and let as many go (as in a long session), then the model streams at
100 tokens a second and a command prints a megabyte a second, while a key is pressed every
50 ms (`probes/ui_stress.py`): `up` and `down` in turn, which scroll the focused transcript a
line (what a person reading back while the model streams presses), and, in a second session,
`s`, which swaps the panes' split, so that every press lays out and paints both panes.

Figures for each key: keypress to paint (median, p99, max: to the first frame written after the
key was handled), the event loop's longest stall while the keys are pressed and over the whole
session (the filling steps too, where the collection of the children let go runs), the peak
RSS, how many of the transcript's children were laid out at the end; and the same keys on a
10-step history in the same run, so that any cost that grows with the history shows as the
difference (the issue: no work proportional to history length per frame). Goals (issue 49):
p99 at most 50 ms, peak RSS at most 500 MB.
"""

from __future__ import annotations

from pathlib import Path

from .generate import write_jsonl
from .probe import probe
from .result import Result, at_most
from .server_process import StreamServer
from .stats import ms

STEPS = 10_000
COMPACT_EVERY = 300
"""Steps between the history's compactions (`generate.compacted`, swedeck's own `plan`). Not
compacted, each live step would send 20,002 messages (8.5 M characters): litellm alone takes
5.5-6.7 s a call on that (docs/performance.md), so the 150 filling steps would not fit the
probe's 280 s, and no model takes such a prompt."""
OUTPUT_CHARS = 400
TOKENS = 400
"""Tokens of each of the two answers: 4 s each at 100 tok/s."""
FLOOD = ("for i in $(seq 50); do head -c 100000 /dev/zero | tr '\\0' x | fold -w 100; sleep 0.1; done; "
         "echo flood-done")
"""A megabyte a second for 5 s: 100 KB of 100-character lines every 0.1 s."""
FILL = 300
"""Quick answers before the stress, each a message and a command block: the transcript fills to
as many children as it keeps (300, `MAX_CHILDREN`) and lets as many go again, as in a long
session (its work used to grow with them: children let go while a fold ran stayed shown)."""
KEYS = {"scroll": "up,down", "split": "s"}
"""What a person presses: a line up and down in the transcript (reading back while the model
streams), and the panes' split (a whole relayout and repaint)."""
INTERVAL_S = 0.05


def _session(workdir: Path, history: Path, key: str) -> dict:
    script = [{"tokens": 40, "command": f"echo step {index}"} for index in range(FILL)]
    script += [{"tokens": TOKENS, "tokens_per_s": 100, "command": FLOOD},
              {"tokens": TOKENS, "tokens_per_s": 100, "command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}]
    with StreamServer(workdir, script) as server:
        return probe("ui_stress", key, str(INTERVAL_S), "160", "48", str(FILL), "run", "--resume", str(history),
                     "-m", "openai/bench-model", "--mode", "yolo", "-t", "go on", "-c", "model.cost_tracking=ignore_errors",
                     "-c", "environment.timeout=300", "-o", str(workdir / f"out-{history.stem}.traj.json"), timeout=300,
                     env={"OPENAI_API_KEY": "sk-bench", "OPENAI_API_BASE": server.api_base})


def _p(values: list[float], fraction: float) -> float:
    return values[min(len(values) - 1, int(fraction * len(values)))] if values else 0.0


def run(quick: bool, workdir: Path) -> Result:
    steps = 100 if quick else STEPS
    histories = {"": write_jsonl(workdir / "history.traj.jsonl", steps, OUTPUT_CHARS, compact_every=COMPACT_EVERY),
                 "small_": write_jsonl(workdir / "small.traj.jsonl", 10, OUTPUT_CHARS)}
    figures: dict = {"history_steps": steps, "compacted_every": COMPACT_EVERY}
    for label, keys in KEYS.items():
        for prefix, history in histories.items():
            ran = _session(workdir, history, keys)
            name = f"{prefix}{label}_"
            figures.update({f"{name}presses": ran["presses"], f"{name}transcript_shown": ran["transcript_children"] - ran["transcript_hidden"],
                            f"{name}median_ms": ms(_p(ran["latencies_s"], 0.5)),
                            f"{name}p99_ms": ms(_p(ran["latencies_s"], 0.99)),
                            f"{name}max_ms": ms(max(ran["latencies_s"], default=0)),
                            f"{name}longest_stall_ms": ms(ran["longest_stall_s"]),
                            f"{name}longest_stall_whole_ms": ms(ran["longest_stall_whole_s"]),
                            f"{name}peak_rss_mb": ran["peak_rss_mb"]})
    return Result("B16", "live stress", figures,
                  notes={"how": f"swedeck run --resume HISTORY headless at 160x48, {FILL} quick steps, then a key every "
                                f"{INTERVAL_S * 1000:.0f} ms from the next answer's first token to the session's end, one "
                                f"session per key and history; two answers of {TOKENS} tokens at 100 tok/s, the first "
                                f"command printing 1 MB/s for 5 s"},
                  goal={"scroll_p99_ms": at_most(50), "split_p99_ms": at_most(50), "scroll_peak_rss_mb": at_most(500)})
