"""B16 through the live UI: `swedeck run --resume HISTORY` (yolo), headless, while the model
streams at a set rate and a command prints a megabyte a second; a key is pressed every
INTERVAL seconds from the first streamed token to the session's end.

    python -m bench.probes.ui_stress KEY INTERVAL WIDTH HEIGHT swedeck-args...

A press's latency runs from posting the key on the event loop (as the terminal driver does)
to the frame after it: its handling, and the refresh of the screen and of the focused
widget after it. Also the heartbeat's longest gap, the peak resident memory, and how many
lines the transcript holds.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from swedeck.core import events as ev

from .live_app import LiveApp
from .memory import peak_rss_mb, rss_mb

state: dict = {"first": None, "ended": False, "latencies": [], "rss_start": None}


def on_emit(event: ev.Event) -> None:
    if isinstance(event, ev.StreamDelta) and state["first"] is None:
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
    key, interval = sys.argv[1], float(sys.argv[2])
    while not state["ended"]:
        start = time.perf_counter()
        pressed = threading.Event()
        PROBE.app._loop.call_soon_threadsafe(press, key, start, pressed)  # as the driver posts a key
        pressed.wait(10)
        time.sleep(max(0.0, interval - (time.perf_counter() - start)))


def press(key: str, start: float, pressed: threading.Event) -> None:
    def painted() -> None:
        state["latencies"].append(time.perf_counter() - start)
        pressed.set()

    app = PROBE.app
    app.simulate_key(key)
    # after the app's queue (the key's handling), then the screen's and its focused widget's refresh
    app.call_after_refresh(lambda: app.screen.call_after_refresh(painted))


def done() -> None:
    from textual.widgets import Log, RichLog

    latencies = sorted(state["latencies"])
    end = time.perf_counter()
    logs = list(PROBE.app.screen.query(RichLog)) + list(PROBE.app.screen.query(Log))
    PROBE.finish(json.dumps({
        "presses": len(latencies), "latencies_s": latencies, "focused": repr(PROBE.app.focused), "duration_s": end - state["first"],
        "longest_stall_s": PROBE.longest_gap(state["first"], end), "rss_start_mb": state["rss_start"],
        "peak_rss_mb": peak_rss_mb(), "pane_lines": {type(log).__name__ + (f"#{log.id}" if log.id else ""): log.line_count
                                                     if isinstance(log, Log) else len(log.lines) for log in logs}}))


if __name__ == "__main__":
    PROBE = LiveApp((int(sys.argv[3]), int(sys.argv[4])), watchdog_s=120)
    PROBE.on_emit, PROBE.on_drain = on_emit, on_drain
    PROBE.run(sys.argv[5:])
