"""`swedeck diff A B [--print [--json]]` (SPEC §16): where two runs parted, in the two-column
view, or printed for scripts."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import TYPE_CHECKING

from swedeck.core.diff.align import Alignment, align, step_key, totals_line
from swedeck.core.errors import UsageError
from swedeck.core.text import inert_json, one_line, strip_control
from swedeck.core.trajectory.loader import load_trajectory, named_path
from swedeck.core.trajectory.model import Trajectory

if TYPE_CHECKING:
    from swedeck.core.diff.batch import BatchComparison

MARKS = {"same": "=", "changed": "≠", "a_only": "<", "b_only": ">"}
WIDTH = 48


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from swedeck.core.diff.batch import compare_batches, is_batch_folder

    folders = [is_batch_folder(named_path(path)) for path in (args.a, args.b)]
    if any(folders):
        if not all(folders):
            raise UsageError(f"{args.a if not folders[0] else args.b}: not a batch output folder; "
                             "give two batch folders or two trajectories")
        comparison = compare_batches(Path(args.a), Path(args.b))
        if args.print or args.json:
            print(_batch_json(comparison) if args.json else _batch_text(comparison))
            return 0
        return _view(args, comparison)
    if args.print or args.json:
        # lazily: each message is built as the alignment reads it, and the latest kept (issue 49)
        a, b = load_trajectory(args.a, lazy=True), load_trajectory(args.b, lazy=True)
        alignment = align(a, b)
        print(_json(alignment, a, b) if args.json else _text(alignment, a, b))
        return 0
    return _view(args)


def _batch_json(comparison: BatchComparison) -> str:
    return inert_json({"a": comparison.a, "b": comparison.b, "differing": comparison.differing,
                       "instances": [{"instance_id": pair.instance_id, "differs": pair.differs, "a": asdict(pair.a),
                                      "b": asdict(pair.b)} for pair in comparison.pairs]})


def _batch_text(comparison: BatchComparison) -> str:
    out = [f"A: {comparison.a}", f"B: {comparison.b}",
           f"{len(comparison.pairs)} instances, {comparison.differing} with another outcome (listed first)", ""]
    width = max((len(pair.instance_id) for pair in comparison.pairs), default=10)
    for pair in comparison.pairs:
        mark = "≠" if pair.differs else "="
        out.append(f"{mark} {pair.instance_id:<{width}}  {pair.a.label():<32}  {pair.b.label()}")
    return strip_control("\n".join(out))


def _view(args: argparse.Namespace, comparison: BatchComparison | None = None) -> int:
    from swedeck.commands import config_flags
    from swedeck.commands.replay_ui import fork
    from swedeck.core.config import load_config
    from swedeck.tui.diff.app import DiffApp
    from swedeck.tui.live.launch import ui_ended

    config = load_config(args.config, flags={k: v for k, v in config_flags(args).items() if k == "model.model_name"})
    processors = [p.model_dump(mode="json") for p in config.agent.history_processors]
    options = {"processors": processors, "fork_model": config.model.model_name, "ui": config.ui, "theme": args.theme}
    app = DiffApp.of_batches(comparison, **options) if comparison is not None else DiffApp.of(args.a, args.b, **options)
    request = app.run()
    if app.return_code:
        return ui_ended(app)
    if request is None:
        return 0
    return fork(request, config, replay=False)


def _command(trajectory: Trajectory, number: int | None) -> str | None:
    return None if number is None else step_key(trajectory, trajectory.steps[number - 1])


def _json(alignment: Alignment, a: Trajectory, b: Trajectory) -> str:
    return inert_json({
        "a": asdict(alignment.a), "b": asdict(alignment.b), "first_divergence": alignment.first_divergence,
        "rows": [{"kind": row.kind, "a": row.a, "b": row.b, "a_command": _command(a, row.a),
                  "b_command": _command(b, row.b), "output_differs": row.output_differs} for row in alignment.rows],
    })


def _text(alignment: Alignment, a: Trajectory, b: Trajectory) -> str:
    first = alignment.first_divergence
    out = [totals_line("A", alignment.a), totals_line("B", alignment.b)]
    out.append("first divergence: the runs never part" if first is None else
               f"first divergence: step {first} of A" + ("" if first <= alignment.a.steps else " (after A's last step)"))
    out.append("")
    for row in alignment.rows:
        left = f"{row.a:>4} {one_line(_command(a, row.a) or '', WIDTH - 5)}" if row.a else ""
        right = f"{row.b:>4} {one_line(_command(b, row.b) or '', WIDTH - 5)}" if row.b else ""
        note = "  (output differs)" if row.output_differs else ""
        out.append(f"{left:<{WIDTH}} {MARKS[row.kind]} {right}{note}".rstrip())
    return strip_control("\n".join(out))
