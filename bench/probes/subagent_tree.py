"""B18's measurement in a fresh interpreter: a session and its subagents' files.

    python -m bench.probes.subagent_tree T0 SESSION OPENS

From process start (T0, the parent's `time.time()` just before it started this process) to the
subagent tree summed (`core.subagents.subagent_tree`: the session read, every subagent's file
read and summed, priced); then OPENS subagents opened as the replay opens one (its file read,
its first step's view built, `LoadedDocument`), each timed; and the process's peak RSS.
"""

from __future__ import annotations

import json
import random
import sys
import time

if __name__ == "__main__":
    T0, session, opens = float(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    from swedeck.core.cost import Prices
    from swedeck.core.replay.document import LoadedDocument
    from swedeck.core.subagents import subagent_tree
    from swedeck.core.trajectory.loader import load_trajectory

    from .memory import peak_rss_mb

    root = subagent_tree(load_trajectory(session, lazy=True), Prices())
    tree_s = time.time() - T0
    rng = random.Random(7)
    opened = []
    for child in rng.sample(root.children, min(opens, len(root.children))):
        started = time.perf_counter()
        document = LoadedDocument(load_trajectory(child.target, lazy=True))
        document.step(1)
        opened.append(time.perf_counter() - started)
    print(json.dumps({"tree_s": tree_s, "subagents": len(root.children), "open_max_s": max(opened),
                      "open_median_s": sorted(opened)[len(opened) // 2], "peak_rss_mb": peak_rss_mb()}))
