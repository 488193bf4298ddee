"""Drift check for a new version of an agent's CLI (issue 63): what it writes that swedeck
does not read yet.

    python -m bench.drift claude-code 2.1.340 [--against 2.1.332] [--installed DIR] [--json]
    python -m bench.drift codex 0.172.0

Installs the version into a temporary folder (npm; `--installed DIR`: a folder where it is
installed already), runs the scripted sessions the tests run (`tests/support/agent_runs.py`)
with it and with the version swedeck pins (`--against`, default the pin), and lists:

- record types and fields the new version writes that the pinned one did not (new), and the
  ones it no longer writes (gone);
- the tools the agent offered the model, new and gone;
- record types swedeck's reader counts without a reason (read nothing from them);
- what swedeck made of each run: steps, shell commands, warnings.

Nothing here changes swedeck: it says where a reader needs work before the pin moves.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

_TESTS = Path(__file__).resolve().parent.parent / "tests"
PACKAGES = {"claude-code": ("@anthropic-ai/claude-code", "claude"), "codex": ("@openai/codex", "codex")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.drift", description=__doc__.splitlines()[0])
    parser.add_argument("agent", choices=sorted(PACKAGES))
    parser.add_argument("version")
    parser.add_argument("--against", help="the version to compare with (default: the one the tests pin)")
    parser.add_argument("--installed", type=Path, help="a folder where VERSION is installed already (npm --prefix)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(_TESTS))
    from support.agent_clis import VERSIONS

    package, binary = PACKAGES[args.agent]
    against = args.against or VERSIONS[binary].rsplit("@", 1)[1]
    with tempfile.TemporaryDirectory(prefix="swedeck-drift-") as scratch:
        folder = Path(scratch)
        try:
            new_cli = _cli(package, binary, args.version, args.installed or folder / "new")
            pinned = os.environ.get("SWEDECK_AGENTS_DIR")  # where .ci/run installs the pins, if here
            old_cli = _cli(package, binary, against, Path(pinned) if pinned and args.against is None else folder / "pinned")
        except RuntimeError as error:
            print(f"drift: {error}", file=sys.stderr)
            return 2
        print(f"running the scripted session with {args.agent} {args.version} and {against}", file=sys.stderr)
        report = compare(args.agent, _observe(args.agent, new_cli, folder / "run-new"),
                         _observe(args.agent, old_cli, folder / "run-pinned"))
    report.update({"agent": args.agent, "version": args.version, "against": against})
    print(json.dumps(report, indent=2) if args.json else "\n".join(_lines(report)))
    return 0


def _cli(package: str, binary: str, version: str, prefix: Path) -> str:
    """The CLI of `package@version` under `prefix`, installed there by npm when it is not."""
    found = prefix / "node_modules" / ".bin" / binary
    if not found.exists():
        done = subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
                               f"{package}@{version}"], capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or not found.exists():
            raise RuntimeError(f"npm could not install {package}@{version}: {done.stderr.strip()[-500:]}")
    version_said = subprocess.run([str(found), "--version"], capture_output=True, text=True, timeout=60).stdout
    if version not in version_said:
        raise RuntimeError(f"{found} is {version_said.strip() or 'of an unknown version'}, not {version}")
    return str(found)


def _observe(agent: str, cli: str, folder: Path) -> dict[str, Any]:
    """One scripted session: what the agent wrote, offered and what swedeck read of it."""
    from support.agent_runs import SCENARIOS
    from swedeck.core.trajectory.fidelity import summary
    from swedeck.core.trajectory.loader import load_trajectory

    folder.mkdir(parents=True)
    run = SCENARIOS[agent](cli, folder)
    files = [run.own, *sorted(run.own.with_suffix("").glob("subagents/*.jsonl"))]
    fields: dict[str, set[str]] = {}
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                for kind, keys in _shapes(json.loads(line)):
                    fields.setdefault(kind, set()).update(keys)
    trajectory = load_trajectory(run.own)
    figures = summary(trajectory)
    tools = {str(tool.get("name") or tool.get("type")) for request in run.requests for tool in request.get("tools") or []
             if isinstance(tool, Mapping)}
    return {"fields": fields, "tools": tools,
            "unread": sorted(kind for kind in figures["skipped"] if kind not in figures.get("why", {})),
            "steps": figures["steps"], "shell_commands": figures["shell_commands"],
            "warnings": list(trajectory.info.warnings)}


def _shapes(record: Any) -> Iterator[tuple[str, set[str]]]:
    """A record's type (with its payload's or attachment's type) and the keys of each part."""
    if not isinstance(record, Mapping):
        return
    kind = str(record.get("type"))
    yield kind, set(record)
    for part in ("payload", "attachment", "message"):
        inner = record.get(part)
        if isinstance(inner, Mapping):
            inner_kind = inner.get("type") if part != "message" else inner.get("role")
            yield f"{kind}/{part}:{inner_kind}", set(inner)
            item = inner.get("item")
            if isinstance(item, Mapping):
                yield f"{kind}/{part}:{inner_kind}/item:{item.get('type')}", set(item)


def compare(agent: str, new: dict[str, Any], pinned: dict[str, Any]) -> dict[str, Any]:
    """What the new version writes or offers beyond the pinned one, and what swedeck leaves unread."""
    new_types, old_types = set(new["fields"]), set(pinned["fields"])
    fields = {kind: sorted(new["fields"][kind] - pinned["fields"][kind]) for kind in sorted(new_types & old_types)}
    return {"types_new": sorted(new_types - old_types), "types_gone": sorted(old_types - new_types),
            "fields_new": {kind: keys for kind, keys in fields.items() if keys},
            "fields_gone": {kind: keys for kind in sorted(new_types & old_types)
                            if (keys := sorted(pinned["fields"][kind] - new["fields"][kind]))},
            "tools_new": sorted(new["tools"] - pinned["tools"]), "tools_gone": sorted(pinned["tools"] - new["tools"]),
            "unread": new["unread"], "read": {key: new[key] for key in ("steps", "shell_commands", "warnings")},
            "read_pinned": {key: pinned[key] for key in ("steps", "shell_commands", "warnings")}}


def _lines(report: dict[str, Any]) -> Iterator[str]:
    yield f"{report['agent']} {report['version']} against {report['against']}"
    yield f"  record types new: {', '.join(report['types_new']) or 'none'}"
    yield f"  record types gone: {', '.join(report['types_gone']) or 'none'}"
    for label, said in (("fields_new", "fields new"), ("fields_gone", "fields gone")):
        for kind, keys in report[label].items():
            yield f"  {said} in {kind}: {', '.join(keys)}"
    yield f"  tools new: {', '.join(report['tools_new']) or 'none'}; gone: {', '.join(report['tools_gone']) or 'none'}"
    yield f"  counted by swedeck without a reason (read nothing): {', '.join(report['unread']) or 'none'}"
    read, pinned = report["read"], report["read_pinned"]
    yield (f"  swedeck read {read['steps']} steps, {read['shell_commands']} shell commands"
           f" ({pinned['steps']} and {pinned['shell_commands']} with {report['against']})")
    yield from (f"  warning: {warning}" for warning in read["warnings"])


if __name__ == "__main__":
    raise SystemExit(main())
