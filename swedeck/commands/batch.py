"""`swedeck batch INSTANCES -o DIR`: one headless session per instance (SPEC §15, docs/batch.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from swedeck.core.config import Layer, build_config, collect_layers, require_model
from swedeck.core.errors import UsageError

from . import config_flags


def rerun_classes(text: str) -> tuple[str, ...]:
    """`infra,agent-error` -> the classes' names; an unknown word is a usage error naming them all."""
    from swedeck.core.batch.verify import CLASSES

    aliases = {"infra": "infra_failure"}
    out = []
    for word in filter(None, (part.strip().lower().replace("-", "_") for part in text.split(","))):
        name = aliases.get(word, word)
        if name not in CLASSES:
            raise UsageError(f"--rerun {word}: the classes are {', '.join(c.replace('_', '-') for c in CLASSES)} "
                             "(infra for infra-failure)")
        out.append(name)
    return tuple(out)


def run(args: argparse.Namespace) -> int:
    from swedeck.core.batch.instances import load_instances, select
    from swedeck.core.batch.progress import JsonLines, ProgressLine, Tally
    from swedeck.core.batch.runner import Batch, BatchOptions

    flags = config_flags(args)
    if args.wall_time_limit is not None:
        flags["agent.wall_time_limit_s"] = args.wall_time_limit
    flags.pop("run.output", None)  # -o is the batch's folder; each instance has its own file in it
    if args.no_verify:
        flags["batch.run_verifier"] = False
    layers = collect_layers(args.config, flags=flags)
    # A batch runs in Docker unless the config or --env says otherwise: just above the shipped defaults.
    layers.insert(1, Layer("swedeck batch's default", {"environment": {"environment_class": "docker"}}))
    config = build_config(layers)
    require_model(config, "a batch")
    instances = select(load_instances(args.instances, args.split), filter_re=args.filter, slice_spec=args.slice,
                       shuffle=args.shuffle)
    if not instances:
        raise UsageError(f"{args.instances}: no instance is left after --filter/--slice")
    tally = Tally(workers=args.workers)
    sink = JsonLines(sys.stdout, tally) if args.json else ProgressLine(sys.stdout, tally)
    options = BatchOptions(workers=args.workers, executor=args.executor, address=args.address, redo=args.redo,
                           total_cost_limit=args.total_cost_limit, rerun=rerun_classes(args.rerun))
    if args.address and args.executor != "ray":
        raise UsageError("--address goes with --executor ray")
    return Batch(config, instances, Path(args.output), options, sink, tally).run()
