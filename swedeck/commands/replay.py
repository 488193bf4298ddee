"""`swedeck replay PATH`: the replay UI (`tui/replay/`), or with `--print` the normalized
steps as text or JSON lines (`core/trajectory/printer.py`); `--follow` keeps reading a live file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from swedeck.core.errors import UsageError
from swedeck.core.text import strip_control

if TYPE_CHECKING:
    from swedeck.core.trajectory.model import Trajectory


def run(args: argparse.Namespace) -> int:
    if not args.print_steps:
        from .replay_ui import run_replay_ui

        return run_replay_ui(args)
    from swedeck.core.trajectory.errors import TrajectoryError
    from swedeck.core.trajectory.loader import load_trajectory, named_path

    from .replay_ui import replay_paths

    paths = replay_paths(named_path(args.path))
    failed = 0
    try:
        for number, file in enumerate(paths):
            try:
                trajectory = load_trajectory(file, lazy=args.step is not None)  # one step: only its messages built
            except TrajectoryError as error:
                if len(paths) == 1:
                    raise
                print(strip_control(f"swedeck: {error}"), file=sys.stderr)
                failed += 1
                continue
            if number and not args.json:
                print()
            for line in _lines(trajectory, args.step, args.json):
                print(line)
        sys.stdout.flush()
    except BrokenPipeError:  # `swedeck replay x --print | head` is fine
        sys.stderr.close()
        return 0
    return 1 if failed else 0


def _lines(trajectory: Trajectory, step: int | None, as_json: bool) -> Iterator[str]:
    from swedeck.core.trajectory.printer import json_lines, text_lines

    steps = trajectory.steps
    if step is not None:
        try:
            steps = [trajectory.step(step)]
        except IndexError as error:
            raise UsageError(f"{trajectory.path}: {error}") from None
    return json_lines(trajectory, steps) if as_json else text_lines(trajectory, steps)
