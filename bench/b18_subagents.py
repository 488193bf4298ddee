"""B18 subagents (issue 65.5): the sessions that break the agents, accounted for.

A generated Claude Code session shaped like Claude Code #23373 (404 subagents, about 100 MB: the
session and each subagent's file beside it, `bench.generate.write_claude_code_with_subagents`):
the subagent tree from process start (the session read, every subagent's file read, summed and
priced; probe `subagent_tree`), 20 subagents opened as the replay opens one (median, max), and
the process's peak RSS; RUNS runs, medians (the RSS the largest). Then a 10,000-step replay
re-priced after a price change: its steps' usage as the replay's curve worker holds it, priced
again with a `model.prices` override (in this process). Goals: the tree in at most 1 s, a
subagent opened in at most 200 ms, at most 300 MB, the re-pricing in at most 1 s.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from .b2_replay_open import FORMATS_OUTPUT_CHARS
from .generate import write_claude_code, write_claude_code_with_subagents
from .probe import probe
from .result import Result, at_most
from .stats import ms

SUBAGENTS = 404
STEPS_EACH = 90
RUNS = 3
OPENS = 20


def run(quick: bool, workdir: Path) -> Result:
    subagents = 40 if quick else SUBAGENTS
    session = write_claude_code_with_subagents(workdir / "session.jsonl", subagents, STEPS_EACH, FORMATS_OUTPUT_CHARS)
    size = session.stat().st_size + sum(path.stat().st_size for path in session.with_suffix("").glob("subagents/*"))
    made = [probe("subagent_tree", repr(time.time()), str(session), str(OPENS), timeout=300)
            for _ in range(1 if quick else RUNS)]
    figures = {"mb": round(size / 1e6, 1), "subagents": made[0]["subagents"],
               "tree_ms": ms(statistics.median(run["tree_s"] for run in made)),
               "open_median_ms": ms(statistics.median(run["open_median_s"] for run in made)),
               "open_max_ms": ms(max(run["open_max_s"] for run in made)),
               "peak_rss_mb": max(run["peak_rss_mb"] for run in made)}
    figures.update(_repricing(workdir, 1000 if quick else 10_000))
    return Result("B18", "subagents", figures,
                  goal={"tree_ms": at_most(1000), "open_max_ms": at_most(200), "peak_rss_mb": at_most(300),
                        "reprice_ms": at_most(1000)},
                  notes={"how": "a session of SUBAGENTS subagent files: the tree from process start, subagents "
                                "opened (read, first step's view), peak RSS; a replay's steps re-priced"})


def _repricing(workdir: Path, steps: int) -> dict[str, float | int]:
    """A replay's steps priced again after a price change: from the usage its curve's points hold."""
    from swedeck.core.cost import Prices, RunningCost
    from swedeck.core.replay.document import LoadedDocument
    from swedeck.core.replay.token_curve import token_curve
    from swedeck.core.trajectory.loader import load_trajectory

    path = write_claude_code(workdir / "long.jsonl", steps, 200)
    trajectory = load_trajectory(path, lazy=True)
    points = [(point.usage, point.model) for point in token_curve(LoadedDocument(trajectory))]
    before = RunningCost(Prices(), trajectory.info.model_name)
    for usage, model in points:
        before.add(usage, model)
    started = time.perf_counter()
    after = RunningCost(Prices({"claude-sonnet-4-5": {"input": 1.0, "output": 5.0}}), trajectory.info.model_name)
    for usage, model in points:
        after.add(usage, model)
    return {"reprice_steps": len(points), "reprice_ms": ms(time.perf_counter() - started)}
