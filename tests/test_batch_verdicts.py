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
    if instance_id in ("empty", "quiet"):
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
    config = config_for(openai_server, tmp_path)
    config.model.prices = {"test-model": {"input": 1000.0, "output": 2000.0}}  # each call's dollars: not 0 (issue 65)
    code, sink = run_batch(config, instances, out, verify_on_host=True)
    assert code == 1  # an infra failure: not a clean batch
    state = json.loads((out / "batch.json").read_text())["instances"]
    assert {i: record["verdict"] for i, record in state.items()} == {
        "ok": "resolved", "no": "unresolved", "hang": "infra_failure", "limit": "agent_error",
        "empty": "empty_patch", "gone": "infra_failure"}
    assert state["hang"]["verify"]["problem"] == "the verifier ran past 1 s"
    assert state["ok"]["verify"]["returncode"] == 0 and state["no"]["verify"]["returncode"] == 1
    assert state["ok"]["reason"] is None and state["limit"]["reason"] and "gone" in state["gone"]["reason"]
    log = (out / "ok" / "verify.log").read_text()
    assert log.startswith(f"$ {DONE_CHECK}\n") and "(exit 0," in log
    report = json.loads((out / "report.json").read_text())
    ours = report["swedeck"]
    assert report["total_instances"] == 6 and report["schema_version"] == 2
    assert ours["resolved_ids"] == ["ok"] and ours["unresolved_ids"] == ["no"]
    assert ours["empty_patch_ids"] == ["empty"] and ours["infra_failure_ids"] == ["gone", "hang"]
    assert ours["agent_error_ids"] == ["limit"] and set(ours["reasons"]) == {"gone", "limit"}
    # issue 65: what each instance cost, and each class, as the batch's records count it
    cost = ours["cost_usd"]
    assert cost["by_instance"] == {i: pytest.approx(record["cost"]) for i, record in state.items()}
    assert all(dollars > 0 for i, dollars in cost["by_instance"].items() if i != "gone"), cost
    assert cost["by_class"]["infra_failure"] == pytest.approx(state["gone"]["cost"] + state["hang"]["cost"])
    assert cost["total"] == pytest.approx(sum(cost["by_class"].values()))
    # SWE-bench's keys, in SWE-bench's meaning: the step limit's empty submission is an empty
    # patch, the instance with no prediction incomplete, the verifier that timed out an error
    assert report["completed_ids"] == ["no", "ok"] and report["resolved_instances"] == 1
    assert report["empty_patch_ids"] == ["empty", "limit"] and report["incomplete_ids"] == ["gone"]
    assert report["error_ids"] == ["hang"] and report["submitted_ids"] == ["empty", "hang", "limit", "no", "ok"]
    finished = {record["instance_id"]: record["verdict"] for record in sink.of("InstanceFinished")}
    assert finished["ok"] == "resolved" and finished["gone"] == "infra_failure"
    ended = sink.of("BatchEnded")[0]
    assert ended["verdicts"]["infra_failure"] == 2 and ended["verdicts"]["resolved"] == 1
    assert ended["class_cost"] == pytest.approx(cost["by_class"])
    assert sink.of("BatchProgress")[-1]["verdicts"]["resolved"] == 1

    # --rerun infra: only the two infra failures run again; the rest keep their verdicts, and the
    # earlier run of each rerun instance stays beside the new one (its record and its files)
    (tmp_path / "work" / "gone").mkdir()
    code, sink = run_batch(config_for(openai_server, tmp_path), instances, out, verify_on_host=True, rerun=("infra_failure",))
    assert sorted(record["instance_id"] for record in sink.of("InstanceStarted")) == ["gone", "hang"]
    report = json.loads((out / "report.json").read_text())
    assert report["swedeck"]["resolved_ids"] == ["ok"] and report["swedeck"]["unresolved_ids"] == ["gone", "no"]
    assert report["swedeck"]["infra_failure_ids"] == ["hang"] and report["total_instances"] == 6
    assert code == 1
    state = json.loads((out / "batch.json").read_text())["instances"]
    [before] = state["hang"]["previous"]
    assert before["verdict"] == "infra_failure" and before["folder"] == ".previous/1"
    assert (out / "hang" / ".previous" / "1" / "verify.log").read_text().startswith("$ sleep 30")
    assert (out / "hang" / "hang.traj.json").is_file() and state["ok"]["previous"] == []
    from swedeck.core.watch import DirectoryWatcher

    watcher = DirectoryWatcher(out, stale_after_s=60)
    watcher.scan()
    assert sorted(row.name for row in watcher.rows.values()) == sorted(f"{i}/{i}.traj.json" for i in state)


def test_the_report_means_what_swebench_means_on_the_same_predictions(openai_server, tmp_path, monkeypatch):
    """`report.json`'s SWE-bench keys against SWE-bench's own `make_run_report`, given the same
    predictions (`preds.json`) and the same grading (a harness `report.json` for each instance
    whose tests ran, the verifier's log as the harness's log) (issue 43.3)."""
    from swebench.harness.constants import LOG_INSTANCE, LOG_REPORT, RUN_EVALUATION_LOG_DIR
    from swebench.harness.reporting import make_run_report

    openai_server.respond(answer)
    path = write_instances(tmp_path)
    quiet = tmp_path / "work" / "quiet"
    quiet.mkdir()  # resolved by its verifier without a patch: swedeck's resolved, SWE-bench's empty patch
    with path.open("a") as file:
        file.write(json.dumps({"instance_id": "quiet", "task": "fix issue quiet", "cwd": str(quiet),
                               "verify": "exit 0"}) + "\n")
    out = tmp_path / "out"
    run_batch(config_for(openai_server, tmp_path), load_instances(str(path)), out, verify_on_host=True)
    ours = json.loads((out / "report.json").read_text())
    assert ours["swedeck"]["resolved_ids"] == ["ok", "quiet"]

    predictions = json.loads((out / "preds.json").read_text())
    state = json.loads((out / "batch.json").read_text())["instances"]
    monkeypatch.chdir(tmp_path)
    for instance_id, record in state.items():
        logs = RUN_EVALUATION_LOG_DIR / "run" / "model" / instance_id
        logs.mkdir(parents=True)
        if (out / instance_id / "verify.log").exists():
            (logs / LOG_INSTANCE).write_text((out / instance_id / "verify.log").read_text())
        verify = record["verify"] or {}
        if verify.get("returncode") is not None and not verify.get("problem"):
            (logs / LOG_REPORT).write_text(json.dumps({instance_id: {"resolved": verify["returncode"] == 0}}))
    for prediction in predictions.values():
        prediction["model_name_or_path"] = "model"
    dataset = [{"instance_id": instance_id} for instance_id in state]
    theirs = json.loads(make_run_report(predictions, dataset, "run", report_dir=str(tmp_path / "r")).read_text())
    ours.pop("swedeck")
    assert list(ours) == list(theirs)
    assert ours == theirs
    assert theirs["empty_patch_ids"] == ["empty", "limit", "quiet"] and theirs["resolved_ids"] == ["ok"]


def test_a_batch_on_other_instances_keeps_every_earlier_record(openai_server, tmp_path):
    """Two runs on one folder that select different instances (`--filter`, `--slice`): the second
    adds its own and keeps the first's verdicts, in `batch.json` and `report.json` (issue 43.2)."""
    openai_server.respond(answer)
    instances = load_instances(str(write_instances(tmp_path)))
    out = tmp_path / "out"
    first = [i for i in instances if i.instance_id in ("ok", "no")]
    second = [i for i in instances if i.instance_id == "empty"]
    run_batch(config_for(openai_server, tmp_path), first, out, verify_on_host=True)
    code, sink = run_batch(config_for(openai_server, tmp_path), second, out, verify_on_host=True)
    assert code == 0 and [record["instance_id"] for record in sink.of("InstanceStarted")] == ["empty"]
    state = json.loads((out / "batch.json").read_text())["instances"]
    assert {i: record["verdict"] for i, record in state.items()} == {
        "ok": "resolved", "no": "unresolved", "empty": "empty_patch"}
    report = json.loads((out / "report.json").read_text())
    assert report["total_instances"] == 3 and report["resolved_ids"] == ["ok"]
    assert report["swedeck"]["unresolved_ids"] == ["no"]


def test_an_api_error_is_recorded_with_its_reason(openai_server, tmp_path):
    """An instance that ended on the model's API error says why in `batch.json` (issue 43.4)."""
    from support.openai_server import Turn as T

    openai_server.respond(lambda body: T.error(400, {"error": {"message": "the model refused this key"}}))
    instances = [i for i in load_instances(str(write_instances(tmp_path))) if i.instance_id == "ok"]
    out = tmp_path / "out"
    run_batch(config_for(openai_server, tmp_path), instances, out, verify_on_host=True)
    record = json.loads((out / "batch.json").read_text())["instances"]["ok"]
    assert record["verdict"] == "agent_error" and "the model refused this key" in record["reason"]


def test_no_verify_grades_nothing(openai_server, tmp_path):
    openai_server.respond(answer)
    instances = [i for i in load_instances(str(write_instances(tmp_path))) if i.instance_id in ("ok", "empty")]
    out = tmp_path / "out"
    code, _ = run_batch(config_for(openai_server, tmp_path, run_verifier=False), instances, out, verify_on_host=True)
    assert code == 0
    state = json.loads((out / "batch.json").read_text())["instances"]
    assert {i: record["verdict"] for i, record in state.items()} == {"ok": "not_verified", "empty": "empty_patch"}
    assert not (out / "ok" / "verify.log").exists()
    assert json.loads((out / "report.json").read_text())["swedeck"]["not_verified_ids"] == ["ok"]


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
    run_batch(config_for(openai_server, tmp_path), instances, out, verify_on_host=True)
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


@pytest.mark.timeout(90)
@pytest.mark.parametrize("kind", ["local", "docker"])
def test_a_verifier_that_exits_gives_its_own_verdict(tmp_path, kind):
    """`exit N` in a verify command is its verdict, not a shell cut off (issue 43.1): in every
    environment, the command runs where its `exit` ends only itself; the session's shell lives on."""
    from support.docker_env import started_environment
    from swedeck.core.batch.verify import CommandVerifier

    with started_environment(kind, tmp_path, "verify-exit") as env:
        said = []
        for command in ("exit 0", "exit 1", "test -d / || exit 3\nexit 0  # a last line with a comment",
                        "cat <<EOF\nheredoc\nEOF\nexit 4"):
            verifier = CommandVerifier(command, 30.0, tmp_path / f"verify-{len(said)}.log")
            verifier(env)
            said.append((verifier.result.resolved, verifier.result.returncode, verifier.result.problem))
        assert said == [(True, 0, None), (False, 1, None), (True, 0, None), (False, 4, None)]
        assert "heredoc" in (tmp_path / "verify-3.log").read_text()
        assert env.execute("echo still here").output.strip() == "still here"
