"""SPEC §13 R1: kill -9 at random moments of a headless run.

Each trial runs `swedeck run --headless` (a real process, local shell, the scripted server)
on a six-step task whose responses stream in small delayed chunks and whose commands take
a few milliseconds, so a kill lands while a response streams, a command runs or a line is
written. Then: the `.jsonl` holds every message the model was ever sent, in order, with at
most a torn last line; it loads; and `--resume` carries it on to `Submitted`.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time

import pytest

from conftest import swedeck_command
from support.openai_server import OpenAIServer, Turn, Usage
from support.reliability import SUBMIT, api_view, headless_args, jsonl_records
from support.waiting import wait_until
from swedeck.cli import main
from swedeck.core.trajectory.loader import load_trajectory

TRIALS = 4
STEPS = 6
SEED = int(os.environ["SWEDECK_KILL_SEED"])
"""The trials' moments are drawn from this seed (conftest: new each run, printed in the header
and in each test's id, `seed<N>-<trial>`); `SWEDECK_KILL_SEED=N` runs a failed draw again.
Over runs, many more moments are tried than one run could afford."""


def six_steps(rng: random.Random) -> list[Turn]:
    turns = []
    for step in range(1, STEPS):
        command = f"echo step{step} >> log.txt && sleep 0.0{rng.randint(1, 4)} && echo done{step}"
        turns.append(Turn.bash_tool(command, text=f"Step {step}: appending to the log.", usage=Usage(100 * step, 10),
                                    chunk_delay_s=rng.uniform(0.002, 0.015)))
    turns.append(Turn.bash_tool(f"{SUBMIT} && (cat log.txt 2>/dev/null || true)", usage=Usage(700, 10)))
    return turns


def killed_run(tmp_path, rng: random.Random) -> tuple[list[dict], list[dict], str | None]:
    """Run until a random moment, kill -9; the requests the server saw and the jsonl's records."""
    with OpenAIServer() as server:
        server.script(*six_steps(rng))
        process = subprocess.Popen(headless_args(server.url, tmp_path, "append six steps to log.txt"),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            # After the k-th request, somewhere in its stream, its command or the writes after it.
            after = rng.randint(1, STEPS - 1)
            wait_until(lambda: len(server.requests) >= after, timeout=60, what=f"request {after}")
            time.sleep(rng.uniform(0.0, 0.12))
            os.kill(process.pid, signal.SIGKILL)
            assert process.wait(timeout=10) == -signal.SIGKILL
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        requests = [dict(request) for request in server.requests]
    records, torn = jsonl_records(tmp_path / "run.traj.jsonl")
    return requests, records, torn


@pytest.mark.timeout(120)
@pytest.mark.parametrize("trial", range(TRIALS), ids=[f"seed{SEED}-{trial}" for trial in range(TRIALS)])
def test_kill_9_at_a_random_moment_keeps_a_loadable_resumable_record(tmp_path, trial, capsys):
    rng = random.Random(f"{SEED}-{trial}")
    requests, records, torn = killed_run(tmp_path, rng)
    jsonl = tmp_path / "run.traj.jsonl"
    assert not (tmp_path / "run.traj.json").exists(), "the kill landed before the end"

    header, *rest = records
    assert header["role"] == "meta" and header["format"] == "swedeck-traj/1"
    messages = [record for record in rest if record["role"] != "meta"]
    recorded = [api_view(m) for m in messages]
    # Every message the model was ever sent was on disk first, in the same order.
    for number, request in enumerate(requests, start=1):
        sent = [api_view(m) for m in request["messages"]]
        assert recorded[: len(sent)] == sent, f"request {number} sent messages the jsonl does not hold in order"
    # Nothing twice, nothing beyond what the last answer can explain.
    actions = [m for m in messages if m["extra"]["message_type"] == "action"]
    assert len(actions) <= len(requests)
    call_ids = [call["id"] for m in actions for call in m.get("tool_calls") or ()]
    assert len(call_ids) == len(set(call_ids))
    assert [m["extra"]["message_type"] for m in messages].count("task") == 1

    trajectory = load_trajectory(jsonl)
    assert len(trajectory.messages) == len(messages)
    if torn is not None:
        assert any("incomplete" in warning for warning in trajectory.info.warnings)

    with OpenAIServer() as server:
        server.script(Turn.bash_tool(f"{SUBMIT} && (cat log.txt 2>/dev/null || true)"))
        # In this process (the CLI's own entry point): the killed run already paid for a process start.
        code = main(headless_args(server.url, tmp_path, "--resume", str(jsonl))[len(swedeck_command()):])
        out = capsys.readouterr()
        assert code == 0, out.out + out.err
        first_sent = [api_view(m) for m in server.requests[0]["messages"]]
    assert first_sent[: len(recorded)] == recorded, "the resumed prompt starts with the recorded history"
    saved = json.loads((tmp_path / "run.traj.json").read_text())
    assert saved["info"]["exit_status"] == "Submitted"
    assert [api_view(m) for m in saved["messages"][: len(recorded)]] == recorded
    kinds = [m["extra"]["message_type"] for m in saved["messages"]]
    assert kinds.count("task") == 1 and kinds.count("final") == 1
    log = tmp_path / "log.txt"
    logged = log.read_text().split() if log.exists() else []
    assert saved["info"]["submission"] == (log.read_text() if log.exists() else "")
    assert logged == [f"step{n}" for n in range(1, len(logged) + 1)], "no step ran twice"
