"""B16 through the live UI: `swedeck run --resume HISTORY` (yolo), headless, while the model
streams at a set rate and a command prints a megabyte a second; a key is pressed every
INTERVAL seconds from the first streamed token to the session's end.

    python -m bench.probes.ui_stress KEYS INTERVAL WIDTH HEIGHT AFTER swedeck-args...

KEYS is a key, or keys separated by commas pressed in turn. The presses start at the first token
of the model's answer after AFTER answers (the ones that fill the transcript first).

A press's latency runs from posting the key on the event loop (as the terminal driver does)
to the first frame the app writes after the key was handled (keypress to paint, as the replay
probe's `key_*_paint_ms`). The older figure, to the end of the refresh of the screen after the
app's (`settled_s`), counted a frame that came after the key's own whenever one followed, and
none when the screen's refresh callbacks ran before the key's frame. Also
the heartbeat's longest gap, the peak resident memory, and how many lines the transcript holds.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
import time

from swedeck.core import events as ev

from .live_app import LiveApp
from .memory import peak_rss_mb, rss_mb

state: dict = {"queries": 0, "first": None, "ended": False, "latencies": [], "settled": [], "rss_start": None,
               "waiting": []}


def on_emit(event: ev.Event) -> None:
    if isinstance(event, ev.QueryStarted):
        state["queries"] += 1
    if isinstance(event, ev.StreamDelta) and state["first"] is None and state["queries"] > int(sys.argv[5]):
        state["first"] = time.perf_counter()
        state["rss_start"] = rss_mb()
        threading.Thread(target=press_keys, daemon=True).start()


def on_drain(batch: list) -> None:
    # the run submitted: the session asks the person for what to do next
    if state["first"] and not state["ended"] and any(isinstance(item, ev.SessionEnded | ev.InputRequested)
                                                     for item in batch):
        state["ended"] = True
        PROBE.app.call_later(done)


def press_keys() -> None:
    try:
        pressing()
    except Exception as error:  # noqa: BLE001 - say it and leave, rather than wait for the watchdog
        os.write(2, f"the presser failed: {error!r}\n".encode())
        os._exit(5)


def pressing() -> None:
    keys, interval = itertools.cycle(sys.argv[1].split(",")), float(sys.argv[2])
    while not state["ended"]:
        key = next(keys)
        start = time.perf_counter()
        pressed = threading.Event()
        PROBE.app._loop.call_soon_threadsafe(press, key, start, pressed)  # as the driver posts a key
        pressed.wait(10)
        time.sleep(max(0.0, interval - (time.perf_counter() - start)))


def press(key: str, start: float, pressed: threading.Event) -> None:
    def settled() -> None:
        state["settled"].append(time.perf_counter() - start)
        pressed.set()

    app = PROBE.app
    app.simulate_key(key)
    # the key's event and then this callback, in the app's queue: the key is handled when it runs
    app.call_later(handled, start)
    # after the app's queue (the key's handling), then the screen's and its focused widget's refresh
    app.call_after_refresh(lambda: app.screen.call_after_refresh(settled))


def handled(start: float) -> None:
    """The key was handled: it waits for the next frame written. A key that changed nothing
    waits for whatever draws next (the stream): the screen's refresh callbacks can run before
    the frame a key's layout asks for, so they cannot tell that a key changed nothing."""
    state["waiting"].append(start)


def watch_paints(app_type: type) -> None:
    """Each frame the app writes ends the wait of every key handled before it."""
    display = app_type._display

    def painted(self, screen, renderable) -> None:
        display(self, screen, renderable)
        if renderable is None or self._batch_count:  # nothing written
            return
        now = time.perf_counter()
        state["latencies"].extend(now - start for start in state["waiting"])
        state["waiting"].clear()

    app_type._display = painted


def done() -> None:
    from textual.widgets import Log, RichLog

    latencies = sorted(state["latencies"])
    settled = sorted(state["settled"])
    end = time.perf_counter()
    logs = list(PROBE.app.screen.query(RichLog)) + list(PROBE.app.screen.query(Log))
    PROBE.finish(json.dumps({
        "presses": len(latencies), "transcript_children": sum(len(pane.children) for pane in PROBE.app.screen.query("Transcript")),
        "transcript_hidden": sum(pane.hidden for pane in PROBE.app.screen.query("Transcript")), "latencies_s": latencies, "settled_s": settled, "unpainted": len(state["waiting"]), "focused": repr(PROBE.app.focused), "duration_s": end - state["first"],
        "longest_stall_s": PROBE.longest_gap(state["first"], end), "rss_start_mb": state["rss_start"],
        "longest_stall_whole_s": PROBE.longest_gap(0.0, end),  # the filling steps too, where no key is pressed
        "peak_rss_mb": peak_rss_mb(), "pane_lines": {type(log).__name__ + (f"#{log.id}" if log.id else ""): log.line_count
                                                     if isinstance(log, Log) else len(log.lines) for log in logs}}))


if __name__ == "__main__":
    PROBE = LiveApp((int(sys.argv[3]), int(sys.argv[4])), watchdog_s=280)
    PROBE.on_emit, PROBE.on_drain = on_emit, on_drain
    from textual.app import App

    watch_paints(App)
    PROBE.run(sys.argv[6:])
