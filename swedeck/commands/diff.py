"""`swedeck diff A B [--print [--json]]` (SPEC §16): where two runs parted.

The two-column UI is not built yet (issue 29): until it is, the command prints the
alignment, as `--print` does."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from swedeck.core.diff.align import Alignment, align, step_key
from swedeck.core.text import inert_json, one_line, strip_control
from swedeck.core.trajectory.loader import load_trajectory
from swedeck.core.trajectory.model import Trajectory

MARKS = {"same": "=", "changed": "≠", "a_only": "<", "b_only": ">"}
WIDTH = 48


def run(args: argparse.Namespace) -> int:
    a, b = load_trajectory(args.a), load_trajectory(args.b)
    alignment = align(a, b)
    print(_json(alignment, a, b) if args.json else _text(alignment, a, b))
    return 0


def _command(trajectory: Trajectory, number: int | None) -> str | None:
    return None if number is None else step_key(trajectory, trajectory.steps[number - 1])


def _json(alignment: Alignment, a: Trajectory, b: Trajectory) -> str:
    return inert_json({
        "a": asdict(alignment.a), "b": asdict(alignment.b), "first_divergence": alignment.first_divergence,
        "rows": [{"kind": row.kind, "a": row.a, "b": row.b, "a_command": _command(a, row.a),
                  "b_command": _command(b, row.b), "output_differs": row.output_differs} for row in alignment.rows],
    })


def _run_line(name: str, totals) -> str:
    parts = [f"{totals.format}", f"{totals.steps} steps", f"{totals.prompt_tokens:,} prompt tokens"]
    if totals.cost:
        parts.append(f"${totals.cost:.4f}")
    if totals.seconds is not None:
        parts.append(f"{totals.seconds:.0f} s")
    parts.append(f"exit: {totals.exit_status or 'unknown'}")
    if totals.submission_chars is not None:
        parts.append(f"submission {totals.submission_chars:,} chars")
    return f"{name}: {totals.path} ({', '.join(parts)})"


def _text(alignment: Alignment, a: Trajectory, b: Trajectory) -> str:
    first = alignment.first_divergence
    out = [_run_line("A", alignment.a), _run_line("B", alignment.b)]
    out.append("first divergence: the runs never part" if first is None else
               f"first divergence: step {first} of A" + ("" if first <= alignment.a.steps else " (after A's last step)"))
    out.append("")
    for row in alignment.rows:
        left = f"{row.a:>4} {one_line(_command(a, row.a) or '', WIDTH - 5)}" if row.a else ""
        right = f"{row.b:>4} {one_line(_command(b, row.b) or '', WIDTH - 5)}" if row.b else ""
        note = "  (output differs)" if row.output_differs else ""
        out.append(f"{left:<{WIDTH}} {MARKS[row.kind]} {right}{note}".rstrip())
    return strip_control("\n".join(out))
