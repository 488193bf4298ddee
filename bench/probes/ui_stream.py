"""B1 through the live UI: `swedeck run` against the bench server, headless at 160x48.

    python -m bench.probes.ui_stream WIDTH HEIGHT swedeck-args...

Hooks, set from here so the app's code stays as it is: the session controller's `emit`
(the core-to-UI seam) notes the first stream delta and the end of the query; its `drain`
notes when the UI thread took the batch holding the end, and the frame after that ends the
measurement. A 5 ms heartbeat timer in the app records the longest gap in the event loop.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from textual import events
from textual.app import App

from swedeck.core import events as ev

state = {"kinds": [], "first": None, "finished_emit": None, "deltas": 0, "chars": 0, "gaps": [], "beat": None}
WATCHDOG_S = 90


def watch_emit(emit):
    def patched(self, event):
        if not isinstance(event, ev.StreamDelta):
            state["kinds"].append(repr(event)[:300])
        if isinstance(event, ev.StreamDelta) and event.kind == "text":
            state["first"] = state["first"] or time.perf_counter()
            state["deltas"] += 1
            state["chars"] += len(event.text)
        elif isinstance(event, ev.QueryFinished) and state["first"]:
            state["finished_emit"] = time.perf_counter()
        return emit(self, event)
    return patched


def watch_drain(drain):
    def patched(self):
        batch = drain(self)
        if state["finished_emit"] and any(isinstance(item, ev.QueryFinished) for item in batch):
            APP.call_later(done)  # after the screen has handled this batch
        return batch
    return patched


def done() -> None:
    end = time.perf_counter()
    streaming = [gap for at, gap in state["gaps"] if at >= state["first"]]
    figures = {"deltas": state["deltas"], "chars": state["chars"], "display_s": end - state["first"],
               "core_s": state["finished_emit"] - state["first"], "longest_stall_s": max(streaming, default=0.0)}
    os.write(1, (json.dumps(figures) + "\n").encode())
    os._exit(0)


def beat() -> None:
    now = time.perf_counter()
    if state["beat"] is not None:
        state["gaps"].append((now, now - state["beat"]))
    state["beat"] = now


def on_ready(app: App, _event: events.Ready) -> None:
    global APP
    APP = app
    app.set_interval(0.005, beat)


def headless(run):
    def patched(self, *args, **kwargs):
        kwargs.update(headless=True, size=SIZE)
        return run(self, *args, **kwargs)
    return patched


if __name__ == "__main__":
    from swedeck.tui.controller import SessionController

    SIZE = (int(sys.argv[1]), int(sys.argv[2]))
    App._on_ready = on_ready
    App.run = headless(App.run)
    SessionController.emit = watch_emit(SessionController.emit)
    SessionController.drain = watch_drain(SessionController.drain)
    threading.Timer(WATCHDOG_S, lambda: (os.write(2, f"timed out: {state['deltas']} deltas seen, events {state['kinds'][-8:]}".encode()),
                                         os._exit(3))).start()
    from swedeck.cli import main

    code = main(sys.argv[3:])
    print(f"the command ended (exit {code}) before the query did", file=sys.stderr)
    os._exit(code or 4)
