"""B8 export page (SPEC §16, issue 28): a 1,000-step run as one offline HTML page.

Figures, from one run:
- `page_mb`: the page's size (goal: at most 5 MB) for 1,000 steps of generated content
  (command output mean 1,400 characters, as in B2's formats);
- `export_ms`: `swedeck export` building it in this process (loading included);
- `first_step_ms`: headless Chromium (Debian's, the tests' driver: tests/support/browser.py)
  from navigating to the file until the page's script has shown the first step (goal: at
  most 2 s), the median of 3; `first_step_over_blank`: the same over an empty page's load,
  which is what the browser costs before our page does anything.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from .generate import write_jsonl
from .result import Result, at_most
from .stats import ms

RUNS = 3


def run(quick: bool, workdir: Path) -> Result:
    from swedeck.core.export.share import export

    steps = 100 if quick else 1000
    source = write_jsonl(workdir / "export.traj.jsonl", steps, 1400)
    started = time.perf_counter()
    page = export(source, "html")
    export_s = time.perf_counter() - started
    out = workdir / "export.html"
    out.write_bytes(page.data)
    figures: dict = {"steps": steps, "page_mb": round(len(page.data) / 1e6, 2), "export_ms": ms(export_s)}
    notes: dict = {}
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    try:
        from support.browser import Browser  # the tests' own driver of a real Chromium
    except ImportError as error:
        notes["browser"] = f"the browser driver needs websocket-client (pip install '.[test]'): {error}"
        return Result("B8", "export page", figures, notes=notes, goal={"page_mb": at_most(5)})
    blank = workdir / "blank.html"
    blank.write_text('<!DOCTYPE html><html><body data-ready="true"></body></html>')
    browser = Browser()
    try:
        loads = [browser.open(out) for _ in range(RUNS)]
        blanks = [browser.open(blank) for _ in range(RUNS)]
    finally:
        browser.close()
    figures |= {"first_step_ms": ms(statistics.median(loads)), "blank_page_ms": ms(statistics.median(blanks)),
                "first_step_over_blank": round(statistics.median(loads) / statistics.median(blanks), 1)}
    notes["browser"] = "headless Chromium over the DevTools protocol, network cut; median of 3 loads of the file"
    return Result("B8", "export page", figures, notes=notes,
                  goal={"page_mb": at_most(5), "first_step_ms": at_most(2000)})
