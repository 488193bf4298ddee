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
