"""Issue 44.1-44.4: a batch's dataset and its output folder are data. A dataset's verify command
runs on this machine only when the person says so for this run; SWE-bench's grading (which
resets and cleans a working tree) never runs on a tree swedeck did not create; `--grade-only`
applies no patch outside a container and writes through no symlink; the batch diff reads
hostile folders within bounds and shows their ids literally; a kill during grading keeps the
agent's submission."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support.batch import batch_command, clean_env
from support.openai_server import Turn
from support.reliability import SUBMIT


def instances_file(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_a_local_batch_runs_no_dataset_command_on_this_machine_unasked(openai_server, tmp_path):
    openai_server.respond(lambda body: Turn.bash_tool(f"{SUBMIT} && echo patch"))
    marker = tmp_path / "ran-on-host"
    path = instances_file(tmp_path, [{"instance_id": "a", "task": "fix issue a", "verify": f"touch {marker}"}])
    out = tmp_path / "out"
    refused = subprocess.run(batch_command(openai_server, path, out), env=clean_env(tmp_path), capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode == 2 and "pass --verify-on-host" in refused.stderr and f"touch {marker}" in refused.stderr
    assert not marker.exists() and not openai_server.requests  # nothing ran, not even the agent
    allowed = subprocess.run(batch_command(openai_server, path, out, "--verify-on-host"), env=clean_env(tmp_path),
                             capture_output=True, text=True, timeout=120)
    assert allowed.returncode == 0, allowed.stderr
    said = allowed.stdout
    assert said.index("these dataset commands run on this machine") < said.index("  a: Submitted")  # said first
    assert f"a: `touch {marker}` in {tmp_path}" in said and marker.exists()


def test_swebench_grading_never_resets_a_tree_swedeck_did_not_create(openai_server, tmp_path):
    from test_batch_swebench import write_instances as swebench_instances

    repo = tmp_path / "mine"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "untracked-work.txt").write_text("the person's own work\n")
    records = [json.loads(line) for line in swebench_instances(tmp_path).read_text().splitlines()][:1]
    records[0]["cwd"] = str(repo)
    path = instances_file(tmp_path, records)
    for extra in ((), ("--verify-on-host",)):
        ran = subprocess.run(batch_command(openai_server, path, tmp_path / "out", *extra), env=clean_env(tmp_path),
                             capture_output=True, text=True, timeout=120)
        assert ran.returncode == 2 and "runs only in a container (--env docker)" in ran.stderr, ran.stderr
    assert (repo / "untracked-work.txt").read_text() == "the person's own work\n" and not openai_server.requests


def test_grade_only_applies_no_patch_outside_a_container(openai_server, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "batch.json").write_text(json.dumps({"model": "m", "executor": "local", "workers": 1, "instances": {
        "a": {"state": "done", "exit_status": "Submitted"}}}))
    (out / "preds.json").write_text(json.dumps({"a": {"instance_id": "a", "model_name_or_path": "m",
                                                      "model_patch": "diff --git a/x b/x\n"}}))
    path = instances_file(tmp_path, [{"instance_id": "a", "task": "fix issue a", "verify": "true"}])
    ran = subprocess.run(batch_command(openai_server, path, out, "--grade-only"), env=clean_env(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2 and "needs --env docker" in ran.stderr


def test_grading_writes_through_no_symlink_of_the_folder(tmp_path):
    """A tampered folder: the instance's files are symlinks to files outside it; the verifier's
    log is refused, not written through."""
    from support.docker_env import started_environment
    from swedeck.core.batch.verify import CommandVerifier

    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    folder = tmp_path / "out" / "a"
    folder.mkdir(parents=True)
    (folder / "verify.log").symlink_to(outside)
    with started_environment("local", tmp_path, "symlink") as env:
        verifier = CommandVerifier("true", 30.0, folder / "verify.log")
        verifier(env)
    assert outside.read_text() == "keep me\n" and verifier.result is not None and verifier.result.resolved


def test_a_kill_during_grading_keeps_the_submission(openai_server, tmp_path):
    """The prediction is written when the agent submits, before its grading (issue 44.4): a
    batch killed while it grades keeps the agent's work, and the next run does not pay for it again."""
    import os
    import signal

    from support.waiting import wait_until

    openai_server.respond(lambda body: Turn.bash_tool(f"{SUBMIT} && echo the-patch"))
    started = tmp_path / "grading-started"
    path = instances_file(tmp_path, [{"instance_id": "a", "task": "fix issue a",
                                      "verify": f"touch {started} && sleep 60"}])
    out = tmp_path / "out"
    process = subprocess.Popen(batch_command(openai_server, path, out, "--verify-on-host"), env=clean_env(tmp_path),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_until(started.exists, 60)
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait(30)
    predictions = json.loads((out / "preds.json").read_text())
    assert predictions["a"]["model_patch"] == "the-patch\n"
    asked = len(openai_server.requests)
    again = subprocess.run(batch_command(openai_server, path, out, "--no-verify"), env=clean_env(tmp_path),
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "1 already finished" in again.stdout and len(openai_server.requests) == asked


HOSTILE_STATES = {
    "fifo": None,  # a FIFO batch.json
    "zero": None,  # /dev/zero as preds.json
    "types": {"instances": {"a": {"state": ["x"], "steps": "many", "cost": "free", "exit_status": {"x": 1},
                                  "verdict": 7}}},
    "deep": "[" * 100_000 + "]" * 100_000,
    "huge": {"instances": {"a": {"steps": 10 ** 400, "cost": 1e308 * 10, "state": "done"}}},
    "list": {"instances": [1, 2, 3]},
    "ids": {"instances": {"../../etc": {"state": "done"}, "[@click=app.quit]x[/]": {"state": "done"},
                          "": {"state": "done"}}},
}


@pytest.mark.parametrize("kind", list(HOSTILE_STATES))
def test_the_batch_diff_reads_hostile_folders_within_bounds(tmp_path, kind):
    """Issue 44.3: `swedeck diff A/ B/` on a hostile folder ends at once, with an answer or one
    clear line, never a hang, a read without end or an internal error."""
    import os

    from conftest import swedeck_command

    good = tmp_path / "good"
    good.mkdir()
    (good / "batch.json").write_text(json.dumps({"instances": {"a": {"state": "done", "steps": 1}}}))
    bad = tmp_path / "bad"
    bad.mkdir()
    value = HOSTILE_STATES[kind]
    if kind == "fifo":
        os.mkfifo(bad / "batch.json")
        (bad / "preds.json").write_text("{}")
    elif kind == "zero":
        (bad / "batch.json").write_text("{}")
        (bad / "preds.json").symlink_to("/dev/zero")
    else:
        (bad / "batch.json").write_text(value if isinstance(value, str) else
                                        json.dumps(value).replace("Infinity", "1e999"))
    for args in ((str(good), str(bad)), (str(bad), str(good))):
        ran = subprocess.run([*swedeck_command(), "diff", *args, "--print", "--json"], capture_output=True, text=True,
                             timeout=60)
        assert ran.returncode in (0, 2), ran.stderr
        assert "Traceback" not in ran.stderr and (ran.returncode == 0 or ran.stderr.count("\n") == 1), ran.stderr


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_the_batch_diff_view_shows_instance_ids_literally(tmp_path):
    from swedeck.core.diff.batch import compare_batches
    from swedeck.tui.diff.app import DiffApp

    crafted = ["[@click=app.quit]x[/]", "[/]", "[bold]loud[/bold]"]
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "batch.json").write_text(json.dumps({"instances": {i: {"state": "done", "steps": 1} for i in crafted}}))
    app = DiffApp.of_batches(compare_batches(tmp_path / "a", tmp_path / "b"))
    async with app.run_test(size=(120, 30)) as pilot:
        from textual.widgets import DataTable

        from support.waiting import wait_for

        await wait_for(pilot, lambda: app.screen.query(DataTable) and app.screen.query_one(DataTable).row_count == 3)
        table = app.screen.query_one(DataTable)
        shown = sorted(str(table.get_row_at(row)[1]) for row in range(3))
        assert shown == sorted(crafted)
        await pilot.click(DataTable, offset=(6, 1))
        await pilot.pause()
        assert app.is_running


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
