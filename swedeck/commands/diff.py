"""`swedeck diff A B [--print [--json]]` (SPEC §16): where two runs parted, in the two-column
view, or printed for scripts."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from swedeck.core.diff.align import Alignment, align, step_key, totals_line
from swedeck.core.text import inert_json, one_line, strip_control
from swedeck.core.trajectory.loader import load_trajectory
from swedeck.core.trajectory.model import Trajectory

MARKS = {"same": "=", "changed": "≠", "a_only": "<", "b_only": ">"}
WIDTH = 48


def run(args: argparse.Namespace) -> int:
    if args.print or args.json:
        a, b = load_trajectory(args.a), load_trajectory(args.b)
        alignment = align(a, b)
        print(_json(alignment, a, b) if args.json else _text(alignment, a, b))
        return 0
    return _view(args)


def _view(args: argparse.Namespace) -> int:
    from swedeck.commands import config_flags
    from swedeck.commands.replay_ui import fork
    from swedeck.core.config import load_config
    from swedeck.tui.diff.app import DiffApp
    from swedeck.tui.launch import ui_ended

    config = load_config(args.config, flags={k: v for k, v in config_flags(args).items() if k == "model.model_name"})
    processors = [p.model_dump(mode="json") for p in config.agent.history_processors]
    app = DiffApp.of(args.a, args.b, processors=processors, fork_model=config.model.model_name, ui=config.ui,
                     theme=args.theme)
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
