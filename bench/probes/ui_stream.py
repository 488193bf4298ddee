"""B1 through the live UI: `swedeck run` against the bench server, headless.

    python -m bench.probes.ui_stream WIDTH HEIGHT swedeck-args...

The session controller's `emit` notes the first stream delta and the end of the query;
its `drain` notes when the UI thread took the batch holding the end, and the frame after
that ends the measurement. The heartbeat's longest gap meanwhile is the stall.
"""

from __future__ import annotations

import json
import sys
import time

from swedeck.core import events as ev

from .live_app import LiveApp

state = {"first": None, "finished_emit": None, "deltas": 0, "chars": 0}


def on_emit(event: ev.Event) -> None:
    if isinstance(event, ev.StreamDelta) and event.kind == "text":
        state["first"] = state["first"] or time.perf_counter()
        state["deltas"] += 1
        state["chars"] += len(event.text)
    elif isinstance(event, ev.QueryFinished) and state["first"]:
        state["finished_emit"] = time.perf_counter()


def on_drain(batch: list) -> None:
    if state["finished_emit"] and any(isinstance(item, ev.QueryFinished) for item in batch):
        PROBE.app.call_later(done)  # after the screen has handled this batch


def done() -> None:
    end = time.perf_counter()
    PROBE.finish(json.dumps({"deltas": state["deltas"], "chars": state["chars"], "display_s": end - state["first"],
                             "core_s": state["finished_emit"] - state["first"],
                             "longest_stall_s": PROBE.longest_gap(state["first"])}))


if __name__ == "__main__":
    PROBE = LiveApp((int(sys.argv[1]), int(sys.argv[2])))
    PROBE.on_emit, PROBE.on_drain = on_emit, on_drain
    PROBE.run(sys.argv[3:])
