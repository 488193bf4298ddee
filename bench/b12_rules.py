"""B12 rules (SPEC §20, issue 50): `swedeck rules dry-run` over a 500-instance batch folder.

A batch folder as `swedeck batch` writes it (one folder per instance, each with its
trajectory) of 500 runs of 30 steps, each step one command drawn from the kinds agents run
(reads, edits, tests, installs, pipes, compound commands); the whole `swedeck rules dry-run
RULES FOLDER --json` process, timed, with the rule set of the tests (a Codex execpolicy).
Goal: at most 30 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from .result import Result, at_most

INSTANCES = 500
STEPS = 30
COMMANDS = ["ls -la", "cat src/pkg/module_{n}.py", "grep -rn 'def f_{n}' src", "sed -n '1,40p' src/a_{n}.py",
            "python -m pytest tests/test_{n}.py -q", "pip install requests", "git status && git diff",
            "find . -name '*.pyc' | xargs rm -f", "sed -i 's/x/y/' src/b_{n}.py", "rm -rf build_{n}",
            "curl -s https://example.com/{n}", "echo done > /tmp/out_{n}"]


def _batch(folder: Path, instances: int) -> None:
    for number in range(instances):
        messages = [{"role": "system", "content": "sys", "extra": {"message_type": "system"}},
                    {"role": "user", "content": "task", "extra": {"message_type": "task"}}]
        for step in range(1, STEPS + 1):
            command = COMMANDS[(number + step) % len(COMMANDS)].format(n=number)
            messages.append({"role": "assistant", "content": f"step {step}\n```bash\n{command}\n```",
                             "extra": {"message_type": "action", "step": step}})
            messages.append({"role": "user", "content": "ok", "extra": {"message_type": "observation"}})
        instance = folder / f"inst-{number:04d}"
        instance.mkdir(parents=True, exist_ok=True)
        (instance / f"inst-{number:04d}.traj.json").write_text(json.dumps(
            {"trajectory_format": "swedeck-1", "info": {"exit_status": "Submitted"}, "messages": messages}))


def run(quick: bool, workdir: Path) -> Result:
    instances = 100 if quick else INSTANCES
    folder = workdir / "batch"
    _batch(folder, instances)
    rules = Path(__file__).parent.parent / "tests" / "fixtures" / "rules" / "codex.rules"
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "swedeck", "rules", "dry-run", str(rules), str(folder), "--json"],
                          capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    record = json.loads(done.stdout)
    figures = {"instances": instances, "commands": record["commands"], "dry_run_s": round(wall, 2),
               "allowed": record["counts"]["allow"], "asked": record["counts"]["ask"],
               "denied": record["counts"]["deny"], "allowed_risky": record["allowed_risky"]}
    return Result("B12", "rules dry-run", figures, notes={"how": f"{instances} instance folders of {STEPS} steps; "
                                                          "the whole process, timed"},
                  goal={"dry_run_s": at_most(30)})
