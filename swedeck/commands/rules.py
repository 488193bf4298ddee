"""`swedeck rules check|dry-run` (SPEC §20): approval rules as their owners define them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from swedeck.core.errors import UsageError
from swedeck.core.text import strip_control


def run(args: argparse.Namespace) -> int:
    if args.rules_command == "check":
        return check(args)
    return dry_run(args)


def check(args: argparse.Namespace) -> int:
    from swedeck.core.rules.explain import explain
    from swedeck.core.rules.load import load_rules

    words = [word for word in args.command_words if word != "--"] if args.command_words[:1] == ["--"] \
        else list(args.command_words)
    if not words:
        raise UsageError("swedeck rules check: give the command after --")
    command = words[0] if len(words) == 1 else " ".join(words)
    rules = load_rules(args.rules, args.owner)
    verdict = rules.decide(command)
    if args.json:
        print(json.dumps({**verdict.as_record(), "owner": rules.owner, "files": rules.files,
                          "dead": [{"rule": rule.as_record(), "why": why} for rule, why in rules.dead]}))
    else:
        print("\n".join(strip_control(line) for line in explain(verdict, rules)))
    return {"allow": 0, "ask": 3, "deny": 4}[verdict.decision]


def dry_run(args: argparse.Namespace) -> int:
    from swedeck.core.rules.dry_run import dry_run as run_dry
    from swedeck.core.rules.dry_run import table
    from swedeck.core.rules.load import OWNERS, load_rules

    owner = args.owner or (args.rules if args.rules in OWNERS else None)
    rules = load_rules([] if args.rules in OWNERS else [args.rules], owner)
    paths = [Path(path) for path in args.paths]
    for path in paths:
        if not path.exists():
            raise UsageError(f"swedeck rules dry-run: {path}: no such file or folder")

    def progress(done: int, total: int) -> None:
        if total >= 20 and (done == total or done % 50 == 0) and not args.json:
            print(f"  {done}/{total} runs read", file=sys.stderr, flush=True)

    result = run_dry(rules, paths, progress)
    if args.json:
        print(json.dumps(result.as_record(limit=max(args.limit, 0) or 10 ** 9)))
    else:
        print("\n".join(strip_control(line) for line in table(result, args.limit)))
    return 0
