"""The demo's session as `swedeck demo` makes it (its repository, the bundled run replayed at
once), for tests that drive it through the real app."""

from __future__ import annotations

from pathlib import Path

from swedeck.commands.demo import TASK, prepare_repo
from swedeck.core import paths
from swedeck.core.config import load_config
from swedeck.core.session import Session


def demo_session(tmp_path: Path) -> tuple[Session, Path]:
    """The session, and the repository its agent fixes."""
    repo = prepare_repo(tmp_path)
    trajectory = paths.shipped_configs_dir() / "demo" / "demo.traj.json"
    config = load_config(["demo", "model.model_kwargs.tokens_per_second=0"], environ={}, flags={
        "model.model_name": f"replay:{trajectory}", "environment.cwd": str(repo),
        "run.output": str(tmp_path / "demo.traj.jsonl")})
    return Session(config, TASK), repo
