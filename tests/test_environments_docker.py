"""SPEC §8, Docker specifics: images, labels, cleanup on close, on signals and of stale sessions."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from support.docker_env import TEST_IMAGE, docker_client, docker_config, unique_session
from swedeck.core.config import EnvironmentConfig
from swedeck.core.environments import get_environment
from swedeck.core.environments.docker_cleanup import LABEL, LABEL_HOST, LABEL_PID, LABEL_SESSION, labels
from swedeck.core.environments.docker_image import resolve_image
from swedeck.core.errors import SwedeckError, UsageError

pytestmark = pytest.mark.timeout(60)


def container_exists(client, name: str) -> bool:
    return bool(client.containers.list(all=True, ignore_removed=True, filters={"name": f"^/{name}$"}))


def test_image_resolution_order():
    both = EnvironmentConfig(environment_class="docker", image="c", docker_image="b", image_name="a", instance_id="x__y-1")
    assert resolve_image(both) == "a"
    assert resolve_image(both.model_copy(update={"image_name": None})) == "b"
    assert resolve_image(both.model_copy(update={"image_name": None, "docker_image": None})) == "c"
    derived = EnvironmentConfig(environment_class="docker", instance_id="Django__django-11099")
    assert resolve_image(derived) == "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"
    with pytest.raises(UsageError, match="needs an image"):
        resolve_image(EnvironmentConfig(environment_class="docker"))


def test_importing_environments_does_not_import_docker():
    code = "import sys, swedeck.core.environments; print('docker' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_container_is_labelled_without_mounts_and_removed_on_close():
    client = docker_client()
    session = unique_session("labels")
    env = get_environment(docker_config(), session)
    env.start()
    try:
        container = client.containers.get(f"swedeck-{session}")
        assert container.labels[LABEL] == "1"
        assert container.labels[LABEL_SESSION] == session
        assert container.labels[LABEL_PID] == str(os.getpid())
        assert LABEL_HOST in container.labels
        assert container.attrs["Mounts"] == []
        assert container.attrs["Config"]["Image"] == TEST_IMAGE
        assert "docker" in env.description and TEST_IMAGE in env.description
    finally:
        env.close()
    assert not container_exists(client, f"swedeck-{session}")


def test_container_name_and_remove_on_close_false():
    client = docker_client()
    name = unique_session("kept")
    env = get_environment(docker_config(container_name=name, remove_on_close=False), unique_session("s"))
    env.start()
    env.close()
    try:
        assert container_exists(client, name)
    finally:
        client.containers.get(name).remove(force=True)


def test_missing_image_error_is_clear():
    docker_client()
    env = get_environment(docker_config(image="swedeck-missing-image:nope"), unique_session("missing"))
    with pytest.raises(SwedeckError, match="swedeck-missing-image:nope not found locally and could not be pulled"):
        env.start()
    env.close()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_container_removed_when_owner_gets_signal(signum):
    client = docker_client()
    session = unique_session("sigint")
    script = textwrap.dedent(f"""
        import sys, time
        from swedeck.core.config import EnvironmentConfig
        from swedeck.core.environments import get_environment
        env = get_environment(EnvironmentConfig(environment_class="docker", image={TEST_IMAGE!r}), {session!r})
        env.start()
        print("ready", flush=True)
        time.sleep(60)
    """)
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().strip() == "ready", owner.stderr.read()
        assert container_exists(client, f"swedeck-{session}")
        owner.send_signal(signum)
        owner.wait(timeout=30)
    finally:
        owner.kill()
    assert not container_exists(client, f"swedeck-{session}")


def test_stale_containers_of_dead_owners_are_removed_on_start():
    client = docker_client()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale_name = unique_session("stale")
    alive_name = unique_session("alive")
    stale_labels = {**labels("stale"), LABEL_PID: str(dead.pid)}
    client.containers.run(TEST_IMAGE, ["sleep", "300"], name=stale_name, detach=True, labels=stale_labels)
    client.containers.run(TEST_IMAGE, ["sleep", "300"], name=alive_name, detach=True, labels=labels("alive"))
    try:
        env = get_environment(docker_config(), unique_session("cleaner"))
        env.start()
        env.close()
        assert not container_exists(client, stale_name)
        assert container_exists(client, alive_name)  # its owner (this process) still runs
    finally:
        for name in (stale_name, alive_name):
            for container in client.containers.list(all=True, ignore_removed=True, filters={"name": f"^/{name}$"}):
                container.remove(force=True)


def test_timeout_kills_inside_the_container_not_just_the_client():
    client = docker_client()
    session = unique_session("inside")
    env = get_environment(docker_config(), session)
    env.start()
    try:
        result = env.execute("sh -c 'sleep 34' & wait", timeout=1)
        assert result.timed_out
        from support.waiting import wait_until

        def left() -> list[list[str]]:
            top = client.containers.get(f"swedeck-{session}").top(ps_args="-o pid,args")
            return [row for row in top["Processes"] or [] if "sleep 34" in " ".join(row)]

        # SIGKILL is delivered, not waited for: under load `top` can list the process a moment more
        wait_until(lambda: not left(), timeout=10, what="sleep 34 gone from the container")
    finally:
        env.close()


def test_network_and_run_args_are_passed():
    client = docker_client()
    session = unique_session("args")
    env = get_environment(docker_config(network="none", run_args={"hostname": "sdbox"}), session)
    env.start()
    try:
        container = client.containers.get(f"swedeck-{session}")
        assert container.attrs["HostConfig"]["NetworkMode"] == "none"
        assert env.execute("hostname").output.strip() == "sdbox"
    finally:
        env.close()


def test_unreachable_engine_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    env = get_environment(EnvironmentConfig(environment_class="docker", image=TEST_IMAGE), unique_session("nohost"))
    with pytest.raises(SwedeckError, match="no Docker engine answers"):
        env.start()
    env.close()


def test_a_helper_beside_the_session_is_bounded_by_its_timeout():
    """The stop's helper runs in the container; a helper that hangs must not hang the stop."""
    env = get_environment(docker_config(), unique_session("helper"))
    env.start()
    try:
        code, _ = env._session._channel.run_helper(["sleep", "30"], timeout=1)
        assert code != 0  # ended by its timeout (busybox: 143, coreutils: 124), not after 30 s
        code, output = env._session._channel.run_helper(["echo", "fine"], timeout=5)
        assert (code, output.strip()) == (0, b"fine")
    finally:
        env.close()
