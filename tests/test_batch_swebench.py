"""SWE-bench instances graded by the SWE-bench package itself (SPEC §15, issue 30): real
sessions against the scripted model server, in real Docker containers of the offline
toolchain image `.ci/docker-up` builds from Debian's packages (python3, pytest, git, and a
tiny repository whose `add` is wrong). The agent's patches fix it, half-fix it, break
another test, or are empty; our verdicts must be SWE-bench's own on the same logs. Faults
are injected for every infra class: an image that is missing, a container that dies under
the agent, a verifier that hangs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support.batch import ID_IN_TASK, conversation, run_batch
from support.docker_env import docker_client
from support.driver import make_config
from support.openai_server import Turn, model_config
from support.reliability import SUBMIT
from swedeck.core.batch.instances import load_instances

IMAGE = "swedeck-swebench-test:latest"
F2P = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_add_negative"]
P2P = ["tests/test_calc.py::test_mul"]
TEST_PATCH = "\n".join([
    "diff --git a/tests/test_calc.py b/tests/test_calc.py", "--- a/tests/test_calc.py", "+++ b/tests/test_calc.py",
    "@@ -1,5 +1,13 @@", "-from calc import mul", "+from calc import add, mul", " ", " ", " def test_mul():",
    "     assert mul(2, 3) == 6", "+", "+", "+def test_add():", "+    assert add(2, 3) == 5", "+", "+",
    "+def test_add_negative():", "+    assert add(-2, -3) == -5", ""])


def eval_script(run: str = "python3 -m pytest -rA tests/test_calc.py") -> str:
    """An eval script in SWE-bench's own shape (SWE-bench >= 5 datasets carry it)."""
    return "\n".join([
        "#!/bin/bash", "set -uxo pipefail", "cd /testbed", "git checkout HEAD tests/test_calc.py",
        "git apply -v - <<'EOF_114329324912'", TEST_PATCH + "EOF_114329324912",
        ": '>>>>> Start Test Output'", run, ": '>>>>> End Test Output'", "git checkout HEAD tests/test_calc.py", ""])


EDITS = {
    "fixed": "sed -i 's/return a - b/return a + b/' calc.py",                          # resolved
    "half": "sed -i 's/return a - b/return abs(a) + abs(b)/' calc.py",                 # one F2P still fails
    "broke": "sed -i 's/return a - b/return a + b/; s/return a \\* b/return a ** b/' calc.py",  # P2P fails
    "empty": "true",                                                                   # nothing changed
    "dies": "true",                                                                    # its container is killed
    "hangs": "sed -i 's/return a - b/return a + b/' calc.py",                          # its tests never end
    "noimage": "true",                                                                 # never starts
}


def write_instances(tmp_path: Path) -> Path:
    lines = []
    for instance_id in EDITS:
        lines.append(json.dumps({
            "instance_id": instance_id, "problem_statement": f"fix issue {instance_id} - add() subtracts",
            "repo": "swedeck/calc", "version": "1.0", "base_commit": "HEAD", "test_patch": TEST_PATCH,
            "FAIL_TO_PASS": json.dumps(F2P), "PASS_TO_PASS": json.dumps(P2P), "log_parser": "parse_log_pytest",
            "eval_type": "pass_and_fail", "cwd": "/testbed",
            "image": "swedeck-no-such-image:latest" if instance_id == "noimage" else IMAGE,
            "eval_script": eval_script("sleep 600" if instance_id == "hangs" else
                                       "python3 -m pytest -rA tests/test_calc.py")}))
    path = tmp_path / "instances.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def kill_the_running_container() -> None:
    """The one container this test process has running (one worker): killed, as an engine
    that loses a container would."""
    client = docker_client()
    running = client.containers.list(filters={"ancestor": IMAGE, "label": f"swedeck.pid={os.getpid()}"})
    assert len(running) == 1, [c.name for c in running]
    running[0].kill()


def answer(body: dict) -> Turn:
    instance_id = ID_IN_TASK.search(conversation(body)).group(1)
    if instance_id == "dies":
        kill_the_running_container()
    return Turn.bash_tool(f"{EDITS[instance_id]} && {SUBMIT} && git diff")


def swebench_verdict(instance: dict, out: Path) -> bool:
    """SWE-bench's own grading of the test output the batch kept, from its own test spec."""
    from swebench.harness.grading import get_eval_report
    from swebench.harness.utils import make_test_spec

    instance_id = instance["instance_id"]
    prediction = {"instance_id": instance_id, "model_name_or_path": "x",
                  "model_patch": json.loads((out / "preds.json").read_text())[instance_id]["model_patch"]}
    report = get_eval_report(make_test_spec(instance), prediction, str(out / instance_id / "test_output.txt"), True)
    return report[instance_id]["resolved"]


@pytest.fixture
def swebench_image():
    client = docker_client()
    try:
        client.images.get(IMAGE)
    except Exception as error:  # noqa: BLE001
        pytest.fail(f"no {IMAGE}: run .ci/docker-up ({error})")


def test_swebench_instances_get_swebench_s_own_verdicts(openai_server, tmp_path, swebench_image):
    openai_server.respond(answer)
    source = write_instances(tmp_path)
    instances = load_instances(str(source))
    config = make_config(tmp_path, model_config(openai_server), env="docker", agent__step_limit=3, timeout=30)
    config.batch.verify_timeout_s = 15.0
    out = tmp_path / "out"
    code, sink = run_batch(config, instances, out)
    assert code == 1  # infra failures: not a clean batch
    state = json.loads((out / "batch.json").read_text())["instances"]
    assert {i: record["verdict"] for i, record in state.items()} == {
        "fixed": "resolved", "half": "unresolved", "broke": "unresolved", "empty": "empty_patch",
        "dies": "infra_failure", "hangs": "infra_failure", "noimage": "infra_failure"}, state
    records = {json.loads(line)["instance_id"]: json.loads(line) for line in source.read_text().splitlines()}
    for instance_id in ("fixed", "half", "broke"):
        assert state[instance_id]["verdict"] == ("resolved" if swebench_verdict(records[instance_id], out)
                                                 else "unresolved")
        assert "SWEBENCH_TEST_EXIT_CODE=$?" in (out / instance_id / "eval.sh").read_text()  # SWE-bench's spec
    kept = json.loads((out / "half" / "report.json").read_text())["half"]
    assert kept["tests_status"]["FAIL_TO_PASS"] == {"success": [F2P[0]], "failure": [F2P[1]]}
    assert json.loads((out / "broke" / "report.json").read_text())["broke"]["tests_status"]["PASS_TO_PASS"][
        "failure"] == P2P
    # the patch graded is the patch the run produced, byte for byte
    assert (out / "fixed" / "patch.diff").read_text() == json.loads((out / "preds.json").read_text())["fixed"][
        "model_patch"]
    assert "-    return a - b\n+    return a + b" in (out / "fixed" / "patch.diff").read_text()
    assert not (out / "empty" / "test_output.txt").exists()  # an empty patch is not graded
    assert "Timeout error: 15 seconds exceeded." in (out / "hangs" / "test_output.txt").read_text()
    assert state["hangs"]["verify"]["problem"] == "the tests ran past 15 s"
    report = json.loads((out / "report.json").read_text())
    assert report["total_instances"] == 7 and report["resolved_ids"] == ["fixed"]
    assert report["unresolved_ids"] == ["broke", "half"] and report["empty_patch_ids"] == ["empty"]
    assert report["swedeck"]["infra_failure_ids"] == ["dies", "hangs", "noimage"]
    # SWE-bench's own keys, in its meaning: tests that timed out are an error it reads as an
    # ambiguous failure; instances whose environment failed have no prediction
    assert report["error_ids"] == ["hangs"] and report["incomplete_ids"] == ["dies", "noimage"]
    assert report["failure_reasons"] == {"hangs": "tests_timed_out"} and report["ambiguous_failure_ids"] == ["hangs"]
    assert sink.of("BatchEnded")[0]["verdicts"]["infra_failure"] == 3


def test_swebench_instances_without_the_package_are_a_clear_error(tmp_path, monkeypatch):
    import sys

    from swedeck.core.batch.runner import Batch, BatchOptions
    from swedeck.core.config import ModelConfig
    from swedeck.core.errors import UsageError

    monkeypatch.setitem(sys.modules, "swebench.harness.grading", None)  # as if not installed
    config = make_config(tmp_path, ModelConfig(model_name="x"))
    with pytest.raises(UsageError, match=r"pip install 'swedeck\[swebench\]'\), or pass --no-verify"):
        Batch(config, load_instances(str(write_instances(tmp_path))), tmp_path / "out", BatchOptions(), print)
    config.batch.run_verifier = False
    Batch(config, load_instances(str(write_instances(tmp_path))), tmp_path / "out", BatchOptions(), print)


def test_a_finished_batch_is_graded_again_without_its_agents(openai_server, tmp_path, swebench_image):
    """`swedeck batch --grade-only`: the real CLI, a fresh container per instance, the patch from
    preds.json; the model is never asked again."""
    import subprocess

    from conftest import swedeck_command
    from support.batch import clean_env

    openai_server.respond(answer)
    source = tmp_path / "instances.jsonl"
    records = [json.loads(line) for line in write_instances(tmp_path).read_text().splitlines()]
    source.write_text("".join(json.dumps(r) + "\n" for r in records if r["instance_id"] in ("fixed", "half", "empty")))
    out = tmp_path / "out"
    base = [*swedeck_command(), "batch", str(source), "-o", str(out), "-m", "hosted_vllm/scripted",
            "-c", f"model.model_kwargs={{api_base: '{openai_server.url}'}}", "-c", "model.cost_tracking=ignore_errors",
            "--step-limit", "3"]
    ran = subprocess.run([*base, "--no-verify"], env=clean_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    state = json.loads((out / "batch.json").read_text())["instances"]
    assert {i: r["verdict"] for i, r in state.items()} == {"fixed": "not_verified", "half": "not_verified",
                                                           "empty": "empty_patch"}
    asked = len(openai_server.requests)
    # what a kill while "fixed" was graded leaves (issue 61.11): its prediction kept, its run "running"
    batch = json.loads((out / "batch.json").read_text())
    batch["instances"]["fixed"].update({"state": "running", "exit_status": None, "verdict": None})
    (out / "batch.json").write_text(json.dumps(batch))
    graded = subprocess.run([*base, "--grade-only"], env=clean_env(tmp_path), capture_output=True, text=True,
                            timeout=300)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert len(openai_server.requests) == asked  # no agent ran
    assert "fixed: resolved" in graded.stdout and "half: unresolved" in graded.stdout
    assert "resolved 1 · unresolved 1 · empty patch 1 of 3" in graded.stdout
    state = json.loads((out / "batch.json").read_text())["instances"]
    assert {i: r["verdict"] for i, r in state.items()} == {"fixed": "resolved", "half": "unresolved",
                                                           "empty": "empty_patch"}
    report = json.loads((out / "report.json").read_text())
    assert report["resolved_ids"] == ["fixed"] and report["unresolved_ids"] == ["half"]
    assert swebench_verdict(records[0], out) is True
