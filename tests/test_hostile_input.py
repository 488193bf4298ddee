"""Hostile input, second round (issue 26; SPEC §8, §9.4, §13): what a file, a name or a
command tries to do to the reader's terminal, to the record's secrets, to a batch's folder,
and to the person's approvals."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import swedeck_command
from support.measured import peak_of, raw_zip
from swedeck.core.messages import MessageType, make_message
from swedeck.core.redact import Redactor
from swedeck.core.trajectory.writer import TrajectoryWriter

TITLE = "\x1b]0;pwned\x07"
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"
C1 = "\x9b31m\x9d0;c1-title\x9c"
TERMINAL_CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d", "\x9c", "\x90")


def _hostile_file(folder: Path, name: str) -> Path:
    writer = TrajectoryWriter(folder / name, {"id": f"h-{len(name)}", "model": f"m{TITLE}", "config": {}}, Redactor())
    writer.add_message(make_message("system", "s", MessageType.SYSTEM))
    writer.add_message(make_message("user", f"task {CLIPBOARD}", MessageType.TASK))
    writer.add_message(make_message("assistant", f"I run it {C1}{TITLE}", MessageType.ACTION,
                                    actions=[{"command": f"echo {C1}"}]))
    writer.add_message(make_message("user", f"out {CLIPBOARD}{C1}", MessageType.OBSERVATION))
    return writer.finish({"exit_status": "Submitted"})


def test_replay_print_and_its_errors_never_reach_the_terminal_as_controls(tmp_path):
    folder = tmp_path / f"runs{TITLE}"
    folder.mkdir()
    _hostile_file(folder, f"one{TITLE}")
    (folder / f"broken{CLIPBOARD}.traj.json").write_text("{not json")
    for extra in ([], ["--json"]):
        result = subprocess.run([*swedeck_command(), "replay", str(folder), "--print", *extra], capture_output=True,
                                timeout=60)
        out, err = result.stdout.decode(), result.stderr.decode()
        assert "I run it" in out and "cannot read trajectory" in err, (out, err)
        for control in TERMINAL_CONTROLS:
            assert control not in out and control not in err, (extra, repr(control))
        if extra:
            record = json.loads(out.splitlines()[1])  # line 1 is the fidelity summary
            assert "\x9b31m" in record["content"]  # the file's words, kept: escaped in JSON, not dropped
    single = subprocess.run([*swedeck_command(), "replay", str(folder / f"broken{CLIPBOARD}.traj.json"), "--print"],
                            capture_output=True, timeout=60)
    assert single.returncode == 1 and b"\x1b" not in single.stderr and b"\x07" not in single.stderr


# --- secrets ----------------------------------------------------------------------------------


def test_headless_json_masks_tokens_that_start_a_line(openai_server, tmp_path):
    from support.openai_server import Turn
    from support.reliability import SUBMIT, headless_args

    token, aws = "ghp_" + "a1B2c3D4" * 5, "AKIA" + "QWERTYUIOPASDFGH"
    openai_server.script(Turn.bash_tool(f"printf '%s\\n%s\\n' {token} {aws}"), Turn.bash_tool(SUBMIT))
    result = subprocess.run(headless_args(openai_server.url, tmp_path, "t", "--json"), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert token not in result.stdout and aws[4:] not in result.stdout
    assert "ghp_***" in result.stdout and "AKIA***" in result.stdout


def test_a_secret_inside_an_encoded_url_is_masked():
    from urllib.parse import quote

    secret = "hunter2/with@odd:chars"
    redactor = Redactor([secret])
    quoted = f"pull access denied for https%3A%2F%2Fu%3A{quote(secret, safe='')}%40registry/x"
    assert quote(secret, safe="") not in redactor.text(quoted)
    token = "ghp_" + "Z9y8X7w6" * 5
    assert token not in redactor.text(f"https%3A%2F%2Fu%3A{token}%40github.com")


def test_config_errors_never_echo_a_secret(tmp_path):
    token = "sk-" + "proj0123456789abcdefXYZ"
    own = "my-own-secret-value-42"
    for flag in (f"model.model_kwargs={{api_key: {own}, timeout: [{own}]}}", f"model.timeout_s={token}",
                 f"model.model_kwargs.api_key={own}", f"model.retry={{attempts: {own}}}"):
        extra = ["-c", f"model.model_kwargs={{api_key: {own}}}"] if "api_key" not in flag else []
        result = subprocess.run([*swedeck_command(), "config", "show", *extra, "-c", flag, "-c", "model.retry.attempts=x"],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 2, (flag, result.stdout, result.stderr)
        assert "invalid configuration" in result.stderr
        assert token not in result.stderr and own not in result.stderr, (flag, result.stderr)


# --- batch ids ----------------------------------------------------------------------------------


def test_batch_ids_that_would_be_its_own_files_or_too_long_are_refused_before_anything_runs(tmp_path):
    for bad in ("preds.json", "batch.json", ".batch.lock", "REPORT.json", ".hidden", "x" * 300):
        instances = tmp_path / "i.jsonl"
        instances.write_text(json.dumps({"instance_id": bad, "problem_statement": "t"}) + "\n")
        out = tmp_path / "out"
        result = subprocess.run([*swedeck_command(), "batch", str(instances), "-o", str(out), "--env", "local",
                                 "-m", "hosted_vllm/none"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 2, (bad, result.stdout, result.stderr)
        assert "instance 1: id" in result.stderr and "Traceback" not in result.stderr
        assert not out.exists(), bad


# --- first-round leftovers ------------------------------------------------------------------------


def test_a_timed_out_command_says_so_to_the_model_and_never_shows_a_none_exit_code(openai_server, tmp_path):
    from support.openai_server import Turn
    from support.reliability import SUBMIT, headless_args

    openai_server.script(Turn.bash_tool("echo started; sleep 30"), Turn.bash_tool(SUBMIT))
    result = subprocess.run(headless_args(openai_server.url, tmp_path, "t", "-c", "environment.timeout=1"),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    sent = openai_server.requests[1]["messages"][-1]["content"]
    assert "timed out" in sent and "started" in sent and "None" not in sent


def test_resuming_a_submitted_session_headless_without_a_task_says_there_is_nothing_to_do(openai_server, tmp_path):
    from support.openai_server import Turn
    from support.reliability import SUBMIT, headless_args

    openai_server.script(Turn.bash_tool(SUBMIT))
    first = subprocess.run(headless_args(openai_server.url, tmp_path, "t"), capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    again = subprocess.run(headless_args(openai_server.url, tmp_path, "--resume", str(tmp_path / "run.traj.json"),
                                         output=tmp_path / "again"), capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "nothing left to do" in again.stdout and len(openai_server.requests) == 1


# --- "always allow" -------------------------------------------------------------------------------

SNEAKY = ["ls & touch sneaky1", "PATH=/tmp/evil:$PATH ls", "LD_PRELOAD=x.so ls", "BASH_ENV=x ls", "(ls; touch sneaky2)",
          "ls $(touch sneaky3)", "ls `touch sneaky4`", "ls\ntouch sneaky5", "ls |& tee sneaky6", "{ ls; touch sneaky7; }",
          "ls > sneaky8", "env ls", "ls 'unbalanced"]


def test_always_allow_never_reaches_a_part_the_person_did_not_allow():
    from swedeck.core.agent.approvals import Approvals, command_prefix

    approvals = Approvals()
    assert approvals.allow("ls -la") == "ls …"
    for command in SNEAKY:
        assert approvals.allowed_by(command) is None, command
    assert approvals.allowed_by("ls -la src") == "always allowed: ls …"
    approvals.allow("git status")
    assert approvals.allowed_by("ls && git status --short") == \
        "always allowed: ls (by ls …); git status --short (by git status …)"  # each part, and its rule
    assert command_prefix("bash -c 'rm -rf x'") is None and command_prefix("xargs rm") is None
    approvals.allow("PATH=/opt/bin:$PATH pytest")
    assert approvals.allowed_by("PATH=/opt/bin:$PATH pytest -x") is not None
    assert approvals.allowed_by("pytest -x") is None and approvals.allowed_by("PATH=/evil pytest") is None


def test_after_always_allow_every_sneaky_command_still_asks_in_a_real_session(openai_server, tmp_path):
    from support.driver import Driver, make_config, run_session
    from support.openai_server import Turn, model_config
    from support.reliability import SUBMIT
    from swedeck.core import events as ev

    openai_server.script(Turn.bash_tool("ls -la"), *[Turn.bash_tool(command) for command in SNEAKY[:5]],
                         Turn.bash_tool("ls -la ."), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server))
    config.agent.whitelist_actions = ["^echo COMPLETE_TASK"]
    driver = Driver(decisions=[ev.Decision("always_allow"), *[ev.Decision("reject", comment="no")] * 5], inputs=[None])
    assert run_session(config, "t", driver).exit_status == "Submitted"
    assert [r.command for r in driver.of(ev.ConfirmationRequested)] == ["ls -la", *SNEAKY[:5]]
    assert not list(tmp_path.glob("sneaky*"))
    assert [d.reason for d in driver.of(ev.ActionDecided) if d.decision == "auto"][0] == "always allowed: ls …"


# --- what the confirm prompt shows ------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


ZERO_WIDTH_FILLERS = ["\u00ad", "\u034f", "\ufe0f", "\U000e0020", "\U000e0001", "\u206a", "\u17b5", "\U0001d173",
                      "\ufff9", "\U0001bca1", "\u2065", "\u0300", "\u115f\u0300"]
"""Issue 61.5: characters that draw nothing (default-ignorable, format, combining, unassigned)."""


def test_every_character_that_draws_nothing_is_marked_in_the_command_to_approve():
    from swedeck.tui.widgets.text import whole_command

    for filler in ZERO_WIDTH_FILLERS:
        shown = whole_command(f"ls{filler * 40}; touch payload")
        assert filler[0] not in shown and "⟨" in shown and shown.endswith("; touch payload"), repr(filler)
    assert whole_command("echo café; naïve") == "echo café; naïve"  # composed letters are text


@pytest.mark.anyio
@pytest.mark.timeout(120)
@pytest.mark.parametrize("blank", ["", "\u3164", "\u2800", "\u00a0", "\u2003", "\u3000", "\u200b", "\u00ad",
                                   "\U000e0020"])
async def test_the_command_to_approve_is_shown_whole_and_invisible_characters_are_marked(openai_server, tmp_path, blank):
    """Empty lines, and lines of characters that draw nothing (issue 44.7), are one counted line."""
    from support.driver import make_config
    from support.openai_server import Turn, model_config
    from support.waiting import wait_for
    from swedeck.core.session import Session
    from swedeck.tui.live.app import SwedeckApp

    hidden = "touch payload-ran" + f"{blank * 3}\n" * 150 + "ls # harmless\u202e txt.exe \u200b"
    openai_server.script(Turn.bash_tool(hidden))
    session = Session(make_config(tmp_path, model_config(openai_server)), "t")
    app = SwedeckApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.confirmation is not None, 90)  # under load too (issue 62)
        await pilot.pause()
        screen = app.export_screenshot().replace("&#160;", " ")
        assert "touch payload-ran" in screen  # the payload is in view while the person decides
        assert "149 empty-looking lines" in screen
        assert "⟨U+202E⟩" in screen and "⟨U+200B⟩" in screen and "\u202e" not in screen
        await pilot.press("n")
        await pilot.press(*"no", "enter")
        session.quit()
    assert not (tmp_path / "payload-ran").exists()


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_command_taller_than_the_pane_is_shown_from_its_first_line(openai_server, tmp_path):
    """Issue 61.5: 120 distinct lines, the payload on the first; the prompt opens at the top."""
    from support.driver import make_config
    from support.openai_server import Turn, model_config
    from support.waiting import wait_for
    from swedeck.core.session import Session
    from swedeck.tui.live.app import SwedeckApp

    tall = "touch payload-ran\n" + "\n".join(f"echo line {number}" for number in range(120))
    openai_server.script(Turn.bash_tool(tall))
    session = Session(make_config(tmp_path, model_config(openai_server)), "t")
    app = SwedeckApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.confirmation is not None, 90)
        screen_ = app.session_screen
        block = screen_._block(screen_.confirmation.action_id)
        # once laid out at its pending height, its first line is the pane's first
        await wait_for(pilot, lambda: block.state == "pending" and block.virtual_region.height > 100
                       and screen_.transcript.scroll_y == block.virtual_region.y, 30)
        screen = app.export_screenshot().replace("&#160;", " ")
        assert "touch payload-ran" in screen and "shown from the first" in screen
        assert "echo line 119" not in screen
        await pilot.press("n")
        await pilot.press(*"no", "enter")
        session.quit()
    assert not (tmp_path / "payload-ran").exists()


# --- a silent stream -----------------------------------------------------------------------------


def test_a_stream_that_only_pings_is_a_cut_stream_retried_and_shown(openai_server, tmp_path):
    from support.openai_server import Turn
    from support.reliability import SUBMIT, headless_args

    openai_server.script(Turn(text="thinking about it", keepalive_s=60), Turn.bash_tool(SUBMIT))
    result = subprocess.run(headless_args(openai_server.url, tmp_path, "t", "-c", "model.stall_timeout_s=1"),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no progress for 1 s" in result.stdout  # the retry says why
    assert len(openai_server.requests) == 2


def test_the_wall_time_limit_ends_a_session_while_the_model_streams(openai_server, tmp_path):
    from support.openai_server import Turn
    from support.reliability import headless_args

    openai_server.script(Turn(text="thinking about it", keepalive_s=60))
    result = subprocess.run(headless_args(openai_server.url, tmp_path, "t", "-c", "model.stall_timeout_s=0",
                                          "-c", "agent.wall_time_limit_s=2"), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 3, result.stdout + result.stderr
    info = json.loads((tmp_path / "run.traj.json").read_text())["info"]
    assert info["exit_status"] == "LimitsExceeded" and "wall time limit" in info["message"]


def test_a_run_that_ends_while_litellm_is_still_importing_leaves_with_its_own_exit_code(openai_server, tmp_path):
    """The session looks the model's window up in litellm in a background thread; when the run
    ends first, that thread may be inside pydantic-core's Rust code, where the interpreter's
    finalization used to crash the process after its work was done (the import here never
    ends, and waits there)."""
    from support.openai_server import Turn
    from support.reliability import headless_args

    openai_server.script(Turn(text="thinking about it", keepalive_s=60))
    stuck = Path(__file__).parent / "support" / "stuck_litellm"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(stuck), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run(headless_args(openai_server.url, tmp_path, "t", "-c", "agent.wall_time_limit_s=1"),
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 3, f"exit {result.returncode}\n{result.stdout}{result.stderr}"
    assert "wall time limit" in result.stdout
    info = json.loads((tmp_path / "run.traj.json").read_text())["info"]
    assert info["exit_status"] == "LimitsExceeded"


# --- replay and prompt on big or odd files ---------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_search_with_a_huge_number_of_matches_runs_in_a_worker_and_marks_a_bounded_number(tmp_path):
    from support.replay import add_step, start_writer
    from support.waiting import wait_for
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.shared.highlight import highlighted
    from swedeck.tui.widgets.text import MAX_MARKS

    writer = start_writer(tmp_path / "big")
    for step in range(1, 41):
        add_step(writer, step, output="x " * 12_500)  # 500,000 matches of "x" in all
    path = writer.finish({"exit_status": "Submitted"})
    app = ReplayApp([path])
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen_stack[0]
        await pilot.press("slash", "x", "enter")
        await pilot.press("l")  # keys are handled while the search runs
        await wait_for(pilot, lambda: not screen.searching, 60)
        assert screen.matches == list(range(1, 41))
        await pilot.press("n")
        assert app.is_running
    assert len(highlighted("x " * 12_500, "x").spans) == MAX_MARKS  # marked in one pass, and bounded


def test_wrong_typed_meta_events_are_passed_over_with_a_warning(tmp_path):
    from swedeck.core.prompt_view import step_prompt
    from swedeck.core.replay.document import open_document
    from swedeck.core.trajectory.loader import load_trajectory

    good = _hostile_file(tmp_path, "good")
    document = json.loads(good.read_text())
    variants = {"a string": "abc", "an object": {"a": 1},
                "bad records": [{"event": "processors_change", "hash": "h", "processors": "oops", "message_count": 0},
                                {"event": "mode_change", "message_count": "abc"}, 7, {"event": ["x"]}],
                "a bad processor": [{"event": "processors_change", "hash": "h",
                                     "processors": [{"type": "last_n_observations", "n": "x"}], "message_count": 0}]}
    for name, meta in variants.items():
        path = tmp_path / f"{name}.traj.json"
        path.write_text(json.dumps({**document, "meta_events": meta}))
        trajectory = load_trajectory(path)
        assert len(trajectory.steps) == 1
        open_document(path).step(1)
        prompt = step_prompt(trajectory, 1)
        assert prompt.lines, name
        printed = subprocess.run([*swedeck_command(), "prompt", str(path), "--step", "1"], capture_output=True,
                                 text=True, timeout=60)
        assert printed.returncode == 0 and "Traceback" not in printed.stderr, (name, printed.stderr)
    assert load_trajectory(tmp_path / "a string.traj.json").info.warnings == ["`meta_events` is str, not a list; ignored"]


def test_prompt_counts_a_huge_single_line_message_in_bounded_memory(tmp_path):
    """A 6 MB message on one line is counted a slice at a time (`tokens.CHUNK_CHARS`) under a
    200 MB address-space cap; counted whole, tiktoken's token list alone breaks that cap (the
    same command with the slicing switched off fails under it: the cap is a real bound)."""
    import resource
    import sys

    writer = TrajectoryWriter(tmp_path / "huge", {"id": "huge", "config": {}}, Redactor())
    writer.add_message(make_message("system", "s", MessageType.SYSTEM))
    writer.add_message(make_message("user", "t", MessageType.TASK))
    writer.add_message(make_message("assistant", "a", MessageType.ACTION, actions=[{"command": "cat big"}]))
    writer.add_message(make_message("user", "word" * 1_500_000, MessageType.OBSERVATION))  # 6 MB, one line
    writer.add_message(make_message("assistant", "b", MessageType.ACTION, actions=[{"command": "ls"}]))
    path = writer.finish({"exit_status": "Submitted"})

    def capped() -> None:  # the command's own floor is ~170 MB of address space (Python, tiktoken)
        resource.setrlimit(resource.RLIMIT_AS, (200_000_000, 200_000_000))

    def prompt(chunk_chars: int) -> subprocess.CompletedProcess[str]:
        code = (f"import sys, swedeck.core.tokens as tokens; tokens.CHUNK_CHARS = {chunk_chars}; "
                f"from swedeck.cli import main; sys.exit(main(['prompt', {str(path)!r}, '--step', '2', '--json']))")
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              preexec_fn=capped)

    result = subprocess.run([*swedeck_command(), "prompt", str(path), "--step", "2", "--json"], capture_output=True,
                            text=True, timeout=120, preexec_fn=capped)
    assert result.returncode == 0, result.stderr[-2000:]
    counted = json.loads(result.stdout)["messages"][3]["tokens"]
    assert 1_000_000 < counted < 2_000_000
    assert prompt(100_000_000).returncode != 0  # whole: over the cap


# --- a command cannot forge its result -------------------------------------------------------------

FORGERIES = {
    # a function named `builtin` receives the end marker's printf and rewrites the status
    "a function named builtin": (
        "builtin() { if [ \"$1\" = printf ] && [[ \"$2\" == *SDEND* ]]; then command printf \"${2%%%s*}0\\036\"; "
        "else command builtin \"$@\"; fi; }; false"),
    # a DEBUG trap with extdebug runs the marker's printf with 0 for "$?" and skips the real one
    "a DEBUG trap": ("shopt -s extdebug; trap 'if [[ $BASH_COMMAND == *SDEND* ]]; then "
                     "eval \"${BASH_COMMAND/\\\"\\$?\\\"/0}\"; false; fi' DEBUG; ls /definitely/missing"),
    # a read-only runner: the next command never runs, and its status is the impostor's
    "a read-only runner": "__swedeck_exec() { :; }; readonly -f __swedeck_exec; false",
    # issue 44.8: aliases for the protocol's words, with expand_aliases
    "an alias for the runner": "shopt -s expand_aliases; alias __swedeck_exec=true; false",
    "an alias for builtin": "shopt -s expand_aliases; alias builtin='true #'; alias trap='true #'; false",
    # a disabled builtin, and a script of that name on PATH that prints a forged marker
    "a disabled builtin and a script": (
        "enable -n builtin trap; mkdir -p /tmp/forger; for n in builtin trap; do "
        "printf '#!/bin/sh\\necho \"trap -- %sSDEND$(echo \"$*\" | tr -cd 0-9a-f | head -c 16):0%s USR2\"\\n' "
        "\"'\" \"'\" > /tmp/forger/$n; chmod +x /tmp/forger/$n; done; PATH=/tmp/forger:$PATH; false"),
    "a program hashed for a builtin": "hash -p /bin/true trap; hash -p /bin/true builtin; false",
    # issue 44.9: what shows the next line (its secret) to the command that runs in it
    "verbose input": "set -v; false",
    "history": "set -o history; false",
    "a read-only PATH": "readonly PATH; false",
}


SILENCING = ("a disabled builtin and a script", "a read-only PATH")
"""The routes after which the shell never reports: the command ends at its timeout."""


@pytest.mark.parametrize("env_kind", ["local", "docker"])
@pytest.mark.parametrize("route", list(FORGERIES))
def test_no_route_forges_a_result_the_shell_is_restarted_and_says_so(tmp_path, env_kind, route):
    from support.docker_env import started_environment

    with started_environment(env_kind, tmp_path, "forge2") as env:
        # the routes that silence the shell's report wait out the timeout: a short one for them
        forged = env.execute(FORGERIES[route], timeout=6 if route in SILENCING else 20)
        assert forged.returncode != 0, (route, forged)  # never the forged 0
        if forged.returncode is None:
            assert any(why in forged.output for why in ("tampered with the shell", "no longer reports",
                                                        "could not be stopped")), forged.output
            assert "new shell session was started" in forged.output
        for command, code in (("false", 1), ("(exit 3)", 3), ("echo fine", 0)):
            after = env.execute(command, timeout=20)  # the next commands get their true results
            assert after.returncode == code, (route, command, after)


# --- watch and follow under load --------------------------------------------------------------------


def test_following_a_file_that_grows_without_a_newline_takes_bounded_memory(tmp_path):
    import tracemalloc

    from swedeck.core.trajectory.index import TrajectoryIndex

    writer = TrajectoryWriter(tmp_path / "grow", {"id": "grow", "config": {}}, Redactor())
    writer.add_message(make_message("user", "t", MessageType.TASK))
    writer.close()
    index = TrajectoryIndex(writer.path)
    assert len(index) == 1
    piece = b"x" * (10 << 20)
    tracemalloc.start()
    try:
        with open(writer.path, "ab") as handle:
            handle.write(b'{"role": "user", "content": "')
            for _ in range(12):  # 120 MB of one unfinished line, looked at after every 10 MB
                handle.write(piece)
                handle.flush()
                assert index.refresh() == 0 and index.torn_tail
            _, peak = tracemalloc.get_traced_memory()
            handle.write(b'", "extra": {"message_type": "observation"}}\n')
            handle.write((json.dumps(make_message("user", "after", MessageType.OBSERVATION).to_record()) + "\n").encode())
        assert peak < 40 << 20, f"{peak >> 20} MB while the line grew"
        assert index.refresh() == 2 and not index.torn_tail
        assert index.message(2).text == "after"
        assert index._messages[1][1] > 120 << 20  # the long line, indexed at its true length
    finally:
        tracemalloc.stop()


# --- containment ---------------------------------------------------------------------------------------


def _running(argv: list[str]) -> bool:
    wanted = "\0".join(argv).encode() + b"\0"
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == wanted:
                    return True
            except OSError:
                continue
    return False


def test_a_killed_swedeck_leaves_no_shell_and_no_command_behind(openai_server, tmp_path):
    import os
    import signal

    from support.openai_server import Turn
    from support.reliability import headless_args
    from support.waiting import running_below, wait_until

    escaped, foreground = ["sleep", "3131"], ["sleep", "3132"]
    openai_server.script(Turn.bash_tool("( export SWEDECK_CMD=idle; setsid sleep 3131 & ); sleep 3132"))
    process = subprocess.Popen(headless_args(openai_server.url, tmp_path, "t", "-c", "environment.timeout=600"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: running_below(process.pid, foreground), timeout=60, what="the command to run")
        wait_until(lambda: _running(escaped), timeout=10, what="the escaped program to run")
    finally:
        os.kill(process.pid, signal.SIGKILL)  # no handler runs: only the kernel can tell the shell
        process.wait(timeout=10)
    wait_until(lambda: not _running(escaped) and not _running(foreground), timeout=15,
               what="the session's programs to end with swedeck")


def test_in_a_real_terminal_replay_print_and_its_errors_leave_the_title_alone(tmp_path):
    import shlex
    import uuid

    from support.terminal import TMUX, exit_code, wait_for_text

    folder = tmp_path / "runs"
    folder.mkdir()
    _hostile_file(folder, "one")
    (folder / f"broken{TITLE}.traj.json").write_text("{not json")
    session, done = f"swedeck-title-{uuid.uuid4().hex[:6]}", tmp_path / "exit-code"
    replay = " ".join(shlex.quote(part) for part in [*swedeck_command(), "replay", str(folder), "--print"])
    subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "160", "-y", "48",
                    f"printf '\\033]0;clean-title\\007'; {replay}; echo $? > {done}; sleep 60"], check=True)
    try:
        wait_for_text(session, "I run it", timeout=30)
        exit_code(done, timeout=30)
        title = subprocess.run([*TMUX, "display-message", "-p", "-t", session, "#{pane_title}"], capture_output=True,
                               text=True).stdout.strip()
        assert title == "clean-title", title  # no OSC 0 from a file's name, its model or its words reached it
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)


# --- other agents' folders are data (issue 44.11) ----------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("attack", ["fifo", "zero", "outside"])
def test_a_harbor_trials_files_are_read_as_bounded_regular_files_inside_it(tmp_path, attack):
    import os
    import shutil
    import subprocess

    from conftest import swedeck_command

    job = tmp_path / "job"
    shutil.copytree(Path(__file__).parent / "fixtures" / "agents" / "harbor-job", job)
    trial = job / "trial-a__x1"
    secret = tmp_path / "shadow"
    secret.write_text("root:SECRET-HASH:19000:0:99999:7:::\n")
    reward = trial / "verifier" / "reward.txt"
    reward.unlink()
    if attack == "fifo":
        os.mkfifo(reward)
    elif attack == "zero":
        reward.symlink_to("/dev/zero")
    else:
        reward.symlink_to(secret)
        (trial / "result.json").unlink()
        (trial / "result.json").symlink_to(secret)
    shown = subprocess.run([*swedeck_command(), "replay", str(trial), "--print"], capture_output=True, text=True,
                           timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "SECRET-HASH" not in shown.stdout and "not read" in shown.stdout
    for kind in ("atif", "html"):
        out = tmp_path / f"export.{'json' if kind == 'atif' else 'html'}"
        exported = subprocess.run([*swedeck_command(), "export", str(trial), "-o", str(out), "--format", kind],
                                  capture_output=True, text=True, timeout=60)
        assert exported.returncode == 0, exported.stderr
        assert "SECRET-HASH" not in out.read_text()
    listed = subprocess.run([*swedeck_command(), "replay", str(job), "--print"], capture_output=True, text=True,
                            timeout=60)
    assert listed.returncode == 0 and "SECRET-HASH" not in listed.stdout




def _zeros(size: int, kind: str) -> bytes:
    import zlib

    import zstandard

    if kind == "deflate":
        packer = zlib.compressobj(9, zlib.DEFLATED, -15)
        return b"".join(packer.compress(b"\0" * (1 << 20)) for _ in range(size >> 20)) + packer.flush()
    writer = zstandard.ZstdCompressor().compressobj(size=size)  # the frame says its true size
    return b"".join(writer.compress(b"\0" * (1 << 20)) for _ in range(size >> 20)) + writer.flush()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("attack", ["deflate-lies", "zstd-lies", "claims-too-much", "claims-511-mb", "many-samples"])
def test_an_inspect_log_is_read_within_bounds(tmp_path, attack):
    """Issue 44.12: a `.eval` decompresses at most what a member may hold (a zip or zstd bomb is
    refused, not inflated), and opens one sample of 20,000 from the directory; the process's own
    peak memory says so."""
    import json
    import zlib

    from conftest import swedeck_command

    header = json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}).encode()
    sample = json.dumps({"id": "s1", "epoch": 1, "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": "done"}]}).encode()
    entries = [("header.json", 0, header, len(header), zlib.crc32(header))]
    if attack == "many-samples":
        entries += [(f"samples/s{n}_epoch_1.json", 0, sample, len(sample), zlib.crc32(sample)) for n in range(20_000)]
    elif attack == "claims-too-much":
        entries.append(("samples/s1_epoch_1.json", 8, _zeros(1 << 20, "deflate"), 3 << 30, 0))
    elif attack == "claims-511-mb":  # issue 61.14: 1.5 KB that says 511 MB, under the member bound
        entries.append(("samples/s1_epoch_1.json", 8, _zeros(1 << 20, "deflate"), 511 << 20, 0))
    else:
        kind = attack.split("-")[0]
        entries.append(("samples/s1_epoch_1.json", 8 if kind == "deflate" else 93, _zeros(256 << 20, kind), 1 << 20, 0))
    path = tmp_path / "log.eval"
    path.write_bytes(raw_zip(entries))
    ran, peak_mb = peak_of([*swedeck_command(), "replay", str(path), "--print"])
    assert "Traceback" not in ran.stderr
    if attack == "many-samples":
        assert ran.returncode == 0 and "runs in this file: 20000" in ran.stdout, ran.stderr
    else:
        assert ran.returncode == 1 and ran.stderr.count("\n") == 1, ran.stderr
    assert peak_mb < 400, peak_mb  # 256 MB of zeros never inflated whole
    if attack == "claims-511-mb":
        assert "no compression reaches that" in ran.stderr and peak_mb < 200, (peak_mb, ran.stderr)


_SURROGATE_SOURCES = ["mini-v1-text.traj.json", "mini-v2-tool-calls.traj.json", "sweagent-tool-calls.traj",
                      "agents/claude-code/cc-session-1.jsonl", "agents/codex/rollout-2026-11-20T10-00-00-0199-codex.jsonl",
                      "agents/atif/v1.5-plain.json", "agents/openhands/v0-events.json", "agents/inspect/calc.json"]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", _SURROGATE_SOURCES)
def test_any_text_prints_and_exports(tmp_path, name):
    """Issue 44.13: a lone surrogate in any text of any format: `--print`, `--print --json`, both
    exports and `diff` answer, never an internal error."""
    import re

    from conftest import swedeck_command

    source = Path(__file__).parent / "fixtures" / name
    text = source.read_text()
    hostile, count = re.subn(r'("(?:content|text|output|message|command|cmd|observation)": ")', r"\1\\ud800 ", text)
    assert count, name
    path = tmp_path / source.name
    path.write_text(hostile)
    runs = [["replay", str(path), "--print"], ["replay", str(path), "--print", "--json"],
            ["export", str(path), "-o", str(tmp_path / "out.json")], ["export", str(path), "-o", str(tmp_path / "out.html")],
            ["diff", str(path), str(source), "--print"]]
    for args in runs:
        ran = subprocess.run([*swedeck_command(), *args], capture_output=True, text=True, timeout=60,
                             errors="backslashreplace")
        assert ran.returncode == 0 and "internal error" not in ran.stderr, (args, ran.stderr)


@pytest.mark.timeout(120)
def test_any_number_shows(tmp_path):
    """Issue 44.13: 400-digit token counts in a Claude Code file: the file opens, prints and exports
    (a count no provider gives is not taken as one; nothing derived from it overflows)."""
    from conftest import swedeck_command

    big = int("9" * 400)
    lines = [{"sessionId": "s", "uuid": "u1", "parentUuid": None, "type": "user",
              "message": {"role": "user", "content": "go"}},
             {"sessionId": "s", "uuid": "a1", "parentUuid": "u1", "type": "assistant", "message": {
                 "id": "m1", "model": "claude-sonnet-4-5", "role": "assistant",
                 "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
                 "usage": {"input_tokens": big, "output_tokens": big, "cache_read_input_tokens": big}}},
             {"sessionId": "s", "uuid": "r1", "parentUuid": "a1", "type": "user", "message": {
                 "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}}]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for args in (["replay", str(path), "--print"], ["export", str(path), "-o", str(tmp_path / "s.html")],
                 ["export", str(path), "-o", str(tmp_path / "s.json")]):
        ran = subprocess.run([*swedeck_command(), *args], capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, (args, ran.stderr)


@pytest.mark.timeout(60)
def test_a_claude_code_session_with_thirty_thousand_leaves_opens(tmp_path):
    """Issue 44.14: each branch's label is read from a depth kept in one pass over the tree, not a
    walk to the root per leaf (30,000 leaves on a 3,000-record line took 42 s: the square of it)."""
    from swedeck.core.trajectory.loader import load_trajectory

    lines = [{"sessionId": "s", "uuid": "root", "parentUuid": None, "type": "user",
              "message": {"role": "user", "content": "go"}}]
    for number in range(3000):
        lines.append({"sessionId": "s", "uuid": f"m{number}", "parentUuid": "root" if number == 0 else f"m{number - 1}",
                      "type": "assistant", "message": {"id": f"m{number}", "role": "assistant", "content": "x"}})
    for number in range(30_000):
        lines.append({"sessionId": "s", "uuid": f"leaf{number}", "parentUuid": f"m{2999 - number % 3000}",
                      "type": "user", "message": {"role": "user", "content": "a leaf"}})
    path = tmp_path / "leaves.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    trajectory = load_trajectory(path)
    assert trajectory.fidelity.branches == 30_000 - 1
    labels = {branch.label for branch in trajectory.fidelity.openable}
    assert "branch of 3002 records, ending 'a leaf'" in labels and "branch of 3 records, ending 'a leaf'" in labels


def test_print_draws_escapes_and_invisible_characters_as_marks(tmp_path):
    """Issue 44.15: `replay --print` sends no escape of a file to the terminal, the exit status of
    mini-swe-agent's `exit` message included, and marks bidi and zero-width characters."""
    from conftest import swedeck_command

    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"},
                {"role": "assistant", "content": "go\n\n```mswea_bash_command\nls\u202e txt\u200b\n```"},
                {"role": "user", "content": "<returncode>0</returncode>\n<output>\nok\n</output>"},
                {"role": "exit", "content": "", "extra": {"exit_status": "Submitted\x1b]52;c;ZXZpbA==\x07\x1b]0;x\x07"}}]
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps({"messages": messages, "info": {"exit_status": "\x1b[31mSubmitted"}}))
    shown = subprocess.run([*swedeck_command(), "replay", str(path), "--print"], capture_output=True, text=True,
                           timeout=60).stdout
    assert "\x1b" not in shown and "\x07" not in shown
    assert "⟨U+202E⟩" in shown and "⟨U+200B⟩" in shown and "\u202e" not in shown
    as_json = subprocess.run([*swedeck_command(), "replay", str(path), "--print", "--json"], capture_output=True,
                             text=True, timeout=60).stdout  # issue 61.15: escaped, the same JSON
    assert "\u202e" not in as_json and "\x1b" not in as_json and "\\u202e" in as_json
    assert any("ls\u202e txt\u200b" in json.dumps(json.loads(line), ensure_ascii=False)
               for line in as_json.splitlines())


def test_lower_risks_of_the_third_round(tmp_path):
    """Issue 44.16: a token encoded twice in a URL (a Docker error) is masked; `replaces: [true,
    false]` names no message; `--resume` of a missing file is a usage error that says so."""
    from conftest import swedeck_command
    from swedeck.core.messages import MessageType, make_message
    from swedeck.core.redact import Redactor
    from swedeck.core.trajectory.compaction import compacted

    token = "ghp_" + "Ab1" * 12
    assert token not in Redactor().text(f"pull access denied for registry%252F{token}%252Fimage")
    history = [make_message("system", "sys", MessageType.SYSTEM), make_message("user", "task", MessageType.TASK),
               make_message("assistant", "a", MessageType.ASSISTANT_MESSAGE),
               make_message("user", "summary", MessageType.COMPACTION, replaces=[True, False])]
    assert [m.text for m in compacted(history)][:2] == ["sys", "task"]
    ran = subprocess.run([*swedeck_command(), "run", "--resume", str(tmp_path / "gone.traj.json"), "--headless", "-m",
                          "openai/gpt-4o", "-t", "x"], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 2 and "no such file" in ran.stderr and "environment" not in ran.stderr



@pytest.mark.timeout(120)
@pytest.mark.parametrize("env_kind", ["local", "docker"])
def test_a_background_jobs_later_output_is_kept_apart(tmp_path, env_kind):
    """Issue 44.10: what a background job of an earlier command prints between commands is shown
    apart, labelled, never as the next command's own output."""
    from support.docker_env import started_environment
    from support.waiting import wait_until

    with started_environment(env_kind, tmp_path, "background") as env:
        started = env.execute("(sleep 1; echo '12 passed'; touch /tmp/swedeck-bg-done) &", timeout=20)
        assert started.returncode == 0 and "12 passed" not in started.output
        channel = env._session._channel  # looked at beside the shell, so no command of its own runs meanwhile
        wait_until(lambda: channel.run_helper(["test", "-f", "/tmp/swedeck-bg-done"], timeout=10)[0] == 0, 60)
        # and until its output has reached swedeck's reader: a busy machine's reader thread can take
        # it only after the next command began (then it is that command's own: no start marker says
        # otherwise; one CI run met it)
        wait_until(lambda: channel._reader._queue.qsize() > 0, 10)
        failing = env.execute("false", timeout=20)
        env.execute("rm -f /tmp/swedeck-bg-done")
        assert failing.returncode == 1
        assert failing.output == ("<printed by background jobs of earlier commands, before this one ran:>\n"
                                  "12 passed\n\n<end of their output>\n")


@pytest.mark.parametrize("figure", ['"lots"', "[1]", "true", "-5"])
def test_a_usage_figure_of_the_wrong_type_reads_as_missing_not_as_an_unreadable_file(tmp_path, figure):
    """A Claude Code or Inspect file whose one call's input count is not a count: that figure
    reads as 0 (the rest of its usage kept), and the file reads as before, not "unexpected
    content (TypeError …)" (the figures were added before each was checked)."""
    from conftest import FIXTURES
    from swedeck.core.trajectory.loader import load_trajectory

    claude = tmp_path / "cc.jsonl"
    lines = (FIXTURES / "agents" / "claude-code" / "cc-session-1.jsonl").read_text().splitlines()
    place = next(index for index, line in enumerate(lines) if '"type": "assistant"' in line or '"type":"assistant"' in line)
    answer = json.loads(lines[place])["message"]["id"]  # the first answer: each of its records (its usage is its last's)
    for index, line in enumerate(lines):
        if f'"{answer}"' in line:  # the fixture's other lines as they are (one is torn on purpose)
            record = json.loads(line)
            usage = record["message"]["usage"]
            expected_prompt = usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
            usage["input_tokens"] = json.loads(figure)
            lines[index] = json.dumps(record)
    claude.write_text("\n".join(lines) + "\n")
    inspect = tmp_path / "calc.json"
    log = json.loads((FIXTURES / "agents" / "inspect" / "calc.json").read_text())
    model = next(event for event in log["samples"][0]["events"] if event.get("event") == "model")
    model["output"]["usage"]["input_tokens"] = json.loads(figure)
    inspect.write_text(json.dumps(log))
    for path, original, prompt in ((claude, FIXTURES / "agents" / "claude-code" / "cc-session-1.jsonl", expected_prompt),
                                   (inspect, FIXTURES / "agents" / "inspect" / "calc.json", 0)):
        read, before = load_trajectory(path), load_trajectory(original)
        assert len(read.steps) == len(before.steps) and len(read.messages) == len(before.messages), path
        usage_read = read.steps[0].usage
        assert (usage_read.prompt_tokens if usage_read else 0) == prompt, path
        assert [step.usage for step in read.steps[1:]] == [step.usage for step in before.steps[1:]], path


WRONG_TYPES = [  # (fixture, path to the value, the value): each made the whole file "unexpected content (TypeError …)"
    ("agents/claude-code/cc-session-1/subagents/agent-ag1.jsonl", (1, "message", "id"), {"a": 1}),
    ("agents/atif/v1.5-plain.json", ("steps", 3, "observation", "results"), 1e308),
    ("agents/atif/harbor-0.25.0-of-mini-v2-tool-calls.json", ("steps", 2, "observation", "results"), True),
    ("agents/openhands/v0-events.json", (0, "id"), [1]),
    ("agents/openhands/v0-events.json", (4, "id"), {"a": 1}),
    ("agents/openhands/eval-output.jsonl", (0, "history", 0, "id"), {"a": 1}),
    ("agents/inspect/calc.json", ("samples", 0, "events", 2, "output", "choices"), True),
    ("agents/inspect/calc.json", ("samples", 0, "messages", 4, "tool_calls"), 1e308),
]


@pytest.mark.parametrize(("name", "where", "value"), WRONG_TYPES, ids=lambda value: str(value)[:40])
def test_a_field_of_the_wrong_type_reads_as_missing_not_as_an_unreadable_file(tmp_path, name, where, value):
    """Found by replacing the fixtures' values one at a time with values of other types: each of
    these made the reader fail whole. The file now reads, every step shows, and its summary is made."""
    from conftest import FIXTURES
    from swedeck.core.replay.document import LoadedDocument
    from swedeck.core.trajectory.fidelity import summary
    from swedeck.core.trajectory.loader import load_trajectory

    source = FIXTURES / name
    if source.suffix == ".jsonl":
        lines = source.read_text().splitlines()
        record = json.loads(lines[where[0]])
        _set(record, where[1:], value)
        lines[where[0]] = json.dumps(record)
        text = "\n".join(lines) + "\n"
    else:
        document = json.loads(source.read_text())
        _set(document, where, value)
        text = json.dumps(document)
    path = tmp_path / source.name
    path.write_text(text)
    trajectory = load_trajectory(path)
    document = LoadedDocument(trajectory)
    assert document.step_count > 0
    for number in range(1, document.step_count + 1):
        document.step(number)
    summary(trajectory)


@pytest.mark.parametrize("role", [[1], {"a": 1}])
def test_a_role_that_is_a_list_or_an_object_is_said_by_its_message(tmp_path, role):
    from conftest import FIXTURES
    from swedeck.core.trajectory.errors import TrajectoryError
    from swedeck.core.trajectory.loader import load_trajectory

    document = json.loads((FIXTURES / "mini-v2-tool-calls.traj.json").read_text())
    document["messages"][3]["role"] = role
    path = tmp_path / "mini.traj.json"
    path.write_text(json.dumps(document))
    with pytest.raises(TrajectoryError, match=r"message 3: unknown message role"):
        load_trajectory(path)


def _set(document: Any, where: tuple[Any, ...], value: Any) -> None:
    for part in where[:-1]:
        document = document[part]
    document[where[-1]] = value


def test_an_inspect_log_whose_samples_are_not_a_list_says_it_has_none(tmp_path):
    from conftest import FIXTURES
    from swedeck.core.trajectory.errors import TrajectoryError
    from swedeck.core.trajectory.loader import load_trajectory

    log = json.loads((FIXTURES / "agents" / "inspect" / "calc.json").read_text())
    log["samples"] = True  # was "unexpected content (TypeError: object of type 'bool' has no len())"
    path = tmp_path / "calc.json"
    path.write_text(json.dumps(log))
    with pytest.raises(TrajectoryError, match="the log has no samples"):
        load_trajectory(path)


@pytest.mark.parametrize("role", [[1], {"a": 1}])
def test_a_large_live_file_with_a_role_that_is_a_list_or_an_object_reads_as_a_small_one(tmp_path, monkeypatch, role):
    """A mapped swedeck `.traj.jsonl` (read in windows of heads) whose one line's role is a list
    or an object: read line by line there, as the small file is (it was a TypeError)."""
    from support.replay import write_trajectory
    from swedeck.core.trajectory import loader
    from swedeck.core.trajectory.loader import load_trajectory

    path = write_trajectory(tmp_path / "live", 4, finish=False)
    lines = path.read_text().splitlines()
    record = json.loads(lines[3])
    record["role"] = role
    lines[3] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    small = load_trajectory(path)
    monkeypatch.setattr(loader, "MAP_BYTES", 1)
    large = load_trajectory(path)
    assert [message.text for message in large.messages] == [message.text for message in small.messages]
    assert [step.message_index for step in large.steps] == [step.message_index for step in small.steps]
