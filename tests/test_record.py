"""SPEC §18: `swedeck record` between an agent and its provider, with real agents offline.

The oracle is the scripted server's own log: the record holds every request the server
received, equal after JSON parsing and as many; the agent receives what the server sent."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conftest import swedeck_command
from support.agent_clis import RELEASES, agent_cli, claude_environment, codex_environment, processes_in
from support.anthropic_server import AnthropicServer, Reply
from support.openai_server import OpenAIServer, Turn
from support.reliability import SUBMIT
from support.responses_server import ResponsesServer, Step
from swedeck.core.record.endpoint import RecordingEndpoint
from swedeck.core.record.recorder import Recorder
from swedeck.core.trajectory.loader import load_trajectory
from swedeck.core.trajectory.writer import TrajectoryWriter

pytestmark = pytest.mark.timeout(120)


def exchanges(path: Path) -> list[dict]:
    return [event for event in json.loads(path.read_text())["meta_events"] if event.get("event") == "exchange"]


def same_requests(events: list[dict], received: list[dict]) -> bool:
    """The record holds every request the server received, each equal after JSON parsing, and no
    other. Concurrent calls (an agent's side call beside its main one) are written as each ends,
    so the order may differ from the server's: compared as two collections."""
    def key(body: dict) -> str:
        return json.dumps(body, sort_keys=True)
    return sorted(key(event["request"]) for event in events if event.get("event", "exchange") == "exchange"
                  and not event.get("promoted")) == sorted(key(body) for body in received)  # a promotion restates


def test_claude_code_is_recorded_request_for_request(tmp_path, monkeypatch):
    claude = agent_cli("claude")
    work = tmp_path / "work"
    work.mkdir()
    with AnthropicServer() as server:
        server.script(Reply.bash("echo hello > out.txt", text="I will write the file."),
                      Reply(text="Done: out.txt holds hello.", input_tokens=900, cache_read=800, output_tokens=12))
        done = subprocess.run([*swedeck_command(), "record", "-o", str(tmp_path / "run"), "--upstream", server.url,
                               "--headless", "--", claude, "-p", "write hello to out.txt", "--allowedTools", "Bash"],
                              env=claude_environment(tmp_path / "home"), capture_output=True, text=True, timeout=100,
                              cwd=work)
        received = list(server.requests)
    assert done.returncode == 0, done.stderr
    assert "Done: out.txt holds hello." in done.stdout  # the answer reached the agent whole
    assert (work / "out.txt").read_text() == "hello\n"
    final = tmp_path / "run.traj.json"
    recorded = exchanges(final)
    assert same_requests(recorded, received) and len(received) >= 2
    assert [event.get("step") for event in recorded if event["line"] == "main"] == [1, 2]
    assert recorded[-1]["usage"] == {"prompt": 1700, "cached": 800, "cache_creation": 0, "output": 12}
    # issue 62: `info.model_stats` as mini-swe-agent's info has it: every answered call, the provider's figures
    stats = json.loads(final.read_text())["info"]["model_stats"]
    answered = [event for event in recorded if event["status"] == 200 and not event.get("error")]
    assert stats["api_calls"] == len(answered) >= 2
    assert stats["prompt_tokens"] == sum(event["usage"]["prompt"] for event in answered if event["usage"])
    assert stats["completion_tokens"] == sum(event["usage"]["output"] for event in answered if event["usage"]) > 0
    assert recorded[0]["answer"]["calls"][0]["name"] == "Bash" and recorded[0]["first_byte_s"] is not None
    text = final.read_text()
    assert "sk-ant-test-0000" not in text and "x-api-key" not in text.lower()  # never a credential
    trajectory = load_trajectory(final)
    assert len(trajectory.steps) == 2 and trajectory.steps[0].actions[0].command == "echo hello > out.txt"
    # issue 65.2: the record's own count (every answered call's provider usage), its side calls'
    # too, reconciled with the calls' usage as the cost report sums them
    from swedeck.core.cost import Prices, cost_of

    report = cost_of(trajectory, Prices())
    assert report.agent_tokens == {"source": "the record's provider usage", "prompt_tokens": stats["prompt_tokens"],
                                   "completion_tokens": stats["completion_tokens"]}
    assert report.token_reconciliation == "agrees", (report.tokens, report.agent_tokens)
    prompt = subprocess.run([*swedeck_command(), "prompt", str(final), "--step", "2", "--json"], capture_output=True,
                            text=True, timeout=60)
    shown = json.loads(prompt.stdout)
    assert shown["provenance"] == "recorded"
    assert [message["role"] for message in shown["messages"]][-2:] == ["assistant", "tool"]
    result = next(block for block in received[1]["messages"][-1]["content"] if block.get("type") == "tool_result")
    assert shown["messages"][-1]["content"] == result["content"] and shown["messages"][0]["role"] == "system"
    assert shown["tools"] == received[1]["tools"] and shown["tools_tokens"] > 0  # issue 60.8: the tools too
    assert shown["total_tokens"] == shown["messages_tokens"] + shown["tools_tokens"]
    wire = subprocess.run([*swedeck_command(), "prompt", str(final), "--step", "2", "--wire"], capture_output=True,
                          text=True, timeout=60)
    assert wire.returncode == 0 and "recorded by swedeck record" in wire.stderr
    assert json.loads(wire.stdout) == received[1]  # the request exactly as the agent sent it

    # Claude Code's own session file: its api-request records give each step's request, checked
    # here against what the server received (docs/trajectory-format.md says what they leave out)
    from swedeck.core.record.wire import prompt_entries

    session = next((tmp_path / "home" / ".claude" / "projects").glob("*/*.jsonl"))
    own = load_trajectory(session, lazy=False)
    assert own.format == "claude-code" and len(own.steps) == 2
    rebuilt = subprocess.run([*swedeck_command(), "prompt", str(session), "--step", "2", "--wire"],
                             capture_output=True, text=True, timeout=60)
    assert rebuilt.returncode == 0 and "rebuilt from Claude Code's own api-request records" in rebuilt.stderr
    body = json.loads(rebuilt.stdout)
    sent = received[1]
    assert body["messages"] == sent["messages"] and body["tools"] == sent["tools"]  # cache marks included
    assert {key: body[key] for key in ("model", "max_tokens")} == {key: sent[key] for key in ("model", "max_tokens")}
    assert body["system"] == sent["system"][1:]  # all but the billing line Claude Code adds as it sends
    # what the records do not give, and nothing else (the notes on stderr say so)
    assert sorted(key for key in set(body) | set(sent) if body.get(key) != sent.get(key)) == ["metadata", "stream",
                                                                                              "system"]
    for number, body in enumerate(received, start=1):
        wire = [entry.build() for entry in prompt_entries("anthropic", body)]
        rebuilt = own.recorded_prompts[number]
        assert [(m.role, m.text) for m in rebuilt] == [(m.role, m.text) for m in wire]  # the join: the record's
    data = os.environ["SWEDECK_DATA_DIR"]
    monkeypatch.setenv("SWEDECK_DATA_DIR", str(tmp_path / "elsewhere"))  # no record to join: the file's own records
    alone = load_trajectory(session, lazy=False)
    for number, body in enumerate(received, start=1):
        wire = [(m.role, m.text) for m in (entry.build() for entry in prompt_entries("anthropic", body))]
        rebuilt = [(m.role, m.text) for m in alone.recorded_prompts[number]]
        assert rebuilt[1:] == wire[1:]  # every message, as sent
        assert wire[0][1].endswith(rebuilt[0][1]) and rebuilt[0][0] == "system"  # the system prompt but its billing line
    monkeypatch.setenv("SWEDECK_DATA_DIR", data)
    own_only = subprocess.run([*swedeck_command(), "replay", str(session), "--print", "--json"], capture_output=True,
                              text=True, timeout=60, env={**os.environ, "SWEDECK_DATA_DIR": str(tmp_path / "elsewhere")})
    fidelity = json.loads(own_only.stdout.splitlines()[0])["fidelity"]
    assert fidelity["parts"]["system prompt"] == "recorded" and fidelity["steps_by_provenance"] == {"recorded": 2}
    # issue 63: the transcript holds Claude Code's attachments as it sent them (its system turns, its
    # system prompt from the snapshot): the rebuild is the request but for where the user-role context sits
    assert set(fidelity["reconstruction_error_tokens"]) == {"1", "2"}
    assert all(abs(error) <= 8 for error in fidelity["reconstruction_error_tokens"].values()), fidelity
    assert any("api-request records" in note for note in fidelity["notes"])
    # a blob whose message is not the one its hash names (issue 61.12) is not used: those steps are not "recorded"
    tampered = tmp_path / "tampered" / session.name
    tampered.parent.mkdir()
    lines = session.read_text().splitlines()
    for index, line in enumerate(lines):
        record = json.loads(line)
        if record.get("type") == "api-request-blob":
            record["message"] = {"role": "user", "content": "words the request never sent"}
            lines[index] = json.dumps(record)
    tampered.write_text("\n".join(lines) + "\n")
    forged = json.loads(subprocess.run([*swedeck_command(), "replay", str(tampered), "--print", "--json"],
                                       capture_output=True, text=True, timeout=60,
                                       env={**os.environ, "SWEDECK_DATA_DIR": str(tmp_path / "elsewhere")})
                        .stdout.splitlines()[0])["fidelity"]
    assert any("whose hash is not their message's" in note for note in forged["notes"]), forged["notes"]
    assert "recorded" not in forged["steps_by_provenance"]
    joined = subprocess.run([*swedeck_command(), "replay", str(session), "--print", "--json"], capture_output=True,
                            text=True, timeout=60)
    joined_fidelity = json.loads(joined.stdout.splitlines()[0])["fidelity"]
    notes = joined_fidelity["notes"]
    assert any("joined with the record" in note and "2 of 2" in note for note in notes), notes
    # issue 63.3: Claude Code's own request records against the record of the same run, step by step
    agreement = joined_fidelity["wire_agreement"]
    assert set(agreement) == {"1", "2"} and all(found["agrees"] for found in agreement.values()), agreement
    assert agreement["2"]["same"] == ["system prompt but its billing block", "tools", "messages"]
    assert set(agreement["2"]["differs"]) == {"metadata", "stream"}, agreement  # the gaps the records always have
    assert "the same words" in agreement["1"]["differs"]["messages"]  # its system turn: text blocks sent, a string kept
    # a foreign file that names the recorded session and repeats its answers is not given the person's
    # requests (issue 61.15): here its first step answered other words
    foreign = tmp_path / "foreign" / session.name
    foreign.parent.mkdir()
    foreign.write_text(session.read_text().replace("write hello to out.txt", "delete everything"))
    foreign_notes = json.loads(subprocess.run([*swedeck_command(), "replay", str(foreign), "--print", "--json"],
                                              capture_output=True, text=True, timeout=60).stdout.splitlines()[0])[
        "fidelity"]["notes"]
    assert any("joined with the record" in note and "1 of 2" in note for note in foreign_notes), foreign_notes
    index = Path(os.environ["SWEDECK_DATA_DIR"]) / "records.jsonl"
    assert index.stat().st_mode & 0o777 == 0o600
    assert all(Path(json.loads(line)["record"]).is_absolute() for line in index.read_text().splitlines())
    diffed = subprocess.run([*swedeck_command(), "diff", str(final), str(session), "--print", "--json"],
                            capture_output=True, text=True, timeout=60)
    assert json.loads(diffed.stdout.splitlines()[0])["first_divergence"] is None  # the record and the agent's own file agree


def test_codex_is_recorded_over_responses(tmp_path):
    """Codex takes its provider's URL only from its config: `{endpoint}` in the command."""
    codex = agent_cli("codex")
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    provider = ('model_providers.local={name="local", base_url="{endpoint}/v1", env_key="OPENAI_API_KEY", '
                'wire_api="responses", env_http_headers={"X-Swedeck-Token"="SWEDECK_RECORD_TOKEN"}}')
    with ResponsesServer() as server:
        server.script(Step(text="Let me look.", call=("exec_command", {"cmd": "echo hello-from-codex"})),
                      Step(text="It printed hello-from-codex.", input_tokens=1500, cached_tokens=1200))
        done = subprocess.run([*swedeck_command(), "record", "-o", str(tmp_path / "rec"), "--upstream", server.url,
                               "--headless", "--", codex, "exec", "--skip-git-repo-check", "-c", "model_provider=local",
                               "-c", provider, "-m", "gpt-test", "run echo"],
                              env={**os.environ, "OPENAI_API_KEY": "sk-test-0000", "HOME": str(home),
                                   "CODEX_HOME": str(home / ".codex")},
                              capture_output=True, text=True, timeout=100, cwd=tmp_path)
        received = list(server.requests)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "It printed hello-from-codex." in done.stdout
    recorded = exchanges(tmp_path / "rec.traj.json")
    assert same_requests(recorded, received) and len(received) == 2
    assert [(event["line"], event.get("step")) for event in recorded] == [("main", 1), ("main", 2)]
    assert recorded[1]["usage"] == {"prompt": 1500, "cached": 1200, "output": 30}
    trajectory = load_trajectory(tmp_path / "rec.traj.json")
    assert trajectory.steps[0].actions[0].command == "echo hello-from-codex"
    assert "hello-from-codex" in trajectory.messages[trajectory.steps[1].message_index - 1].text  # what it ran printed

    rollout = next((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    shown = json.loads(subprocess.run([*swedeck_command(), "prompt", str(rollout), "--step", "2", "--json"],
                                      capture_output=True, text=True, timeout=60).stdout)
    assert shown["provenance"] == "recorded"  # Codex's rollout, joined with the record of the same run
    assert shown["messages"][-1]["content"] == received[1]["input"][-1]["output"]
    diffed = subprocess.run([*swedeck_command(), "diff", str(tmp_path / "rec.traj.json"), str(rollout), "--print",
                             "--json"], capture_output=True, text=True, timeout=60)
    assert json.loads(diffed.stdout.splitlines()[0])["first_divergence"] is None


def test_swedecks_own_agent_is_recorded_over_chat_completions(tmp_path):
    with OpenAIServer() as server:
        server.script(Turn.bash_tool("echo hi > hi.txt"), Turn.bash_tool(SUBMIT))
        done = subprocess.run([*swedeck_command(), "record", "-o", str(tmp_path / "rec"), "--upstream",
                               server.url.removesuffix("/v1"), "--headless", "--", *swedeck_command(), "run",
                               "--headless", "-m", "openai/test-model", "-c", "model.cost_tracking=ignore_errors", "-t", "write hi",
                               "--mode", "yolo",
                               "-o", str(tmp_path / "own"), "--cwd", str(tmp_path)],
                              env={**os.environ, "OPENAI_API_KEY": "sk-test-0000"}, capture_output=True,
                              text=True, timeout=100, cwd=tmp_path)
        received = list(server.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    recorded = exchanges(tmp_path / "rec.traj.json")
    assert same_requests(recorded, received) and len(received) == 2
    assert [event["line"] for event in recorded] == ["main", "main"]
    # the record's steps are the agent's own: the same commands, in the same order
    own = load_trajectory(tmp_path / "own.traj.json")
    rec = load_trajectory(tmp_path / "rec.traj.json")
    assert [step.actions[0].command for step in rec.steps] == [step.actions[0].command for step in own.steps]


def test_mini_swe_agent_is_recorded_over_chat_completions(tmp_path):
    """mini-swe-agent (pip) through litellm, which reads OPENAI_API_BASE: nothing to add."""
    mini = Path(sys.executable).parent / "mini"
    with OpenAIServer() as server:
        server.script(Turn.bash_tool("echo hi > hi.txt"), Turn.bash_tool(SUBMIT))
        done = subprocess.run([*swedeck_command(), "record", "-o", str(tmp_path / "rec"), "--upstream",
                               server.url.removesuffix("/v1"), "--headless", "--", str(mini), "-y", "-t", "write hi",
                               "-m", "openai/test-model", "-o", str(tmp_path / "mini.traj.json"), "--exit-immediately",
                               "-c", "mini.yaml", "-c", "model.cost_tracking=ignore_errors"],
                              env={**os.environ, "OPENAI_API_KEY": "sk-test-0000", "MSWEA_CONFIGURED": "true",
                                   "HOME": str(tmp_path / "home"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
                              capture_output=True, text=True, timeout=100, cwd=tmp_path, stdin=subprocess.DEVNULL)
        received = list(server.requests)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (tmp_path / "hi.txt").read_text() == "hi\n"
    recorded = exchanges(tmp_path / "rec.traj.json")
    assert same_requests(recorded, received) and len(received) == 2
    diffed = subprocess.run([*swedeck_command(), "diff", str(tmp_path / "rec.traj.json"), str(tmp_path / "mini.traj.json"),
                             "--print", "--json"], capture_output=True, text=True, timeout=60)
    first, *rows = [json.loads(line) for line in diffed.stdout.splitlines()]
    assert first["first_divergence"] is None  # the record and mini-swe-agent's own file agree
    # and so do the commands' outputs (issue 62: `(output differs)` on every identical output)
    assert [other["output_differs"] for row in rows for other in row["others"]] == [False] * len(rows)


def _endpoint(tmp_path: Path, upstream: str) -> tuple[RecordingEndpoint, TrajectoryWriter]:
    writer = TrajectoryWriter(tmp_path / "faults", {"id": "faults", "config": {}})
    return RecordingEndpoint(lambda path: upstream + path, Recorder(writer)), writer


def _post(url: str, body: dict) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
        "content-type": "application/json", "x-api-key": "sk-ant-test-0000"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            try:
                return response.status, response.read()
            except http.client.IncompleteRead as cut:  # a stream cut upstream reaches the agent cut
                return response.status, cut.partial
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_faults_pass_through_as_they_came_and_are_recorded(tmp_path):
    body = {"model": "claude-test", "max_tokens": 100, "stream": True, "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "Bash", "input_schema": {}}]}
    with AnthropicServer(side_calls_apart=False) as server:
        server.script(Reply(status=429), Reply(text="half an answer", cut=True), Reply(text="whole"))
        endpoint, writer = _endpoint(tmp_path, server.url)
        with endpoint:
            answers = [_post(endpoint.base_url + "/v1/messages", body) for _ in range(3)]
        sent = list(server.answered)
    assert [status for status, _ in answers] == [429, 200, 200]
    assert [data for _, data in answers] == sent  # byte for byte, the cut stream as cut
    path = writer.finish({"exit_status": "Exited"})
    recorded = exchanges(path)
    assert [event["status"] for event in recorded] == [429, 200, 200]
    assert "429" in recorded[0]["error"] and "message_delta" in recorded[1]["error"] and recorded[2]["error"] is None
    assert [event.get("step") for event in recorded] == [None, None, 1]
    assert "sk-ant-test-0000" not in path.read_text()


def test_the_endpoint_serves_its_own_agent_only(tmp_path):
    with AnthropicServer() as server:
        endpoint, writer = _endpoint(tmp_path, server.url)
        with endpoint:
            port = endpoint.server.server_address[1]
            for path in ("/v1/messages", "/t/not-the-token/v1/messages", f"/t/{endpoint.token}x/v1/messages"):
                status, data = _post(f"http://127.0.0.1:{port}{path}", {"model": "m", "messages": []})
                assert status == 403 and b"wrong or missing token" in data
            assert endpoint.server.server_address[0] == "127.0.0.1"
        assert server.requests == []  # nothing reached the provider
    writer.close()


def test_an_upstream_that_does_not_answer_is_a_502_that_says_why(tmp_path):
    endpoint, writer = _endpoint(tmp_path, "http://127.0.0.1:9")  # nothing listens on the discard port
    with endpoint:
        status, data = _post(endpoint.base_url + "/v1/chat/completions", {"model": "m", "messages": []})
    assert status == 502 and b"did not answer" in data
    recorded = exchanges(writer.finish({"exit_status": "Exited"}))
    assert recorded[0]["status"] == 502 and "did not answer" in recorded[0]["error"] and recorded[0]["wire"] == "chat"


def test_print_config_names_what_codex_needs():
    done = subprocess.run([*swedeck_command(), "record", "--print-config", "codex"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and 'wire_api="responses"' in done.stdout and "{endpoint}/v1" in done.stdout


AGENT = """
import json, os, sys, time, urllib.request
from pathlib import Path
from typing import Any

def ask(words, stream=False):
    body = json.dumps({"model": "test-model", "messages": words, "stream": stream, "tools": [
        {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]}).encode()
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        data = response.read()
    return None if stream else json.loads(data)["choices"][0]["message"]

words = [{"role": "user", "content": "list the files"}]
answer = ask(words)
call = answer["tool_calls"][0]
words += [answer, {"role": "tool", "tool_call_id": call["id"], "content": "a.txt"}]
while not Path(sys.argv[1]).exists():  # the test lets the second request go
    time.sleep(0.05)
ask(words, stream=True)
"""


def test_attach_follows_a_running_record_in_a_real_terminal(tmp_path):
    import shutil
    import uuid

    from support.terminal import TMUX, send_keys, wait_for_text

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    agent, go_on = tmp_path / "agent.py", tmp_path / "go-on"
    agent.write_text(AGENT)
    with OpenAIServer() as server:
        slow = " ".join(f"word{number}" for number in range(60))
        server.script(Turn.bash_tool("ls", text="Listing."),
                      Turn.bash_tool("cat a.txt", text=f"Reading it. {slow}", chunks=30, chunk_delay_s=0.1))
        recording = subprocess.Popen([*swedeck_command(), "record", "-o", str(tmp_path / "live"), "--upstream",
                                      server.url.removesuffix("/v1"), "--headless", "--", sys.executable, str(agent),
                                      str(go_on)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        from support.waiting import wait_until

        wait_until(lambda: len(server.requests) >= 1 and (tmp_path / "live.traj.jsonl").exists(), timeout=30,
                   what="the first request")
        session = f"swedeck-attach-{uuid.uuid4().hex[:6]}"
        command = " ".join([*swedeck_command(), "record", "--attach", str(tmp_path / "live")])
        subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "120", "-y", "36", command], check=True)
        try:
            screen = wait_for_text(session, "step 1/1", timeout=30)
            assert "following" in screen and "$ ls" in screen
            go_on.touch()
            screen = wait_for_text(session, "answering…", timeout=30)  # the next answer, as it streams
            assert "(step 2, as it streams)" in screen and "Reading it." in screen
            wait_for_text(session, "$ cat a.txt", timeout=30)  # the second step, as it was recorded
            assert recording.wait(timeout=30) == 0
            wait_for_text(session, "the session ended", timeout=30)  # on in the final file
            send_keys(session, "q")
        finally:
            subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)
            if recording.poll() is None:
                recording.kill()
    assert (tmp_path / "live.traj.json").exists()


def test_attach_to_nothing_says_so(tmp_path):
    done = subprocess.run([*swedeck_command(), "record", "--attach", str(tmp_path / "none")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "no record at" in done.stderr


def test_a_side_call_is_a_branch_not_a_step(tmp_path):
    """A call that does not continue the main conversation (a title by another model) is kept
    beside it: a branch that opens as a run of its own, never mixed into the main steps."""
    task = {"role": "user", "content": "list the files"}
    main = {"model": "claude-main", "max_tokens": 100, "stream": True, "tools": [{"name": "Bash", "input_schema": {}}],
            "messages": [task]}
    with AnthropicServer() as server:
        server.script(Reply.bash("ls", text="Listing."), Reply(text="Two files."))  # the title is the server's own
        endpoint, writer = _endpoint(tmp_path, server.url)
        with endpoint:
            _post(endpoint.base_url + "/v1/messages", main)
            _post(endpoint.base_url + "/v1/messages", {"model": "claude-small", "max_tokens": 20, "messages": [
                {"role": "user", "content": "Give this conversation a title: list the files"}]})
            answer = [{"type": "text", "text": "Listing."},
                      {"type": "tool_use", "id": "toolu_0001", "name": "Bash", "input": {"command": "ls", "description": "run it"}}]
            _post(endpoint.base_url + "/v1/messages", {**main, "messages": [task, {"role": "assistant", "content": answer}, {
                "role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0001", "content": "a.txt b.txt"}]}]})
    path = writer.finish({"exit_status": "Exited"})
    # each exchange is written as it ends: the side call's end may come after the next main call's
    assert [(event["line"], event.get("step")) for event in sorted(exchanges(path), key=lambda e: e["number"])] == [
        ("main", 1), ("claude-small side", None), ("main", 2)]
    trajectory = load_trajectory(path)
    assert len(trajectory.steps) == 2 and trajectory.messages[-1].text == "Two files."
    from swedeck.core.trajectory.fidelity import fidelity_of

    branches = fidelity_of(trajectory).openable
    assert [branch.label for branch in branches] == ["side call 2: claude-small"]
    side = load_trajectory(branches[0].target)
    assert len(side.steps) == 1 and side.messages[-1].text == "A short title"
    assert [m.text for m in side.recorded_prompts[1]] == ["Give this conversation a title: list the files"]


def test_the_main_line_is_the_conversation_the_agent_continues_not_the_first_call(tmp_path):
    """Issue 60.4: claude-code-acp's warm-up (`[user: "foo"]` to a small model) comes first, a
    subagent continues its own conversation before the main one is continued, and a title call
    comes between: the steps are the main conversation's calls, the rest side calls. A run
    that ends before anything is continued takes the call that offered tools."""
    task = {"role": "user", "content": "fix the failing test"}
    tools = [{"name": "Bash", "input_schema": {}}, {"name": "Agent", "input_schema": {}}]  # the warm-up offers them too
    main = {"model": "claude-main", "max_tokens": 100, "stream": True, "tools": tools, "messages": [task],
            "system": "You are a coding agent. Use the tools to solve the person's task; run tests before you finish."}
    prompt = "Find every test file that imports the parser and list them"
    sub = {"model": "claude-main", "max_tokens": 100, "stream": True, "tools": tools[:1],
           "messages": [{"role": "user", "content": prompt}]}
    with AnthropicServer(side_calls_apart=False) as server:  # each call takes the next reply, in order
        server.script(Reply(text="ok"),
                      Reply(text="Asking a helper.", tool=("Agent", {"prompt": prompt, "description": "find tests"})),
                      Reply.bash("grep -l parser tests/*.py"), Reply(text="tests/test_parser.py"),
                      Reply(text="A short title"), Reply(text="Done."))
        endpoint, writer = _endpoint(tmp_path, server.url)
        with endpoint:
            _post(endpoint.base_url + "/v1/messages", {"model": "claude-small", "max_tokens": 1, "tools": tools,
                                                       "messages": [{"role": "user", "content": "foo"}]})
            # as if it offered no tools: it is not plainly the conversation, so it waits to be continued,
            # and the subagent below continues its own conversation first
            _post(endpoint.base_url + "/v1/messages", {**main, "tools": []})
            agent_call = [{"type": "text", "text": "Asking a helper."}, {"type": "tool_use", "id": "toolu_0002",
                          "name": "Agent", "input": {"prompt": prompt, "description": "find tests"}}]
            _post(endpoint.base_url + "/v1/messages", sub)
            grep = [{"type": "tool_use", "id": "toolu_0003", "name": "Bash",
                     "input": {"command": "grep -l parser tests/*.py", "description": "run it"}}]
            _post(endpoint.base_url + "/v1/messages", {**sub, "messages": [*sub["messages"], {
                "role": "assistant", "content": grep}, {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_0003", "content": "tests/test_parser.py"}]}]})
            _post(endpoint.base_url + "/v1/messages", {"model": "claude-small", "max_tokens": 20, "messages": [
                {"role": "user", "content": "Give this conversation a title: fix the failing test"}]})
            _post(endpoint.base_url + "/v1/messages", {**main, "messages": [task, {"role": "assistant", "content": agent_call},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0002",
                                              "content": "tests/test_parser.py"}]}]})
    path = writer.finish({"exit_status": "Exited"})
    steps = [(event["number"], event["step"]) for event in exchanges(path) if event.get("step")]
    assert steps == [(2, 1), (6, 2)]
    trajectory = load_trajectory(path)
    assert len(trajectory.steps) == 2 and trajectory.messages[-1].text == "Done."
    from swedeck.core.trajectory.fidelity import fidelity_of

    assert sorted(branch.label.split(":")[0] for branch in fidelity_of(trajectory).openable) == [
        "side call 1", "side call 5", "subagent run 1"]  # issue 65.4: the subagent's two calls are its own run
    assert [(event["number"], event.get("subagent")) for event in exchanges(path) if event["line"] == "subagent"] == [
        (3, "1"), (4, "1")]
    assert [step.commands for step in load_trajectory(f"{path}#subagent-1").steps] == [["grep -l parser tests/*.py"], []]

    with AnthropicServer() as server:  # one call, no continuation: at the end, the conversation is the step
        endpoint, writer = _endpoint(tmp_path / "one", server.url)
        recorder = endpoint.handlers
        with endpoint:
            _post(endpoint.base_url + "/v1/messages", {"model": "claude-small", "max_tokens": 1,
                                                       "messages": [{"role": "user", "content": "foo"}]})
            _post(endpoint.base_url + "/v1/messages", {**main, "tools": []})
            _post(endpoint.base_url + "/v1/messages", {"model": "claude-small", "max_tokens": 20, "messages": [
                {"role": "user", "content": "Give this conversation a title: fix the failing test"}]})
    assert recorder.state.steps == 0  # nothing continued: not placed yet
    recorder.close()
    path = writer.finish({"exit_status": "Exited"})
    assert [(event["number"], event["step"]) for event in exchanges(path) if event.get("step")] == [(2, 1)]
    assert recorder.state.steps == 1 and recorder.state.side == 2


def test_the_answer_as_it_streams_is_beside_the_record_until_it_ends(tmp_path):
    from support.waiting import wait_until
    from swedeck.core.record.live import LiveAnswers, stream_path, streaming_answer

    record = tmp_path / "run.traj.jsonl"
    live = LiveAnswers(record)
    event = b'data: {"choices": [{"delta": {"content": "Hello, "}}]}\n\ndata: {"choices": [{"delta": {"content": "world"}}]}\n'
    live.passed(1, "chat", event[:30])  # a line cut between two reads waits for its end
    live.passed(1, "chat", event[30:])
    wait_until(lambda: streaming_answer(record) == "Hello, world", timeout=10, what="the streamed words")
    assert streaming_answer(tmp_path / "run.traj.json") == "Hello, world"  # the final file's name finds it too
    live.ended(1)
    wait_until(lambda: not stream_path(record).exists(), timeout=10, what="the file gone with the answer's end")
    live.close()


@pytest.mark.parametrize("release", RELEASES)
def test_an_acp_agent_runs_headless_and_its_session_is_recorded(tmp_path, release):
    """SPEC §19, headless: the real Claude Code ACP adapter over stdio (the newest and the
    previous pin); its model traffic through the record's endpoint, its permission answered by
    yolo (allow once) and written down."""
    adapter = agent_cli("claude-code-acp", release)
    work = tmp_path / "work"
    work.mkdir()
    with AnthropicServer() as server:
        server.script(Reply.acp_bash("echo hello > out.txt", text="I will write the file."))
        done = subprocess.run([*swedeck_command(), "run", "--acp", adapter, "--headless", "-t", "write hello to out.txt",
                               "--upstream", server.url, "-o", str(tmp_path / "acp"), "--cwd", str(work)],
                              env=claude_environment(tmp_path / "home"), capture_output=True, text=True, timeout=100)
        received = list(server.requests)
        paths = list(server.paths)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (work / "out.txt").read_text() == "hello\n"
    # shown as its command (issue 60.3): Claude Code's title is the command in backticks
    assert "$ echo hello > out.txt\n" in done.stdout and "permission: $ echo hello > out.txt -> Allow" in done.stdout
    record = json.loads((tmp_path / "acp.traj.json").read_text())
    events = record["meta_events"]
    assert same_requests(events, received)
    session = next(event for event in events if event["event"] == "acp_session")
    assert session["protocol_version"] == 1 and session["session_id"]
    permission = next(event for event in events if event["event"] == "acp_permission")
    assert permission["answer"] == "allow" and {option["kind"] for option in permission["options"]} >= {
        "allow_once", "allow_always", "reject_once"}
    assert [m.role for m in load_trajectory(tmp_path / "acp.traj.json").recorded_prompts[2]][-1] == "tool"
    # the main line is the conversation (issue 60.4): the adapter's warm-up and titles are side calls
    conversation = [body for body, path in zip(received, paths, strict=True)
                    if body.get("tools") and "count_tokens" not in path]  # not its token counts
    assert [event["step"] for event in events if event.get("step")] == list(range(1, len(conversation) + 1))
    replayed = load_trajectory(tmp_path / "acp.traj.json")
    assert len(replayed.steps) == len(conversation) == 2
    # the adapter's mcp__acp__Bash is a shell command (issue 60.3): its command alone, counted, seen by the rules
    action = replayed.steps[0].actions[0]
    assert action.command == "echo hello > out.txt" and action.unknown.get("shell") is True
    settings = tmp_path / "deny-echo.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(echo:*)"]}}))
    dry = subprocess.run([*swedeck_command(), "rules", "dry-run", str(settings), str(tmp_path / "acp.traj.json"),
                          "--json"], capture_output=True, text=True, timeout=60)
    assert json.loads(dry.stdout)["counts"]["deny"] == 1, dry.stdout[-1000:] + dry.stderr[-1000:]
    terminal = next(event for event in events if event["event"] == "acp_terminal")  # swedeck's shell ran it
    assert "echo hello > out.txt" in terminal["command"] and terminal["exit_code"] == 0


def test_the_rules_deny_a_command_of_the_real_claude_code_adapter_headless(tmp_path):
    """Issue 60.1, with the real adapter: with `agent.rules` denying `rm`, `--headless` rejects the
    agent's request to run `rm victim.txt` (it used to answer Allow) and the file stays."""
    adapter = agent_cli("claude-code-acp")
    work = tmp_path / "work"
    work.mkdir()
    (work / "victim.txt").write_text("keep me\n")
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    with AnthropicServer() as server:
        server.script(Reply.acp_bash("rm victim.txt", text="I will remove it."))
        done = subprocess.run([*swedeck_command(), "run", "--acp", adapter, "--headless", "-t", "remove victim.txt",
                               "--upstream", server.url, "-o", str(tmp_path / "acp"), "--cwd", str(work),
                               "-c", f"agent.rules=[{settings}]"],
                              env=claude_environment(tmp_path / "home"), capture_output=True, text=True, timeout=100)
    assert (work / "victim.txt").read_text() == "keep me\n", done.stdout[-2000:] + done.stderr[-2000:]
    assert "permission: $ rm victim.txt -> Reject: denied by the rules: deny: Bash(rm:*)" in done.stdout
    events = json.loads((tmp_path / "acp.traj.json").read_text())["meta_events"]
    permission = next(event for event in events if event["event"] == "acp_permission")
    assert permission["kind"] == "reject_once" and permission["command"] == "rm victim.txt"
    assert not any(event["event"] == "acp_terminal" and not event.get("refused") for event in events)


def test_acp_says_what_it_needs(tmp_path):
    for how in (["--acp", "no-such-agent-program", "--headless"], ["--acp", "no-such-agent-program"],
                ["-c", "agent.acp.command=no-such-agent-program"]):  # before any UI opens; from the config too
        missing = subprocess.run([*swedeck_command(), "run", *how, "-t", "x"], capture_output=True, text=True,
                                 timeout=60)
        assert missing.returncode == 2 and "not a program here" in missing.stderr, how
    absent = subprocess.run([*swedeck_command(), "run", "--acp", "codex", "--headless", "-t", "x"], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "SWEDECK_AGENTS_DIR": str(tmp_path),
                                                        "PATH": os.path.dirname(sys.executable)})
    assert absent.returncode == 2 and "npm install -g @zed-industries/codex-acp" in absent.stderr


@pytest.mark.parametrize("release", RELEASES)
def test_the_codex_acp_adapter_runs_headless_through_the_record(tmp_path, release):
    """The codex preset hands Codex's adapter (the newest and the previous pin) the record's
    endpoint as a provider of its own (`-c model_providers.swedeck=…`), and signs in with the
    key the environment holds."""
    folder = Path(agent_cli("codex-acp", release)).parent.parent.parent  # the preset finds it there
    with ResponsesServer() as server:
        server.script(Step(text="Let me look.", call=("exec_command", {"cmd": "echo hello-from-codex"})),
                      Step(text="It printed hello-from-codex."))
        done = subprocess.run([*swedeck_command(), "run", "--acp", "codex", "--headless", "-t", "run echo", "--upstream",
                               server.url, "-o", str(tmp_path / "acp"), "--cwd", str(tmp_path)],
                              env={**codex_environment(tmp_path / "home"), "SWEDECK_AGENTS_DIR": str(folder)},
                              capture_output=True, text=True, timeout=100)
        received = list(server.requests)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "It printed hello-from-codex." in done.stdout and "Exception ignored" not in done.stderr
    assert "completed: hello-from-codex" in done.stdout  # it ran (echo is harmless to Codex: not asked)
    from support.waiting import wait_until

    # the npm wrapper's native child ended with it: the agent's whole process group is ended
    wait_until(lambda: not processes_in(tmp_path), timeout=15, what="no agent process left in the session's folder")
    events = json.loads((tmp_path / "acp.traj.json").read_text())["meta_events"]
    assert same_requests(events, received)
    assert len(received) == 2 and any(event["event"] == "acp_session" for event in events)
    assert [event["step"] for event in events if event.get("step")] == [1, 2]  # the conversation is the main line


def test_requests_go_where_the_person_sends_them(tmp_path):
    """Issue 60.5: without --upstream, the person's own base URL variables (as they were before
    swedeck set its own) say where requests go, and the first line says so; --upstream wins."""
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    (tmp_path / "go-on").touch()
    with OpenAIServer() as server:
        server.script(Turn.bash_tool("ls", text="Listing."), Turn(text="Done."))
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/gateway"}
        done = subprocess.run([*swedeck_command(), "record", "-o", str(tmp_path / "run"), "--headless", "--",
                               sys.executable, str(agent), str(tmp_path / "go-on")], env=env, capture_output=True,
                              text=True, timeout=100)
        received = len(server.requests)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    first = done.stderr.splitlines()[0]  # swedeck record speaks on stderr (the agent owns stdout)
    assert f"openai: {server.url} (OPENAI_BASE_URL)" in first and "http://127.0.0.1:9/gateway (ANTHROPIC_BASE_URL)" in first
    recorded = exchanges(tmp_path / "run.traj.json")
    assert received == 2 and [event["status"] for event in recorded] == [200, 200]
    assert recorded[0]["upstream"] == server.url + "/chat/completions"  # the person's base, which holds its /v1
    from swedeck.core.record.endpoint import Upstreams

    upstreams = Upstreams.of(None, {"ANTHROPIC_BASE_URL": "https://proxy.corp/anthropic/"})
    assert upstreams.url("anthropic", "/v1/messages") == "https://proxy.corp/anthropic/v1/messages"
    assert upstreams.url("responses", "/v1/responses") == "https://api.openai.com/v1/responses"
    assert Upstreams.of("http://local:8000", {"OPENAI_BASE_URL": "x"}).url("chat", "/v1/chat/completions") == \
        "http://local:8000/v1/chat/completions"


SIGNALLED_AGENT = """
import json, os, signal, sys, urllib.request
from pathlib import Path
from typing import Any

def ended(number, frame):
    Path(sys.argv[1]).write_text(signal.Signals(number).name)
    sys.exit(128 + number)

signal.signal(signal.SIGTERM, ended)
signal.signal(signal.SIGHUP, ended)
body = json.dumps({"model": "test-model", "messages": [{"role": "user", "content": "list the files"}],
                   "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]})
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body.encode(),
                                 headers={"content-type": "application/json"})
urllib.request.urlopen(request, timeout=30).read()
Path(sys.argv[1] + ".asked").touch()
signal.pause()
"""


@pytest.mark.parametrize("number", [15, 1])
def test_a_record_ends_whole_on_sigterm_and_sighup(tmp_path, number):
    """Issue 60.7: a signal to `swedeck record` goes to the agent first, then the final file is
    written with the exit status (it used to leave only the .traj.jsonl)."""
    import signal

    from support.waiting import wait_until

    agent, marker = tmp_path / "agent.py", tmp_path / "ended-by"
    agent.write_text(SIGNALLED_AGENT)
    with OpenAIServer() as server:
        server.script(Turn.bash_tool("ls", text="Listing."))
        recording = subprocess.Popen([*swedeck_command(), "record", "-o", str(tmp_path / "run"), "--upstream",
                                      server.url.removesuffix("/v1"), "--headless", "--", sys.executable, str(agent),
                                      str(marker)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     start_new_session=True)
        try:
            wait_until(lambda: Path(str(marker) + ".asked").exists(), timeout=60, what="the agent's first answer")
            recording.send_signal(number)
            code = recording.wait(timeout=60)
        finally:
            if recording.poll() is None:
                recording.kill()
    name = signal.Signals(number).name
    assert marker.read_text() == name  # the agent had the signal first
    assert code == 128 + number
    final = json.loads((tmp_path / "run.traj.json").read_text())
    assert final["info"]["exit_status"] == f"Stopped by {name} (the agent exited {128 + number})"
    assert final["info"]["exit_code"] == 128 + number
    assert [event.get("step") for event in final["meta_events"] if event["event"] == "exchange"] == [1]


class _KeptUpstream:
    """An upstream on a raw socket that answers every request with a small JSON body and counts
    its connections; `stale`: it closes each connection after one answer, without saying so."""

    def __init__(self, stale: bool = False) -> None:
        import socket
        import threading

        self.stale = stale
        self.connections = 0
        self.bodies: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: Any) -> None:
        with conn:
            reader = conn.makefile("rb")
            while True:
                head = reader.readline()
                if not head:
                    return
                length = 0
                while (line := reader.readline()).strip():
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                self.bodies.append(reader.read(length))
                body = b'{"id": "x", "choices": [{"message": {"role": "assistant", "content": "ok"}}]}'
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                             % (len(body), body))
                if self.stale:
                    return

    def close(self) -> None:
        self.listener.close()


@pytest.mark.parametrize("stale", [False, True])
def test_connections_are_kept_both_ways_and_a_chunked_request_goes_whole(tmp_path, stale):
    """Issue 60.6 and 61.8: the agent's connection is kept for its next request, the upstream's
    too (a pool: one connection for many requests; one the upstream closed while idle is
    replaced without the agent seeing it); a chunked request is forwarded whole (it went empty);
    a Host that is not the endpoint's is refused."""
    upstream = _KeptUpstream(stale)
    endpoint, writer = _endpoint(tmp_path, upstream.url)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    try:
        with endpoint:
            base = urllib.parse.urlsplit(endpoint.base_url)
            agent = http.client.HTTPConnection(base.netloc, timeout=30)
            sockets = set()
            for _ in range(3):
                agent.request("POST", base.path + "/v1/chat/completions", body=body,
                              headers={"content-type": "application/json"})
                answer = agent.getresponse()
                assert answer.status == 200 and b'"ok"' in answer.read()
                sockets.add(id(agent.sock))
            assert len(sockets) == 1  # the agent's connection served all three
            agent.putrequest("POST", base.path + "/v1/chat/completions")
            agent.putheader("Transfer-Encoding", "chunked")
            agent.putheader("content-type", "application/json")
            agent.endheaders()
            for piece in (body[:10], body[10:]):
                agent.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            agent.send(b"0\r\n\r\n")
            assert agent.getresponse().read() and upstream.bodies[-1] == body  # whole, not empty
            stranger = http.client.HTTPConnection(base.netloc, timeout=30)
            stranger.request("POST", base.path + "/v1/chat/completions", body=body, headers={"Host": "evil.example"})
            assert stranger.getresponse().status == 421
    finally:
        upstream.close()
    assert upstream.connections == (4 if stale else 1)
    recorded = exchanges(writer.finish({"exit_status": "Exited"}))
    assert [event["status"] for event in recorded] == [200] * 4


def test_a_record_keeps_no_credential_in_any_position(tmp_path):
    """Issue 61.7: credentials by position (query parameters and headers named key, token, secret,
    signature, auth; body fields so named) and by value (the host's secret-named variables) are
    masked in the record; the answers' stream file beside it is the person's alone (0600) and
    masked the same way. The request forwarded upstream is unchanged."""
    import stat

    from swedeck.core.record.live import LiveAnswers, stream_path
    from swedeck.core.record.run import Recording

    planted = {name: f"planted-{name}-{number:04d}xyz" for number, name in enumerate(
        ["key", "api_key", "access_token", "sig", "X-Auth-Token", "Private-Token", "Ocp-Apim-Subscription-Key",
         "X-Portkey-Api-Key", "X-Amz-Security-Token", "body_api_key", "env"])}
    environment = {**os.environ, "MY_SERVICE_TOKEN": planted["env"]}
    query = "&".join(f"{name}={planted[name]}" for name in ("key", "api_key", "access_token", "sig"))
    body = {"model": "claude-test", "max_tokens": 100, "api_key": planted["body_api_key"], "prompt_cache_key": "run-7",
            "messages": [{"role": "user", "content": f"use {planted['env']} to log in"}]}
    with AnthropicServer() as server:
        recording = Recording.open(str(tmp_path / "run"), {}, server.url, environment)
        with recording.endpoint() as endpoint:
            request = urllib.request.Request(f"{endpoint.base_url}/v1/messages?{query}", data=json.dumps(body).encode(),
                                             headers={"content-type": "application/json", **{
                                                 name: planted[name] for name in ("X-Auth-Token", "Private-Token",
                                                 "Ocp-Apim-Subscription-Key", "X-Portkey-Api-Key",
                                                 "X-Amz-Security-Token")}})
            with urllib.request.urlopen(request, timeout=30) as answer:
                answer.read()
        received, path_sent = server.requests[-1], server.paths[-1]
        final = recording.finish("Exited", 0)
    text = final.read_text()
    leaked = [name for name, value in planted.items() if value in text]
    assert not leaked, leaked
    assert received == body and all(planted[name] in path_sent for name in ("key", "sig"))  # forwarded unchanged
    assert '"prompt_cache_key": "run-7"' in text  # the request's own content stays
    live = LiveAnswers(tmp_path / "other.traj.jsonl", Recording.open(str(tmp_path / "other"), {}, None,
                                                                       environment).writer.redactor.text)
    live._write({1: f"the token is {planted['env']}"})
    mode = stat.S_IMODE(stream_path(tmp_path / "other.traj.jsonl").stat().st_mode)
    written = stream_path(tmp_path / "other.traj.jsonl").read_text()
    live.close()
    assert mode == 0o600 and planted["env"] not in written and "***" in written


def test_the_endpoints_token_never_reaches_argv(tmp_path):
    """Issue 61.6: `{endpoint}` in the command is the endpoint without its token (another local
    user reads argv in /proc); the child has the token in its environment and sends it as a
    header. A request with neither is refused."""
    script = tmp_path / "child.py"
    script.write_text("import json, os, sys, urllib.request\n"
                      "token = os.environ['SWEDECK_RECORD_TOKEN']\n"
                      "request = urllib.request.Request(sys.argv[1] + '/v1/chat/completions', data=b'{}', headers={"
                      "'content-type': 'application/json', 'X-Swedeck-Token': token})\n"
                      "status = urllib.request.urlopen(request, timeout=30).status\n"
                      "try:\n"
                      "    urllib.request.urlopen(urllib.request.Request(sys.argv[1] + '/v1/chat/completions', data=b'{}'),"
                      " timeout=30)\n"
                      "    bare = 200\n"
                      "except urllib.error.HTTPError as error:\n"
                      "    bare = error.code\n"
                      "print(json.dumps({'argv': sys.argv, 'token': token, 'status': status, 'bare': bare}))\n")
    with OpenAIServer() as server:
        server.script(Turn(text="ok"))
        done = subprocess.run([*swedeck_command(), "record", "-o", str(tmp_path / "run"), "--upstream",
                               server.url.removesuffix("/v1"), "--headless", "--", sys.executable, str(script),
                               "{endpoint}"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(seen["token"]) > 16 and not any(seen["token"] in word for word in seen["argv"])
    assert seen["argv"][1].startswith("http://127.0.0.1:") and "/t/" not in seen["argv"][1]
    assert seen["status"] == 200 and seen["bare"] == 403


def test_a_hostile_upstream_is_recorded_and_never_a_traceback(tmp_path):
    """Issue 61.8: an SSE event whose index is 1e400 (json reads it as infinity) and an answer over
    the record's bound pass to the agent whole, are recorded with an error, and print nothing."""
    import socket
    import threading

    from swedeck.core.record import wire

    bodies = [b'event: message_start\ndata: {"type": "message_start", "message": {"id": "m", "usage": {}}}\n\n'
              b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 1e400, '
              b'"delta": {"type": "text_delta", "text": "hi"}}\n\n',
              b"data: " + b"x" * (2 << 20) + b"\n\n"]
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        for body in bodies:
            conn, _ = listener.accept()
            with conn:
                reader = conn.makefile("rb")
                length = 0
                while (line := reader.readline()).strip():
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                reader.read(length)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + body)
                conn.shutdown(socket.SHUT_WR)  # the answer ends with the connection (no length)
                reader.close()

    threading.Thread(target=serve, daemon=True).start()
    upstream = f"http://127.0.0.1:{listener.getsockname()[1]}"
    body = {"model": "m", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    original = wire.MAX_ANSWER
    wire.MAX_ANSWER = 1 << 20  # the bound, small for the test
    try:
        endpoint, writer = _endpoint(tmp_path, upstream)
        with endpoint:
            answers = [_post(endpoint.base_url + "/v1/messages", body) for _ in bodies]
    finally:
        wire.MAX_ANSWER = original
        listener.close()
    assert [data for _, data in answers] == bodies  # byte for byte to the agent
    recorded = exchanges(writer.finish({"exit_status": "Exited"}))
    assert len(recorded) == 2
    assert "could not be read" in recorded[0]["error"] and "not assembled" in recorded[1]["error"]


def test_a_request_over_the_records_bound_is_forwarded_whole_and_recorded_by_its_size(tmp_path, monkeypatch):
    """Issue 61.8: a 300 MB request took 1.56 GB and made a 301 MB record: over the bound it is
    forwarded whole (the agent's exchange goes on) and recorded as its size, never parsed."""
    from swedeck.core.record import recorder

    monkeypatch.setattr(recorder, "RECORD_BODY_LIMIT", 1 << 20)
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "x" * (2 << 20)}]}
    with AnthropicServer() as server:
        endpoint, writer = _endpoint(tmp_path, server.url)
        with endpoint:
            status, _ = _post(endpoint.base_url + "/v1/messages", body)
        received = server.requests[-1]
    recorded = exchanges(writer.finish({"exit_status": "Exited"}))
    assert status == 200 and received == body  # forwarded whole
    assert "forwarded whole, not recorded" in recorded[0]["request"]["swedeck_not_recorded"]
    assert (tmp_path / "faults.traj.json").stat().st_size < 100_000
