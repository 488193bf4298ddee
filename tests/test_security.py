"""SPEC §13 S1-S4: markup reaches events and trajectories literally, secrets never reach a
file or an output, the defaults are safe, headless output has no terminal control sequences.
(The UI half of S1, that the widgets draw markup literally, is the UI suite's.)"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess

import pytest

from support.driver import Driver, make_config, run_session
from support.openai_server import Turn, model_config
from support.reliability import SUBMIT, docker_client_or_skip, headless_args
from swedeck.cli import main
from swedeck.core import events as ev
from swedeck.core.config import load_config
from swedeck.core.headless import run_headless

MARKUP = "[red]x[/red] [@click=app.quit]q[/] [link=http://x]l[/link]"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


# --- S1 markup injection ---------------------------------------------------------------------


def test_markup_in_model_text_and_command_output_stays_literal(openai_server, tmp_path):
    command = f"printf '%s\\n' '{MARKUP}'"
    openai_server.script(Turn.bash_tool(command, text=f"I say {MARKUP}"), Turn.bash_tool(SUBMIT))
    driver = Driver()
    result = run_session(make_config(tmp_path, model_config(openai_server), agent__mode="yolo"), "t", driver,
                         interactive=False)
    assert result.exit_status == "Submitted"
    assert "".join(d.text for d in driver.of(ev.StreamDelta) if d.kind == "text" and d.step == 1) == f"I say {MARKUP}"
    assert driver.of(ev.QueryFinished)[0].message.content == f"I say {MARKUP}"
    assert driver.of(ev.CommandStarted)[0].command == command
    assert "".join(o.text for o in driver.of(ev.CommandOutput)).startswith(MARKUP)
    assert driver.of(ev.CommandFinished)[0].result.output == MARKUP + "\n"
    messages = json.loads((tmp_path / "session.traj.json").read_text())["messages"]
    assert messages[2]["content"] == f"I say {MARKUP}"
    assert MARKUP + "\n" in messages[3]["content"]


# --- S2 secrets --------------------------------------------------------------------------------

API_KEY = "sk-test-APIKEY-0123456789"
OTHER = {"aws_secret_access_key": "AWS-SECRET-9876543210", "vertex_credentials": "VERTEX-CRED-5555555",
         "client_password": "PASSWORD-hunter2-xyz"}
FORWARDED = ("MY_SERVICE_TOKEN", "FORWARDED-TOKEN-424242")
SECRETS = [API_KEY, *OTHER.values(), FORWARDED[1]]


def secret_config_args(server_url: str) -> list[str]:
    kwargs = {"api_base": server_url, "api_key": API_KEY, **OTHER}
    return ["-c", f"model.model_kwargs={json.dumps(kwargs)}", "-c", f"environment.forward_env=[{FORWARDED[0]}]",
            "-c", "run.keep_jsonl=true"]


def leaking_script() -> list[Turn]:
    """The model repeats the key, a command echoes the forwarded token and the api key."""
    return [Turn.bash_tool(f"echo token=${FORWARDED[0]} key={API_KEY}", text=f"the key is {API_KEY}"),
            Turn.bash_tool(f"{SUBMIT} && echo ${FORWARDED[0]}")]


def assert_no_secret(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret} leaked into {where}"


def test_secrets_never_reach_files_or_headless_output(openai_server, tmp_path):
    openai_server.script(*leaking_script())
    env = {**os.environ, FORWARDED[0]: FORWARDED[1]}
    args = headless_args(openai_server.url, tmp_path, *secret_config_args(openai_server.url), "use the token")
    result = subprocess.run(args, capture_output=True, text=True, timeout=90, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "token=***" in result.stdout, "the command really printed the token (masked)"
    assert_no_secret(result.stdout + result.stderr, "headless output")
    for name in ("run.traj.jsonl", "run.traj.json"):
        path = tmp_path / name
        assert path.stat().st_mode & 0o777 == 0o600, name
        assert_no_secret(path.read_text(), name)
    saved = json.loads((tmp_path / "run.traj.json").read_text())
    assert saved["info"]["submission"] == "***\n"
    # the key did reach the provider, where it belongs
    assert openai_server.request_headers[0].get("Authorization") == f"Bearer {API_KEY}"


def test_secrets_never_reach_json_events(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv(*FORWARDED)
    openai_server.script(*leaking_script())
    config = load_config(secret_config_args(openai_server.url)[1::2], environ={})
    config.model.model_name = "hosted_vllm/scripted"
    config.model.cost_tracking = "ignore_errors"
    config.environment.cwd = str(tmp_path)
    config.run.output = str(tmp_path / "json.traj.json")
    out = io.StringIO()
    result = run_headless(config, "t", as_json=True, out=out)
    assert result.exit_status == "Submitted"
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert any(e["event"] == "CommandFinished" and "token=***" in e["result"]["output"] for e in events)
    assert_no_secret(out.getvalue(), "JSON events")
    assert_no_secret((tmp_path / "json.traj.json").read_text(), "the final file")


def test_config_show_masks_secrets(monkeypatch):
    monkeypatch.setenv(*FORWARDED)
    code, out, err = cli("config", "show", *secret_config_args("http://127.0.0.1:1/v1"),
                         "-c", f"environment.env={{DEPLOY_TOKEN: {FORWARDED[1]}}}")
    assert code == 0, err
    assert_no_secret(out + err, "config show")
    assert "api_key: '***'" in out or 'api_key: "***"' in out or "api_key: ***" in out


# --- S3 safe defaults ----------------------------------------------------------------------------


def test_confirm_is_the_default_mode(openai_server, tmp_path):
    assert load_config([], environ={}).agent.mode == "confirm"
    openai_server.script(Turn.bash_tool("touch should-not-exist-yet"))
    config = make_config(tmp_path, model_config(openai_server))  # no mode given

    def on_event(driver: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.ConfirmationRequested):
            assert not (tmp_path / "should-not-exist-yet").exists()
            driver.later(driver.session.quit)
    driver = Driver(on_event=on_event)
    result = run_session(config, "t", driver)
    assert result.exit_status == "UserQuit"
    assert [r.command for r in driver.of(ev.ConfirmationRequested)] == ["touch should-not-exist-yet"]
    assert not driver.of(ev.CommandStarted) and not (tmp_path / "should-not-exist-yet").exists()


def test_docker_has_no_host_mounts_unless_configured(openai_server, tmp_path):
    client = docker_client_or_skip()
    openai_server.script(Turn.bash_tool("echo inside"), Turn.bash_tool(SUBMIT))
    mounts: list = []

    def on_event(driver: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.CommandStarted) and not mounts:
            session_id = driver.session.session_id
            containers = client.containers.list(filters={"label": f"swedeck.session={session_id}"})
            if not containers:  # label names are the environment's; fall back to swedeck's own label
                containers = [c for c in client.containers.list(filters={"label": "swedeck"})
                              if session_id in json.dumps(c.labels)]
            mounts.append([c.attrs.get("Mounts") for c in containers])
    config = make_config(tmp_path, model_config(openai_server), env="docker", agent__mode="yolo")
    driver = Driver(on_event=on_event)
    result = run_session(config, "t", driver, interactive=False)
    assert result.exit_status == "Submitted", result.message
    assert mounts and len(mounts[0]) == 1, f"the session's container was found: {mounts}"
    assert mounts[0][0] == [], f"no host mounts: {mounts[0][0]}"


# --- S4 control sequences in headless output ---------------------------------------------------

CONTROLS = "\x1b[31mred\x1b[0m \x1b]0;evil title\x07 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ bell\x07 bs\x08 \x1b[2J"


def control_script() -> list[Turn]:
    # printf turns \033 etc. into real control bytes in the command's output
    printed = r"printf 'out\033[1;32mgreen\033[0m \033]0;t2\007 \007\010\033[2J done\n'"
    return [Turn.bash_tool(printed, text=f"model {CONTROLS} says"), Turn.bash_tool(SUBMIT)]


def assert_no_controls(text: str) -> None:
    bad = [ch for ch in text if (ord(ch) < 32 and ch not in "\n\t") or ord(ch) == 127]
    assert not bad, f"control characters in headless output: {bad[:10]}"


def test_headless_text_output_strips_control_sequences(openai_server, tmp_path):
    openai_server.script(*control_script())
    out = io.StringIO()
    config = make_config(tmp_path, model_config(openai_server))
    assert run_headless(config, "t", out=out).exit_status == "Submitted"
    assert_no_controls(out.getvalue())
    assert "outgreen" in out.getvalue() and "done" in out.getvalue()


def test_headless_json_output_strips_control_sequences(openai_server, tmp_path):
    openai_server.script(*control_script())
    out = io.StringIO()
    config = make_config(tmp_path, model_config(openai_server))
    assert run_headless(config, "t", as_json=True, out=out).exit_status == "Submitted"
    text = out.getvalue()
    assert "\\u001b" not in text and "\\u0007" not in text and "\\b" not in text
    events = [json.loads(line) for line in text.splitlines()]
    decoded = json.dumps(events, ensure_ascii=False)
    assert_no_controls(decoded.replace("\\n", "\n"))
    finished = next(e for e in events if e["event"] == "QueryFinished")
    assert "red" in finished["message"]["content"] and "says" in finished["message"]["content"]
    assert any(e["event"] == "CommandFinished" and "outgreen" in e["result"]["output"] for e in events)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
def test_a_lone_surrogate_from_the_provider_never_ends_the_session(openai_server, tmp_path, stream):
    import json as _json

    from support.driver import Driver, make_config, run_session
    from support.openai_server import ToolCallSpec, Turn, model_config

    lone = "\ud83d"
    openai_server.script(Turn(text=f"Thinking {lone} hard", tool_calls=[ToolCallSpec("bash", {"command": f"echo a{lone}b"})]),
                         Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server, use_streaming=stream), agent__mode="yolo")
    result = run_session(config, "t", Driver(), interactive=False)
    assert result.exit_status == "Submitted", result.message
    saved = (tmp_path / "session.traj.json").read_text(encoding="utf-8")
    messages = _json.loads(saved)["messages"]
    assert any("Thinking \ufffd hard" == m.get("content") for m in messages)
    observations = [m for m in messages if m["extra"]["message_type"] == "observation"]
    assert observations[0]["extra"]["command"] == "echo a\ufffdb"
    sent = openai_server.requests[1]["messages"]
    assert "Thinking \ufffd hard" in _json.dumps(sent, ensure_ascii=False)


def test_one_escape_grammar_for_every_printer():
    """`core.text` owns the grammar: the model's view keeps control characters but no
    sequences, printers keep neither, the UI's panes drop colours and show the rest."""
    from swedeck.core.environments.output import clean
    from swedeck.core.text import excerpt, split_incomplete_escape, strip_control
    from swedeck.tui.widgets.text import clean_output

    hostile = "a\x1b[31mb\x1b[0m\x1b]52;c;QUJD\x07c\x1b]0;t\x1b\\d\x07e\r\nf\rg"
    assert clean(hostile) == "abc" + "d\x07e\ng"
    assert strip_control(hostile) == "abcde\nfg"
    assert clean_output(hostile) == "ab␛]52;c;QUJD␇c␛]0;t␛\\d␇e\ng"
    assert split_incomplete_escape("ok\x1b[1;3") == ("ok", "\x1b[1;3")
    assert split_incomplete_escape("ok\x1b]0;half") == ("ok", "\x1b]0;half")
    assert split_incomplete_escape("ok\x1b[1mx") == ("ok\x1b[1mx", "")
    assert excerpt("\n".join(map(str, range(20))), lines=4, width=10) == ["0", "1", "… (16 more lines)", "18", "19"]
    assert excerpt("x" * 30, lines=4, width=10) == ["x" * 9 + "…"]
