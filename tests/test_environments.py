"""SPEC §8 session semantics, run against every environment (local shell and real Docker)."""

from __future__ import annotations

import random
import threading
import time

import pytest

from support.docker_env import docker_config, unique_session
from swedeck.core.config import EnvironmentConfig
from swedeck.core.environments import get_environment
from swedeck.core.environments.base import CommandFailed
from swedeck.core.errors import SwedeckError
from swedeck.core.text import split_incomplete_escape

pytestmark = pytest.mark.timeout(60)


def make_config(kind: str, tmp_path, **overrides) -> EnvironmentConfig:
    if kind == "docker":
        return docker_config(**overrides)
    overrides.setdefault("cwd", str(tmp_path))
    return EnvironmentConfig(environment_class="local", **overrides)


@pytest.fixture(params=["local", "docker"])
def kind(request) -> str:
    return request.param


@pytest.fixture
def env(kind, tmp_path):
    environment = get_environment(make_config(kind, tmp_path, output_limit=2000), unique_session(kind))
    environment.start()
    yield environment
    environment.close()


def sleeps_alive(env, marker: str) -> int:
    """Processes in the environment whose command line contains `marker` (checked through /proc)."""
    out = env.execute(
        f"for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; done | grep -c '{marker}' || true"
    ).output
    return int(out.strip().splitlines()[-1])


def own_sleep(seconds: int) -> tuple[str, str]:
    """A `sleep` of this test's own (about `seconds`, made unique), and the pattern that finds it
    in /proc and nothing else: the local shell sees every process of the machine, the other
    tests' (in parallel, and their containers') too."""
    unique = seconds * 1000 + random.randrange(1000)
    text = str(unique)
    return f"sleep {unique}", f"sleep {text[:-1]}[{text[-1]}]"


def survivors(env, marker: str, grace_s: float = 5) -> int:
    """Processes matching `marker` once a stopped tree has had `grace_s` to finish dying (a
    killed process stays in /proc for a moment); a real survivor (these sleep 30 s+) stays."""
    deadline = time.monotonic() + grace_s
    while (count := sleeps_alive(env, marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return count


def test_cd_and_export_persist(env):
    env.execute("cd /tmp && export FOO=bar")
    result = env.execute("pwd; echo $FOO")
    assert result.output.split() == ["/tmp", "bar"]
    assert result.returncode == 0


def test_functions_and_shell_variables_persist(env):
    env.execute("greet() { echo hello $1; }; LOCALVAR=42")
    assert env.execute("greet you; echo $LOCALVAR").output.split() == ["hello", "you", "42"]


def test_exit_status_is_reported(env):
    assert env.execute("false").returncode == 1
    assert env.execute("(exit 7)").returncode == 7


def test_timeout_stops_process_tree_and_keeps_state(env):
    env.execute("cd /tmp; export KEEP=yes")
    started = time.monotonic()
    sleep, marker = own_sleep(31)
    result = env.execute(f"echo before; bash -c '{sleep}; echo never'; echo after", timeout=2)
    assert time.monotonic() - started < 20
    assert result.timed_out and result.returncode is None and not result.interrupted
    assert "before" in result.output and "never" not in result.output and "after" not in result.output
    assert env.execute("pwd; echo $KEEP").output.split() == ["/tmp", "yes"]
    assert survivors(env, marker) == 0


def test_timeout_in_a_loop_stops_the_whole_command(env):
    sleep, marker = own_sleep(32)
    result = env.execute(f"for i in 1 2 3 4 5; do {sleep}; done; echo done", timeout=1)
    assert result.timed_out and "done" not in result.output
    assert survivors(env, marker) == 0
    assert env.execute("echo still here").output.strip() == "still here"


def test_background_job_returns_at_once(env):
    started = time.monotonic()
    sleep, marker = own_sleep(100)
    result = env.execute(f"{sleep} &", timeout=20)
    assert result.returncode == 0 and not result.timed_out
    assert time.monotonic() - started < 10
    # The job is forked at once but may exec `sleep` a moment later on a loaded machine.
    deadline = time.monotonic() + 5
    while sleeps_alive(env, marker) == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sleeps_alive(env, marker) == 1  # a later command does not kill it
    env.execute(f"for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null | grep -q '{marker}' && "
                "p=${f#/proc/} && kill ${p%/cmdline}; done; true")  # the job's hours of sleep: ended here
    assert survivors(env, marker) == 0


def test_stdin_gets_eof(env):
    result = env.execute("cat; read line; echo read=$?", timeout=20)
    assert not result.timed_out
    assert result.output.strip() == "read=1"


def test_huge_output_keeps_head_and_tail(env):
    result = env.execute("echo START; head -c 50000000 /dev/zero | tr '\\0' a; echo; echo END", timeout=50)
    assert result.truncated and result.returncode == 0
    assert result.output.startswith("START")
    assert result.output.rstrip().endswith("END")
    assert "characters" in result.output and "elided" in result.output
    assert len(result.output) < 3000
    assert result.output_chars > 50_000_000


def test_a_pipe_closed_early_ends_its_writer_quietly(env):
    """Commands get SIGPIPE and SIGXFSZ as a terminal's shell gives them: `yes | head` ends at
    once, with no `Broken pipe` error (the local shell's Python parent ignores both, and its
    children inherited that)."""
    result = env.execute("yes hello | head -n 2; grep SigIgn /proc/self/status", timeout=20)
    assert result.output.splitlines()[:2] == ["hello", "hello"], result.output
    assert "Broken pipe" not in result.output
    ignored = int(result.output.split("SigIgn:")[1].split()[0], 16)
    assert not ignored & (1 << 12), result.output  # SIGPIPE is signal 13: bit 12


def test_output_is_cleaned(env):
    result = env.execute(r"printf 'x\xffy\n\033[31mred\033[0m\n10%%\r50%%\r100%%\n'")
    assert result.output == "x\ufffdy\nred\n100%\n"


def test_interrupt_from_another_thread(env):
    env.execute("export STATE=kept")
    timer = threading.Timer(1.0, env.interrupt_session)
    timer.start()
    sleep, marker = own_sleep(33)
    result = env.execute(f"{sleep}; echo never", timeout=30)
    timer.join()
    assert result.interrupted and not result.timed_out and result.returncode is None
    assert "never" not in result.output
    assert env.execute("echo $STATE").output.strip() == "kept"
    assert survivors(env, marker) == 0


def test_streaming_chunks_arrive_before_the_command_ends(env):
    seen: list[tuple[float, str]] = []
    result = env.execute("echo first; sleep 1.5; echo second",
                         on_output=lambda text: seen.append((time.monotonic(), text)))
    ended = time.monotonic()
    streamed = "".join(text for _, text in seen)
    assert "first" in streamed and "second" in streamed
    first_at = next(at for at, text in seen if "first" in text)
    assert ended - first_at > 1.0
    assert result.output.split() == ["first", "second"]


def test_streamed_output_is_raw_and_never_splits_an_escape_sequence(env):
    """The model's view strips escapes once (`clean`); the stream keeps them for the UI, which
    shows them as symbols, and holds back a sequence cut between two reads until it is whole."""
    seen: list[str] = []
    result = env.execute(r"printf 'a\033[3'; sleep 0.5; printf '1mred\033[0m \033]0;title'; sleep 0.5; printf '\007z\n'",
                         on_output=seen.append)
    assert "".join(seen) == "a\x1b[31mred\x1b[0m \x1b]0;title\x07z\n"
    assert len(seen) >= 2, seen  # the sleeps were streamed across
    assert all(split_incomplete_escape(text) == (text, "") for text in seen), seen
    assert result.output == "ared z\n"


def test_communicate_check_modes(env, caplog):
    assert env.communicate("echo hi; false", check="ignore").strip() == "hi"
    with caplog.at_level("WARNING"):
        env.communicate("false", check="warn", error_msg="warned here")
    assert "warned here" in caplog.text
    with pytest.raises(CommandFailed, match="boom"):
        env.communicate("exit_code_7() { return 7; }; exit_code_7", check="raise", error_msg="boom")
    assert env.communicate("echo fine", check="raise").strip() == "fine"


def test_files_and_variables(env):
    env.execute("mkdir -p /tmp/sdfiles && cd /tmp/sdfiles")
    env.write_file("/tmp/sdfiles/a.txt", "héllo\nworld\n")
    assert env.read_file("/tmp/sdfiles/a.txt") == "héllo\nworld\n"
    assert env.read_file("a.txt") == "héllo\nworld\n"  # relative to the session's cwd
    assert env.execute("cat a.txt").output == "héllo\nworld\n"
    env.set_env_variables({"ALPHA": "one two", "BETA": "it's"})
    assert env.execute("echo \"$ALPHA|$BETA\"").output.strip() == "one two|it's"
    assert env.execute("bash -c 'echo $ALPHA'").output.strip() == "one two"  # exported


def test_quiet_tool_settings(env):
    assert env.execute("echo $PAGER $GIT_PAGER $MANPAGER $TERM").output.split() == ["cat", "cat", "cat", "dumb"]


def test_env_and_forward_env(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("SWEDECK_FORWARDED", "from-host")
    config = make_config(kind, tmp_path, env={"GIVEN": "value"}, forward_env=["SWEDECK_FORWARDED"])
    environment = get_environment(config, unique_session("envs"))
    environment.start()
    try:
        assert environment.execute("echo $GIVEN $SWEDECK_FORWARDED").output.split() == ["value", "from-host"]
    finally:
        environment.close()


def test_cwd_is_applied(kind, tmp_path):
    cwd = "/tmp" if kind == "docker" else str(tmp_path)
    environment = get_environment(make_config(kind, tmp_path, cwd=cwd), unique_session("cwd"))
    environment.start()
    try:
        assert environment.execute("pwd").output.strip() == cwd
        assert environment.get_template_vars()["cwd"] == cwd
        assert environment.get_template_vars()["timeout"] == environment.config.timeout
        assert environment.get_template_vars()["output_limit"] == environment.config.output_limit
    finally:
        environment.close()


def test_post_startup_commands(kind, tmp_path):
    config = make_config(kind, tmp_path, post_startup_commands=["export READY=1", "mkdir -p /tmp/sdpost"])
    environment = get_environment(config, unique_session("post"))
    environment.start()
    try:
        assert environment.execute("echo $READY; test -d /tmp/sdpost && echo dir").output.split() == ["1", "dir"]
    finally:
        environment.close()
    failing = get_environment(make_config(kind, tmp_path, post_startup_commands=["echo setting up; exit_with() { return 4; }; exit_with"]),
                              unique_session("postfail"))
    with pytest.raises(SwedeckError, match="post-startup command"):
        failing.start()
    if kind == "docker":  # a failed start leaves nothing behind
        from support.docker_env import docker_client

        assert not docker_client().containers.list(all=True, ignore_removed=True,
                                                   filters={"name": f"^/swedeck-{failing.session_id}$"})


class RecordingHook:
    def __init__(self):
        self.calls: list[str] = []

    def on_init(self, env):
        self.calls.append("on_init")

    def on_start(self, env):
        self.calls.append("on_start")

    def on_environment_startup(self, env):
        self.calls.append("on_environment_startup")

    def on_command_start(self, env, command):
        self.calls.append(f"on_command_start:{command}")

    def on_command_done(self, env, command, result):
        self.calls.append(f"on_command_done:{command}:{result.returncode}")

    def on_close(self, env):
        self.calls.append("on_close")


class PartialHook:
    def __init__(self):
        self.closed = False

    def on_close(self, env):
        self.closed = True


def test_hooks_called_in_order(kind, tmp_path):
    environment = get_environment(make_config(kind, tmp_path), unique_session("hooks"))
    hook, partial = RecordingHook(), PartialHook()
    environment.add_hook(hook)
    environment.add_hook(partial)
    environment.start()
    environment.execute("true")
    environment.close()
    assert hook.calls == ["on_init", "on_start", "on_environment_startup", "on_command_start:true",
                          "on_command_done:true:0", "on_close"]
    assert partial.closed


def test_reset_clears_state(env):
    env.execute("export GONE=1; cd /")
    env.reset()
    assert env.execute("echo x${GONE}x").output.strip() == "xx"


def test_description_names_the_place(env, kind):
    assert ("host" in env.description) if kind == "local" else ("docker" in env.description)


def test_exit_starts_a_fresh_session(env):
    result = env.execute("exit 3", timeout=20)
    assert result.returncode is None and "new session" in result.output
    assert env.execute("echo alive").output.strip() == "alive"


def test_secrets_are_masked_in_output_and_stream(kind, tmp_path):
    from swedeck.core.redact import Redactor

    config = make_config(kind, tmp_path, env={"SERVICE_TOKEN": "s3cr3t-value-123"})
    environment = get_environment(config, unique_session("secret"), redactor=Redactor(["s3cr3t-value-123"]))
    environment.start()
    streamed: list[str] = []
    try:
        result = environment.execute("echo token=$SERVICE_TOKEN", on_output=streamed.append)
    finally:
        environment.close()
    assert result.output.strip() == "token=***"
    assert "s3cr3t" not in "".join(streamed) and "***" in "".join(streamed)
