"""Nothing a run produced is altered or lost (SPEC §9, §15): the submitted patch byte for
byte, resumed sessions whole, what the person said in every step, one honest exit status,
and credentials a command prints kept out of the record."""

from __future__ import annotations

import json

from support.batch import conversation, run_batch, write_instances
from support.driver import make_config
from support.openai_server import Turn, model_config
from support.reliability import SUBMIT
from swedeck.core.batch.instances import load_instances

# --- the patch in preds.json is what `git diff` printed -------------------------------------

REPO_SETUP = ("mkdir -p /testbed && cd /testbed && git init -q 2>/dev/null && "
              "printf 'URL = \"http://user:pass@example.com/path\"\\nX = 1\\n' > conf.py && git add conf.py && "
              "git -c user.name=t -c user.email=t@t commit -qm init")
"""The instance's repository: its context line holds URL credentials, as psf/requests' tests do."""
SHAPED = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
"""A token-shaped string the model adds to the repository (a test fixture, a documented example)."""
MINE = "my-own-secret-value-42"
"""A secret of the person's (an API key in the config): the one thing that may be masked."""


def editing_model(body: dict) -> Turn:
    """Step 1 edits the repository (the second instance also writes the person's own key into
    it), step 2 submits `git diff`."""
    done = sum(1 for message in body["messages"] if message["role"] == "assistant")
    if done == 0:
        leak = f" && echo 'KEY = \"{MINE}\"' >> conf.py" if "instance leaky" in conversation(body) else ""
        return Turn.bash_tool(f"cd /testbed && sed -i 's/X = 1/X = 2/' conf.py && "
                              f"echo 'TOKEN = \"{SHAPED}\"' >> conf.py{leak}")
    return Turn.bash_tool(f"cd /testbed && {SUBMIT} && git diff")


def in_container(client, script: str, **environment: str) -> tuple[int, str]:
    from support.docker_env import TEST_IMAGE

    container = client.containers.run(TEST_IMAGE, ["bash", "-c", script], environment=environment, detach=True)
    try:
        code = container.wait(timeout=60)["StatusCode"]
        return code, container.logs(stdout=True, stderr=True).decode()
    finally:
        container.remove(force=True)


def test_predicted_patches_are_what_git_diff_printed_and_apply(openai_server, tmp_path):
    from support.docker_env import TEST_IMAGE, docker_client

    client = docker_client()
    openai_server.respond(editing_model)
    config = make_config(tmp_path, model_config(openai_server, model_kwargs={"api_key": MINE}), env="docker")
    config.environment.image = TEST_IMAGE
    config.environment.post_startup_commands = [REPO_SETUP]
    instances = [{"instance_id": "clean", "problem_statement": "fix instance clean"},
                 {"instance_id": "leaky", "problem_statement": "fix instance leaky"}]
    path = tmp_path / "i.json"
    path.write_text(json.dumps(instances))
    out = tmp_path / "out"
    code, sink = run_batch(config, load_instances(str(path)), out)
    assert code == 0
    preds = json.loads((out / "preds.json").read_text())

    # What git printed for the same edit in a fresh copy of the repository, byte for byte
    edit = (f"cd /testbed && sed -i 's/X = 1/X = 2/' conf.py && echo 'TOKEN = \"{SHAPED}\"' >> conf.py && "
            "git diff > /tmp/expected && cat /tmp/expected")
    status, expected = in_container(client, f"{REPO_SETUP} && {edit}")
    assert status == 0, expected
    clean = preds["clean"]["model_patch"]
    assert clean == expected
    assert "http://user:pass@example.com" in clean and SHAPED in clean

    trajectory = json.loads((out / "clean" / "clean.traj.json").read_text())
    final = [m for m in trajectory["messages"] if m["extra"]["message_type"] == "final"]
    assert final[0]["content"] == clean and trajectory["info"]["submission"] == clean
    assert "warnings" not in trajectory["info"]

    # Every predicted patch applies in the instance's repository (SWE-bench's first step)
    for instance_id, prediction in preds.items():
        status, said = in_container(client, f"{REPO_SETUP} && printf %s \"$PATCH\" > /tmp/p && "
                                             "git apply --check /tmp/p && echo applies", PATCH=prediction["model_patch"])
        if instance_id == "clean":
            assert status == 0 and "applies" in said, said

    # The person's own key in a patch is masked, and the instance says so instead of staying silent
    leaky = preds["leaky"]["model_patch"]
    assert MINE not in leaky and 'KEY = "***"' in leaky and SHAPED in leaky
    state = json.loads((out / "batch.json").read_text())["instances"]
    assert state["clean"]["warnings"] == []
    assert "secret value of yours" in state["leaky"]["warnings"][0]
    assert sink.of("BatchEnded")[0]["warned"] == ["leaky"]
    leaky_info = json.loads((out / "leaky" / "leaky.traj.json").read_text())["info"]
    assert "secret value of yours" in leaky_info["warnings"][0]
    assert MINE not in (out / "leaky" / "leaky.traj.json").read_text()


# --- credentials a command prints -----------------------------------------------------------


def test_credential_headers_printed_by_a_command_are_masked_in_the_record(openai_server, tmp_path):
    import subprocess

    from support.reliability import headless_args

    printed = ("printf '> GET / HTTP/1.1\\n> Authorization: Bearer abc123-not-a-known-shape\\n"
               "> X-Api-Key: plainvalue99\\n> Accept: */*\\n'")
    openai_server.script(Turn.bash_tool(printed), Turn.bash_tool(SUBMIT))
    result = subprocess.run(headless_args(openai_server.url, tmp_path, "t"), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    written = (tmp_path / "run.traj.json").read_text()
    assert "abc123-not-a-known-shape" not in written and "plainvalue99" not in written
    observation = [m for m in json.loads(written)["messages"] if m["extra"]["message_type"] == "observation"][0]
    assert "> Authorization: Bearer ***" in observation["content"]
    assert "> X-Api-Key: ***" in observation["content"] and "> Accept: */*" in observation["content"]
    assert "abc123-not-a-known-shape" not in result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("swedeck: submitted; trajectory: ")  # words, not names


# --- a resumed session's final file holds everything ------------------------------------------

RESUME_PROCESSORS = "agent.history_processors=[{type: last_n_observations, n: 1}]"


def _headless(server, tmp_path, *extra, output=None):
    from support.reliability import headless_args

    return headless_args(server.url, tmp_path, "-c", RESUME_PROCESSORS, *extra, output=output)


def _killed_after(server, tmp_path, requests: int) -> None:
    """A headless run killed (-9) while the model is answering query `requests`."""
    import os
    import signal
    import subprocess

    from support.waiting import wait_until

    process = subprocess.Popen(_headless(server, tmp_path, "print lines"), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: len(server.requests) == requests, timeout=60, what=f"query {requests}")
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def test_a_crashed_then_resumed_session_keeps_every_record_and_counts_every_process(openai_server, tmp_path):
    import subprocess

    from support.openai_server import Usage
    from swedeck.core.prompt_view import step_prompt
    from swedeck.core.trajectory.loader import load_trajectory

    used = Usage(prompt_tokens=100, completion_tokens=10)
    lines = [Turn.bash_tool(f"for i in 1 2 3; do echo s{k}-$i; done", usage=used) for k in (1, 2, 3)]
    openai_server.script(*lines, Turn(text="never", hang_s=60))
    _killed_after(openai_server, tmp_path, 4)
    live = tmp_path / "run.traj.jsonl"
    assert not (tmp_path / "run.traj.json").exists()
    (tmp_path / ".run.traj.json.k1ll3d.tmp").write_text("{")  # what a kill inside the final write leaves

    openai_server.script(Turn.bash_tool("echo s4", usage=used), Turn.bash_tool(f"{SUBMIT} && echo done", usage=used))
    resumed = subprocess.run(_headless(openai_server, tmp_path, "--resume", str(live)), capture_output=True,
                             text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert not list(tmp_path.glob(".run.traj.json.*.tmp"))
    final = tmp_path / "run.traj.json"
    document = json.loads(final.read_text())
    events = [event["event"] for event in document["meta_events"]]
    assert events.count("processors_change") == 2 and "resume" in events
    assert events.index("resume") > events.index("processors_change")
    stats = document["info"]["model_stats"]
    assert stats["api_calls"] == 5 and stats["prompt_tokens"] == 500 and stats["completion_tokens"] == 50

    trajectory = load_trajectory(final)
    answered = [request for request in openai_server.requests if request is not openai_server.requests[3]]
    assert len(trajectory.steps) == len(answered) == 5
    for number, received in enumerate(answered, 1):
        rebuilt = step_prompt(trajectory, number)
        assert rebuilt.processors_source == "recorded", number
        assert [m.get("content") for m in rebuilt.request_messages()] == \
            [m.get("content") for m in received["messages"]], f"step {number}"


def test_resuming_a_finished_file_twice_overwrites_nothing_and_stays_submitted(openai_server, tmp_path):
    import subprocess

    openai_server.script(Turn.bash_tool(f"{SUBMIT} && echo the-patch"))
    first = subprocess.run(_headless(openai_server, tmp_path, "t"), capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    final = tmp_path / "run.traj.json"
    original = final.read_bytes()
    made = []
    for _ in range(2):
        again = subprocess.run(_headless(openai_server, tmp_path, "--resume", str(final),
                                         output=tmp_path / "elsewhere"), capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stdout + again.stderr
        resumed = sorted(set(tmp_path.glob("run.resumed-*.traj.json")) - set(made))
        assert len(resumed) == 1
        made += resumed
        info = json.loads(resumed[0].read_text())["info"]
        assert info["exit_status"] == "Submitted" and info["submission"] == "the-patch\n"
    assert final.read_bytes() == original and len(made) == 2
    assert len(openai_server.requests) == 1  # nothing was left to ask


def test_a_session_killed_after_its_submission_resumes_submitted(openai_server, tmp_path):
    """The kill lands between the `submitted` record and the end: the `.jsonl` stops there."""
    import subprocess

    openai_server.script(Turn.bash_tool(f"{SUBMIT} && echo kept"))
    first = subprocess.run(_headless(openai_server, tmp_path, "t", "-c", "run.keep_jsonl=true"), capture_output=True,
                           text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    live = tmp_path / "run.traj.jsonl"
    records = live.read_text().splitlines()
    cut = next(i for i, line in enumerate(records) if '"event":"submitted"' in line)
    live.write_text("\n".join(records[:cut + 1]) + "\n")
    (tmp_path / "run.traj.json").unlink()
    resumed = subprocess.run(_headless(openai_server, tmp_path, "--resume", str(live)), capture_output=True,
                             text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    info = json.loads((tmp_path / "run.traj.json").read_text())["info"]
    assert info["exit_status"] == "Submitted" and info["submission"] == "kept\n"


def test_one_damaged_line_in_the_middle_costs_that_line_only(openai_server, tmp_path):
    import subprocess

    from conftest import swedeck_command
    from swedeck.core.trajectory.loader import load_trajectory

    openai_server.script(Turn.bash_tool("echo one"), Turn.bash_tool("echo two"), Turn.bash_tool(SUBMIT))
    first = subprocess.run(_headless(openai_server, tmp_path, "t", "-c", "run.keep_jsonl=true"), capture_output=True,
                           text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    live = tmp_path / "run.traj.jsonl"
    records = live.read_text().splitlines()
    damaged = next(i for i, line in enumerate(records) if '"echo one' in line and '"observation"' in line)
    records[damaged] = records[damaged][:40] + "#garbage"
    live.write_text("\n".join(records) + "\n")
    trajectory = load_trajectory(live)
    assert len(trajectory.steps) == 3 and trajectory.info.exit_status == "Submitted"
    assert trajectory.info.warnings == [f"line {damaged + 1} is damaged ("
                                        f"{trajectory.info.warnings[0].split('(', 1)[1]}"]
    assert "skipped" in trajectory.info.warnings[0]
    printed = subprocess.run([*swedeck_command(), "replay", str(live), "--print"], capture_output=True, text=True,
                             timeout=60)
    assert printed.returncode == 0, printed.stderr
    assert f"warning: line {damaged + 1} is damaged" in printed.stdout and "echo two" in printed.stdout


# --- what the person said is part of the run ------------------------------------------------


def test_rejections_interrupts_and_follow_up_tasks_show_in_their_steps(openai_server, tmp_path):
    import subprocess

    from conftest import swedeck_command
    from support.driver import Driver, run_session
    from swedeck.core import events as ev
    from swedeck.core.replay.document import open_document
    from swedeck.core.replay.step_text import output_text

    openai_server.script(Turn.bash_tool("echo one"), Turn.bash_tool("sleep 30"), Turn.bash_tool(SUBMIT),
                         Turn.bash_tool(f"{SUBMIT} && echo second"))
    config = make_config(tmp_path, model_config(openai_server), timeout=60)

    def on_event(driver: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.CommandStarted) and "sleep" in event.command:
            driver.later(driver.session.interrupt)

    driver = Driver(decisions=[ev.Decision("reject", comment="use printf instead"), *[ev.Decision("approve")] * 3],
                    inputs=["hurry up please", "now do the second part", None], on_event=on_event)
    result = run_session(config, "t", driver, timeout=60)
    assert result.exit_status == "Submitted"
    final = tmp_path / "session.traj.json"

    printed = subprocess.run([*swedeck_command(), "replay", str(final), "--print", "--json"], capture_output=True,
                             text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    steps = [r for r in map(json.loads, printed.stdout.splitlines()) if "step" in r]
    said = {step["step"]: [(o["label"], o.get("task") or o["content"]) for o in step["observations"]] for step in steps}
    assert any(label == "the person said" and "use printf instead" in text for label, text in said[1])
    assert [label for label, _ in said[2]][-2:] == ["interrupted by the person", "the person said"]
    assert said[2][-1][1] == "hurry up please"
    assert ("follow-up task", "now do the second part") in said[3]

    text = subprocess.run([*swedeck_command(), "replay", str(final), "--print"], capture_output=True, text=True,
                          timeout=60).stdout
    assert "the person said:" in text and "use printf instead" in text and "interrupted by the person:" in text
    assert "follow-up task:\n    now do the second part" in text

    document = open_document(final)  # what the replay screen's output pane draws
    assert "use printf instead" in output_text(document.step(1))
    assert "── interrupted by the person ──" in output_text(document.step(2))
    assert "hurry up please" in output_text(document.step(2))
    assert "── follow-up task ──\nnow do the second part" in output_text(document.step(3))


# --- SWE-agent's requeried attempts -----------------------------------------------------------


def test_a_sweagent_requeried_attempt_is_its_own_step_and_later_steps_keep_their_records():
    from pathlib import Path

    from swedeck.core.messages import MessageType
    from swedeck.core.prompt_view import step_prompt
    from swedeck.core.trajectory.loader import load_trajectory
    from swedeck.core.trajectory.output import command_output

    path = Path(__file__).parent / "fixtures" / "sweagent-requeried.traj"
    raw = json.loads(path.read_text())
    records = raw["trajectory"]
    trajectory = load_trajectory(path)
    assert len(trajectory.steps) == len(records) == 6  # as SWE-agent's own viewer shows them
    for step, record in zip(trajectory.steps, records, strict=True):
        assert step.commands == [record["action"].rstrip("\n")]
        shown = trajectory.observations(step)
        if record["observation"]:
            outputs = [command_output(m).text for m in shown if m.message_type == MessageType.OBSERVATION]
            assert outputs == [record["observation"]], step.index
    attempt = trajectory.observations(trajectory.steps[2])
    assert [m.message_type for m in attempt] == [MessageType.FORMAT_ERROR]
    assert "NOT been applied" in attempt[0].text
    submitted = [m for m in trajectory.messages if "diff --git" in m.text]
    assert len(submitted) == 1

    # What the model was sent: the requery carried the attempt and its error, later queries neither
    def contents(messages):
        return [(m["role"], m["content"]) for m in messages]

    requery = step_prompt(trajectory, 4).request_messages()
    assert contents(requery) == contents(records[3]["query"])
    later = step_prompt(trajectory, 5).request_messages()
    assert not any("NOT been applied" in str(m.get("content")) for m in later)
    assert len(later) == len([m for m in raw["history"][:8]])


def test_a_batch_killed_inside_an_atomic_write_leaves_no_temp_file_after_the_next_run(openai_server, tmp_path):
    from support.batch import submits_its_own_patch

    openai_server.respond(submits_its_own_patch)
    out = tmp_path / "out"
    out.mkdir()
    for leftover in (".preds.json.x1y2z3.tmp", ".batch.json.a1b2c3.tmp"):  # what a kill mid-write leaves
        (out / leftover).write_text("{")
    instances = load_instances(str(write_instances(tmp_path / "i.jsonl", ["t-1"])))
    code, _ = run_batch(make_config(tmp_path, model_config(openai_server)), instances, out)
    assert code == 0
    assert not list(out.glob(".*.tmp"))
    assert json.loads((out / "preds.json").read_text())["t-1"]["model_patch"] == "patch for t-1\n"
