"""A rule set over recorded runs (SPEC §20): every command the agents ran, the decision the
rules would have given, counted; the risky ones the rules would have allowed listed first.

Risky (`risks`), for a command the rules allow:
- **writes outside the tree**: a redirection or a `tee`, `cp`, `mv`, `install`, `dd of=`,
  `rm`, `touch`, `mkdir`, `ln`, `chmod`, `chown` naming an absolute path outside the run's
  working folder (or `~`, or a `..` out of it);
- **the network**: `curl`, `wget`, `ssh`, `scp`, `rsync`, `nc`, `git` fetch / pull / push /
  clone, `pip` / `npm` / `apt` installs, `docker pull`, a URL;
- **runs another program**: `sudo`, `env`, `xargs`, a shell (`bash -c`, `| sh`), `eval`, `exec`,
  `timeout`, `nohup`, `find -exec`, `python -c`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..actions import is_shell
from ..shell_split import split_command
from .model import RuleSet, Verdict

_WRITERS = {"tee", "cp", "mv", "install", "rm", "touch", "mkdir", "ln", "chmod", "chown", "truncate", "rsync"}
_NETWORK = {"curl", "wget", "ssh", "scp", "rsync", "nc", "ncat", "telnet", "ftp", "sftp"}
_NETWORK_SUBCOMMANDS = {"git": {"fetch", "pull", "push", "clone", "ls-remote", "submodule"},
                        "pip": {"install", "download"}, "pip3": {"install", "download"},
                        "npm": {"install", "i", "ci", "publish"}, "yarn": {"add", "install"},
                        "apt": {"install", "update"}, "apt-get": {"install", "update"}, "docker": {"pull", "push"},
                        "uv": {"pip", "add", "sync"}, "conda": {"install", "create"}}
_RUNNERS = {"sudo", "su", "doas", "env", "xargs", "eval", "exec", "timeout", "nohup", "nice", "setsid", "parallel",
            "watch", "strace", "chroot", "flock", "script"}
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
_URL = re.compile(r"\b(?:https?|ftp|ssh|git)://")
_REDIRECT_TARGET = re.compile(r"(?:^|[^<>&0-9])\d?>>?\s*(\S+)")


@dataclass
class Row:
    command: str
    source: str
    step: int
    verdict: Verdict
    risks: list[str]


@dataclass
class DryRun:
    rules: RuleSet
    rows: list[Row] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    runs: int = 0

    @property
    def counts(self) -> dict[str, int]:
        counted = Counter(row.verdict.decision for row in self.rows)
        return {decision: counted.get(decision, 0) for decision in ("allow", "ask", "deny")}

    def risky(self) -> list[Row]:
        """The commands the rules would allow that are risky, first."""
        return [row for row in self.rows if row.verdict.decision == "allow" and row.risks]

    def as_record(self, limit: int = 200) -> dict[str, Any]:
        risky = self.risky()
        return {"owner": self.rules.owner, "files": self.rules.files, "runs": self.runs, "commands": len(self.rows),
                "counts": self.counts, "allowed_risky": len(risky),
                "risky": [{"command": row.command, "source": row.source, "step": row.step, "risks": row.risks,
                           "verdict": row.verdict.as_record()} for row in risky[:limit]],
                "commands_list": [{"command": row.command, "source": row.source, "step": row.step,
                                   "decision": row.verdict.decision} for row in self.rows[:limit]],
                "unreadable": [{"path": path, "error": error} for path, error in self.unreadable]}


def risks(command: str, cwd: str | None) -> list[str]:
    found: list[str] = []
    parts = split_command(command)
    for part in parts or []:
        words = [word for word in part.words if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", word)] or [""]
        name = words[0].rsplit("/", 1)[-1]
        targets = [match.group(1) for match in _REDIRECT_TARGET.finditer(part.text)]
        if name in _WRITERS or name == "dd":
            targets += [word.removeprefix("of=") for word in words[1:] if not word.startswith("-")]
        if any(_outside(target, cwd) for target in targets):
            found.append("writes outside the working tree")
        if name in _NETWORK or (len(words) > 1 and words[1] in _NETWORK_SUBCOMMANDS.get(name, ())) \
                or _URL.search(part.text):
            found.append("uses the network")
        if name in _RUNNERS or name in _SHELLS or (
                name in ("python", "python3", "perl", "ruby", "node") and {"-c", "-e"} & set(words[1:])) or (
                name == "find" and {"-exec", "-execdir", "-delete"} & set(words[1:])):
            found.append("runs another program")
    if parts is None:
        found.append("runs another program")  # a subshell or a group
    return sorted(set(found), key=found.index)


def _outside(target: str, cwd: str | None) -> bool:
    if target.startswith("~") or target in ("/dev/null", "/dev/stdout", "/dev/stderr") or target.startswith("&"):
        return target.startswith("~")
    if target.startswith("/"):
        return not (cwd and (target == cwd or target.startswith(cwd.rstrip("/") + "/"))) and not target.startswith("/tmp/")
    return target.startswith("../") or target == ".."


def dry_run(rules: RuleSet, paths: list[Path], progress: Callable[[int, int], None] = lambda done, total: None,
            ) -> DryRun:
    from ..trajectory.loader import load_trajectory, trajectory_files

    files = [found for path in paths for found in (trajectory_files(path) if path.is_dir() else [path])]
    result = DryRun(rules)
    cache: dict[str, Verdict] = {}
    for number, path in enumerate(files, 1):
        try:
            trajectory = load_trajectory(path)
        except Exception as error:  # noqa: BLE001 - one unreadable record is said, the others go on
            result.unreadable.append((str(path), f"{type(error).__name__}: {error}"))
            continue
        result.runs += 1
        cwd = _cwd_of(trajectory)
        for step, command in _commands(trajectory):
            verdict = cache.get(command)
            if verdict is None:
                verdict = cache[command] = rules.decide(command)
            result.rows.append(Row(command, str(path), step, verdict, risks(command, cwd)))
        progress(number, len(files))
    result.rows.sort(key=lambda row: (not (row.verdict.decision == "allow" and row.risks),))
    return result


def _commands(trajectory: Any) -> Iterator[tuple[int, str]]:
    for step in trajectory.steps:
        for action in step.actions:
            if action.command and is_shell(action):
                yield step.index, action.command


def _cwd_of(trajectory: Any) -> str | None:
    for value in (trajectory.info.session.get("cwd"), (trajectory.info.config.get("environment") or {}).get("cwd")
                  if isinstance(trajectory.info.config.get("environment"), dict) else None):
        if isinstance(value, str) and value:
            return value
    return None


def table(result: DryRun, limit: int = 40) -> list[str]:
    """The dry run as lines: the counts, the risky allowed commands, the rest by decision."""
    counts = result.counts
    lines = [f"{result.rules.owner} rules ({', '.join(result.rules.files)}) over {result.runs} runs, "
             f"{len(result.rows)} commands: allowed {counts['allow']}, asked {counts['ask']}, denied {counts['deny']}"]
    risky = result.risky()
    if risky:
        lines.append(f"allowed but risky ({len(risky)}):")
        lines += [f"  ALLOW  {', '.join(row.risks)}: {_one_line(row.command)}  [{Path(row.source).name} step "
                  f"{row.step}]" for row in risky[:limit]]
    for decision in ("deny", "ask", "allow"):
        rows = [row for row in result.rows if row.verdict.decision == decision and not (decision == "allow" and row.risks)]
        if rows:
            lines.append(f"{decision} ({len(rows)}):")
            lines += [f"  {decision.upper():5}  {_one_line(row.command)}  [{Path(row.source).name} step {row.step}]"
                      for row in rows[:limit]]
            if len(rows) > limit:
                lines.append(f"  … {len(rows) - limit} more")
    lines += [f"unreadable: {path}: {error}" for path, error in result.unreadable]
    return lines


def _one_line(text: str, width: int = 100) -> str:
    flat = " ⏎ ".join(text.splitlines()) or text
    return flat if len(flat) <= width else flat[: width - 1] + "…"
