"""Issue 63: what the pinned agents write today is read whole. Each run here is the real CLI
(npm, pinned: `support.agent_clis`) against a scripted server the test starts; its files are
the fixtures, recorded once for the module, never written by hand."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import swedeck_command
from support.agent_clis import agent_cli
from support.responses_server import ResponsesServer, Step
from swedeck.core.trajectory.fidelity import summary
from swedeck.core.trajectory.loader import load_trajectory
from swedeck.core.trajectory.output import answer_label

CELL = ('const a = await tools.exec_command({cmd: "echo one; exit 3"});\n'
        'const b = await tools.exec_command({cmd: "printf two"});\n'
        'text(JSON.stringify([a, b]));')


class CodexRun:
    def __init__(self, rollout: Path, requests: list[dict[str, Any]]) -> None:
        self.rollout, self.requests = rollout, requests


@pytest.fixture(scope="module")
def code_mode(tmp_path_factory: pytest.TempPathFactory) -> CodexRun:
    """Codex 0.171 in code mode: the model's only way to run a command is a JavaScript `exec`
    cell that calls `tools.exec_command`; this cell runs two commands, one failing."""
    codex = agent_cli("codex")
    folder = tmp_path_factory.mktemp("codex-code-mode")
    home, work = folder / "home", folder / "work"
    (home / ".codex").mkdir(parents=True)
    work.mkdir()
    with ResponsesServer() as server:
        server.script(Step(text="Let me look.", code=CELL, input_tokens=1200, cached_tokens=800), Step(text="Done it."))
        provider = (f'model_providers.local={{name="local", base_url="{server.url}/v1", env_key="OPENAI_API_KEY", '
                    'wire_api="responses"}')
        done = subprocess.run([codex, "exec", "--skip-git-repo-check", "-c", "model_provider=local", "-c", provider,
                               "-m", "gpt-5.5", "-c", "features.code_mode=true", "-c", "features.code_mode_only=true",
                               "run echo"],
                              env={**os.environ, "OPENAI_API_KEY": "sk-test-0000", "HOME": str(home),
                                   "CODEX_HOME": str(home / ".codex")},
                              capture_output=True, text=True, timeout=100, cwd=work)
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr[-3000:]
    assert any(tool.get("name") == "exec" for tool in requests[0]["tools"])  # code mode: the exec cell is offered
    return CodexRun(next((home / ".codex" / "sessions").rglob("rollout-*.jsonl")), requests)


def test_the_commands_an_exec_cell_ran_are_its_steps_shell_commands(code_mode):
    trajectory = load_trajectory(code_mode.rollout)
    actions = trajectory.steps[0].actions
    assert actions[0].command.startswith("exec const a") and not actions[0].unknown["shell"]  # the cell's source
    ran = [(action.command, action.unknown.get("exit_code"), action.unknown.get("output")) for action in actions[1:]]
    assert ran == [("echo one; exit 3", 3, "one\n"), ("printf two", 0, "two")]
    figures = summary(trajectory)
    assert (figures["tool_calls"], figures["shell_commands"]) == (3, 2)
    printed = subprocess.run([*swedeck_command(), "replay", str(code_mode.rollout), "--print"], capture_output=True,
                             text=True, timeout=60).stdout
    assert "$ echo one; exit 3  (in the exec cell, exit 3)" in printed
    assert "tool calls: 3 (2 shell)" in printed


def test_rules_see_the_commands_inside_an_exec_cell(code_mode, tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(printf:*)"]}}))
    done = subprocess.run([*swedeck_command(), "rules", "dry-run", "--from", "claude", str(settings),
                           str(code_mode.rollout), "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    decided = json.loads(done.stdout)
    assert [(row["command"], row["decision"]) for row in decided["commands_list"]] == [
        ("echo one; exit 3", "ask"), ("printf two", "deny")]


def test_codex_s_own_context_is_not_the_person_s_words_and_the_task_is_theirs(code_mode):
    trajectory = load_trajectory(code_mode.rollout)
    messages = list(trajectory.messages)
    task = next(message for message in messages if message.message_type.value == "task")
    assert task.text == "run echo"
    context = next(message for message in messages if message.text.startswith("<environment_context>"))
    assert answer_label(context) == "Codex's context (not the person's words)"
    skills = next(message for message in messages if message.text.startswith("<skills_instructions>"))
    assert answer_label(skills) == "Codex's developer message (not the person's words)"


def test_step_one_is_rebuilt_as_codex_sent_it_its_instructions_once(code_mode):
    """The oracle is the request Codex sent: every message of its input, in order, by text
    (content parts joined by a line, as swedeck keeps them). The base instructions are the
    first message once; the rollout stores them as Codex wrote them before it dropped the lines
    about tools the call does not offer (docs/trajectory-format.md), so the sent text's lines
    are theirs, in order, less those."""
    trajectory = load_trajectory(code_mode.rollout)
    sent = [(item["role"], "\n".join(part.get("text", "") for part in item["content"]))
            for item in code_mode.requests[0]["input"] if item.get("type") == "message"]
    prompt = trajectory.messages[: trajectory.steps[0].prompt_end]
    rebuilt = [("developer" if message.role == "system" else message.role, message.text) for message in prompt]
    assert len(rebuilt) == len(sent) and rebuilt[1:] == sent[1:]
    stored, wire = rebuilt[0][1].splitlines(), sent[0][1].splitlines()
    assert stored[: len(wire) // 2] == wire[: len(wire) // 2] and len(stored) - len(wire) <= 3
    assert sum(message.text == rebuilt[0][1] for message in prompt) == 1


def test_every_codex_record_type_is_read_or_said_why(code_mode):
    trajectory = load_trajectory(code_mode.rollout)
    fidelity = summary(trajectory)
    assert fidelity["skipped"], fidelity
    assert set(fidelity["skipped"]) == set(fidelity["why"]), fidelity  # nothing counted without its reason
    assert trajectory.info.session["settings"]["model"] == "gpt-5.5"  # thread_settings_applied
    assert trajectory.info.raw["world_state"]["environments"]  # what the model was given
    usage = trajectory.steps[0].usage
    assert usage is not None and (usage.prompt_tokens, usage.cached_tokens) == (1200, 800)  # token_usage_record


@pytest.fixture(scope="module")
def claude_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Claude Code 2.1.332 (`claude -p`) with a Bash call and a subagent (`Agent`): its session
    file, with the attachments, request records and cost it writes today."""
    from support.agent_clis import claude_environment
    from support.anthropic_server import AnthropicServer, Reply

    claude = agent_cli("claude")
    folder = tmp_path_factory.mktemp("claude-current")
    work = folder / "work"
    work.mkdir()
    with AnthropicServer() as server:
        server.script(Reply.bash("echo hello > out.txt", text="I will write the file."),
                      Reply(tool=("Agent", {"description": "look around", "prompt": "list the files",
                                            "subagent_type": "general-purpose"})),
                      Reply.bash("ls", text="Listing."), Reply(text="Sub done."),
                      Reply(text="Done: out.txt holds hello.", input_tokens=900, cache_read=800, output_tokens=12))
        environment = {**claude_environment(folder / "home"), "ANTHROPIC_BASE_URL": server.url}
        done = subprocess.run([claude, "-p", "write hello to out.txt", "--allowedTools", "Bash", "Agent"],
                              env=environment, capture_output=True, text=True, timeout=120, cwd=work)
    assert done.returncode == 0, done.stderr[-3000:]
    return next(path for path in (folder / "home" / ".claude" / "projects").glob("*/*.jsonl"))


def test_every_claude_code_record_type_is_read_or_said_why(claude_session):
    trajectory = load_trajectory(claude_session)
    fidelity = summary(trajectory)
    types = {json.loads(line).get("type") for line in claude_session.read_text().splitlines() if line.strip()}
    assert {"cost-state", "tools-used", "atis-latch", "queue-operation", "last-prompt", "attachment"} <= types
    assert set(fidelity["skipped"]) == set(fidelity["why"]), fidelity
    assert not any("name no parent" in note for note in fidelity["notes"])  # the chain runs through the attachments


def test_claude_code_s_own_cost_is_its_total(claude_session):
    cost = next(json.loads(line) for line in claude_session.read_text().splitlines() if '"cost-state"' in line)
    fidelity = summary(load_trajectory(claude_session))
    assert fidelity["agent_total_usd"] == cost["totalCostUSD"] > 0
    printed = subprocess.run([*swedeck_command(), "replay", str(claude_session), "--print"], capture_output=True,
                             text=True, timeout=60).stdout
    assert f"cost: the agent's own total is {cost['totalCostUSD']:.6f} USD" in printed


def test_claude_code_s_context_is_in_the_conversation_and_the_rebuild_is_its_request(claude_session):
    """The attachments Claude Code rendered into each request are messages of the main line,
    labelled as its context: the prompt rebuilt from the messages is the request its own
    api-request records give, within the few tokens of where its user-role context sits."""
    trajectory = load_trajectory(claude_session)
    messages = list(trajectory.messages)
    task = next(message for message in messages if message.message_type.value == "task")
    assert task.text == "write hello to out.txt"
    context = [message for message in messages if message.extra.unknown.get("agent_context")]
    assert any("# Environment" in message.text and message.role == "system" for message in context)
    assert all(answer_label(message).endswith("(not the person's words)") for message in context[1:])
    assert messages[0].role == "system" and "You are a Claude agent" in messages[0].text  # the snapshot's prompt
    errors = summary(trajectory)["reconstruction_error_tokens"]
    assert len(errors) == len(trajectory.steps) and all(abs(error) <= 8 for error in errors.values()), errors


def test_a_disagreement_between_an_agent_s_records_and_the_wire_names_its_field_and_item():
    from swedeck.core.trajectory.wire_request import agreement

    sent = {"model": "m", "system": [{"type": "text", "text": "x-anthropic-billing-header: cc"},
                                     {"type": "text", "text": "You are Claude."}],
            "tools": [{"name": "Bash"}], "metadata": {"user_id": "u"}, "stream": True,
            "messages": [{"role": "user", "content": "go"},
                         {"role": "user", "content": [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}]}]}
    rebuilt = {"model": "m", "system": sent["system"][1:], "tools": [{"name": "Bash"}], "messages": sent["messages"]}
    assert agreement(rebuilt, sent) == {"agrees": True, "same": ["system prompt but its billing block", "tools", "messages"],
                                        "differs": {"metadata": "the request's metadata", "stream": "whether it streamed"}}
    changed = {**rebuilt, "tools": [{"name": "Bash"}, {"name": "Read"}],
               "messages": [sent["messages"][0], {"role": "user", "content": "b"}]}
    found = agreement(changed, sent)
    assert not found["agrees"] and found["same"] == ["system prompt but its billing block"]
    assert found["differs"]["tools"] == "2 items in the records, 1 sent"
    assert found["differs"]["messages"] == "item 1: content"
    assert not agreement({**rebuilt, "model": "other"}, sent)["agrees"]  # a parameter the records give, not as sent
