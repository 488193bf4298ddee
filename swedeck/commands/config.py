"""`swedeck config show [-c ...]` and `swedeck config path`."""

from __future__ import annotations

import argparse

from swedeck.core import paths
from swedeck.core.config import dump_yaml, load_config


def run(args: argparse.Namespace) -> int:
    if args.config_command == "path":
        print(f"config file:  {paths.user_config_file()}")
        print(f"config dir:   {paths.user_config_dir()}  (themes/, model_context_windows.yaml)")
        print(f"data dir:     {paths.user_data_dir()}")
        print(f"trajectories: {paths.trajectories_dir()}")
        print(f"shipped:      {paths.shipped_configs_dir()}  ({', '.join(paths.shipped_config_names())})")
        return 0
    print(dump_yaml(load_config(args.config)), end="")
    return 0
