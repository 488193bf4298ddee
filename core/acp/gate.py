"""One gate for an ACP session, live and headless (SPEC §19): what the person's rules deny never
runs, and in confirm mode nothing runs that the person was not asked about.

Three things an agent can do reach it:

- **a permission request** (`session/request_permission`): decided on the shell command it would
  run (its `rawInput`), by `agent.Gate` as swedeck's own commands are (the rules' deny in every
  mode; then yolo, the whitelist, the rules' allow, what the person allowed with `a`; else the
  person). What the person or a rule allowed is noted, so the terminal or the write that
  carries it out is not asked about twice;
- **a terminal** (`terminal/create`): the rules' deny in every mode (the terminal exits 126
  with the rule's words); in confirm mode one whose command no permission request carried is
  asked about first;
- **a file write** (`fs/write_text_file`): in confirm mode, one no permission request carried
  is asked about first.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import events as ev
from ..agent.gate import Gate, Ruling
from ..config import SwedeckConfig
from ..rules.load import config_rules

PATH_KEYS = ("file_path", "path", "abs_path", "filePath", "notebook_path")
"""Where a tool call's raw input names the file it writes (Claude Code's Write/Edit, Codex's apply_patch)."""
REFUSED_EXIT = 126
"""A terminal swedeck refused exits as bash does for a command it cannot run."""


@dataclass
class AcpGate:
    gate: Gate
    carried: Counter[str] = field(default_factory=Counter)
    """Commands a permission request was allowed for, not yet run by a terminal."""
    paths: set[Path] = field(default_factory=set)
    """Files a permission request was allowed to write."""

    @classmethod
    def of(cls, config: SwedeckConfig) -> AcpGate:
        return cls(Gate(config.agent.whitelist_actions, rules=config_rules(config.agent.rules)))

    def permission(self, mode: ev.Mode, command: str | None) -> Ruling:
        """A permission request's ruling: on its shell command, or (none said) by the mode."""
        if command:
            return self.gate.ruling(mode, command)
        return Ruling("allow", "yolo", "mode") if mode == "yolo" else Ruling("ask")

    def allowed(self, command: str | None, raw_input: Any, cwd: Path) -> None:
        """A permission request was allowed: what it runs and writes is carried, not asked again."""
        if command:
            self.carried[command] += 1
        if isinstance(raw_input, dict):
            for key in PATH_KEYS:
                value = raw_input.get(key)
                if isinstance(value, str) and value:
                    self.paths.add(_resolved(value, cwd))

    def terminal(self, mode: ev.Mode, command: str) -> Ruling:
        """A terminal's ruling: denied by the rules, carried by an allowed request, or as a command."""
        denied = self.gate.denied(command)
        if denied is not None:
            return Ruling("deny", denied, "rules")
        if self.carried[command] > 0:
            self.carried[command] -= 1
            return Ruling("allow", "allowed with its permission request", "person")
        return self.gate.ruling(mode, command)

    def write(self, mode: ev.Mode, path: str, cwd: Path) -> Ruling:
        if mode != "confirm":
            return Ruling("allow", mode, "mode")
        if _resolved(path, cwd) in self.paths:
            return Ruling("allow", "allowed with its permission request", "person")
        return Ruling("ask")


def _resolved(path: str, cwd: Path) -> Path:
    target = Path(path)
    return (target if target.is_absolute() else cwd / target).resolve()
