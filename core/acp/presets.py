"""The ACP agents swedeck names, and how an `--acp` value becomes a command."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from ..errors import UsageError

PRESETS: dict[str, str] = {"claude-code": "claude-code-acp", "codex": "codex-acp"}
"""Preset -> the adapter's program (npm: @zed-industries/claude-code-acp, @zed-industries/codex-acp)."""
PACKAGES = {"claude-code": "@zed-industries/claude-code-acp", "codex": "@zed-industries/codex-acp"}
ARGUMENTS: dict[str, list[str]] = {
    # Codex takes its provider's URL only from its config: the record's endpoint as a provider
    # of its own (`{endpoint}` is the endpoint's origin once it listens, without its token, which
    # Codex sends as a header from the child's environment; docs/recording.md); and
    # it asks before any command it does not know to be harmless, so swedeck's confirmation sees them
    "codex": ["-c", "model_provider=swedeck", "-c", 'model_providers.swedeck={name="swedeck", '
              'base_url="{endpoint}/v1", env_key="OPENAI_API_KEY", wire_api="responses", '
              'env_http_headers={"X-Swedeck-Token"="SWEDECK_RECORD_TOKEN"}}',
              "-c", 'approval_policy="untrusted"'],
}


def agent_command(spec: str) -> list[str]:
    """A preset's adapter (on PATH, or under `SWEDECK_AGENTS_DIR`'s node_modules/.bin), or a command line."""
    if spec in PRESETS:
        program = PRESETS[spec]
        folder = os.environ.get("SWEDECK_AGENTS_DIR")
        local = Path(folder) / "node_modules" / ".bin" / program if folder else None
        found = str(local) if local is not None and local.exists() else shutil.which(program)
        if found is None:
            raise UsageError(f"--acp {spec}: {program} is not installed (npm install -g {PACKAGES[spec]})")
        return [found, *ARGUMENTS.get(spec, [])]
    command = shlex.split(spec)
    if not command:
        raise UsageError("--acp: give a preset (claude-code, codex) or the agent's command")
    if shutil.which(command[0]) is None and not Path(command[0]).exists():
        raise UsageError(f"--acp: {command[0]} is not a program here")
    return command


INTERPRETERS = ("python", "node", "bun", "deno", "uv", "npx")


def agent_label(spec: str) -> str:
    """A short name for the header: the preset, else the agent's program (its script, when the
    program is an interpreter): `claude-code`, `acp_agent.py`, `my-agent`."""
    if spec in PRESETS:
        return spec
    words = shlex.split(spec) if spec.strip() else [spec]
    name = Path(words[0]).name
    if name.startswith(INTERPRETERS):
        script = next((word for word in words[1:] if not word.startswith("-")), None)
        name = Path(script).name if script else name
    return name
