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
    path = named_path(args.path)
    if path.is_dir():
        _one_run(path)
    prices = None
    if kind == "html":  # the page prices each step: with the config's model.prices over litellm's map
        from swedeck.core.config import load_config

        prices = load_config(args.config or []).model.prices
    result = export(path, kind, args.step, prices)
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


def _one_run(folder: Path) -> None:
    """A folder exports when it is one run (a Harbor trial, an OpenHands event folder); a folder
    of runs is a usage error that names them, not a reader's error about its first bytes."""
    from swedeck.core.errors import UsageError
    from swedeck.core.trajectory.loader import load_trajectory, trajectory_files

    try:
        load_trajectory(folder)
        return
    except Exception:  # noqa: BLE001 - not one run: what it holds is said below
        pass
    runs = trajectory_files(folder)
    if not runs:
        raise UsageError(f"export {folder}: a folder with no run in it; export one trajectory file")
    shown = ", ".join(str(run) for run in runs[:3]) + (f", … ({len(runs)} in all)" if len(runs) > 3 else "")
    raise UsageError(f"export {folder}: a folder of runs, and an export is one run: export each "
                     f"(swedeck export RUN -o OUT): {shown}")
