"""B2 through swedeck's replay UI: `swedeck replay FILE [--step N]`, headless.

    python -m bench.probes.replay_ui T0 WIDTH HEIGHT JUMPS FILE [--step N]

Runs the real command line with every Textual app headless at WIDTH x HEIGHT. On Textual's
`Ready` event (the first frame has been rendered) it notes the seconds since T0 (the
parent's `time.time()` just before it started this process) and the step on screen, then
jumps to JUMPS random steps one after the other, then moves JUMPS times to the next (or,
at the end, the previous) step, each timed from `go(step)` to the end of the frame that
shows it, and prints those figures and the peak resident memory. A large file whose first or
last steps show while the whole is read: the jumps wait for it (`whole_read_s`, from T0).

With `SWEDECK_PROBE_KEYS=1` in its environment it first times keys, pressed as the terminal
driver posts them, from the first frame on (while the token curve's worker runs, issue 49):
JUMPS go-tos (`g`, the step's digits, `enter`: from `enter` to the frame showing the step),
JUMPS next-steps (`l`, `h` at the last step) and JUMPS next-matches of a search (`n`, while the
search reads the file: `search_phase`), each to the app's and then the screen's
refresh after it (`key_*_ms`), and to the first frame written to the terminal with that
step on screen (`key_*_paint_ms`: keypress to paint).
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

WATCHDOG_S = 120


def on_ready(app: App, _event: events.Ready) -> None:
    first = time.time() - T0
    import random  # after the first frame: mini-swe-agent's probe has no such imports before its own
    import statistics

    from .memory import peak_rss_mb

    screen = app.screen
    shown, part = screen.step, screen.step_count
    rng = random.Random(7)
    jumps: list[float] = []
    steps: list[float] = []
    whole: dict[str, float] = {}

    def jump() -> None:
        total = screen.step_count
        if len(steps) == JUMPS:
            figures = {"first_screen_s": first, "shown_step": shown, "steps": total, "steps_shown_first": part,
                       **whole,
                       "jump_median_s": statistics.median(jumps), "jump_max_s": max(jumps),
                       "next_median_s": statistics.median(steps), "next_max_s": max(steps),
                       "peak_rss_mb": peak_rss_mb(), "jumps_ms": [round(value * 1000, 1) for value in jumps], **KEYS}
            os.write(1, (json.dumps(figures) + "\n").encode())  # Textual may have replaced sys.stdout
            os._exit(0)
        random_phase = len(jumps) < JUMPS
        target = rng.randint(1, total) if random_phase else screen.step + 1 if screen.step < total else screen.step - 1
        times = jumps if random_phase else steps
        started = time.perf_counter()
        screen.go(target, force=True)
        app.call_after_refresh(lambda: (times.append(time.perf_counter() - started), app.call_later(jump)))

    def start() -> None:
        if os.environ.get("SWEDECK_PROBE_KEYS") == "1":
            app.run_worker(key_phase(app, rng, screen.step_count, jump, jumps, steps))
        else:
            app.call_later(jump)

    if getattr(screen, "reading", None) is None:
        start()
        return

    def read() -> None:  # a large file's first or last steps shown while the whole is read (issue 49)
        if screen.reading is None:
            whole["whole_read_s"] = time.time() - T0
            timer.stop()
            start()

    timer = app.set_interval(0.01, read)


async def _until(condition, limit_s: float = 10.0) -> None:
    import asyncio

    deadline = time.perf_counter() + limit_s
    while not condition():
        if time.perf_counter() > deadline:
            os.write(2, b"the probe's key was not handled in time\n")
            os._exit(5)
        await asyncio.sleep(0.001)


async def _frame(app: App) -> None:
    """Until the frame after what the keys posted so far: the app's, then the screen's refresh."""
    import asyncio

    done = asyncio.get_running_loop().create_future()
    app.call_after_refresh(lambda: app.screen.call_after_refresh(lambda: done.done() or done.set_result(None)))
    await done


PAINTS: list[tuple[float, int]] = []
"""When the app wrote a frame to the terminal, and the step the replay showed then."""


def _painted(screen, started: float, target: int) -> float:
    """From `started` to the first frame written with step `target` on screen (keypress to paint)."""
    return min((at for at, step in PAINTS if at >= started and step == target), default=float("nan")) - started


def _watch_paints(app: App) -> None:
    display = type(app)._display

    def painted(self, screen, renderable) -> None:
        display(self, screen, renderable)
        PAINTS.append((time.perf_counter(), getattr(app.screen, "step", 0)))

    type(app)._display = painted


async def key_phase(app: App, rng, total: int, then, jumps: list[float], steps: list[float]) -> None:
    screen = app.screen
    gotos: list[float] = []
    nexts: list[float] = []
    goto_paints: list[float] = []
    next_paints: list[float] = []
    _watch_paints(app)
    for _ in range(JUMPS):
        target = rng.randint(1, total)
        app.simulate_key("g")  # the question: a line over the view (a dialog screen before issue 49's work)
        await _until(lambda: app.screen is not screen or type(app.focused).__name__ == "AskLine")
        for digit in str(target):
            app.simulate_key(digit)
        await _frame(app)
        started = time.perf_counter()
        app.simulate_key("enter")
        await _until(lambda target=target: app.screen is screen and screen.step == target)
        await _frame(app)
        gotos.append(time.perf_counter() - started)
        goto_paints.append(_painted(screen, started, target))
    for _ in range(JUMPS):
        before = screen.step
        started = time.perf_counter()
        app.simulate_key("l" if before < total else "h")
        await _until(lambda before=before: screen.step != before)
        await _frame(app)
        nexts.append(time.perf_counter() - started)
        next_paints.append(_painted(screen, started, screen.step))
    searching, search_paints = await search_phase(app, screen)
    KEYS.update(key_search_next_paint_ms=[round(value * 1000, 1) for value in search_paints],
                search_running_presses=searching)
    KEYS.update(key_goto_ms=[round(value * 1000, 1) for value in gotos],
                key_next_ms=[round(value * 1000, 1) for value in nexts],
                key_goto_paint_ms=[round(value * 1000, 1) for value in goto_paints],
                key_next_paint_ms=[round(value * 1000, 1) for value in next_paints])
    then()


SEARCH = "diff"
"""The query of the search phase: a command one step in eight runs (`git diff`)."""


async def search_phase(app: App, screen) -> tuple[int, list[float]]:
    """A search (`/`, the query, `enter`), then JUMPS next-matches (`n`) from its first match on,
    while the search's worker still reads the file: keypress to paint, and how many of them were
    pressed while it ran."""
    app.simulate_key("slash")
    await _until(lambda: type(app.focused).__name__ == "AskLine")
    for character in SEARCH:
        app.simulate_key(character)
    await _frame(app)
    app.simulate_key("enter")
    await _until(lambda: len(screen.matches) > 1, limit_s=60)
    running = 0
    paints: list[float] = []
    for _ in range(JUMPS):
        before = screen.step
        running += bool(screen.searching)
        started = time.perf_counter()
        app.simulate_key("n")
        await _until(lambda before=before: screen.step != before)
        await _frame(app)
        paints.append(_painted(screen, started, screen.step))
    return running, paints


KEYS: dict = {}


def _timed_out() -> None:
    """The watchdog: every thread's stack into a file the error names, then exit 3."""
    import faulthandler
    import tempfile

    with tempfile.NamedTemporaryFile("w", prefix="swedeck-probe-hang-", suffix=".txt", delete=False) as dump:
        faulthandler.dump_traceback(dump, all_threads=True)
    os.write(2, f"the probe timed out after {WATCHDOG_S} s: the threads' stacks are in {dump.name}\n".encode())
    os._exit(3)


if __name__ == "__main__":
    T0, SIZE, JUMPS = float(sys.argv[1]), (int(sys.argv[2]), int(sys.argv[3])), int(sys.argv[4])
    App._on_ready = on_ready  # dispatched along the MRO, so every app subclass gets it too
    run_headless(SIZE)
    threading.Timer(WATCHDOG_S, _timed_out).start()
    from swedeck.cli import main

    code = main(["replay", *sys.argv[5:]])
    print(f"the command ended (exit {code}) without showing a frame", file=sys.stderr)
    os._exit(code or 4)
