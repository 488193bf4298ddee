"""`swedeck replay PATH [--step N] [--follow] [--play]`: the replay UI; `f` forks a live session."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import TYPE_CHECKING

from swedeck.core.errors import UsageError

if TYPE_CHECKING:
    from swedeck.core.config import SwedeckConfig
    from swedeck.tui.replay.replay_screen import ForkRequest


def replay_paths(path: Path) -> list[Path]:
    from swedeck.core.trajectory.loader import trajectory_files

    if path.is_dir():
        paths = trajectory_files(path)
        if not paths:
            raise UsageError(f"no trajectory files (*.traj.jsonl, *.traj.json, *.traj) under {path}")
        return paths
    return [path]


def run_replay_ui(args: argparse.Namespace) -> int:
    """The replay UI. Before its first frame only the config's `ui` section is read (theme and
    keymap); the rest (processors, the fork's model) when `t`, `p`, `b` or `f` first needs it,
    or a fork starts: the models of every section are not built for a replay that never asks."""
    from swedeck.core.startup.read_ahead import ReadAhead

    # a file (not a folder, not `PATH#N`): read while the UI imports, and handed to the replay's loader
    ahead = None if args.follow else ReadAhead.start(Path(args.path))
    from swedeck.commands import config_flags
    from swedeck.core.trajectory.loader import named_path
    from swedeck.core.ui_settings import load_ui_settings
    from swedeck.tui.live.launch import ui_ended
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.replay.replay_settings import ReplaySettings

    if not args.follow:  # `--follow` waits for a file that is not there yet
        named_path(args.path)
    flags = {k: v for k, v in config_flags(args).items() if k == "model.model_name"}

    @functools.cache
    def config() -> SwedeckConfig:
        from swedeck.core.config import load_config

        return load_config(args.config, flags=flags)

    def settings() -> ReplaySettings:
        whole = config()
        return ReplaySettings([p.model_dump(mode="json") for p in whole.agent.history_processors],
                              whole.model.model_name, list(whole.agent.rules), dict(whole.model.prices))

    app = ReplayApp(replay_paths(Path(args.path)), ui=load_ui_settings(args.config, flags), theme=args.theme,
                    start_step=args.step, follow=args.follow, play=args.play, settings=settings,
                    trust_file=getattr(args, "trust_trajectory", False), ahead=ahead)
    request = app.run()
    if app.return_code:
        return ui_ended(app)
    if request is None:
        return 0
    return fork(request, config(), replay=getattr(args, "replay_actions", False))


def fork(request: ForkRequest, config: SwedeckConfig, *, replay: bool) -> int:
    """Continue the trajectory live from the chosen step, in the live UI."""
    from swedeck.core.acp.fork import acp_resume
    from swedeck.core.replay.fork import fork_session
    from swedeck.core.trajectory.loader import load_trajectory
    from swedeck.tui.live.launch import run_session_ui

    trajectory = load_trajectory(request.path)
    resume = acp_resume(trajectory, request.step)  # a record of an ACP session: its agent continues it
    if resume is not None:
        from swedeck.core.acp.session import AcpSession

        return run_session_ui(AcpSession(config, resume.agent, None, cwd=Path(resume.cwd or "."),
                                         upstream=resume.upstream, resume=resume.session_id))
    return run_session_ui(fork_session(trajectory, request.step, config, replay=replay))
