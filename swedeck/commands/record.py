"""`swedeck record [-o OUT] [--upstream URL] -- COMMAND [ARGS...]` (SPEC §18): run any agent with
swedeck's recording endpoint between it and its model provider (`core/record/`)."""

from __future__ import annotations

import argparse
import sys


def run(args: argparse.Namespace) -> int:
    from swedeck.core.record.run import CONFIGS, record

    if args.print_config:
        print(CONFIGS[args.print_config])
        return 0
    command = list(args.agent)
    if command and command[0] == "--":
        command = command[1:]
    result = record(command, output=args.output, upstream=args.upstream,
                    say=lambda line: print(line, file=sys.stderr, flush=True))
    return result.exit_code
