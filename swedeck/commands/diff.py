"""`swedeck diff A B [--print [--json]]` (SPEC §16): where two runs parted, in the two-column
view, or printed for scripts."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import TYPE_CHECKING

from swedeck.core.diff.align import Alignment, step_key, totals_line
from swedeck.core.diff.nway import evidence_text
from swedeck.core.errors import UsageError
from swedeck.core.text import inert_json, one_line, strip_control
from swedeck.core.trajectory.loader import load_trajectory, named_path
from swedeck.core.trajectory.model import Trajectory

if TYPE_CHECKING:
    from swedeck.core.diff.batch import BatchComparison, ManyBatches
    from swedeck.core.diff.nway import Comparison

MARKS = {"same": "=", "changed": "≠", "a_only": "<", "b_only": ">"}
WIDTH = 48


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from swedeck.core.diff.batch import compare_batches, is_batch_folder

    if len(args.runs) < 2:
        raise UsageError("give two or more runs to compare (trajectories, or batch folders)")
    args.a, args.b = args.runs[0], args.runs[1]
    folders = [is_batch_folder(named_path(path)) for path in args.runs]
    if any(folders):
        if not all(folders):
            odd = next(path for path, folder in zip(args.runs, folders, strict=True) if not folder)
            raise UsageError(f"{odd}: not a batch output folder; give batch folders only, or trajectories only")
        if len(args.runs) > 2:
            from swedeck.core.diff.batch import compare_many

            many = compare_many([Path(path) for path in args.runs])
            if args.print or args.json:
                print(_many_json(many) if args.json else _many_text(many))
                return 0
            return _view(args, many=many)
        comparison = compare_batches(Path(args.a), Path(args.b))
        if args.print or args.json:
            print(_batch_json(comparison) if args.json else _batch_text(comparison))
            return 0
        return _view(args, comparison)
    if args.html:
        return _html(args)
    if args.print or args.json:
        from swedeck.core.diff.nway import compare

        # lazily: each message is built as the alignment reads it, and the latest kept (issue 49)
        compared = compare([load_trajectory(path, lazy=True) for path in args.runs])
        print(_nway_json(compared) if args.json else _nway_text(compared))
        return 0
    return _view(args)


def _html(args: argparse.Namespace) -> int:
    """`--html OUT`: the runs compared as one offline page (`core.diff.page`), written whole or not at all."""
    from pathlib import Path

    from swedeck.core.diff.nway import compare
    from swedeck.core.diff.page import diff_page
    from swedeck.core.whole_file import write_whole

    compared = compare([load_trajectory(path, lazy=True) for path in args.runs])
    out = Path(args.html)
    write_whole(out, diff_page(compared, list(args.runs)))
    print(f"wrote {out} ({len(args.runs)} runs)")
    return 0


def _name(index: int) -> str:
    return "R" if index == 0 else f"{index}"


def _nway_json(compared: Comparison) -> str:
    from swedeck.core.diff.nway import first_line_record, rows

    return "\n".join([inert_json(first_line_record(compared)), *(inert_json(row) for row in rows(compared))])


def _nway_text(compared: Comparison) -> str:
    from swedeck.core.diff.nway import rows

    if len(compared.runs) == 2:  # two runs: the two columns, as before, with the class of the divergence
        a, b = compared.runs
        text = _text(compared.alignments[0], a, b).splitlines()
        found = compared.divergences[0]
        if found.step is not None:
            text.insert(3, f"why: {found.cls}: {evidence_text(found.evidence)}")
        return "\n".join(text)
    out = [totals_line(f"run {index}" + (" (reference)" if index == 0 else ""), total)
           for index, total in enumerate(compared.totals)]
    out.append("")
    for found in compared.divergences:
        i, j = found.pair
        out.append(f"runs {i} and {j}: " + ("never part" if found.step is None else
                   f"part at step {found.step} of run {i}: {found.cls}: {evidence_text(found.evidence)}"))
    out.append("")
    width = 40
    for row in rows(compared):
        left = f"{row['ref_step']:>4} {one_line(row['ref_command'] or '', width - 5)}" if row["ref_step"] else ""
        marks = "  ".join(f"{other['run']}:{MARKS[other['kind']]}{other['step'] or '-'}"
                          + ("*" if other["output_differs"] else "") for other in row["others"])
        out.append(f"{left:<{width}} {marks}".rstrip())
    out.append("")
    out.append("marks: run:= the same step, ≠ changed, < none in that run, > only that run (* output differs)")
    return strip_control("\n".join(out))


def _batch_json(comparison: BatchComparison) -> str:
    return inert_json({"a": comparison.a, "b": comparison.b, "differing": comparison.differing,
                       "instances": [{"instance_id": pair.instance_id, "differs": pair.differs, "a": asdict(pair.a),
                                      "b": asdict(pair.b)} for pair in comparison.pairs]})


def _many_json(many: ManyBatches) -> str:
    from swedeck.core.diff.batch import differ

    first = {"runs": many.summary(), "flips": many.flips(),
             "differing": sum(1 for _, outcomes in many.rows if differ(outcomes))}
    return "\n".join([inert_json(first), *(inert_json({
        "instance_id": name, "outcomes": [asdict(outcome) for outcome in outcomes], "outcomes_differ": differ(outcomes)})
        for name, outcomes in many.rows)])


def _many_text(many: ManyBatches) -> str:
    from swedeck.core.diff.batch import differ

    out = [f"run {run['run']}: {run['folder']} ({run['instances']} instances, {run['resolved']} resolved, "
           f"{run['unresolved']} unresolved, ${run['cost']:.4f})" for run in many.summary()]
    for flip in many.flips():
        i, j = flip["pair"]
        out.append(f"runs {i} and {j}: {len(flip['resolved_only_in_first'])} resolved only in {i}, "
                   f"{len(flip['resolved_only_in_second'])} only in {j}")
    out.append("")
    width = max((len(name) for name, _ in many.rows), default=10)
    for name, outcomes in many.rows:
        out.append(f"{'≠' if differ(outcomes) else '='} {name:<{width}}  " + "  |  ".join(o.label() for o in outcomes))
    return strip_control("\n".join(out))


def _batch_text(comparison: BatchComparison) -> str:
    out = [f"A: {comparison.a}", f"B: {comparison.b}",
           f"{len(comparison.pairs)} instances, {comparison.differing} with another outcome (listed first)", ""]
    width = max((len(pair.instance_id) for pair in comparison.pairs), default=10)
    for pair in comparison.pairs:
        mark = "≠" if pair.differs else "="
        out.append(f"{mark} {pair.instance_id:<{width}}  {pair.a.label():<32}  {pair.b.label()}")
    return strip_control("\n".join(out))


def _view(args: argparse.Namespace, comparison: BatchComparison | None = None, many: ManyBatches | None = None) -> int:
    from swedeck.commands import config_flags
    from swedeck.commands.replay_ui import fork
    from swedeck.core.config import load_config
    from swedeck.tui.diff.app import DiffApp
    from swedeck.tui.live.launch import ui_ended

    config = load_config(args.config, flags={k: v for k, v in config_flags(args).items() if k == "model.model_name"})
    processors = [p.model_dump(mode="json") for p in config.agent.history_processors]
    options = {"processors": processors, "fork_model": config.model.model_name, "ui": config.ui, "theme": args.theme}
    app = DiffApp.of_batches(comparison, **options) if comparison is not None else \
        DiffApp.of_many_batches(many, **options) if many is not None else \
        DiffApp.of_many(args.runs, **options) if len(args.runs) > 2 else DiffApp.of(args.a, args.b, **options)
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
