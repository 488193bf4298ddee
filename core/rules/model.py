"""Approval rules as their owners define them (SPEC §20): one rule, one rule set, one verdict.

A command is read into its simple commands as bash reads it (`shell_split`: `;`, `&&`, `||`,
`|`, `&`, newlines; quotes, comments and here-documents respected), and each simple command
into the programs it runs (`programs.runs`: behind wrappers, in `bash -c`, `find -exec`).

- **Deny first, everywhere.** Every program the line runs, nested ones too (in a subshell, a
  group, a substitution, behind `env`, `timeout`, `sudo`, `xargs`, in `bash -c`, `find -exec`,
  `find -delete` as `rm`), named as written and by its name (`/bin/rm` is `rm`), is matched
  against the deny rules: one denied program denies the line, in every mode.
- **Then each part** gets the owner's decision (`RuleSet.decide_part`, the owner's own
  precedence). A plain wrapper is decided by what it wraps; a privileged one, `find -exec` and
  a command with code for an interpreter by both, and code (`python -c`) always asks. The
  command's decision is the strictest of its parts' (deny > ask > allow).
- Where swedeck cannot read a command (a subshell, a group, unbalanced quotes) or a part
  substitutes, expands or redirects (`$(…)`, backticks, `${…}`, `>`), or names an array
  subscript bash would evaluate (`printf -v 'a[…]'`), no rule allows it: it asks, and the
  verdict says why, instead of guessing how the owner would read it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import shell_split
from ..errors import UsageError
from . import programs

NEVER_BY_PREFIX = re.compile(r"\$\(|`|>|<\(|<<|\$\{|\$\[|\$_|\$'|\$\"")
"""What no rule allows: substitution, process substitution, redirection into a file,
here-documents, and the expansions a tokenizer does not see as substitutions but the shell
evaluates: any braced parameter expansion (`${_@P}` expands a prompt string, `${x:-$(...)}`,
`${!x}`), arithmetic (`$[...]`, `$((...))`: an array index in it is evaluated), `$_` (the last
argument of the command before: a rule's own argument becomes code), ANSI-C and locale quoting
(`$'\x24(...)'` hides a `$`): always ask."""

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
    firsts: frozenset[str] | None = None
    """The first words a command it matches can start with (None: any), for `RuleSet.candidates`."""

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
    _index: dict[str, list[Rule]] | None = field(default=None, repr=False)
    _anywhere: list[Rule] = field(default_factory=list, repr=False)

    def candidates(self, words: tuple[str, ...], text: str) -> list[Rule]:
        """The rules that can match a simple command, in the order read: those for its first word
        (as split, or as written) and those for any (an index: 20,000 rules decide in bounded time)."""
        if self._index is None:
            index: dict[str, list[Rule]] = {}
            for rule in self.rules:
                if rule.firsts is None:
                    self._anywhere.append(rule)
                else:
                    for first in rule.firsts:
                        index.setdefault(first, []).append(rule)
            self._index = index
        keys = {words[0] if words else "", text.split(maxsplit=1)[0] if text.strip() else ""}
        found = list(self._anywhere)
        for key in keys:
            found += self._index.get(key, [])
        if len(keys) > 1 or self._anywhere:
            found = sorted(set(found), key=lambda rule: rule.order)
        return found

    def decide(self, command: str) -> Verdict:
        split = shell_split.split(command)
        ran = [programs.runs(part.words) for part in split.parts]  # each part's programs, for both passes
        denied = {index: found for index, part in enumerate(split.parts)
                  if (found := self._denied(part, ran[index])) is not None}
        if denied:  # each part as decided, a denied one by its deny; a denied nested program after them
            verdicts = [denied.get(index) or self._part(part, ran[index], []) for index, part in enumerate(split.parts)
                        if not part.nested] if split.error is None and not split.grouped else []
            verdicts += [verdict for index, verdict in denied.items() if split.parts[index].nested
                         or split.error is not None or split.grouped]
            return Verdict(command, "deny", verdicts, ["a program the rules deny runs in it (behind a wrapper, in a "
                                                       "subshell or a substitution too): the line is denied"])
        if split.error is not None:
            return Verdict(command, "ask", [PartVerdict(command, "ask", None, f"swedeck cannot read it: {split.error}")],
                           ["asked without a rule: how the owner would read it is not guessed"])
        if split.grouped:
            return Verdict(command, "ask", [PartVerdict(command, "ask", None, "a subshell, a group, a function or an "
                                                        "arithmetic command: its parts are not decided one by one")],
                           ["asked without a rule: no program in it is denied, and swedeck allows none of it"])
        parts = [(part, ran[index]) for index, part in enumerate(split.parts) if not part.nested]
        if not parts:
            return Verdict(command, "ask", [], ["an empty command"])
        notes: list[str] = []
        verdicts = [self._part(part, runs, notes) for part, runs in parts]
        if len(parts) > 1:
            notes.append(f"split by swedeck's reader into {len(parts)} simple commands; the strictest decides")
        return Verdict(command, strictest([verdict.decision for verdict in verdicts]), verdicts, notes)

    def _denied(self, part: shell_split.Part, ran: list[programs.Run]) -> PartVerdict | None:
        """The part's first program a deny rule names (itself, or what it runs: `ran`), or None."""
        for run in ran:
            for words in programs.deny_forms(run):
                text = part.text if words == part.words else " ".join(words)
                decision, rule, why = self.decide_part(self, words, text)
                if decision == "deny":
                    where = f" (run by {run.via})" if run.via else (" (nested)" if part.nested else "")
                    return PartVerdict(part.text, "deny", rule, why + where)
        return None

    def _part(self, part: shell_split.Part, ran: list[programs.Run], notes: list[str]) -> PartVerdict:
        decision, rule, why = self.decide_part(self, part.words, part.text)
        inner = ran[1:]
        if inner:
            decisions: list[Decision] = []
            reasons = []
            for run in inner:
                if run.code:
                    decisions.append("ask")
                    reasons.append(f"{run.via}: no prefix rule allows what it runs" if run.kind == "exec"
                                   else f"{run.via}: code no rule can read")
                    continue
                inner_decision, inner_rule, inner_why = self.decide_part(self, run.words, run.text)
                decisions.append(inner_decision)
                reasons.append(f"{run.text} ({run.via}): {inner_why}")
            plain = ran[0].program in programs.DECIDED_BY_WHAT_THEY_RUN and all(
                run.kind == "plain" for run in inner)
            combined = strictest(decisions) if plain else strictest([decision, *decisions])
            if combined != decision or plain:
                why = (f"decided by what it runs: {'; '.join(reasons)}" if plain
                       else f"{why}; and what it runs: {'; '.join(reasons)}")
                if decision == "allow" and combined != "allow":
                    notes.append("a rule allows the command, not what it runs (a wrapper, -exec, code): asked")
                decision = combined
        if decision == "allow" and NEVER_BY_PREFIX.search(part.text):
            decision, why = "ask", ("it substitutes, expands or redirects: no rule allows that in swedeck "
                                    f"(the rule {rule.pattern if rule else ''} would)")
            notes.append("swedeck asks where the owner's rule would allow: a substitution, expansion or "
                         "redirection in a part")
        evaluated = programs.evaluates(part.words)
        if decision == "allow" and evaluated is not None:
            decision, why = "ask", f"{evaluated}: no rule allows that in swedeck"
        return PartVerdict(part.text, decision, rule, why)
