"""B3: the time from process start to the first frame of a swedeck command's UI.

    python -m bench.probes.first_frame T0 WIDTH HEIGHT swedeck-args...

Runs the real command line (`swedeck.cli.main`), with two changes made from here so the
app's code stays as it is: every Textual app runs headless at WIDTH x HEIGHT (it composes
and renders each frame, but writes nothing to a terminal), and on Textual's `Ready` event
("the DOM is ready and the first frame has been displayed") this prints the seconds since
T0 (the parent's `time.time()` just before it started this process), whether an import of
litellm had started or finished by then, and exits at once.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import swedeck.tui  # noqa: F401  (before Textual: it sets the frame rate of swedeck's apps)

# isort: split

from textual import events
from textual.app import App

from .live_app import run_headless

WATCHDOG_S = 60


def report(app: App, _event: events.Ready) -> None:
    litellm = sys.modules.get("litellm")
    figures = {"first_frame_s": time.time() - T0, "screen": type(app.screen).__name__,
               # A background import is in sys.modules from its first line; it competes for the GIL.
               "litellm_import_started": litellm is not None,
               "litellm_imported": litellm is not None and not getattr(litellm.__spec__, "_initializing", False)}
    os.write(1, (json.dumps(figures) + "\n").encode())  # Textual may have replaced sys.stdout
    os._exit(0)  # the session's threads need no goodbye: the figure is taken


if __name__ == "__main__":
    T0, SIZE = float(sys.argv[1]), (int(sys.argv[2]), int(sys.argv[3]))
    App._on_ready = report  # dispatched along the MRO, so every app subclass gets it too
    run_headless(SIZE)
    threading.Timer(WATCHDOG_S, lambda: os._exit(3)).start()
    from swedeck.cli import main

    code = main(sys.argv[4:])
    print(f"the command ended (exit {code}) without showing a frame", file=sys.stderr)
    os._exit(code or 4)
