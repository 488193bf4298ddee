"""`swedeck batch` (SPEC §15) against the scripted model server: instances from files and
datasets, selection as mini-swe-agent selects, one session per instance in its own
environment (local and Docker), SWE-bench predictions, skip and resume, a crash that stops
nothing else, limits, signals, and Ray (tests/test_batch_ray.py)."""

from __future__ import annotations

import io
import json
import re
import signal
import subprocess
import sys

import pytest

from conftest import swedeck_command
from support.batch import (
    ID_IN_TASK,
    SUBMIT,
    batch_command,
    clean_env,
    conversation,
    events_of,
    run_batch,
    submits_its_own_patch,
    write_instances,
)
from support.driver import make_config
from support.openai_server import Turn, Usage, model_config
from support.waiting import wait_until
from swedeck.core.batch.instances import Instance, load_instances, parse_slice, select
from swedeck.core.errors import UsageError

# --- instances ------------------------------------------------------------------------------


def test_instances_from_json_jsonl_text_and_a_keyed_object(tmp_path):
    jsonl = write_instances(tmp_path / "a.jsonl", ["x__y-1", "x__y-2"], image_name="img:1", repo="x/y")
    listed = tmp_path / "b.json"
    listed.write_text(json.dumps([{"instance_id": "p-1", "problem_statement": "one", "docker_image": "d:1"},
                                  "a bare task", {"task": "t", "cwd": "/w", "id": "mine"}]))
    keyed = tmp_path / "c.json"
    keyed.write_text(json.dumps({"k-1": {"problem_statement": "keyed"}}))
    tasks = tmp_path / "d.txt"
    tasks.write_text("first task\n\n  second task  \n")

    first = load_instances(str(jsonl))
    assert [(i.instance_id, i.image_name, i.fields["repo"]) for i in first] == [("x__y-1", "img:1", "x/y"),
                                                                                ("x__y-2", "img:1", "x/y")]
    assert [(i.instance_id, i.task, i.docker_image, i.cwd) for i in load_instances(str(listed))] == [
        ("p-1", "one", "d:1", None), ("task-0002", "a bare task", None, None), ("mine", "t", None, "/w")]
    assert [(i.instance_id, i.task) for i in load_instances(str(keyed))] == [("k-1", "keyed")]
    assert [(i.instance_id, i.task) for i in load_instances(str(tasks))] == [("task-0001", "first task"),
                                                                             ("task-0002", "second task")]


@pytest.mark.parametrize("content,message", [
    ("{not json", "not valid JSON"),
    ('{"instance_id": "a"}', "needs a non-empty `problem_statement`"),
    ('{"instance_id": "../up", "problem_statement": "x"}', "cannot name a folder"),
    ('{"instance_id": "a", "problem_statement": "x"}\n{"instance_id": "a", "problem_statement": "y"}', "appears twice"),
    ("42", "expected an object or a string"),
    ("", "no instances"),
])
def test_bad_instance_files_are_clear_errors(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(UsageError, match=re.escape(message)):
        load_instances(str(path))


def test_a_missing_file_is_not_taken_for_a_dataset(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        load_instances(str(tmp_path / "nope.jsonl"))


def test_a_hugging_face_dataset_by_name(tmp_path, monkeypatch):
    """`datasets.load_dataset` on a dataset folder (offline: no hub here), split by file name."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    folder = tmp_path / "owner" / "dataset"
    folder.mkdir(parents=True)
    write_instances(folder / "test.jsonl", ["ds-1", "ds-2"])
    assert [i.instance_id for i in load_instances(str(folder), split="test")] == ["ds-1", "ds-2"]
    with pytest.raises(UsageError, match="cannot load the dataset"):
        load_instances(str(folder), split="validation")


def test_without_the_datasets_package_a_dataset_name_says_what_to_install():
    code = ("import sys; sys.modules['datasets'] = None\n"
            "from swedeck.core.batch.instances import load_instances\n"
            "load_instances('princeton-nlp/SWE-Bench_Lite')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "needs the `datasets` package: pip install 'swedeck[batch]'" in result.stderr


@pytest.mark.parametrize("options", [
    {"filter_spec": "", "slice_spec": "", "shuffle": False},
    {"filter_spec": "django", "slice_spec": "", "shuffle": False},
    {"filter_spec": "", "slice_spec": "2:7", "shuffle": True},
    {"filter_spec": r"(astropy|sympy)__", "slice_spec": ":3", "shuffle": True},
    {"filter_spec": "", "slice_spec": "4", "shuffle": False},
    {"filter_spec": "sympy", "slice_spec": "::2", "shuffle": True},
])
def test_selection_picks_what_mini_swe_agent_picks(options):
    """Same flags, same instances, same order: mini-swe-agent's own `filter_instances`."""
    from minisweagent.run.benchmarks.swebench import filter_instances

    ids = [f"{repo}__{repo}-{n}" for repo in ("django", "sympy", "astropy", "requests") for n in (3, 11, 7, 20)]
    records = [{"instance_id": i, "problem_statement": i} for i in ids]
    theirs = [r["instance_id"] for r in filter_instances(list(records), **options)]
    ours = [i.instance_id for i in select([Instance(r["instance_id"], r["problem_statement"]) for r in records],
                                          filter_re=options["filter_spec"], slice_spec=options["slice_spec"],
                                          shuffle=options["shuffle"])]
    assert ours == theirs


@pytest.mark.parametrize("spec", ["a:b", "1:2:3:4", "::0"])
def test_bad_slices_are_clear_errors(spec):
    with pytest.raises(UsageError, match="--slice"):
        parse_slice(spec)


# --- running --------------------------------------------------------------------------------


def test_a_local_batch_writes_predictions_trajectories_and_state(openai_server, tmp_path):
    openai_server.respond(submits_its_own_patch)
    ids = ["proj__a-1", "proj__a-2", "proj__a-3"]
    config = make_config(tmp_path, model_config(openai_server))
    out = tmp_path / "out"
    code, sink = run_batch(config, load_instances(str(write_instances(tmp_path / "i.jsonl", ids))), out, workers=2)

    assert code == 0
    preds = json.loads((out / "preds.json").read_text())
    assert preds == {i: {"model_name_or_path": "hosted_vllm/test-model", "instance_id": i,
                         "model_patch": f"patch for {i}\n"} for i in ids}
    for i in ids:
        final = json.loads((out / i / f"{i}.traj.json").read_text())
        assert final["info"]["exit_status"] == "Submitted"
        assert f"fix issue {i}" in json.dumps(final["messages"])
        assert not (out / i / f"{i}.traj.jsonl").exists()
    state = json.loads((out / "batch.json").read_text())
    assert state["ended"] and {i: s["state"] for i, s in state["instances"].items()} == dict.fromkeys(ids, "done")
    assert sorted(r["instance_id"] for r in sink.of("InstanceFinished")) == ids
    assert sink.of("BatchEnded")[0]["exit_statuses"] == {"Submitted": 3}
    assert max(r["running"] for r in sink.of("BatchProgress")) == 2


def test_a_rerun_skips_finished_instances_and_redo_runs_them_again(openai_server, tmp_path):
    openai_server.respond(submits_its_own_patch)
    instances = load_instances(str(write_instances(tmp_path / "i.jsonl", ["r-1", "r-2"])))
    config = make_config(tmp_path, model_config(openai_server))
    out = tmp_path / "out"
    assert run_batch(config, instances[:1], out)[0] == 0
    queries = len(openai_server.requests)

    code, sink = run_batch(config, instances, out)
    assert code == 0
    assert sink.of("BatchStarted")[0]["skipped"] == 1
    assert [r["instance_id"] for r in sink.of("InstanceStarted")] == ["r-2"]
    assert len(openai_server.requests) == queries + 1

    code, sink = run_batch(config, instances, out, redo=True)
    assert [r["instance_id"] for r in sink.of("InstanceStarted")] == ["r-1", "r-2"]
    assert set(json.loads((out / "preds.json").read_text())) == {"r-1", "r-2"}


def test_one_instance_failing_never_stops_the_others_and_is_retried(openai_server, tmp_path):
    openai_server.respond(submits_its_own_patch)
    path = tmp_path / "i.json"
    path.write_text(json.dumps([{"instance_id": "ok-1", "problem_statement": "fix issue ok-1"},
                                {"instance_id": "bad-1", "problem_statement": "fix issue bad-1",
                                 "cwd": str(tmp_path / "missing")},
                                {"instance_id": "ok-2", "problem_statement": "fix issue ok-2"}]))
    config = make_config(tmp_path, model_config(openai_server))
    out = tmp_path / "out"
    code, sink = run_batch(config, load_instances(str(path)), out, workers=2)

    assert code == 1
    assert set(json.loads((out / "preds.json").read_text())) == {"ok-1", "ok-2"}
    failed = [r for r in sink.of("InstanceFinished") if r["failed"]]
    assert [(r["instance_id"], r["exit_status"]) for r in failed] == [("bad-1", "EnvironmentError")]
    assert "missing" in failed[0]["message"]
    ended = sink.of("BatchEnded")[0]
    assert (ended["done"], ended["failed"]) == (2, 1)
    assert json.loads((out / "batch.json").read_text())["instances"]["bad-1"]["state"] == "failed"

    (tmp_path / "missing").mkdir()
    code, sink = run_batch(config, load_instances(str(path)), out)
    assert code == 0
    assert [r["instance_id"] for r in sink.of("InstanceStarted")] == ["bad-1"]


def test_per_instance_limits_and_the_batch_cost_limit(openai_server, tmp_path):
    priced = model_config(openai_server, name="gpt-4o", provider="openai", cost_tracking="default")
    openai_server.respond(lambda body: Turn.bash_tool("echo working", usage=Usage(1000, 1000)))
    instances = load_instances(str(write_instances(tmp_path / "i.jsonl", ["c-1", "c-2", "c-3"])))
    config = make_config(tmp_path, priced, agent__step_limit=2)
    out = tmp_path / "out"
    code, sink = run_batch(config, instances, out, total_cost_limit=0.03)

    assert code == 3
    finished = sink.of("InstanceFinished")
    assert [(r["instance_id"], r["exit_status"], r["steps"]) for r in finished] == [
        ("c-1", "LimitsExceeded", 2), ("c-2", "LimitsExceeded", 2)]
    assert sum(r["cost"] for r in finished) >= 0.03
    assert sink.of("BatchEnded")[0]["not_run"] == 1
    assert any("cost limit" in r["text"] for r in sink.of("BatchNotice"))
    preds = json.loads((out / "preds.json").read_text())
    assert set(preds) == {"c-1", "c-2"} and preds["c-1"]["model_patch"] == ""


def test_a_docker_batch_runs_each_instance_in_its_own_container(openai_server, tmp_path):
    from support.docker_env import TEST_IMAGE, docker_client

    client = docker_client()
    openai_server.respond(lambda body: Turn.bash_tool(
        f"{SUBMIT} && echo {ID_IN_TASK.search(conversation(body)).group(1)} > /tmp/mine && cat /tmp/mine && hostname"))
    ids = ["dock__a-1", "dock__a-2"]
    config = make_config(tmp_path, model_config(openai_server), env="docker")
    config.environment.image = None
    out = tmp_path / "out"
    code, _ = run_batch(config, load_instances(str(write_instances(tmp_path / "i.jsonl", ids, image_name=TEST_IMAGE))),
                        out, workers=2)

    assert code == 0
    patches = {i: p["model_patch"].splitlines() for i, p in json.loads((out / "preds.json").read_text()).items()}
    assert {i: lines[0] for i, lines in patches.items()} == {i: i for i in ids}
    assert patches[ids[0]][1] != patches[ids[1]][1]  # two containers, two host names
    for i in ids:
        session = json.loads((out / i / f"{i}.traj.json").read_text())["info"]["session"]["id"]
        assert not client.containers.list(all=True, filters={"label": f"swedeck.session={session}"})


# --- the command ----------------------------------------------------------------------------


def test_the_command_prints_json_events_and_a_progress_summary(openai_server, tmp_path):
    openai_server.respond(submits_its_own_patch)
    instances = write_instances(tmp_path / "i.jsonl", ["cli-1", "cli-2", "other-1"])
    out = tmp_path / "out"
    result = subprocess.run(batch_command(openai_server, instances, out, "--filter", "cli", "--json"),
                            capture_output=True, text=True, timeout=240, env=clean_env(tmp_path))
    assert result.returncode == 0, result.stderr
    events = events_of(result.stdout.splitlines())
    assert [e["event"] for e in events][:1] == ["BatchStarted"] and events[-1]["event"] == "BatchEnded"
    assert sorted(e["instance_id"] for e in events if e["event"] == "InstanceFinished") == ["cli-1", "cli-2"]

    result = subprocess.run(batch_command(openai_server, instances, out), capture_output=True, text=True,
                            timeout=240, env=clean_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "2 already finished (skipped" in result.stdout
    assert "other-1: Submitted" in result.stdout
    assert "swedeck batch: 1 done, 0 failed" in result.stdout
    assert "exit statuses: Submitted 1" in result.stdout


def test_bad_command_lines_are_usage_errors(tmp_path):
    instances = write_instances(tmp_path / "i.jsonl", ["u-1"])
    for extra, message in ((["--filter", "nothing"], "no instance is left"),
                           (["--workers", "0"], "--workers must be at least 1"),
                           (["--address", "1.2.3.4:6379"], "--address goes with --executor ray")):
        result = subprocess.run([*swedeck_command(), "batch", str(instances), "-o", str(tmp_path / "o"),
                                 "-m", "hosted_vllm/x", *extra], capture_output=True, text=True, timeout=120,
                                env=clean_env(tmp_path))
        assert result.returncode == 2 and message in result.stderr, (extra, result.stderr)


def test_a_signal_stops_the_batch_and_a_killed_batch_resumes(openai_server, tmp_path):
    """SIGTERM: the running instance ends Interrupted with its final file, the queued ones do
    not start, exit 130, and nothing unfinished is in preds.json. SIGKILL leaves a live file
    and a `running` state; the next run does both instances."""
    openai_server.respond(lambda body: Turn.bash_tool("sleep 60") if "sleep" not in conversation(body)
                          else submits_its_own_patch(body))
    instances = write_instances(tmp_path / "i.jsonl", ["s-1", "s-2"])
    out = tmp_path / "out"
    live = out / "s-1" / "s-1.traj.jsonl"
    for how in (signal.SIGTERM, signal.SIGKILL):
        process = subprocess.Popen(batch_command(openai_server, instances, out, "--redo"), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=clean_env(tmp_path))
        try:
            wait_until(lambda: live.exists() and '"action"' in live.read_text(), timeout=120)
            process.send_signal(how)
            process.wait(timeout=60)
        finally:
            process.kill()
        if how == signal.SIGTERM:
            assert process.returncode == 130, process.stderr.read()
            final = json.loads((out / "s-1" / "s-1.traj.json").read_text())
            assert final["info"]["exit_status"] == "Interrupted"
            state = json.loads((out / "batch.json").read_text())["instances"]
            assert (state["s-1"]["state"], state["s-2"]["state"]) == ("interrupted", "queued")
        else:
            assert json.loads((out / "batch.json").read_text())["instances"]["s-1"]["state"] == "running"
        assert (json.loads((out / "preds.json").read_text()) if (out / "preds.json").exists() else {}) == {}

    openai_server.respond(submits_its_own_patch)
    result = subprocess.run(batch_command(openai_server, instances, out, "--json"), capture_output=True, text=True,
                            timeout=240, env=clean_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert set(json.loads((out / "preds.json").read_text())) == {"s-1", "s-2"}
    assert json.loads((out / "s-1" / "s-1.traj.json").read_text())["info"]["exit_status"] == "Submitted"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_the_progress_line_on_a_terminal_and_in_a_log(openai_server, tmp_path, terminal):
    """On a terminal the status line is redrawn in place and the summary is the last word;
    in a log there are no control sequences."""
    from swedeck.core.batch.progress import ProgressLine, Tally
    from swedeck.core.batch.runner import Batch, BatchOptions

    openai_server.respond(submits_its_own_patch)
    instances = load_instances(str(write_instances(tmp_path / "i.jsonl", ["p-1", "p-2"])))
    stream = _Terminal() if terminal else io.StringIO()
    tally = Tally()
    code = Batch(make_config(tmp_path, model_config(openai_server)), instances, tmp_path / "out", BatchOptions(),
                 ProgressLine(stream, tally), tally).run()
    assert code == 0
    text = stream.getvalue()
    assert ("\r\x1b[Kbatch 1/2 · 1 done · 1 running · 0 failed · $0.00" in text) is terminal
    assert ("\x1b" in text) is terminal
    assert "  p-1: Submitted · 1 step · $0.00 · " in text
    last = text.rstrip("\n").rsplit("\n", 2)[-2:]
    last[0] = last[0].rsplit("\r\x1b[K", 1)[-1]  # what the terminal shows: the status line is erased first
    assert last[0].startswith("swedeck batch: 2 done, 0 failed · $0.00 · ")
    assert last[1] == "  exit statuses: Submitted 2"


def test_secrets_never_reach_the_predictions_the_state_or_the_progress_output(openai_server, tmp_path):
    """Command output is masked by the environment already; what the batch itself writes (an
    instance's end message, in batch.json and the events) is masked too."""
    secret = "sk-batch-secret-0123456789abcdef"
    openai_server.respond(lambda body: Turn.bash_tool(f"{SUBMIT} && echo 'key={secret}'"))
    model = model_config(openai_server, model_kwargs={"api_key": secret})
    path = tmp_path / "i.json"
    path.write_text(json.dumps([{"instance_id": "sec-1", "problem_statement": "t"},
                                {"instance_id": "sec-2", "problem_statement": "t", "cwd": str(tmp_path / secret)}]))
    out = tmp_path / "out"
    code, sink = run_batch(make_config(tmp_path, model), load_instances(str(path)), out)
    assert code == 1
    failed = [r for r in sink.of("InstanceFinished") if r["failed"]]
    assert failed and "***" in failed[0]["message"]
    for written in (out / "preds.json", out / "batch.json", out / "sec-1" / "sec-1.traj.json"):
        assert secret not in written.read_text(), written
    assert "key=" in json.loads((out / "preds.json").read_text())["sec-1"]["model_patch"]
    assert secret not in json.dumps(sink.records)
