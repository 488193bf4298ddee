"""Shared fixtures. Every test gets its own user config and data folders."""

from __future__ import annotations

import os
import random
import signal
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
"""Our own files in each peer format and variant (tests/fixtures/README.md)."""
MINI_FIXTURE = FIXTURES / "mini-v1-text.traj.json"
MINI_V2_FIXTURE = FIXTURES / "mini-v2-tool-calls.traj.json"
SWEAGENT_FIXTURE = FIXTURES / "sweagent-tool-calls.traj"
SWEAGENT_OLDER_FIXTURE = FIXTURES / "sweagent-older.traj"
SWEAGENT_DEMOS_FIXTURE = FIXTURES / "sweagent-demos-in-history.traj"

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from support.isolation import isolate_user_dirs  # noqa: E402 - after the environment above

pytest_plugins = ["support.openai_server", "support.reading"]

KILL_SEED = "SWEDECK_KILL_SEED"
"""The seed of the kill-9 trials' moments (tests/test_reliability_kill.py): new each run, the
same in every worker of a run (they inherit it), printed in the header; set it to run a draw again."""


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault(KILL_SEED, str(random.SystemRandom().randrange(1 << 32)))
    # A suite started in the background by a shell without job control (`.ci/run &`) inherits
    # SIGINT ignored, and so would every process it starts: Ctrl+C's tests (a headless run, a
    # container's owner, `ray.cancel`) would test nothing. The tests' processes get it back.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_report_header(config: pytest.Config) -> str:
    return f"kill-9 trials: {KILL_SEED}={os.environ[KILL_SEED]}"


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_user_dirs(monkeypatch, tmp_path_factory.mktemp("user"))


def swedeck_command() -> list[str]:
    """The installed console script when present, else the module (same code)."""
    script = Path(sys.executable).parent / "swedeck"
    return [str(script)] if script.exists() else [sys.executable, "-m", "swedeck"]
