"""B17 ACP start-up (SPEC §19, issue 60.9): what swedeck adds to an ACP adapter's own start.

The real `claude-code-acp` (npm, from `SWEDECK_AGENTS_DIR`, as `.ci/run` installs it) is opened
PAIRS times each way, alternating: by a bare client that only spawns it and sends `initialize`
and `session/new` (`bench.probes.acp_raw`), and by `swedeck run --acp … --headless`, whose
start-up lines give the same phases' times since its spawn began; it is stopped (SIGTERM, which
ends a session whole) once `session/new` is said, before the prompt reaches the model.
Figures: `session/new` answered, median each way, and swedeck's added time. Goal: at most 50 ms.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
from pathlib import Path

from .result import Result, at_most

PAIRS = 5


def _adapter() -> str | None:
    folder = os.environ.get("SWEDECK_AGENTS_DIR")
    candidate = Path(folder) / "node_modules" / ".bin" / "claude-code-acp" if folder else None
    return str(candidate) if candidate is not None and candidate.exists() else shutil.which("claude-code-acp")


def _through_swedeck(adapter: str, workdir: Path, number: int, env: dict[str, str], root: Path) -> float:
    """`session/new`'s time as swedeck says it; then the session is stopped (SIGTERM ends it whole):
    the agent would retry the closed upstream for minutes."""
    running = subprocess.Popen([sys.executable, "-m", "swedeck", "run", "--acp", adapter, "--headless", "-t", "hello",
                                "--upstream", "http://127.0.0.1:9", "--cwd", str(workdir), "-o",
                                str(workdir / f"acp-{number}")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, env=env, cwd=root)
    assert running.stdout is not None
    said = []
    try:
        for line in running.stdout:
            said.append(line)
            found = re.search(r"start-up: session/new at ([0-9.]+) s", line)
            if found is not None:
                return float(found.group(1))
        raise RuntimeError("".join(said)[-2000:])
    finally:
        running.send_signal(signal.SIGTERM)
        try:
            running.wait(timeout=60)
        except subprocess.TimeoutExpired:
            running.kill()
            running.wait()


def run(quick: bool, workdir: Path) -> Result:
    adapter = _adapter()
    if adapter is None:
        return Result("B17", "ACP start-up", {"added_session_new_ms": None},
                      goal={"added_session_new_ms": at_most(50)},
                      notes={"added_session_new_ms": "claude-code-acp is not installed (SWEDECK_AGENTS_DIR)"})
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "ANTHROPIC_API_KEY": "sk-ant-bench-0000", "IS_SANDBOX": "1",
           "DISABLE_AUTOUPDATER": "1", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    root = Path(__file__).parent.parent
    bare, through = [], []
    for number in range(2 if quick else PAIRS):
        for way in (("bare", "swedeck") if number % 2 else ("swedeck", "bare")):
            if way == "bare":
                done = subprocess.run([sys.executable, "-m", "bench.probes.acp_raw", adapter, str(workdir)],
                                      capture_output=True, text=True, timeout=300, env=env, cwd=root)
                bare.append(json.loads(done.stdout.strip().splitlines()[-1])["session/new"])
            else:
                through.append(_through_swedeck(adapter, workdir, number, env, root))
    figures = {"pairs": len(bare), "bare_session_new_ms": round(statistics.median(bare) * 1000, 1),
               "swedeck_session_new_ms": round(statistics.median(through) * 1000, 1)}
    figures["added_session_new_ms"] = round(figures["swedeck_session_new_ms"] - figures["bare_session_new_ms"], 1)
    return Result("B17", "ACP start-up", figures, goal={"added_session_new_ms": at_most(50)}, notes={
        "how": "claude-code-acp opened by a bare JSON-RPC client and by swedeck run --acp --headless, alternating; "
               "session/new answered, seconds since the adapter's spawn began, median each way"})
