"""The scripted sessions the real agents' CLIs run against local servers: one owner for the
tests of what the agents write (`tests/test_agents_current.py`) and the drift check a
maintainer runs on a new version (`python -m bench.drift`)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .agent_clis import claude_environment
from .anthropic_server import AnthropicServer, Reply
from .responses_server import ResponsesServer, Step

CELL = ('const a = await tools.exec_command({cmd: "echo one; exit 3"});\n'
        'const b = await tools.exec_command({cmd: "printf two"});\n'
        'text(JSON.stringify([a, b]));')
"""The code-mode cell Codex's scripted model writes: two commands, the first failing."""


def swedeck_command() -> list[str]:
    return [sys.executable, "-m", "swedeck"]


@dataclass
class AgentRun:
    """What one scripted session left: the agent's own file, swedeck's record, what the server received."""

    own: Path
    record: Path
    requests: list[dict[str, Any]] = field(default_factory=list)
    output: str = ""


_CODEX_PROVIDER = ('model_providers.local={name="local", base_url="{endpoint}/v1", env_key="OPENAI_API_KEY", '
                   'wire_api="responses", env_http_headers={"X-Swedeck-Token"="SWEDECK_RECORD_TOKEN"}}')
"""Codex's provider: the record's endpoint, its token from the variable swedeck sets."""


def _codex_folders(folder: Path) -> tuple[Path, Path]:
    home, work = folder / "home", folder / "work"
    (home / ".codex").mkdir(parents=True)
    work.mkdir()
    return home, work


def _record_codex(codex: str, folder: Path, server: ResponsesServer, home: Path, work: Path, *arguments: str) -> str:
    """`codex exec ARGUMENTS` through `swedeck record`, against `server`; what it printed."""
    done = subprocess.run([*swedeck_command(), "record", "-o", str(folder / "rec"), "--upstream", server.url,
                           "--headless", "--", codex, "exec", "--skip-git-repo-check", "-c", "model_provider=local",
                           "-c", _CODEX_PROVIDER, *arguments],
                          env={**os.environ, "OPENAI_API_KEY": "sk-test-0000", "HOME": str(home),
                               "CODEX_HOME": str(home / ".codex"), "SWEDECK_DATA_DIR": str(folder / "data")},
                          capture_output=True, text=True, timeout=100, cwd=work)
    if done.returncode != 0:
        raise RuntimeError(f"codex exited {done.returncode}: {done.stderr[-3000:]}")
    return done.stdout


def codex_code_mode(codex: str, folder: Path, *config: str) -> AgentRun:
    """`codex exec` in code mode through `swedeck record`: the model's only way to run a command
    is a JavaScript `exec` cell (`CELL`). `config`: more `-c` settings."""
    home, work = _codex_folders(folder)
    with ResponsesServer() as server:
        server.script(Step(text="Let me look.", code=CELL, input_tokens=1200, cached_tokens=800), Step(text="Done it."))
        output = _record_codex(codex, folder, server, home, work, "-m", "gpt-5.5", "-c", "features.code_mode=true",
                               "-c", "features.code_mode_only=true",
                               *(part for item in config for part in ("-c", item)), "run echo")
        requests = list(server.requests)
    return AgentRun(next((home / ".codex" / "sessions").rglob("rollout-*.jsonl")), folder / "rec.traj.json", requests,
                    output)


def claude_with_subagent(claude: str, folder: Path) -> AgentRun:
    """`claude -p` through `swedeck record`, with a Bash call and a subagent (`Agent`, in the
    foreground: the main line waits for it, so each scripted answer goes to the same caller
    every run; in the background the two raced for them)."""
    work = folder / "work"
    work.mkdir()
    with AnthropicServer() as server:
        server.script(Reply.bash("echo hello > out.txt", text="I will write the file."),
                      Reply(tool=("Agent", {"description": "look around", "prompt": "list the files",
                                            "subagent_type": "general-purpose", "run_in_background": False})),
                      Reply.bash("ls", text="Listing."), Reply(text="Sub done."),
                      Reply(text="Done: out.txt holds hello.", input_tokens=900, cache_read=800, output_tokens=12))
        environment = {**claude_environment(folder / "home"), "SWEDECK_DATA_DIR": str(folder / "data")}
        done = subprocess.run([*swedeck_command(), "record", "-o", str(folder / "rec"), "--upstream", server.url,
                               "--headless", "--", claude, "-p", "write hello to out.txt", "--allowedTools", "Bash",
                               "Agent"], env=environment, capture_output=True, text=True, timeout=120, cwd=work)
        requests = list(server.requests)
    if done.returncode != 0:
        raise RuntimeError(f"claude exited {done.returncode}: {done.stderr[-3000:]}")
    session = next(path for path in (folder / "home" / ".claude" / "projects").glob("*/*.jsonl"))
    return AgentRun(session, folder / "rec.traj.json", requests, done.stdout)


def codex_with_sub_agent(codex: str, folder: Path) -> AgentRun:
    """`codex exec` through `swedeck record`, whose model spawns a sub-agent (Codex's multi-agent
    `collaboration.spawn_agent`), waits for it, and ends; the sub-agent runs `ls` and answers. The
    sub-agent's requests (they name their parent's thread) take their own scripted answers: the
    two threads run at once. `own`: the root thread's rollout (the sub-agent's is beside it)."""
    home, work = _codex_folders(folder)
    (work / "notes.txt").write_text("hello\n")
    with ResponsesServer() as server:
        server.script(Step(text="Delegating.", call=("collaboration.spawn_agent", {
                          "task_name": "lister", "message": "list the files in this folder", "fork_turns": "none"})),
                      Step(text="Waiting.", call=("collaboration.wait_agent", {"timeout_ms": 30000})),
                      Step(text="The folder holds notes.txt."))
        server.script_sub_agents(Step(text="Listing.", call=("exec_command", {"cmd": "ls"}), input_tokens=700),
                                 Step(text="One file: notes.txt.", input_tokens=800, output_tokens=12))
        output = _record_codex(codex, folder, server, home, work, "look around with a helper")
        requests = list(server.requests)
    rollouts = sorted((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    root = next(path for path in rollouts if '"parent_thread_id"' not in path.read_text().split("\n", 1)[0])
    return AgentRun(root, folder / "rec.traj.json", requests, output)


SCENARIOS = {"codex": codex_code_mode, "claude-code": claude_with_subagent}
