"""Approval rules as their owners define them (SPEC §20): one rule, one rule set, one verdict.

A command is split into its simple commands by swedeck's shell tokenizer (`agent.approvals.
split_command`: `;`, `&&`, `||`, `|`, `&`, newlines). Each part gets the decision of the rule
set's owner for it (`RuleSet.part_decision`, the owner's own precedence); the command's
decision is the strictest of its parts' (deny > ask > allow), so one part a rule does not
allow makes the whole command ask. Where swedeck cannot split a command (a subshell, a group,
unbalanced quotes) or a part substitutes or redirects (`$(…)`, backticks, `>`), no rule allows
it: it asks, and the verdict says why, instead of guessing how the owner would read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..agent.approvals import NEVER_BY_PREFIX, split_command
from ..errors import UsageError

Decision = Literal["allow", "ask", "deny"]
STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


def strictest(decisions: list[Decision]) -> Decision:
    return max(decisions, key=lambda decision: STRICTNESS[decision]) if decisions else "ask"


@dataclass(frozen=True)
class Rule:
    owner: str
    """`claude`, `codex`, `gemini`, `opencode`."""
    decision: Decision
    pattern: str
    """The rule as its file writes it (`Bash(git status:*)`, `["git", "status"]`, `git *`)."""
    source: str
    line: int
    scope: str = "file"
    """Claude Code's `user`, `project`, `local`; else `file`."""
    order: int = 0
    """Its place in the order the rules were read."""
    priority: float = 0.0
    """Gemini CLI's priority (higher wins)."""
    matches: Callable[[tuple[str, ...], str], bool] = field(default=lambda words, text: False, compare=False,
                                                            repr=False)
    """Whether the rule is about this simple command (its words, its text)."""

    def where(self) -> str:
        return f"{self.source}:{self.line}" + (f" ({self.scope})" if self.scope != "file" else "")

    def as_record(self) -> dict[str, Any]:
        return {"owner": self.owner, "decision": self.decision, "pattern": self.pattern, "source": self.source,
                "line": self.line, "scope": self.scope, "order": self.order,
                **({"priority": self.priority} if self.owner == "gemini" else {})}


class RulesError(UsageError):
    """A rule file that cannot be read: its file, line and rule (exit 2)."""


@dataclass
class PartVerdict:
    text: str
    decision: Decision
    rule: Rule | None
    why: str


@dataclass
class Verdict:
    command: str
    decision: Decision
    parts: list[PartVerdict]
    notes: list[str] = field(default_factory=list)

    def as_record(self) -> dict[str, Any]:
        return {"command": self.command, "decision": self.decision, "notes": self.notes,
                "parts": [{"text": part.text, "decision": part.decision, "why": part.why,
                           "rule": part.rule.as_record() if part.rule is not None else None} for part in self.parts]}


@dataclass
class RuleSet:
    owner: str
    rules: list[Rule]
    files: list[str]
    """The files read, in the order read."""
    decide_part: Callable[[RuleSet, tuple[str, ...], str], tuple[Decision, Rule | None, str]]
    """The owner's decision for one simple command: (decision, the deciding rule, why)."""
    dead: list[tuple[Rule, str]] = field(default_factory=list)
    """Rules that can never decide, and why."""
    semantics: str = ""

    def decide(self, command: str) -> Verdict:
        notes: list[str] = []
        parts = split_command(command)
        if parts is None:
            return Verdict(command, "ask", [PartVerdict(command, "ask", None, "swedeck cannot split it into simple "
                                                        "commands (a subshell, a group or unbalanced quotes)")],
                           ["asked without a rule: how the owner would split it is not guessed"])
        if not parts:
            return Verdict(command, "ask", [], ["an empty command"])
        verdicts = []
        for part in parts:
            decision, rule, why = self.decide_part(self, part.words, part.text)
            if decision == "allow" and NEVER_BY_PREFIX.search(part.text):
                decision, why = "ask", ("it substitutes, expands or redirects: no rule allows that in swedeck "
                                        f"(the rule {rule.pattern if rule else ''} would)")
                notes.append("swedeck asks where the owner's rule would allow: a substitution, expansion or "
                             "redirection in a part")
            verdicts.append(PartVerdict(part.text, decision, rule, why))
        if len(parts) > 1:
            notes.append(f"split by swedeck's tokenizer into {len(parts)} simple commands; the strictest decides")
        return Verdict(command, strictest([verdict.decision for verdict in verdicts]), verdicts, notes)
