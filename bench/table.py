"""Today's figures as one Markdown table (docs/performance.md): one row per figure a benchmark
bounds, with its budget, today's value and whether it is met.

    python -m bench > results.jsonl
    python -m bench.table results.jsonl [--date 2026-11-28]

Reads the JSON lines `python -m bench` prints (a benchmark that failed is a row saying why).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .result import Bound

UNITS = (("_per_s", "/s"), ("_ms", "ms"), ("_s", "s"), ("_mb", "MB"), ("ratio", "x"))


def unit(figure: str) -> str:
    return next((word for suffix, word in UNITS if figure.endswith(suffix)), "")


def shown(value: Any, figure: str) -> str:
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "not measured"}[value]
    number = f"{value:,.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}"
    return f"{number} {unit(figure)}".strip()


def budget(bound: dict[str, Any], figure: str) -> str:
    parts = []
    if "max" in bound:
        parts.append(f"<= {shown(bound['max'], figure)}")
    if "min" in bound:
        parts.append(f">= {shown(bound['min'], figure)}")
    if "equals" in bound:
        parts.append("yes" if bound["equals"] else "no")
    return ", ".join(parts)


def rows(results: list[dict[str, Any]]) -> list[str]:
    out = ["| benchmark | figure | budget | today | met |", "|---|---|---|---|---|"]
    for result in results:
        name = f"{result['benchmark']} {result['name']}"
        error = (result.get("notes") or {}).get("error")
        if error:
            out.append(f"| {name} | (every figure) | | failed: {error} | no |")
            continue
        for figure, bound in (result.get("goal") or {}).items():
            value = result["figures"].get(figure)
            met = "not measured" if value is None else "yes" if Bound(**bound).holds(value) else "**no**"
            out.append(f"| {name} | `{figure}` | {budget(bound, figure)} | {shown(value, figure)} | {met} |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.table", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="files of `python -m bench`'s JSON lines")
    args = parser.parse_args(argv)
    results = [json.loads(line) for path in args.results for line in Path(path).read_text().splitlines()
               if line.startswith("{")]
    print("\n".join(rows(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
