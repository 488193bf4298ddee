"""The real agents' command-line programs (npm, pinned), installed by `.ci/run` into a folder
outside the repository (`SWEDECK_AGENTS_DIR`). There `SWEDECK_REQUIRE_AGENTS` is set and a
missing one fails; elsewhere a test that needs one skips and says how to install it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

VERSIONS = {"claude": "@anthropic-ai/claude-code@2.1.332", "codex": "@openai/codex@0.171.0",
            "claude-code-acp": "@zed-industries/claude-code-acp@0.16.2", "codex-acp": "@zed-industries/codex-acp@0.16.0"}
PREVIOUS = {"claude": "@anthropic-ai/claude-code@2.1.328", "codex": "@openai/codex@0.169.0",
            "claude-code-acp": "@zed-industries/claude-code-acp@0.16.1", "codex-acp": "@zed-industries/codex-acp@0.15.0"}
"""The version matrix (issue 63): the tests of what the agents write run the previous pinned
versions too (`.ci/run` installs them into `SWEDECK_AGENTS_PREVIOUS_DIR`)."""
RELEASES = ("newest", "previous")


def agent_cli(name: str, release: str = "newest") -> str:
    """The pinned CLI `name`, of the `newest` pins (`VERSIONS`) or the `previous` (`PREVIOUS`)."""
    variable = "SWEDECK_AGENTS_DIR" if release == "newest" else "SWEDECK_AGENTS_PREVIOUS_DIR"
    folder = os.environ.get(variable)
    candidate = Path(folder) / "node_modules" / ".bin" / name if folder else None
    found = str(candidate) if candidate is not None and candidate.exists() else \
        shutil.which(name) if release == "newest" else None
    if found is None:
        pins = VERSIONS if release == "newest" else PREVIOUS
        how = f"npm install --prefix DIR {pins[name]} and set {variable}=DIR (.ci/run does)"
        if os.environ.get("SWEDECK_REQUIRE_AGENTS"):
            pytest.fail(f"{name} is not installed: {how}")
        pytest.skip(f"{name} is not installed: {how}")
    return found


def claude_environment(home: Path) -> dict[str, str]:
    """What Claude Code needs to run offline against a local server: a dummy key, its own home,
    and (as root) the sandbox flag; no updater."""
    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-0000", "IS_SANDBOX": "1", "HOME": str(home),
            "DISABLE_AUTOUPDATER": "1"}


def codex_environment(home: Path) -> dict[str, str]:
    """What Codex's ACP adapter needs to run offline: a dummy key and its own home, whose config
    turns off Codex's own sandbox (its Linux sandbox panics on this machine's kernel; the `codex`
    CLI's `exec` is not affected). The provider is the preset's (core/acp/presets.py)."""
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text('sandbox_mode = "danger-full-access"\n')
    return {**os.environ, "OPENAI_API_KEY": "sk-test-0000", "HOME": str(home), "CODEX_HOME": str(home / ".codex")}


def processes_in(folder: Path) -> list[str]:
    """The command lines of the processes whose working folder is `folder` (an agent left running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if Path(os.readlink(entry / "cwd")) == folder:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return found
