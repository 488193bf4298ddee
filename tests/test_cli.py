"""SPEC §2: the command line, run as the installed command in subprocesses."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from conftest import swedeck_command


def swedeck(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*swedeck_command(), *args], capture_output=True, text=True, timeout=120,
        cwd=cwd, env={**os.environ, **(env or {})},
    )


def test_help_lists_every_subcommand():
    result = swedeck("--help")
    assert result.returncode == 0
    for name in ("run", "replay", "prompt", "watch", "demo", "config", "context-window"):
        assert f"    {name}" in result.stdout


def test_a_subcommand_parses_as_it_does_in_the_whole_parser():
    """`main` builds the parser of the subcommand it runs alone (argparse's whole tree cost a
    cold start 10 ms): its help, usage and defaults are those of the whole parser's."""
    from swedeck.cli import SUBCOMMANDS, build_parser

    def subparsers(parser):
        return next(action for action in parser._actions if action.dest == "command").choices

    whole = subparsers(build_parser())
    for name in SUBCOMMANDS:
        alone = subparsers(build_parser(name))
        assert list(alone) == [name]
        assert alone[name].format_help() == whole[name].format_help()
        defaults = [{action.dest: action.default for action in subs[name]._actions} for subs in (alone, whole)]
        assert defaults[0] == defaults[1]
    result = swedeck("replay", "--step", "x", "t.traj.json")
    assert result.returncode == 2 and result.stderr.startswith("usage: swedeck replay [-h] [--step N]")
    assert result.stderr.endswith("swedeck: error: argument --step: invalid int value: 'x'\n")


def test_config_show_applies_overrides_in_order(tmp_path: Path):
    result = swedeck("config", "show", "-c", "agent.step_limit=7", "-c", "agent.mode=yolo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    shown = yaml.safe_load(result.stdout)
    assert shown["agent"]["step_limit"] == 7 and shown["agent"]["mode"] == "yolo"


def test_config_show_reads_environment(tmp_path: Path):
    result = swedeck("config", "show", cwd=tmp_path, env={"SWEDECK_AGENT__STEP_LIMIT": "9"})
    assert yaml.safe_load(result.stdout)["agent"]["step_limit"] == 9


def test_invalid_config_exits_2_with_one_message_and_no_traceback(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("agent:\n  turbo: true\n")
    for args in (["-c", str(bad)], ["-c", "agent.mode=fast"]):
        result = swedeck("config", "show", *args, cwd=tmp_path)
        assert result.returncode == 2
        assert "Traceback" not in result.stderr
        assert result.stdout == ""
    assert "agent.mode" in result.stderr and "'confirm', 'yolo' or 'human'" in result.stderr


def test_debug_shows_the_traceback(tmp_path: Path):
    result = swedeck("--debug", "config", "show", "-c", "agent.mode=fast", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" in result.stderr


def test_config_path_names_the_user_folders(tmp_path: Path):
    result = swedeck("config", "path", env={"SWEDECK_CONFIG_DIR": str(tmp_path / "cfg")})
    assert result.returncode == 0
    assert str(tmp_path / "cfg" / "config.yaml") in result.stdout


def test_usage_error_exits_2():
    result = swedeck("replay")
    assert result.returncode == 2
    assert "PATH" in result.stderr


def test_a_model_name_no_provider_serves_is_refused_before_anything_starts(tmp_path: Path):
    """`-m x` names no provider litellm knows (issue 43.15): a usage error at once, not a
    session that fails at its first query; a bare name litellm knows (`gpt-4o`) is fine."""
    result = swedeck("run", "-m", "x", "--headless", "-t", "hi", cwd=tmp_path)
    assert result.returncode == 2 and "give it as PROVIDER/MODEL (e.g. openai/x" in result.stderr
    assert not list(tmp_path.iterdir())  # nothing started: no trajectory
    from swedeck.core.model_map import names_a_provider

    assert names_a_provider("gpt-4o") and names_a_provider("hosted_vllm/x") and not names_a_provider("x")


def test_run_help_says_what_each_option_does():
    result = swedeck("run", "--help")
    for option in ("--step-limit", "--cost-limit", "--theme"):
        line = next(line for line in result.stdout.splitlines() if line.strip().startswith(option))
        assert len(line.split(maxsplit=2)) == 3, line  # the option, its metavar, and words


def test_print_says_a_format_errors_commands_never_ran(tmp_path: Path):
    import json

    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"},
                {"role": "assistant", "content": "two\n\n```mswea_bash_command\nls\n```\n\n```mswea_bash_command\npwd\n```"},
                {"role": "user", "content": "Please always provide EXACTLY ONE action.",
                 "extra": {"interrupt_type": "FormatError"}},
                {"role": "assistant", "content": "one\n\n```mswea_bash_command\nls\n```"},
                {"role": "user", "content": "<returncode>0</returncode>\n<output>\na\n</output>"}]
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps({"messages": messages, "info": {}}))
    text = swedeck("replay", str(path), "--print").stdout
    assert "  $ ls  (not run: the answer was a format error)\n  $ pwd  (not run" in text
    assert "  $ ls\n  observation:" in text
    steps = [json.loads(line) for line in swedeck("replay", str(path), "--print", "--json").stdout.splitlines()[1:]]
    assert [a.get("ran", True) for a in steps[0]["actions"]] == [False, False] and "ran" not in steps[1]["actions"][0]


def test_a_closed_pipe_ends_quietly_with_the_commands_own_exit_code(tmp_path):
    """Issue 62: `swedeck rules check … | head -1` said `internal error: BrokenPipeError`, exit 1."""
    import subprocess

    from conftest import swedeck_command

    rules = tmp_path / "policy.rules"
    rules.write_text("".join(f'prefix_rule(pattern = ["tool{n}"], decision = "allow")\n' for n in range(50)))
    command = " && ".join(f"tool{n % 50} run" for n in range(3000)) + " && rm x"  # past a pipe's buffer
    for _ in range(3):
        process = subprocess.Popen([*swedeck_command(), "rules", "check", "--rules", str(rules), "--", command],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # the reader leaves after one line, as `head -1` does
        error = process.stderr.read().decode()
        assert process.wait(timeout=60) == 3 and first.startswith(b"ASK"), error
        assert "BrokenPipe" not in error and "internal error" not in error, error
