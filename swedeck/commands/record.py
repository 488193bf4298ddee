"""`swedeck record [-o OUT] [--upstream URL] -- COMMAND [ARGS...]` (SPEC §18): run any agent with
swedeck's recording endpoint between it and its model provider (`core/record/`).
`swedeck record --attach OUT` follows a record, a running one live, in swedeck's layout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    from swedeck.core.record.run import CONFIGS, record

    if args.print_config:
        print(CONFIGS[args.print_config])
        return 0
    if args.attach:
        return attach(args)
    command = list(args.agent)
    if command and command[0] == "--":
        command = command[1:]
    result = record(command, output=args.output, upstream=args.upstream,
                    say=lambda line: print(line, file=sys.stderr, flush=True))
    return result.exit_code


def attach(args: argparse.Namespace) -> int:
    """The replay of the record at its last step: following the live file while the agent runs
    (the view goes on in the final file when it ends), the final file once it has."""
    from swedeck.core.errors import UsageError
    from swedeck.core.trajectory.files import base_name, final_path, live_path

    from .replay_ui import run_replay_ui

    base = base_name(Path(args.attach))
    live, final = live_path(base), final_path(base)
    if not live.exists() and not final.exists():
        raise UsageError(f"swedeck record --attach: no record at {base} (neither {live.name} nor {final.name})")
    following = live.exists() and not final.exists()
    replay = argparse.Namespace(path=str(live if following else final), follow=following, step=-1, play=False,
                                print_steps=False, json=False, model=None, trust_trajectory=False,
                                replay_actions=False, config=args.config,
                                theme=args.theme)
    return run_replay_ui(replay)
