"""B11 compaction (SPEC §17, issue 48): what survives a compaction, and one number for it.

Survival. Over a corpus of compactions, of the paths, commands and failing tests the replaced
part touched, the share still in what the model saw next (`trajectory/losses.py`, word for
word):

- ours, generated: runs of 50, 300 and 1,500 commands over real-looking file and test names
  (`src/pkg/module_17.py`, `tests/test_module_17.py::test_case_3`), with failing pytest runs
  and errors; each compacted like swedeck's `summarize` (all but the last step, the marker
  where the first replaced message stood), once with a summary alone (a summary that names
  none of them: the worst case a model's summary can be) and once with the ledger, bounded by
  the default `ledger_max_tokens`;
- the peers' own compactions in `SWEDECK_PEER_FIXTURES` (Claude Code's and Inspect's samples,
  when that folder is given): their summaries as they are.
Goal: 100 % of the paths and failing tests with the ledger.

The bar. A headless session (`swedeck run --headless --json`) against `bench.stream_server`
with `summarize` at half a small window: at each compaction, the meter's last figure before it
(`next_estimate`) against the figure that fired it (the marker's `tokens_before`), and that it
had reached the bound the meter shows (`compact_at`). Goal: 0 differences.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .result import Result, at_least, at_most
from .server_process import StreamServer

SIZES = (50, 300, 1500)
MODULES = 40
"""Files a run touches (a real task touches tens, not hundreds)."""
FAILING = 11
"""Test modules that fail (three cases each)."""
KINDS = ("paths", "commands", "failing tests")


def _run(commands: int) -> list[Any]:
    from swedeck.core.messages import MessageType, make_message

    messages = [make_message("system", "You are an agent.", MessageType.SYSTEM),
                make_message("user", "Fix the failing tests of the package.", MessageType.TASK)]
    for number in range(commands):
        module = f"src/pkg/module_{number % MODULES}.py"
        if number % 5 == 4:
            failing = number % FAILING
            command = f"python -m pytest tests/test_module_{failing}.py -q"
            output = (f"FAILED tests/test_module_{failing}.py::test_case_{number % 3} - AssertionError\n"
                      "1 failed, 3 passed in 0.12s\n")
            code = 1
        elif number % 5 == 3:
            command = f"sed -i 's/x/y/' {module}"
            output, code = "", 0
        else:
            command = f"cat {module}"
            output, code = f"def f_{number}():\n    return {number}\n", 0
        call = f"call_{number}"
        messages.append(make_message("assistant", "", MessageType.ACTION, step=number + 1,
                                     actions=[{"command": command, "tool_call_id": call}]))
        messages.append(make_message("tool", output, MessageType.OBSERVATION, tool_call_id=call, command=command,
                                     returncode=code, raw_output=output))
    return messages


def _survival(messages: list[Any], with_ledger: bool) -> dict[str, list[int]]:
    from swedeck.core.messages import MessageType, make_message
    from swedeck.core.processors.summarize import Summarize
    from swedeck.core.trajectory.ledger import ledger_of
    from swedeck.core.trajectory.losses import loss_at

    replaces = list(range(2, len(messages) - 2))  # all but the system prompt, the task and the last step
    summary = "We read the package's modules, edited some of them and ran its tests; some tests failed."
    text = summary
    if with_ledger:
        ledger = ledger_of([messages[index] for index in replaces], Summarize().ledger_max_tokens)
        text += "\n\n" + ledger.text()
    marker = make_message("user", text, MessageType.COMPACTION, summary=summary, replaces=replaces)
    report = loss_at([*messages, marker], len(messages))
    return {kind: report["kinds"][kind] for kind in KINDS}


def _share(pairs: list[list[int]]) -> float | None:
    total = sum(total for total, _ in pairs)
    return round(100.0 * sum(kept for _, kept in pairs) / total, 1) if total else None


def _peers(figures: dict[str, Any], notes: dict[str, str]) -> None:
    from swedeck.core.trajectory.loader import load_trajectory
    from swedeck.core.trajectory.losses import compaction_losses

    folders = [Path(__file__).parent.parent / "tests" / "fixtures"]  # the public samples the tests read
    if os.environ.get("SWEDECK_PEER_FIXTURES"):
        folders.append(Path(os.environ["SWEDECK_PEER_FIXTURES"]))
    else:
        notes["peers"] = "SWEDECK_PEER_FIXTURES is not set: only the repository's samples were read"
    reports: list[dict[str, Any]] = []
    for path in sorted(path for folder in folders for path in folder.rglob("*")):
        if path.suffix not in (".jsonl", ".json", ".eval", ".traj") or not path.is_file() or path.stat().st_size > 200 << 20:
            continue
        try:
            trajectory = load_trajectory(path)
        except Exception:  # noqa: BLE001 - not a trajectory of a format swedeck reads
            continue
        reports += compaction_losses(list(trajectory.messages))
    figures["peer_compactions"] = len(reports)
    for kind in KINDS:
        figures[f"peer_{kind.replace(' ', '_')}_survival_pct"] = _share([report["kinds"][kind] for report in reports])


def _bar(workdir: Path, quick: bool) -> dict[str, Any]:
    steps = 10 if quick else 24
    responses = [{"tokens": 120, "command": f"cat src/pkg/module_{number}.py"} for number in range(steps)]
    with StreamServer(workdir, responses) as server:
        done = subprocess.run(
            [sys.executable, "-m", "swedeck", "run", "--headless", "--json", "-t", "read the modules", "--cwd",
             str(workdir), "-o", str(workdir / "bar.traj.json"), "-m", "hosted_vllm/bench",
             "-c", f"model.model_kwargs={{api_base: '{server.api_base}'}}", "-c", "model.cost_tracking=ignore_errors",
             "-c", "model.context_window=2200", "-c", f"agent.step_limit={steps}",
             "-c", "agent.history_processors=[{type: summarize, at: 0.5, keep_last: 1}]"],
            capture_output=True, text=True, timeout=600, cwd=workdir)
    shown: dict[str, Any] | None = None
    at_start: dict[str, Any] | None = None
    compactions = differences = 0
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind = event.get("event")
        if kind == "ContextUpdated":
            shown = event.get("status")
        elif kind == "CompactionStarted":
            at_start = shown
        elif kind == "Compacted" and not event.get("undone"):
            compactions += 1
            fired = event.get("tokens_before")
            if at_start is None or at_start.get("next_estimate") != fired or fired < (at_start.get("compact_at") or 0):
                differences += 1
    figures: dict[str, Any] = {"bar_compactions": compactions, "bar_differences": differences,
                               "bar_exit": done.returncode}
    if done.returncode not in (0, 1):
        figures["bar_note"] = done.stderr.strip()[-300:]
    return figures


def run(quick: bool, workdir: Path) -> Result:
    figures: dict[str, Any] = {}
    notes: dict[str, str] = {}
    for size in SIZES[:2] if quick else SIZES:
        messages = _run(size)
        for with_ledger, name in ((False, "summary"), (True, "ledger")):
            survived = _survival(messages, with_ledger)
            for kind in KINDS:
                total, kept = survived[kind]
                figures[f"{name}_{size}_{kind.replace(' ', '_')}_pct"] = round(100.0 * kept / total, 1) if total else None
    _peers(figures, notes)
    figures.update(_bar(workdir, quick))
    if not figures["bar_compactions"]:
        notes["bar"] = "the session made no compaction: the bar was not measured"
    largest = SIZES[1] if quick else SIZES[-1]
    goal = {f"ledger_{size}_{kind}_pct": at_least(100.0) for size in (SIZES[:2] if quick else SIZES)
            for kind in ("paths", "failing_tests")}
    goal["bar_differences"] = at_most(0)
    notes["how"] = (f"generated runs of {', '.join(map(str, SIZES))} commands; a summary that names nothing vs the "
                    f"ledger at the default ledger_max_tokens; largest {largest}")
    return Result("B11", "compaction survival", figures, notes=notes, goal=goal)
