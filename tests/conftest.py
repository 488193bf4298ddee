"""Shared fixtures. Every test gets its own user config and data folders."""

from __future__ import annotations

import os
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

pytest_plugins = ["support.openai_server"]


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("SWEDECK_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("SWEDECK_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("SWEDECK_CACHE_DIR", str(home / "cache"))
    for name in list(os.environ):
        if name.startswith(("SWEDECK_AGENT__", "SWEDECK_MODEL__", "SWEDECK_ENVIRONMENT__", "SWEDECK_RUN__", "SWEDECK_UI__", "MSWEA_")):
            monkeypatch.delenv(name)
    return home


def swedeck_command() -> list[str]:
    """The installed console script when present, else the module (same code)."""
    script = Path(sys.executable).parent / "swedeck"
    return [str(script)] if script.exists() else [sys.executable, "-m", "swedeck"]
