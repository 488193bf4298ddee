"""B6 through the live UI: `swedeck run` (yolo) whose first command prints BYTES, headless.

    python -m bench.probes.ui_flood BYTES WIDTH HEIGHT swedeck-args...

From the `CommandStarted` the agent emits to the UI drawing `CommandFinished`: the longest
heartbeat gap (the stall), the peak resident memory (sampled every 10 ms) over the
resident memory when the command started, and what the observation pane shows.
"""

from __future__ import annotations

import json
import sys
import threading
import time

from swedeck.core import events as ev

from .live_app import LiveApp
from .memory import rss_mb

state = {"start": None, "rss_before": None, "peak": 0.0, "finished": None}


def sample_memory() -> None:
    while True:
        if state["rss_before"] is not None:
            state["peak"] = max(state["peak"], rss_mb())
        time.sleep(0.01)


def on_emit(event: ev.Event) -> None:
    if isinstance(event, ev.CommandStarted) and state["start"] is None:
        state["rss_before"] = rss_mb()
        state["start"] = time.perf_counter()
    elif isinstance(event, ev.CommandFinished) and state["finished"] is None:
        state["finished"] = event


def on_drain(batch: list) -> None:
    if any(isinstance(item, ev.CommandFinished) for item in batch):
        PROBE.app.call_later(done)


def done() -> None:
    from textual.widgets import Log

    end = time.perf_counter()
    log = PROBE.app.screen.query_one(Log)
    finished = state["finished"]
    PROBE.finish(json.dumps({
        "duration_s": end - state["start"], "longest_stall_s": PROBE.longest_gap(state["start"], end),
        "rss_before_mb": state["rss_before"], "peak_rss_mb": max(state["peak"], rss_mb()),
        "output_chars": len(finished.result.output), "truncated": finished.result.truncated,
        "pane_lines": log.line_count, "pane_last_line": next((line for line in reversed(log.lines) if line), "")}))


if __name__ == "__main__":
    PROBE = LiveApp((int(sys.argv[2]), int(sys.argv[3])), watchdog_s=240)
    PROBE.on_emit, PROBE.on_drain = on_emit, on_drain
    threading.Thread(target=sample_memory, daemon=True).start()
    PROBE.run(sys.argv[4:])
