"""`swedeck replay PATH [--step N] [--follow] [--play]`: the replay UI; `f` forks a live session."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from swedeck.core.errors import UsageError


def replay_paths(path: Path) -> list[Path]:
    from swedeck.core.trajectory.loader import trajectory_files

    if path.is_dir():
        paths = trajectory_files(path)
        if not paths:
            raise UsageError(f"no trajectory files (*.traj.jsonl, *.traj.json, *.traj) under {path}")
        return paths
    return [path]


def run_replay_ui(args: argparse.Namespace) -> int:
    from swedeck.commands import config_flags
    from swedeck.core.config import load_config
    from swedeck.tui.launch import ui_ended
    from swedeck.tui.replay.app import ReplayApp

    path = Path(args.path)
    if not args.follow and not path.exists() and not path.is_symlink():  # one line and 2, as every subcommand
        raise UsageError(f"{path}: no such file or folder")
    config = load_config(args.config, flags={k: v for k, v in config_flags(args).items() if k == "model.model_name"})
    processors = [p.model_dump(mode="json") for p in config.agent.history_processors]
    app = ReplayApp(replay_paths(Path(args.path)), ui=config.ui, theme=args.theme, start_step=args.step, follow=args.follow,
                    play=args.play, processors=processors, fork_model=config.model.model_name,
                    trust_file=getattr(args, "trust_trajectory", False))
    request = app.run()
    if app.return_code:
        return ui_ended(app)
    if request is None:
        return 0
    return fork(request, config, replay=getattr(args, "replay_actions", False))


def fork(request: Any, config: Any, *, replay: bool) -> int:
    """Continue the trajectory live from the chosen step, in the live UI."""
    from swedeck.core.replay.fork import fork_session
    from swedeck.core.trajectory.loader import load_trajectory
    from swedeck.tui.launch import run_session_ui

    return run_session_ui(fork_session(load_trajectory(request.path), request.step, config, replay=replay))
