"""Batches that end in verdicts (SPEC §15, issue 30): each instance's verifier runs in its
own environment right after its agent submits; every instance ends in exactly one class;
`report.json` counts them over the whole input in SWE-bench's shape; infra failures make
the exit code non-zero and `--rerun infra` runs only those again. Real sessions against
the scripted model server, in the local environment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.batch import ID_IN_TASK, conversation, run_batch
from support.driver import make_config
from support.openai_server import Turn, model_config
from support.reliability import SUBMIT
from swedeck.core.batch.instances import load_instances

DONE_CHECK = "test -f done.txt"


def write_instances(tmp_path: Path) -> Path:
    """Six instances, one per class: each in its own folder (`gone`'s does not exist)."""
    specs = {
        "ok": {"verify": DONE_CHECK},            # makes done.txt, then submits: resolved
        "no": {"verify": DONE_CHECK},            # submits without it: unresolved
        "hang": {"verify": "sleep 30"},          # the verifier runs past its time: infra failure
        "limit": {"verify": DONE_CHECK},         # never submits: agent error (the step limit)
        "empty": {},                             # no verifier, nothing submitted: empty patch
        "gone": {"verify": DONE_CHECK},          # its folder is missing: infra failure (the environment)
    }
    lines = []
    for instance_id, fields in specs.items():
        folder = tmp_path / "work" / instance_id
        if instance_id != "gone":
            folder.mkdir(parents=True)
        lines.append(json.dumps({"instance_id": instance_id, "task": f"fix issue {instance_id}", "cwd": str(folder),
                                 **fields}))
    path = tmp_path / "instances.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def answer(body: dict) -> Turn:
    instance_id = ID_IN_TASK.search(conversation(body)).group(1)
    if instance_id == "ok":
        return Turn.bash_tool(f"touch done.txt && {SUBMIT} && echo patch")
    if instance_id == "limit":
        return Turn.bash_tool("ls")
    if instance_id == "empty":
        return Turn.bash_tool(SUBMIT)
    return Turn.bash_tool(f"{SUBMIT} && echo patch")


def config_for(server, tmp_path: Path, **batch_fields):
    config = make_config(tmp_path, model_config(server), agent__step_limit=2)
    config.batch.verify_timeout_s = 1.0
    for key, value in batch_fields.items():
        setattr(config.batch, key, value)
    return config


def test_every_instance_ends_in_one_class_and_the_report_says_so(openai_server, tmp_path):
    openai_server.respond(answer)
    instances = load_instances(str(write_instances(tmp_path)))
    out = tmp_path / "out"
    code, sink = run_batch(config_for(openai_server, tmp_path), instances, out)
    assert code == 1  # an infra failure: not a clean batch
    state = json.loads((out / "batch.json").read_text())["instances"]
    assert {i: record["verdict"] for i, record in state.items()} == {
        "ok": "resolved", "no": "unresolved", "hang": "infra_failure", "limit": "agent_error",
        "empty": "empty_patch", "gone": "infra_failure"}
    assert state["hang"]["verify"]["problem"] == "the verifier ran past 1 s"
    assert state["ok"]["verify"]["returncode"] == 0 and state["no"]["verify"]["returncode"] == 1
    log = (out / "ok" / "verify.log").read_text()
    assert log.startswith(f"$ {DONE_CHECK}\n") and "(exit 0," in log
    report = json.loads((out / "report.json").read_text())
    assert report["total_instances"] == 6 and report["schema_version"] == 2
    assert report["resolved_ids"] == ["ok"] and report["unresolved_ids"] == ["no"]
    assert report["empty_patch_ids"] == ["empty"] and report["infra_failure_ids"] == ["gone", "hang"]
    assert report["agent_error_ids"] == ["limit"] and report["error_ids"] == ["gone", "hang", "limit"]
    assert report["completed_ids"] == ["no", "ok"] and report["resolved_instances"] == 1
    finished = {record["instance_id"]: record["verdict"] for record in sink.of("InstanceFinished")}
    assert finished["ok"] == "resolved" and finished["gone"] == "infra_failure"
    ended = sink.of("BatchEnded")[0]
    assert ended["verdicts"]["infra_failure"] == 2 and ended["verdicts"]["resolved"] == 1
    assert sink.of("BatchProgress")[-1]["verdicts"]["resolved"] == 1

    # --rerun infra: only the two infra failures run again; the rest keep their verdicts
    (tmp_path / "work" / "gone").mkdir()
    code, sink = run_batch(config_for(openai_server, tmp_path), instances, out, rerun=("infra_failure",))
    assert sorted(record["instance_id"] for record in sink.of("InstanceStarted")) == ["gone", "hang"]
    report = json.loads((out / "report.json").read_text())
    assert report["resolved_ids"] == ["ok"] and report["unresolved_ids"] == ["gone", "no"]
    assert report["infra_failure_ids"] == ["hang"] and report["total_instances"] == 6
    assert code == 1


def test_no_verify_grades_nothing(openai_server, tmp_path):
    openai_server.respond(answer)
    instances = [i for i in load_instances(str(write_instances(tmp_path))) if i.instance_id in ("ok", "empty")]
    out = tmp_path / "out"
    code, _ = run_batch(config_for(openai_server, tmp_path, run_verifier=False), instances, out)
    assert code == 0
    state = json.loads((out / "batch.json").read_text())["instances"]
    assert {i: record["verdict"] for i, record in state.items()} == {"ok": "not_verified", "empty": "empty_patch"}
    assert not (out / "ok" / "verify.log").exists()
    assert json.loads((out / "report.json").read_text())["not_verified_ids"] == ["ok"]


def test_rerun_names_only_known_classes():
    import pytest

    from swedeck.commands.batch import rerun_classes
    from swedeck.core.errors import UsageError

    assert rerun_classes("infra,agent-error") == ("infra_failure", "agent_error")
    with pytest.raises(UsageError, match="--rerun broken: the classes are resolved, unresolved"):
        rerun_classes("infra,broken")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_watch_shows_each_instances_verdict_and_filters_by_class(openai_server, tmp_path):
    from support.waiting import wait_for
    from swedeck.core.watch import DirectoryWatcher
    from swedeck.tui.watch.app import WatchApp
    from swedeck.tui.watch.watch_screen import DataTable, WatchScreen

    openai_server.respond(answer)
    instances = [i for i in load_instances(str(write_instances(tmp_path))) if i.instance_id in ("ok", "no", "limit")]
    out = tmp_path / "out"
    run_batch(config_for(openai_server, tmp_path), instances, out)
    app = WatchApp(DirectoryWatcher(out, stale_after_s=60), interval_s=0.1)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, WatchScreen) and app.screen.query_one(DataTable).row_count == 3)
        table = app.screen.query_one(DataTable)

        def verdicts() -> dict[str, str]:
            return {str(table.get_row(key)[0]).split("/")[0]: str(table.get_row(key)[2]) for key in table.rows}
        await wait_for(pilot, lambda: verdicts() == {"ok": "resolved", "no": "unresolved", "limit": "agent error"})
        assert "resolved 1, unresolved 1, agent error 1" in str(app.screen.query_one("#watch-header").render())
        await pilot.press("v")  # resolved only
        await wait_for(pilot, lambda: list(verdicts()) == ["ok"])
        assert "showing resolved" in str(app.screen.query_one("#watch-header").render())
        await pilot.press("v")  # unresolved only
        await wait_for(pilot, lambda: list(verdicts()) == ["no"])
        # Enter: the instance's trajectory at its last step, with its verifier's output beside it
        await pilot.press("enter")
        from swedeck.tui.replay.replay_screen import ReplayScreen
        from swedeck.tui.widgets.text_view import TextView

        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        replay = app.screen
        assert str(replay.query_one("#replay-verifier").border_title) == "verifier: unresolved"
        said = replay.query_one("#verifier-text", TextView)
        assert said.text.startswith(f"$ {DONE_CHECK}\n") and "(exit 1," in said.text
        await wait_for(pilot, lambda: replay.step_count > 0 and replay.step == replay.step_count)
