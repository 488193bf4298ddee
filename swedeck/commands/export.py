"""`swedeck export PATH -o OUT [--format atif|html] [--step A:B] [--json]` (SPEC §16)."""

from __future__ import annotations

import argparse
from pathlib import Path

from swedeck.core.export.share import default_kind, export, write_export
from swedeck.core.text import inert_json, strip_control
from swedeck.core.trajectory.loader import named_path


def run(args: argparse.Namespace) -> int:
    out = Path(args.output)
    kind = args.format or default_kind(out)
    result = export(named_path(args.path), kind, args.step)
    write_export(out, result)
    if args.json:
        print(inert_json({"path": str(result.source), "out": str(out), "format": kind, "version": result.version,
                          "steps": result.steps, "bytes": result.size, "losses": result.losses}))
    else:
        print(strip_control(f"wrote {out} ({result.version}, {result.steps} steps, {result.size:,} bytes)"))
        if result.losses:
            print(f"not held by {kind.upper()} (docs/export.md):")
            for loss in result.losses:
                print(strip_control(f"  {loss}"))
    return 0
