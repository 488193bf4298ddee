"""SPEC §2 / §11.2: `swedeck prompt` prints what the model got at a step, after processors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import MINI_FIXTURE, SWEAGENT_FIXTURE, swedeck_command

LAST_ONE = "agent.history_processors=[{type: last_n_observations, n: 1}]"


def prompt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*swedeck_command(), "prompt", *args], capture_output=True, text=True, timeout=120)


def test_last_n_observations_on_the_sweagent_fixture_elides_3_5_7():
    result = prompt(str(SWEAGENT_FIXTURE), "--step", "5", "-c", LAST_ONE, "--json")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    elided = [m["history_index"] for m in shown["messages"] if m["content"].startswith("Old environment output:")]
    assert elided == [3, 5, 7]
    assert shown["messages"][3]["content"] == "Old environment output: (5 lines omitted)"
    assert shown["processors_source"] == "configured"
    assert shown["total_tokens"] == sum(m["tokens"] for m in shown["messages"]) + 3
    assert shown["total_tokens"] < shown["history_tokens"]
    assert all("extra" not in m for m in shown["messages"])


def test_step_n_is_the_history_before_that_query():
    shown = json.loads(prompt(str(SWEAGENT_FIXTURE), "--step", "2", "--json").stdout)
    assert [m["history_index"] for m in shown["messages"]] == [0, 1, 2, 3]
    assert shown["processors_source"] == "none"
    last = json.loads(prompt(str(SWEAGENT_FIXTURE), "--step", "-1", "--json").stdout)
    # Step 5 is only in SWE-agent's `trajectory` list, and still a step (SWE-agent shows 5).
    assert last["step"] == json.loads(prompt(str(SWEAGENT_FIXTURE), "--step", "5", "--json").stdout)["step"] == 5


def test_text_output_marks_changed_messages_and_totals():
    result = prompt(str(SWEAGENT_FIXTURE), "--step", "5", "-c", LAST_ONE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("[changed by processors]") == 3
    assert "total:" in result.stdout and "saved" in result.stdout


def test_mini_swe_agent_fixture_and_bad_step():
    ok = prompt(str(MINI_FIXTURE), "--step", "1", "--json")
    assert ok.returncode == 0, ok.stderr
    assert [m["role"] for m in json.loads(ok.stdout)["messages"]] == ["system", "user"]
    bad = prompt(str(MINI_FIXTURE), "--step", "99")
    assert bad.returncode == 2 and "has steps 1.." in bad.stderr and "Traceback" not in bad.stderr


def _file_that_names_code(tmp_path, function: str):
    """A trajectory whose recorded processors name a custom filter (as an attacker's would)."""
    from support.replay import add_step, start_writer

    writer = start_writer(tmp_path / "hostile")
    config = [{"type": "context_filter", "custom_filter": function, "enabled": True}]
    from swedeck.core.processors.chain import ProcessorChain

    digest = ProcessorChain(config).config_hash()
    writer.add_meta("processors_change", processors=config, hash=digest)
    for step in (1, 2):
        add_step(writer, step)
    path = writer.finish({"exit_status": "Submitted"})
    data = json.loads(path.read_text())
    for message in data["messages"]:
        if message["role"] == "assistant":
            message["extra"]["processors"] = digest
    path.write_text(json.dumps(data))
    return path


def test_a_trajectory_never_runs_the_code_it_names(tmp_path):
    import os

    mark = tmp_path / "mark"
    path = _file_that_names_code(tmp_path, "tests.support.custom_filters:leave_a_mark")
    env = {**os.environ, "SWEDECK_TEST_MARK": str(mark), "PYTHONPATH": str(Path(__file__).parent.parent)}
    shown = subprocess.run([*swedeck_command(), "prompt", str(path), "--step", "2", "--json"], capture_output=True,
                           text=True, timeout=120, env=env)
    assert shown.returncode == 0, shown.stderr
    record = json.loads(shown.stdout)
    assert not mark.exists()  # not imported, not called
    assert record["processors"][0]["custom_filter"] == "tests.support.custom_filters:leave_a_mark"  # shown as recorded
    assert any("recorded in the file but was not run" in error for error in record["errors"])
    (tmp_path / "b").mkdir()
    exit_file = _file_that_names_code(tmp_path / "b", "sys:exit")
    assert subprocess.run([*swedeck_command(), "prompt", str(exit_file), "--step", "2"], capture_output=True,
                          text=True, timeout=120).returncode == 0  # sys:exit did not end swedeck
    trusted = subprocess.run([*swedeck_command(), "prompt", str(path), "--step", "2", "--trust-trajectory"],
                             capture_output=True, text=True, timeout=120, env=env)
    assert trusted.returncode == 0 and mark.read_text() == "ran"  # the person said so
