"""B2's reference: mini-swe-agent's inspector showing its first screen of a file, from process
start, as a person waits for it: its own command line, `mini-extra inspector FILE`.

    python -m bench.probes.mini_first_screen T0 WIDTH HEIGHT FILE

Runs `mini-extra`'s entry point with every Textual app headless at WIDTH x HEIGHT; on
Textual's `Ready` event (the
first frame rendered) it prints the seconds since T0 (the parent's `time.time()` just before
it started this process) and the number of pages the inspector made.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from textual import events
from textual.app import App

WATCHDOG_S = 120


def on_ready(app: App, _event: events.Ready) -> None:
    figures = {"first_screen_s": time.time() - T0, "pages": len(getattr(app, "steps", []))}
    os.write(1, (json.dumps(figures) + "\n").encode())
    os._exit(0)


def headless(size: tuple[int, int]) -> None:
    run = App.run

    def run_headless(app: App, *args: Any, **kwargs: Any) -> Any:
        kwargs.update(headless=True, size=size)
        return run(app, *args, **kwargs)

    App.run = run_headless


if __name__ == "__main__":
    T0, SIZE, PATH = float(sys.argv[1]), (int(sys.argv[2]), int(sys.argv[3])), sys.argv[4]
    App._on_ready = on_ready  # dispatched along the MRO, so the inspector gets it too
    headless(SIZE)
    threading.Timer(WATCHDOG_S, lambda: os._exit(3)).start()
    from minisweagent.run.utilities.mini_extra import main

    sys.argv = ["mini-extra", "inspector", PATH]
    main()
    print("the inspector ended without showing a frame", file=sys.stderr)
    os._exit(4)
