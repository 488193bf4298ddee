"""`swedeck batch INSTANCES -o DIR`: one headless session per instance (SPEC §15, docs/batch.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from swedeck.core.config import Layer, SwedeckConfig, build_config, collect_layers, require_model
from swedeck.core.errors import UsageError

from . import config_flags

if TYPE_CHECKING:
    from swedeck.core.batch.instances import Instance


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
    if args.grade_only and args.no_verify:
        raise UsageError("--grade-only grades; it does not go with --no-verify")
    if not args.grade_only:
        require_model(config, "a batch")
    instances = select(load_instances(args.instances, args.split), filter_re=args.filter, slice_spec=args.slice,
                       shuffle=args.shuffle)
    if not instances:
        raise UsageError(f"{args.instances}: no instance is left after --filter/--slice")
    if args.grade_only:
        return grade_only(config, instances, Path(args.output), args.workers, args.json)
    tally = Tally(workers=args.workers)
    sink = JsonLines(sys.stdout, tally) if args.json else ProgressLine(sys.stdout, tally)
    options = BatchOptions(workers=args.workers, executor=args.executor, address=args.address, redo=args.redo,
                           total_cost_limit=args.total_cost_limit, rerun=rerun_classes(args.rerun),
                           verify_on_host=args.verify_on_host)
    if args.address and args.executor != "ray":
        raise UsageError("--address goes with --executor ray")
    return Batch(config, instances, Path(args.output), options, sink, tally).run()


def grade_only(config: SwedeckConfig, instances: list[Instance], folder: Path, workers: int, as_json: bool) -> int:
    """`--grade-only`: the finished instances graded again, one line each, then the totals."""
    import json

    from swedeck.core.batch.regrade import Graded, grade_finished
    from swedeck.core.batch.runner import EXIT_FAILED
    from swedeck.core.batch.swebench_grade import require_package
    from swedeck.core.batch.verify import CLASSES

    require_package(instances)

    def said(graded: Graded) -> None:
        problem = graded.verification.problem if graded.verification else None
        if as_json:
            print(json.dumps({"type": "InstanceGraded", "instance_id": graded.instance_id, "verdict": graded.verdict,
                              "problem": problem, "done": graded.done, "total": graded.total}), flush=True)
        else:
            print(f"[{graded.done}/{graded.total}] {graded.instance_id}: {graded.verdict.replace('_', ' ')}"
                  + (f" ({problem})" if problem else ""), flush=True)

    report = grade_finished(config, instances, folder, workers, said)
    counts = {name: len(report["swedeck"][f"{name}_ids"]) for name in CLASSES}
    if as_json:
        print(json.dumps({"type": "GradingEnded", "verdicts": counts}), flush=True)
    else:
        print(" · ".join(f"{name.replace('_', ' ')} {count}" for name, count in counts.items() if count)
              + f" of {report['total_instances']} ({folder / 'report.json'})")
    return EXIT_FAILED if report["swedeck"]["infra_failure_ids"] else 0
