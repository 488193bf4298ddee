"""Shared fixtures. Every test gets its own user config and data folders."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO.parent / "shared" / "fixtures"
MINI_FIXTURE = FIXTURES / "github_issue.traj.json"
SWEAGENT_FIXTURE = FIXTURES / "6e44b9__sweagenttestrepo-1c2844.traj"

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

pytest_plugins = ["support.openai_server"]


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("SWEDECK_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("SWEDECK_DATA_DIR", str(home / "data"))
    for name in list(os.environ):
        if name.startswith(("SWEDECK_AGENT__", "SWEDECK_MODEL__", "SWEDECK_ENVIRONMENT__", "SWEDECK_RUN__", "SWEDECK_UI__", "MSWEA_")):
            monkeypatch.delenv(name)
    return home


def swedeck_command() -> list[str]:
    """The installed console script when present, else the module (same code)."""
    script = Path(sys.executable).parent / "swedeck"
    return [str(script)] if script.exists() else [sys.executable, "-m", "swedeck"]
