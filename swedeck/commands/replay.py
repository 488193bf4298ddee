"""`swedeck replay PATH`: the replay UI (`tui/replay/`), or with `--print` the normalized
steps as text or JSON lines (`core/trajectory/printer.py`); `--follow` keeps reading a live file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from swedeck.core.errors import UsageError
from swedeck.core.text import strip_control

if TYPE_CHECKING:
    from swedeck.core.cost import CostReport, Prices
    from swedeck.core.trajectory.model import Trajectory


def run(args: argparse.Namespace) -> int:
    if not args.print_steps:
        from .replay_ui import run_replay_ui

        return run_replay_ui(args)
    from swedeck.core.config import load_config
    from swedeck.core.cost import Prices
    from swedeck.core.trajectory.errors import TrajectoryError
    from swedeck.core.trajectory.loader import load_trajectory, named_path

    from .replay_ui import replay_paths

    paths = replay_paths(named_path(args.path))
    prices = Prices(load_config(getattr(args, "config", None) or []).model.prices)  # once for every file
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
            for line in _lines(trajectory, args.step, args.json, _cost(trajectory, prices)):
                print(line)
        sys.stdout.flush()
    except BrokenPipeError:  # `swedeck replay x --print | head` is fine
        sys.stderr.close()
        return 0
    return 1 if failed else 0


def _cost(trajectory: Trajectory, prices: Prices) -> tuple[CostReport, list[dict[str, Any]]]:
    """The run's cost report (issue 65), with the prices `model.prices` sets over litellm's map,
    and its subagent runs."""
    from swedeck.core.cost import cost_of
    from swedeck.core.subagents import subagent_list, subagent_runs

    runs = subagent_runs(trajectory)
    report = cost_of(trajectory, prices, runs)
    return report, subagent_list(trajectory, runs, report)


def _lines(trajectory: Trajectory, step: int | None, as_json: bool,
           cost: tuple[CostReport, list[dict[str, Any]]] | None = None) -> Iterator[str]:
    from swedeck.core.trajectory.printer import json_lines, text_lines

    steps = trajectory.steps
    if step is not None:
        try:
            steps = [trajectory.step(step)]
        except IndexError as error:
            raise UsageError(f"{trajectory.path}: {error}") from None
    report, subagents = cost if cost is not None else (None, None)
    return json_lines(trajectory, steps, report, subagents) if as_json else text_lines(trajectory, steps, report)
