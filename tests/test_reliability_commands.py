"""SPEC §13 R4 through whole sessions (agent + environment + the scripted server): timeouts,
interrupts, background jobs, stdin readers, non-UTF-8 output, ANSI and `\\r` progress bars,
and 100 MB of output, in the local shell and (when an engine answers) in Docker."""

from __future__ import annotations

import re
import threading
import time

import pytest

from support.driver import Driver, make_config, run_session
from support.openai_server import Turn, model_config
from support.reliability import SUBMIT, docker_client_or_skip
from swedeck.core import events as ev
from swedeck.core.environments.shell import EARLIER_OUTPUT_END, bash_quote

EDGE_COMMANDS = [
    "export KEPT=still-here && sleep 30",                          # 0: times out
    "echo $KEPT",                                                   # 1: the shell survived
    "sleep 100 & echo started",                                     # 2: a background job does not block
    "cat && read -r line; echo after-stdin",                        # 3: stdin readers get EOF
    r"printf 'ok \377\376 bytes\n'",                                # 4: not UTF-8
    r"printf '\033[1;31mred\033[0m plain\n'",                       # 5: ANSI
    r"printf 'progress 10%%\rprogress 50%%\rprogress 100%%\n'",     # 6: a progress bar
    "echo interrupt-me && sleep 31",                                # 7: interrupted by the person
    "echo $KEPT again",                                             # 8: still the same shell
]


def run_edge_session(tmp_path, openai_server, env: str):
    openai_server.script(*[Turn.bash_tool(c) for c in EDGE_COMMANDS], Turn.bash_tool(SUBMIT))

    def on_event(driver: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.CommandOutput) and "interrupt-me" in event.text:
            driver.later(driver.session.interrupt)
    config = make_config(tmp_path, model_config(openai_server), env=env, agent__mode="yolo", timeout=2)
    driver = Driver(on_event=on_event, inputs=[""])
    result = run_session(config, "edge cases", driver, timeout=90)
    return result, driver


def check_edge_session(result, driver: Driver) -> None:
    assert result.exit_status == "Submitted", result.message
    finished = [event.result for event in driver.of(ev.CommandFinished)]
    out = [f.output for f in finished]
    assert finished[0].timed_out and finished[0].duration_s < 20
    assert out[1] == "still-here\n"
    assert out[2] == "started\n" and finished[2].duration_s < 20 and not finished[2].timed_out
    assert out[3] == "after-stdin\n" and not finished[3].timed_out
    assert out[4].startswith("ok ") and "\ufffd" in out[4] and out[4].endswith(" bytes\n")
    assert out[5] == "red plain\n"
    assert out[6] == "progress 100%\n"
    assert finished[7].interrupted and finished[7].duration_s < 20 and "interrupt-me" in out[7]
    assert out[8] == "still-here again\n"
    assert finished[-1].returncode == 0


@pytest.mark.timeout(120)
def test_command_edge_cases_in_the_local_shell(openai_server, tmp_path):
    check_edge_session(*run_edge_session(tmp_path, openai_server, "local"))


@pytest.mark.timeout(120)
def test_command_edge_cases_in_docker(openai_server, tmp_path):
    docker_client_or_skip()
    check_edge_session(*run_edge_session(tmp_path, openai_server, "docker"))


class _Rss:
    """Peak resident memory of this process while a block runs (a loose safety net)."""

    def __init__(self):
        self.start = self.peak = self.now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @staticmethod
    def now() -> int:
        with open("/proc/self/status") as status:
            line = next(line for line in status if line.startswith("VmRSS:"))
        return int(line.split()[1]) * 1024

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self.now())

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class CountingDriver(Driver):
    """Keeps every event but the output chunks, which it only counts (as a UI pane would keep
    a bounded buffer): the test measures swedeck's memory, not its own."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.streamed = 0

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.CommandOutput):
            self.streamed += len(event.text)
            return
        super().__call__(event)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("env", ["local", "docker"])
def test_100_mb_of_output_reaches_the_model_as_head_and_tail(openai_server, tmp_path, env):
    if env == "docker":
        docker_client_or_skip()
    command = "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 100000000; echo; echo THE-END"
    openai_server.script(Turn.bash_tool(command), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server), env=env, agent__mode="yolo", timeout=60)
    driver = CountingDriver()
    started = time.monotonic()
    with _Rss() as rss:
        result = run_session(config, "t", driver, interactive=False, timeout=100)
    assert result.exit_status == "Submitted", result.message
    finished = driver.of(ev.CommandFinished)[0].result
    assert finished.truncated and not finished.timed_out, (finished.timed_out, time.monotonic() - started)
    assert finished.output.startswith("0123456789abcdefghijklmnopqrstuvwxyz\n")
    assert "THE-END" in finished.output
    elided = re.search(r"(\d+) characters .*elided", finished.output)
    assert elided and int(elided.group(1)) > 99_000_000, "the whole 100 MB went through, its middle elided"
    assert len(finished.output) < 3 * config.environment.output_limit
    sent = openai_server.requests[1]["messages"][-1]["content"]
    assert "THE-END" in sent and len(sent) < 4 * config.environment.output_limit
    assert rss.peak - rss.start < 300 * 1024 * 1024, f"RSS grew by {(rss.peak - rss.start) >> 20} MB"


FORGERY = ("printf '\\036SDEND%s:42\\036' \"${SWEDECK_CMD%-*}\"; env | grep -c SDEND; "
           "unset -f __swedeck_exec; echo real-output")


@pytest.mark.parametrize("env_kind", ["local", "docker"])
def test_a_command_cannot_forge_its_result_or_break_the_shell(tmp_path, env_kind):
    from support.docker_env import started_environment

    with started_environment(env_kind, tmp_path, "forge") as env:
        forged = env.execute(FORGERY, timeout=20)
        assert forged.returncode == 0 and "real-output" in forged.output  # not a fake "exit 42"
        assert "0" in [line.strip() for line in forged.output.splitlines()]  # no variable holds an end marker
        after = env.execute("echo still-working", timeout=20)  # unset -f broke nothing
        assert after.returncode == 0 and after.output.strip() == "still-working"


ESCAPE = "( setsid env -i sleep 300 & echo $! > {pidfile} ); sleep 60"
"""Drops the SWEDECK_CMD tag and leaves the command's process tree: the stop must still find it."""
STILL_RUNNING = ("p=$(cat {pidfile}); for i in $(seq 50); do s=$(cat /proc/$p/stat 2>/dev/null); "
                 "case \"$s\" in ''|*') Z '*) echo gone; exit 0;; esac; sleep 0.1; done; echo alive")


ESCAPES = [
    ESCAPE,
    "( export SWEDECK_CMD=idle; setsid sleep 300 & echo $! > {pidfile} ); sleep 60",  # claims to be nobody's
    "SWEDECK_CMD=other setsid sleep 300 & echo $! > {pidfile}; sleep 60",  # claims another command's tag
    "readonly SWEDECK_CMD; ( setsid env -i sleep 300 & echo $! > {pidfile} ); sleep 60",  # keeps its tag for ever
]


@pytest.mark.parametrize("env_kind", ["local", "docker"])
@pytest.mark.parametrize("escape", ESCAPES, ids=["env-i", "tag-idle", "tag-other", "readonly-tag"])
def test_a_timeout_stops_what_the_command_started_even_after_setsid_and_env_i(tmp_path, env_kind, escape):
    from support.docker_env import started_environment

    pidfile = "/tmp/escaped.pid" if env_kind == "docker" else str(tmp_path / "escaped.pid")
    with started_environment(env_kind, tmp_path, "escape") as env:
        # an earlier command's program (the command itself goes on a tick, as any real one does)
        earlier = env.execute("sleep 301 & echo $!; sleep 0.05", timeout=10)
        result = env.execute(escape.format(pidfile=pidfile), timeout=3)
        assert result.timed_out
        check = env.execute(f"bash -c {bash_quote(STILL_RUNNING.format(pidfile=pidfile))}", timeout=20)
        # the shell's own "Killed" notice of the escaped job may come first, set apart as earlier jobs' output
        assert check.output.split(EARLIER_OUTPUT_END)[-1].strip() == "gone", check.output
        if not escape.startswith("readonly"):  # a read-only tag makes every later program this one's
            spared = env.execute(f"kill -0 {earlier.output.strip()} && echo spared", timeout=10)
            assert spared.output.strip() == "spared"  # an earlier command's program keeps running
