"""Which proposed commands run without asking (SPEC §6.5): the mode, `whitelist_actions`, and
what the person allowed for the rest of the session with `a`.

Like Claude Code's permissions, `a` allows a command *prefix* (`git status`, `pytest`,
`python -m pytest`), not only the exact string. A command runs by such a rule only when
every part of it is allowed: it is split, by a shell tokenizer, on `;`, `&`, `&&`, `||`, `|`,
`|&` and newlines. A part that opens a subshell or a group (`(`, `{`), substitutes
(`$(…)`, backticks, `<(…)`) or redirects into a file always asks. Environment assignments
before a command are part of its rule (`PATH=… ls` is not `ls`), and commands that run other
commands (`bash`, `env`, `sudo`, `xargs`, …) are only ever allowed exactly. So an allowed
`ls` never carries `& touch FILE`, `PATH=evil:$PATH` or `LD_PRELOAD=x.so` along.
"""

from __future__ import annotations

import re

from ..rules.model import NEVER_BY_PREFIX
from ..rules.programs import evaluates
from ..shell_split import split_command

# Tools whose first word says little: their prefix keeps the subcommand.
_TWO_WORDS = {"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv", "poetry",
              "conda", "make", "bun", "dotnet", "gh", "brew", "apt", "apt-get", "systemctl", "hatch", "tox"}
_MODULE_RUNNERS = {"python", "python3"}
_RUNS_OTHERS = {"bash", "sh", "zsh", "dash", "ksh", "env", "sudo", "su", "doas", "xargs", "eval", "exec", "nohup",
                "timeout", "time", "nice", "ionice", "setsid", "stdbuf", "strace", "watch", "command", "builtin",
                "source", ".", "find", "parallel", "chroot", "unshare", "nsenter", "script", "flock"}
"""Commands whose arguments are another command: a prefix rule for them would allow anything."""
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?=")
_RUNS_ANOTHER_OPTION = re.compile(
    r"^(-c|--config(-env)?|--exec(-path)?(=.*)?|--upload-pack(=.*)?|--receive-pack(=.*)?|-u|--ext-diff|--textconv"
    r"|--open-files-in-pager(=.*)?|--to-command(=.*)?|--use-compress-program(=.*)?|-I|--checkpoint-action(=.*)?"
    r"|--info-script(=.*)?|--new-volume-script(=.*)?|--rsh(=.*)?|-e|-o|--run|--pager(=.*)?)$"
    r"|core\.(fsmonitor|pager|sshcommand|hookspath|editor)|pager\.|\.textconv|diff\.external|ProxyCommand",
    re.IGNORECASE)
"""Options and configuration that make a known program run another (`git -c core.pager=…`,
`--upload-pack`, tar's `--to-command`, rsync's `-e`, ssh's `-o ProxyCommand`): a part with one
never runs by a prefix rule made for the program's bare name."""


def _rule_of(words: tuple[str, ...]) -> str | None:
    """The rule a simple command falls under: its assignments and its prefix words (`git
    status`, `python -m pytest`, `FOO=1 pytest`); None for a command that runs others."""
    assignments = []
    rest = list(words)
    while rest and _ASSIGNMENT.match(rest[0]):
        assignments.append(rest.pop(0))
    if not rest:
        return None
    name = rest[0].rsplit("/", 1)[-1] or rest[0]  # /usr/bin/env runs others as env does
    if name in _RUNS_OTHERS:
        return None
    if name in _MODULE_RUNNERS and len(rest) >= 3 and rest[1] == "-m":
        head = rest[:3]
    elif name in _TWO_WORDS and len(rest) >= 2 and not rest[1].startswith("-"):
        head = rest[:2]
    else:
        head = rest[:1]
    return " ".join([*assignments, *head])


def command_prefix(command: str) -> str | None:
    """The rule `a` allows for `command` (`git status`, `python -m pytest`, `FOO=1 pytest`), or
    None when the command is compound, substitutes, redirects or runs other commands (then
    only the exact string is allowed)."""
    if NEVER_BY_PREFIX.search(command):
        return None
    parts = split_command(command)
    if parts is None or len(parts) != 1:
        return None
    return _rule_of(parts[0].words)


class Approvals:
    """What the person allowed for this session: exact commands and prefixes."""

    def __init__(self) -> None:
        self.exact: set[str] = set()
        self.prefixes: set[str] = set()
        self.resolved: dict[str, dict[str, str]] = {}
        """Rule -> what its program resolved to when it was made (`resolution.parse`)."""

    def allow(self, command: str, resolved: dict[str, str] | None = None) -> str:
        """Allow `command`'s prefix (or the command itself), with what its program resolves to now;
        returns what was allowed, for a person."""
        prefix = command_prefix(command)
        if prefix is None:
            self.exact.add(command)
            return command
        self.prefixes.add(prefix)
        if resolved is not None:
            self.resolved[prefix] = resolved
        return f"{prefix} …"

    def programs(self, command: str) -> list[str]:
        """The program names of `command`'s parts (what the shell is asked to resolve)."""
        parts = split_command(command) or []
        names = []
        for part in parts:
            rest = [word for word in part.words if not _ASSIGNMENT.match(word)] or [""]
            if rest[0] and rest[0] not in names:
                names.append(rest[0])
        return names

    def recorded(self, command: str) -> dict[str, str]:
        """What the programs of `command`'s rules resolved to when those rules were made."""
        merged: dict[str, str] = {}
        for part in split_command(command) or []:
            rule = _rule_of(part.words)
            if rule is not None:
                merged.update(self.resolved.get(rule, {}))
        return merged

    def allowed_by(self, command: str) -> str | None:
        """Why `command` runs without asking, part by part (`always allowed: git status …`, or
        `always allowed: ls -la (by ls …); git status (by git status …)`), or None."""
        if command in self.exact:
            return "always allowed: this command"
        if not self.prefixes or NEVER_BY_PREFIX.search(command):
            return None
        parts = split_command(command)
        if not parts:
            return None
        matched = []
        for part in parts:
            rule = _rule_of(part.words)
            if rule is None or rule not in self.prefixes:
                return None
            if any(_RUNS_ANOTHER_OPTION.search(word) for word in part.words[len(rule.split()):]):
                return None  # an option that runs another program never rides on a rule
            if evaluates(part.words) is not None:
                return None  # an array subscript bash evaluates: code, whatever the rule's words
            matched.append((part.text, rule))
        if len(matched) == 1:
            return f"always allowed: {matched[0][1]} …"
        return "always allowed: " + "; ".join(f"{text} (by {rule} …)" for text, rule in matched)
