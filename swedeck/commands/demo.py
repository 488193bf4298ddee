"""`swedeck demo` (SPEC §10.6): a live session on a bundled example project, offline.

The bundled repository is copied to a temporary folder and made a git repository there
(the agent ends with `git diff`); the replay model plays the bundled trajectory that
fixes its bug, in confirm mode. `--model NAME` gives the same task to a real model.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

from swedeck.core import paths
from swedeck.core.config import load_config

from . import config_flags

TASK = "The tests of this calculator fail. Find the bug and fix it."


def prepare_repo(target: Path) -> Path:
    repo = target / "calc"
    shutil.copytree(paths.shipped_configs_dir() / "demo" / "repo", repo)
    git = ["git", "-c", "user.name=swedeck demo", "-c", "user.email=demo@swedeck.invalid"]
    for command in (["git", "init", "-q"], ["git", "add", "."], [*git, "commit", "-q", "-m", "calc"]):
        subprocess.run(command, cwd=repo, check=True, capture_output=True)
    return repo


def run(args: argparse.Namespace) -> int:
    from swedeck.tui.live.launch import run_ui

    trajectory = paths.shipped_configs_dir() / "demo" / "demo.traj.json"
    with tempfile.TemporaryDirectory(prefix="swedeck-demo-") as folder:
        repo = prepare_repo(Path(folder))
        flags = config_flags(args)
        flags["model.model_name"] = args.model or f"replay:{trajectory}"
        flags["environment.cwd"] = str(repo)
        config = load_config(["demo", *args.config], flags=flags)
        return run_ui(config, TASK)
