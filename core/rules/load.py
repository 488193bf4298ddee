"""Which rule files, read as whose (SPEC §20): `--rules FILE …` and `--from OWNER`.

A file's owner is `--from`, else its kind: a `.rules` file is Codex's execpolicy, a `.toml`
Gemini CLI's policy, a JSON file with `permissions` Claude Code's settings, with `permission`
OpenCode's config. `--from OWNER` without files reads the owner's own files, as it does:
Claude Code's user, project and local settings; Codex's `~/.codex/rules/*.rules`; Gemini
CLI's `~/.gemini/policies/*.toml` and the project's `.gemini/policies/*.toml`; OpenCode's
global and project `opencode.json`. One rule set has one owner's semantics: files of two
owners are refused together.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .model import RulesError, RuleSet
from .owners import claude_rules, codex_rules, gemini_rules, opencode_rules, read_rule_file

OWNERS = ("claude", "codex", "gemini", "opencode")


def owner_of(path: Path) -> str:
    if path.suffix == ".rules":
        return "codex"
    if path.suffix == ".toml":
        return "gemini"
    try:
        data = json.loads(read_rule_file(path))
    except (ValueError, RecursionError):
        data = None
    except RulesError:
        raise
    if isinstance(data, dict) and "permission" in data and "permissions" not in data:
        return "opencode"
    if isinstance(data, dict) and "permissions" in data:
        return "claude"
    raise RulesError(f"{path}: whose rules? give --from claude|codex|gemini|opencode")


def default_files(owner: str, cwd: Path) -> list[tuple[Path, str]]:
    home = Path(os.environ.get("HOME") or Path.home())
    if owner == "claude":
        candidates = [(home / ".claude" / "settings.json", "user"), (cwd / ".claude" / "settings.json", "project"),
                      (cwd / ".claude" / "settings.local.json", "local")]
    elif owner == "codex":
        codex_home = Path(os.environ.get("CODEX_HOME") or home / ".codex")
        candidates = [(path, "user") for path in sorted((codex_home / "rules").glob("*.rules"))]
    elif owner == "gemini":
        candidates = [(path, "user") for path in sorted((home / ".gemini" / "policies").glob("*.toml"))]
        candidates += [(path, "workspace") for path in sorted((cwd / ".gemini" / "policies").glob("*.toml"))]
    else:
        candidates = [(home / ".config" / "opencode" / "opencode.json", "user"), (cwd / "opencode.json", "project")]
    return [(path, scope) for path, scope in candidates if path.is_file()]


def load_rules(files: list[str], owner: str | None = None, cwd: Path | None = None) -> RuleSet:
    """The rule set of `files` (read as `owner`'s, or each as its kind says), or of the owner's
    own files when none are given."""
    cwd = cwd or Path.cwd()
    if owner is not None and owner not in OWNERS:
        raise RulesError(f"--from {owner}: one of {', '.join(OWNERS)}")
    if files:
        paths = [Path(file) for file in files]
        for path in paths:
            if not path.is_file():
                raise RulesError(f"{path}: no such rule file")
        owners = {owner} if owner else {owner_of(path) for path in paths}
        if len(owners) > 1:
            raise RulesError(f"rule files of {' and '.join(sorted(owners))}: one owner's rules at a time "
                             "(their semantics differ)")
        found = [(path, "file") for path in paths]
        owner = owners.pop()
    else:
        if owner is None:
            raise RulesError("give rule files (--rules FILE) or whose rules to read (--from claude|codex|gemini|opencode)")
        found = default_files(owner, cwd)
        if not found:
            raise RulesError(f"--from {owner}: none of its rule files is here")
    if owner == "claude":
        return claude_rules(found)
    if owner == "codex":
        return codex_rules([path for path, _ in found])
    if owner == "gemini":
        return gemini_rules(found)
    return opencode_rules([path for path, _ in found])


def config_rules(files: list[str]) -> RuleSet | None:
    """`agent.rules` read, or None; a file that cannot be read stops the session's start."""
    return load_rules(list(files)) if files else None
