"""Each owner's rule files, read with the owner's documented semantics (SPEC §20).

- **Claude Code** (`settings.json`'s `permissions`: `allow`, `ask`, `deny`; user, project and
  local settings). A `Bash(…)` rule: `Bash` or `Bash(*)` is every command; `Bash(npm run
  test:*)` a prefix (the words `npm run test`, then anything); `*` elsewhere matches any
  characters; otherwise the exact command. deny before ask before allow, in any file; no
  match: Claude Code asks. Rules about other tools (`Read(…)`, `WebFetch`) say nothing about
  commands.
- **Codex** (`execpolicy` `.rules` files: `prefix_rule(pattern=[…], decision=…)`). A pattern
  is a list of words, each a string or a list of alternatives, matched against the command's
  first words; every matching rule counts and the strictest wins (`forbidden` > `prompt` >
  `allow`); no match: Codex's approval policy decides, here "ask". Files are Starlark; their
  `prefix_rule` calls are read as Python literals (a file that is more than that is refused).
- **Gemini CLI** (policy TOML, `[[rule]]` with `toolName`, `commandPrefix` or `commandRegex`,
  `decision` `allow` / `deny` / `ask_user`, `priority`): the matching rule of highest priority
  wins, the stricter at a tie; no match: ask.
- **OpenCode** (`opencode.json`'s `permission.bash`: a decision, or patterns to decisions,
  `*` a wildcard): the last matching pattern wins; no match: ask.
"""

from __future__ import annotations

import ast
import json
import os
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .model import STRICTNESS, Decision, Rule, RulesError, RuleSet, strictest

MAX_FILE = 8 << 20
"""A rule file larger than this is refused (bounded time, whatever it holds)."""


def read_rule_file(path: Path) -> str:
    """A rule file's text: UTF-8, with or without a byte-order mark, or UTF-16 with one (an editor
    on Windows writes both)."""
    try:
        if path.stat().st_size > MAX_FILE:
            raise RulesError(f"{path}: larger than {MAX_FILE >> 20} MB: not read")
        data = path.read_bytes()
    except OSError as error:
        raise RulesError(f"{path}: {error.strerror or error}") from None
    encoding = "utf-16" if data.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        raise RulesError(f"{path}: not {encoding.removesuffix('-sig').upper()} text ({error.reason} at byte "
                         f"{error.start})") from None


def _json(path: Path) -> tuple[str, Any]:
    """A JSON settings file: its text (for the rules' lines) and its value."""
    text = read_rule_file(path)
    try:
        return text, json.loads(text)
    except json.JSONDecodeError as error:
        raise RulesError(f"{path}:{error.lineno}:{error.colno}: not JSON: {error.msg}") from None
    except RecursionError:
        raise RulesError(f"{path}: nested too deeply to be a settings file: not read") from None


_LINES: dict[int, tuple[str, int, int]] = {}
"""A text's (id -> (text, position, newlines before it)): the last count, so the rules of a file
are numbered in one pass over it, not one pass each (20,000 rules took 1.1 s in counting)."""


def _line_of(text: str, needle: str, start: int) -> tuple[int, int]:
    """The line of `needle` at or after `start` (1 when not found), and where it was found."""
    found = text.find(needle, start)
    if found < 0:
        found = text.find(needle)
    if found < 0:
        return 1, start
    known = _LINES.get(id(text))
    position, newlines = (known[1], known[2]) if known is not None and known[0] is text and known[1] <= found else (0, 0)
    newlines += text.count("\n", position, found)
    _LINES.clear()
    _LINES[id(text)] = (text, found, newlines)
    return newlines + 1, found + 1


# --- Claude Code ---------------------------------------------------------------------------

CLAUDE_ORDER = ("deny", "ask", "allow")
CLAUDE_DECISIONS: dict[str, Decision] = {"allow": "allow", "ask": "ask", "deny": "deny"}
_BASH = re.compile(r"^Bash(?:\((.*)\))?$", re.S)


def _claude_matcher(inner: str | None) -> Callable[[tuple[str, ...], str], bool] | None:
    if inner is None or inner.strip() in ("", "*"):
        return (lambda words, text: True) if inner is None or inner.strip() == "*" else None
    if inner.endswith(":*"):
        prefix = inner[:-2].split()
        if not prefix:
            return None
        return lambda words, text: list(words[: len(prefix)]) == prefix
    if "*" in inner:
        source = ".*".join(re.escape(piece) for piece in inner.split("*")) + r"\Z"
        compiled: list[re.Pattern[str]] = []  # compiled when first asked (most of 20,000 rules never are)

        def glob(words: tuple[str, ...], text: str) -> bool:
            if not compiled:
                compiled.append(re.compile(source, re.S))
            return compiled[0].match(text) is not None
        return glob
    return lambda words, text: text == inner.strip()


def claude_rules(paths: list[tuple[Path, str]]) -> RuleSet:
    """`paths`: (settings file, scope) in the order read (user, project, local)."""
    rules: list[Rule] = []
    dead: list[tuple[Rule, str]] = []
    for path, scope in paths:
        text, data = _json(path)
        permissions = data.get("permissions") if isinstance(data, dict) else None
        if permissions is None:
            continue
        if not isinstance(permissions, dict):
            raise RulesError(f"{path}: permissions must be an object, not {type(permissions).__name__}")
        at = 0
        for decision_name in ("allow", "ask", "deny"):
            entries = permissions.get(decision_name, [])
            if not isinstance(entries, list):
                raise RulesError(f"{path}: permissions.{decision_name} must be a list")
            for entry in entries:
                line, at = _line_of(text, json.dumps(entry), at)
                if not isinstance(entry, str):
                    raise RulesError(f"{path}:{line}: permissions.{decision_name}: a rule is a string, not {entry!r}")
                decision: Decision = CLAUDE_DECISIONS[decision_name]
                bash = _BASH.match(entry.strip())
                if bash is None:
                    continue  # another tool's rule (Read, Edit, WebFetch, mcp__…): not about commands
                matcher = _claude_matcher(bash.group(1))
                rule = Rule("claude", decision, entry, str(path), line, scope, len(rules),
                            matches=matcher or (lambda words, text: False), firsts=_claude_firsts(bash.group(1)))
                rules.append(rule)
                if matcher is None:
                    dead.append((rule, "an empty pattern matches no command"))
    coverers: dict[str, list[Rule]] = {}  # the rules that can cover a prefix, by its first word ("" : every command)
    for other in rules:
        if other.decision == "allow":
            continue
        other_words = _prefix_words(other.pattern)
        bash = _BASH.match(other.pattern.strip())
        everything = bash is not None and (bash.group(1) is None or bash.group(1).strip() == "*")
        if everything or other_words is not None:
            coverers.setdefault("" if everything else other_words[0], []).append(other)  # type: ignore[index]
    already_dead = {id(dead_rule) for dead_rule, _ in dead}
    for rule in rules:  # an allow or ask rule that a stricter rule always overrides
        if rule.decision == "deny" or id(rule) in already_dead:
            continue
        words = _prefix_words(rule.pattern)
        if words is None:
            continue
        for other in sorted(coverers.get("", []) + coverers.get(words[0], []), key=lambda other: other.order):
            if STRICTNESS[other.decision] > STRICTNESS[rule.decision] and _covers(other.pattern, words):
                dead.append((rule, f"{other.decision} {other.pattern} ({other.where()}) always comes first"))
                break
    return RuleSet("claude", rules, [str(path) for path, _ in paths], _claude_part, dead,
                   "Claude Code: deny, then ask, then allow, across every settings file; no match asks")


def _prefix_words(pattern: str) -> list[str] | None:
    bash = _BASH.match(pattern.strip())
    inner = bash.group(1) if bash else None
    if inner is None or "*" in inner.removesuffix(":*"):
        return None
    return inner.removesuffix(":*").split() or None


def _covers(pattern: str, words: list[str]) -> bool:
    """Whether a rule matches every command that starts with `words` (a prefix or everything)."""
    bash = _BASH.match(pattern.strip())
    inner = bash.group(1) if bash else None
    if inner is None or inner.strip() == "*":
        return True
    if inner.endswith(":*") and "*" not in inner[:-2]:
        prefix = inner[:-2].split()
        return words[: len(prefix)] == prefix
    return False


def _claude_part(rules: RuleSet, words: tuple[str, ...], text: str) -> tuple[Decision, Rule | None, str]:
    candidates = rules.candidates(words, text)
    for decision in CLAUDE_ORDER:
        for rule in candidates:
            if rule.decision == decision and rule.matches(words, text):
                return rule.decision, rule, f"{rule.decision}: {rule.pattern} ({rule.where()})"
    return "ask", None, "no rule matches: Claude Code asks"


def _claude_firsts(inner: str | None) -> frozenset[str] | None:
    """The first word a `Bash(…)` rule's commands start with, when its pattern says (None: any)."""
    if inner is None or not inner.strip():
        return None
    first = inner.removesuffix(":*").split(maxsplit=1)[0] if inner.removesuffix(":*").strip() else ""
    if not first or "*" in first:
        return None
    if inner.endswith(":*") or " " in inner.strip() or "*" not in inner:
        return frozenset({first})
    return None  # `ls*`: a glob inside its first word


# --- Codex execpolicy ----------------------------------------------------------------------

CODEX_DECISIONS: dict[str, Decision] = {"allow": "allow", "prompt": "ask", "forbidden": "deny"}


def codex_rules(paths: list[Path]) -> RuleSet:
    rules: list[Rule] = []
    dead: list[tuple[Rule, str]] = []
    for path in paths:
        text = read_rule_file(path)
        try:
            tree = ast.parse(text, filename=str(path))
        except SyntaxError as error:
            raise RulesError(f"{path}:{error.lineno}:{error.offset}: not a rules file: {error.msg}") from None
        for node in tree.body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                continue  # a docstring
            call = node.value if isinstance(node, ast.Expr) else None
            name = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else None
            if name == "host_executable":
                continue
            if name != "prefix_rule" or not isinstance(call, ast.Call):
                raise RulesError(f"{path}:{node.lineno}: swedeck reads prefix_rule(…) calls only: "
                                 f"{ast.get_source_segment(text, node) or type(node).__name__}"[:300])
            rules.append(_codex_rule(path, text, call, len(rules), dead))
    return RuleSet("codex", rules, [str(path) for path in paths], _codex_part, dead,
                   "Codex execpolicy: every matching prefix rule counts, the strictest wins; no match: "
                   "Codex's approval policy (here: ask)")


def _codex_rule(path: Path, text: str, call: ast.Call, order: int, dead: list[tuple[Rule, str]]) -> Rule:
    where = f"{path}:{call.lineno}"
    try:
        arguments = {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}
    except ValueError:
        raise RulesError(f"{where}: prefix_rule's arguments must be literals") from None
    pattern = arguments.get("pattern")
    decision = arguments.get("decision", "allow")
    if not isinstance(pattern, list) or not pattern:
        raise RulesError(f"{where}: invalid pattern: it must be a non-empty list (Codex: pattern cannot be empty)")
    if decision not in CODEX_DECISIONS:
        raise RulesError(f"{where}: invalid decision: {decision!r} (allow, prompt, forbidden)")
    alternatives: list[list[str]] = []
    for element in pattern:
        choices = element if isinstance(element, list) else [element]
        if not choices or not all(isinstance(choice, str) for choice in choices):
            raise RulesError(f"{where}: invalid pattern element: {element!r}")
        alternatives.append(choices)

    def matches(words: tuple[str, ...], line: str) -> bool:
        return len(words) >= len(alternatives) and all(word in choices for word, choices in zip(words, alternatives, strict=False))

    shown = json.dumps(pattern)
    rule = Rule("codex", CODEX_DECISIONS[decision], shown, str(path), call.lineno, "file", order, matches=matches,
                firsts=frozenset(alternatives[0]))
    for field_name, expected in (("match", True), ("not_match", False)):
        examples = arguments.get(field_name, []) or []
        if not isinstance(examples, list | tuple):
            raise RulesError(f"{where}: invalid {field_name}: {examples!r} (a list of examples)")
        for example in examples:
            if not isinstance(example, str) and not (isinstance(example, list | tuple)
                                                     and all(isinstance(word, str) for word in example)):
                raise RulesError(f"{where}: invalid example in {field_name}: {example!r} "
                                 "(a command line, or a list of its words)")
            words = tuple(example.split()) if isinstance(example, str) else tuple(example)
            if matches(words, " ".join(words)) != expected:
                raise RulesError(f"{where}: the example {example!r} in {field_name} "
                                 f"{'does not match' if expected else 'matches'} the pattern {shown}")
    return rule


def _codex_part(rules: RuleSet, words: tuple[str, ...], text: str) -> tuple[Decision, Rule | None, str]:
    matched = [rule for rule in rules.candidates(words, text) if rule.matches(words, text)]
    if not matched:
        return "ask", None, "no prefix rule matches: Codex's approval policy decides (swedeck: ask)"
    decision = strictest([rule.decision for rule in matched])
    rule = next(rule for rule in matched if rule.decision == decision)
    also = f"; {len(matched) - 1} more match" if len(matched) > 1 else ""
    return decision, rule, f"{decision}: {rule.pattern} ({rule.where()}), the strictest that matches{also}"


# --- Gemini CLI ----------------------------------------------------------------------------

GEMINI_DECISIONS: dict[str, Decision] = {"allow": "allow", "deny": "deny", "ask_user": "ask"}
SHELL_TOOLS = ("run_shell_command", "ShellTool")


GEMINI_TIERS = {"default": 1, "extension": 2, "workspace": 3, "user": 4, "admin": 5}
"""Gemini CLI's policy tiers: a rule's priority is `tier + priority / 1000`, so any rule of a
higher tier outranks every rule of a lower one (`packages/core/src/policy/toml-loader.ts`)."""
_NESTED_QUANTIFIER = re.compile(r"\([^)]*[*+?{].*\)[*+?{]")
"""What Gemini CLI refuses in a `commandRegex` as a catastrophic-backtracking risk (`isSafeRegExp`)."""


def gemini_tier(path: Path, scope: str) -> str:
    """The tier of a policy file: its scope when swedeck found it, else where it lies."""
    if scope in GEMINI_TIERS:
        return scope
    parts = path.resolve().parts
    if "gemini-cli" in parts or "GeminiCli" in parts:
        return "admin"
    home = Path(os.environ.get("HOME") or Path.home()).resolve()
    if path.resolve().is_relative_to(home / ".gemini"):
        return "user"
    if ".gemini" in parts:
        return "workspace"
    return "user"


def gemini_rules(paths: list[tuple[Path, str]]) -> RuleSet:
    """`paths`: (policy file, scope: `user`, `workspace`, `admin`, or `file` to tell by its place)."""
    rules: list[Rule] = []
    dead: list[tuple[Rule, str]] = []
    for path, scope in paths:
        text = read_rule_file(path)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise RulesError(f"{path}: not TOML: {error}") from None
        except RecursionError:
            raise RulesError(f"{path}: nested too deeply to read") from None
        tier = gemini_tier(path, scope)
        entries = data.get("rule", [])
        if not isinstance(entries, list):
            raise RulesError(f"{path}: [[rule]] entries expected")
        at = 0
        for number, entry in enumerate(entries, 1):
            line, at = _line_of(text, "[[rule]]", at)
            if not isinstance(entry, dict):
                raise RulesError(f"{path}:{line}: rule {number} is not a table")
            tool = entry.get("toolName")
            decision = entry.get("decision")
            if decision not in GEMINI_DECISIONS:
                raise RulesError(f"{path}:{line}: rule {number}: decision {decision!r} (allow, deny, ask_user)")
            if tool not in (None, *SHELL_TOOLS):
                continue  # another tool's rule
            priority = entry.get("priority", 0)
            if isinstance(priority, bool) or not isinstance(priority, (int, float)) or not 0 <= priority <= 999:
                raise RulesError(f"{path}:{line}: rule {number}: priority must be a number from 0 to 999 "
                                 f"(Gemini CLI: tier + priority/1000), not {priority!r}")
            prefixes = entry.get("commandPrefix")
            regex = entry.get("commandRegex")
            redirection = bool(entry.get("allowRedirection", entry.get("allow_redirection", False)))
            matcher, shown = _gemini_matcher(prefixes, regex, redirection, f"{path}:{line}: rule {number}")
            listed = [prefixes] if isinstance(prefixes, str) else prefixes if prefixes is not None else None
            rule = Rule("gemini", GEMINI_DECISIONS[decision], shown, str(path), line, tier, len(rules),
                        GEMINI_TIERS[tier] + float(priority) / 1000, matches=matcher,
                        firsts=frozenset(item.split(maxsplit=1)[0] for item in listed) if listed else None)
            rules.append(rule)
    return RuleSet("gemini", rules, [str(path) for path, _ in paths], _gemini_part, dead,
                   "Gemini CLI: the matching rule of highest priority wins, a rule's priority its tier (user above "
                   "workspace) + priority/1000; the stricter at a tie; no match: ask")


def _gemini_matcher(prefixes: Any, regex: Any, redirection: bool,
                    where: str) -> tuple[Callable[[tuple[str, ...], str], bool], str]:
    """As Gemini CLI matches `"command":"…"` in a call's arguments: a prefix by whole words, a
    regex from the command's start; without `allowRedirection`, a command that redirects is
    not matched by an allow rule's prefix (swedeck asks for every redirection anyway)."""
    if prefixes is not None:
        listed = [prefixes] if isinstance(prefixes, str) else prefixes
        if not isinstance(listed, list) or not all(isinstance(item, str) and item for item in listed):
            raise RulesError(f"{where}: commandPrefix must be a string or a list of strings")
        return (lambda words, text: any(text == prefix or text.startswith((prefix + " ", prefix + "\t"))
                                        for prefix in listed)), f"commandPrefix {listed!r}"
    if regex is not None:
        if _NESTED_QUANTIFIER.search(str(regex)) or len(str(regex)) > 1024:
            raise RulesError(f"{where}: commandRegex {regex!r}: nested quantifiers or over 1,024 characters "
                             "(Gemini CLI refuses it too: catastrophic backtracking)")
        try:
            compiled = re.compile(str(regex))
        except re.error as error:
            raise RulesError(f"{where}: commandRegex {regex!r}: {error}") from None
        return (lambda words, text: compiled.match(text) is not None), f"commandRegex {regex!r}"
    return (lambda words, text: True), "every command"


def _gemini_part(rules: RuleSet, words: tuple[str, ...], text: str) -> tuple[Decision, Rule | None, str]:
    matched = [rule for rule in rules.candidates(words, text) if rule.matches(words, text)]
    if not matched:
        return "ask", None, "no rule matches: ask"
    top = max(rule.priority for rule in matched)
    decision = strictest([rule.decision for rule in matched if rule.priority == top])
    rule = next(rule for rule in matched if rule.priority == top and rule.decision == decision)
    return decision, rule, (f"{decision}: {rule.pattern} ({rule.where()}), priority {rule.priority:.3f} "
                            f"({rule.scope} tier), the highest")


# --- OpenCode -------------------------------------------------------------------------------

OPENCODE_DECISIONS: dict[str, Decision] = {"allow": "allow", "ask": "ask", "deny": "deny"}


def opencode_rules(paths: list[Path]) -> RuleSet:
    rules: list[Rule] = []
    for path in paths:
        text, data = _json(path)
        permission = data.get("permission") if isinstance(data, dict) else None
        bash = permission.get("bash") if isinstance(permission, dict) else permission
        if bash is None:
            continue
        entries = {"*": bash} if isinstance(bash, str) else bash
        if not isinstance(entries, dict):
            raise RulesError(f"{path}: permission.bash must be a decision or an object of patterns")
        at = 0
        for pattern, decision in entries.items():
            line, at = _line_of(text, json.dumps(pattern), at)
            if decision not in OPENCODE_DECISIONS:
                raise RulesError(f"{path}:{line}: {pattern!r}: decision {decision!r} (allow, ask, deny)")
            first = pattern.split(maxsplit=1)[0] if pattern.strip() else ""
            literal_first = first and " " in pattern.strip() and not any(mark in first for mark in "*?")
            rules.append(Rule("opencode", OPENCODE_DECISIONS[decision], pattern, str(path), line, "file", len(rules),
                              matches=_glob(pattern), firsts=frozenset({first}) if literal_first else None))
    dead: list[tuple[Rule, str]] = []
    for index, rule in enumerate(rules):  # last match wins: a later `*` leaves nothing to the ones before it
        later = next((other for other in rules[index + 1:] if other.pattern.strip() == "*"), None)
        if later is not None:
            dead.append((rule, f"the later {later.pattern!r} ({later.where()}) matches every command and wins"))
    return RuleSet("opencode", rules, [str(path) for path in paths], _opencode_part, dead,
                   "OpenCode: the last matching pattern wins; no match: ask")


def _glob(pattern: str) -> Callable[[tuple[str, ...], str], bool]:
    """OpenCode's wildcard: `*` any characters, `?` one; everything else literally (`[x]` is no class)."""
    compiled = re.compile("".join(".*" if char == "*" else "." if char == "?" else re.escape(char)
                                  for char in pattern) + r"\Z", re.S)
    return lambda words, text: compiled.match(text) is not None


def _opencode_part(rules: RuleSet, words: tuple[str, ...], text: str) -> tuple[Decision, Rule | None, str]:
    for rule in reversed(rules.candidates(words, text)):
        if rule.matches(words, text):
            return rule.decision, rule, f"{rule.decision}: {rule.pattern!r} ({rule.where()}), the last that matches"
    return "ask", None, "no pattern matches: ask"
