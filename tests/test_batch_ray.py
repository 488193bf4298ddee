"""`swedeck batch --executor ray` (SPEC §15) on a local Ray cluster against the scripted model
server: the instances run as Ray tasks in Ray's worker processes, and their trajectories and
predictions land in the output folder as with the local executor."""

from __future__ import annotations

import json
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import ray  # the `batch` extra, which the README's test command installs

from support.batch import batch_command, clean_env, events_of, run_batch, submits_its_own_patch, write_instances
from support.driver import make_config
from support.openai_server import model_config
from swedeck.core.batch.instances import load_instances

pytestmark = [pytest.mark.timeout(300), pytest.mark.xdist_group("heavy")]


def test_a_batch_on_a_local_ray_cluster(openai_server, tmp_path):
    openai_server.respond(submits_its_own_patch)
    ids = ["ray__a-1", "ray__a-2", "ray__a-3"]
    config = make_config(tmp_path, model_config(openai_server))
    out = tmp_path / "out"
    try:
        code, sink = run_batch(config, load_instances(str(write_instances(tmp_path / "i.jsonl", ids))), out,
                               workers=2, executor="ray")
    finally:
        ray.shutdown()
    assert code == 0
    assert json.loads((out / "preds.json").read_text()) == {
        i: {"model_name_or_path": "hosted_vllm/test-model", "instance_id": i, "model_patch": f"patch for {i}\n"}
        for i in ids}
    for i in ids:
        assert json.loads((out / i / f"{i}.traj.json").read_text())["info"]["exit_status"] == "Submitted"
    # Ray's worker processes ran the sessions, not this one
    assert {r["instance_id"] for r in sink.of("InstanceFinished")} == set(ids)
    assert not [p for p in (out.parent / "data").glob("**/*.traj.json")]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_command_joins_a_running_cluster_by_address(openai_server, tmp_path):
    """`ray start --head` on 127.0.0.1, then `swedeck batch --executor ray --address`."""
    ray_cli = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
    port = _free_port()
    # Ray's sockets live under RAY_TMPDIR, and a socket path must be short (pytest's tmp_path is not)
    ray_tmp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    # Ray >= 2.59 asks for a token on clusters it starts; the cluster and the batch share one.
    env = {**clean_env(tmp_path), "RAY_TMPDIR": ray_tmp, "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    subprocess.run([ray_cli, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
                    "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats"],
                   check=True, capture_output=True, env=env, timeout=180)
    try:
        openai_server.respond(submits_its_own_patch)
        instances = write_instances(tmp_path / "i.jsonl", ["addr-1", "addr-2"])
        out = tmp_path / "out"
        result = subprocess.run(batch_command(openai_server, instances, out, "--executor", "ray", "--address",
                                              f"127.0.0.1:{port}", "--workers", "2", "--json"),
                                capture_output=True, text=True, timeout=240, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        events = events_of(result.stdout.splitlines())
        assert events[0]["executor"] == "ray"
        assert set(json.loads((out / "preds.json").read_text())) == {"addr-1", "addr-2"}
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)
        shutil.rmtree(ray_tmp, ignore_errors=True)


def test_an_unreachable_cluster_is_a_clear_error(tmp_path):
    instances = write_instances(tmp_path / "i.jsonl", ["x-1"])
    port = _free_port()
    result = subprocess.run([*batch_command_for_nothing(instances, tmp_path / "out"), "--executor", "ray",
                             "--address", f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=180,
                            env=clean_env(tmp_path))
    assert result.returncode == 2, result.stderr
    assert f"cannot connect to 127.0.0.1:{port}" in result.stderr


def batch_command_for_nothing(instances: Path, out: Path) -> list[str]:
    from conftest import swedeck_command

    return [*swedeck_command(), "batch", str(instances), "-o", str(out), "--env", "local", "-m", "hosted_vllm/none"]


@pytest.mark.timeout(480)
def test_stopping_a_ray_batch_cancels_its_tasks_and_keeps_their_records(openai_server, tmp_path):
    """Ctrl+C / SIGTERM on a Ray batch: `ray.cancel` interrupts the running task, whose
    session ends `Interrupted` with its final file; the queued instance never starts."""
    import threading

    from support.batch import Collect, conversation
    from support.openai_server import Turn
    from support.reliability import SUBMIT
    from support.waiting import wait_until
    from swedeck.core.batch.progress import Tally
    from swedeck.core.batch.runner import Batch, BatchOptions

    openai_server.respond(lambda body: Turn.bash_tool("sleep 60") if "sleep" not in conversation(body)
                          else Turn.bash_tool(SUBMIT))
    out = tmp_path / "out"
    instances = load_instances(str(write_instances(tmp_path / "i.jsonl", ["rs-1", "rs-2"])))
    tally = Tally()
    batch = Batch(make_config(tmp_path, model_config(openai_server)), instances, out,
                  BatchOptions(executor="ray"), Collect(tally), tally)
    codes: list[int] = []
    runner = threading.Thread(target=lambda: codes.append(batch.run()), daemon=True)
    runner.start()
    try:
        live = out / "rs-1" / "rs-1.traj.jsonl"
        # under load (two cores, three test workers, Ray's own processes) a Ray worker takes
        # minutes to import swedeck and start the session: the deadlines are generous
        wait_until(lambda: live.exists() and '"action"' in live.read_text(), timeout=200)
        batch.stop()
        runner.join(200)
    finally:
        if not runner.is_alive():  # Ray's core aborts the process when shut down under a waiting thread
            ray.shutdown()
    assert codes == [130]
    state = json.loads((out / "batch.json").read_text())["instances"]
    assert (state["rs-1"]["state"], state["rs-2"]["state"]) == ("interrupted", "queued")
    assert json.loads((out / "rs-1" / "rs-1.traj.json").read_text())["info"]["exit_status"] == "Interrupted"
    assert not (out / "preds.json").exists() or json.loads((out / "preds.json").read_text()) == {}
