"""`python -m bench`: run the benchmarks of SPEC §12 and print one JSON object per line.

    python -m bench                 all of B1-B9 (a few minutes on 2 cores)
    python -m bench --quick         small sizes (about a minute)
    python -m bench --only B4,B5    a subset
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import sys
import tempfile
import traceback
from importlib import import_module
from pathlib import Path

from .machine import machine, versions
from .result import Result

BENCHMARKS = {
    "B1": ("b1_streaming", "streaming"),
    "B2": ("b2_replay_open", "replay open"),
    "B3": ("b3_startup", "startup"),
    "B4": ("b4_round_trip", "command round trip"),
    "B5": ("b5_history", "history processing"),
    "B6": ("b6_output_flood", "output flood"),
    "B7": ("b7_batch", "batch throughput"),
    "B8": ("b8_export_page", "export page"),
    "B9": ("b9_diff", "diff"),
    "B10": ("b10_record", "record endpoint"),
    "B11": ("b11_compaction", "compaction survival"),
    "B12": ("b12_rules", "rules dry-run"),
    "B13": ("b13_huge", "huge Claude Code session"),
    "B14": ("b14_codex", "huge Codex rollout"),
    "B15": ("b15_inspect_sample", "one huge Inspect sample"),
    "B16": ("b16_live_stress", "live stress"),
    "B17": ("b17_acp_start", "ACP start-up"),
    "B18": ("b18_subagents", "subagents"),
    "B19": ("b19_huge_inputs", "huge inputs"),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(BENCHMARKS), help="comma-separated ids, e.g. B4,B5")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a fast check of the harness")
    args = parser.parse_args(argv)
    args.only = [name.strip().upper() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in args.only if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)} (known: {', '.join(BENCHMARKS)})")
    return args


def isolate(workdir: Path) -> None:
    """Keep the user's config, data, cache and mini-swe-agent's banner out of the measurements
    (the banner would also break the JSON lines on stdout)."""
    for name in ("SWEDECK_CONFIG_DIR", "SWEDECK_DATA_DIR", "SWEDECK_CACHE_DIR", "MSWEA_GLOBAL_CONFIG_DIR"):
        path = workdir / name.lower()
        path.mkdir(exist_ok=True)
        os.environ[name] = str(path)
    os.environ["MSWEA_SILENT_STARTUP"] = "1"
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"


def compile_bytecode() -> None:
    """swedeck's modules compiled to bytecode, as `pip install` leaves an installed package.
    An editable checkout otherwise compiles them at each start when it cannot write the cache
    (PYTHONDONTWRITEBYTECODE, a read-only tree): about 60 ms of every probe's start that
    mini-swe-agent, installed, does not pay."""
    for name in ("swedeck", "swedeck.core", "swedeck.tui", "swedeck.themes", "swedeck.configs"):
        spec = importlib.util.find_spec(name)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(folder, quiet=1)


def run_one(benchmark: str, quick: bool, workdir: Path) -> Result:
    module, name = BENCHMARKS[benchmark]
    folder = workdir / benchmark
    folder.mkdir()
    try:
        return import_module(f".{module}", __package__).run(quick=quick, workdir=folder)
    except Exception as error:  # noqa: BLE001 - a broken benchmark is reported, and the others still run
        traceback.print_exc(file=sys.stderr)
        return Result(benchmark, name, figures={}, notes={"error": f"{type(error).__name__}: {error}"})


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    broken = False
    with tempfile.TemporaryDirectory(prefix="swedeck-bench-") as tmp:
        workdir = Path(tmp)
        isolate(workdir)
        compile_bytecode()
        about, installed = machine(), versions()
        for benchmark in args.only:
            result = run_one(benchmark, args.quick, workdir)
            broken |= "error" in result.notes
            print(json.dumps(result.to_json(about, installed)), flush=True)
    return 1 if broken else 0
