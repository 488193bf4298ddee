"""One module per subcommand, each with `run(args) -> exit code`."""

from __future__ import annotations

import argparse


def config_flags(args: argparse.Namespace) -> dict[str, object]:
    """Command-line flags that set config fields (`--step-limit` etc.), highest precedence."""
    flags: dict[str, object] = {}
    for attr, key in (
        ("model", "model.model_name"),
        ("env", "environment.environment_class"),
        ("image", "environment.image"),
        ("cwd", "environment.cwd"),
        ("mode", "agent.mode"),
        ("step_limit", "agent.step_limit"),
        ("cost_limit", "agent.cost_limit"),
        ("output", "run.output"),
        ("theme", "ui.theme"),
    ):
        value = getattr(args, attr, None)
        if value is not None:
            flags[key] = value
    if getattr(args, "yolo", False):
        flags["agent.mode"] = "yolo"
    return flags
