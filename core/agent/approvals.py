"""Which proposed commands run without asking (SPEC §6.5): the mode, `whitelist_actions`, and
what the person allowed for the rest of the session with `a`.

Like Claude Code's permissions, `a` allows a command *prefix* (`git status`, `pytest`,
`python -m pytest`), not only the exact string. A compound command (`&&`, `||`, `;`, `|`,
newlines) runs without asking only when every part of it is allowed, and one with command
substitution (`$(…)`, backticks) or redirection into a file always asks, so an allowed
`git status` never carries `&& rm -rf ~` along.
"""

from __future__ import annotations

import re
import shlex

# Tools whose first word says little: their prefix keeps the subcommand.
_TWO_WORDS = {"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv", "poetry",
              "conda", "make", "bun", "dotnet", "gh", "brew", "apt", "apt-get", "systemctl", "hatch", "tox"}
_MODULE_RUNNERS = {"python", "python3"}
_SPLIT = re.compile(r"&&|\|\||;|\||\n")
_NEVER_BY_PREFIX = re.compile(r"\$\(|`|>|<\(")


def command_prefix(command: str) -> str | None:
    """The prefix `a` allows for `command` (`git status`, `python -m pytest`, `ls`), or None
    when the command is compound or substitutes or redirects (then only the exact string)."""
    if _NEVER_BY_PREFIX.search(command) or len(_parts(command)) != 1:
        return None
    return _prefix_of(command)


def _prefix_of(part: str) -> str | None:
    try:
        words = shlex.split(part)
    except ValueError:
        return None
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):  # VAR=value before the command
        words = words[1:]
    if not words:
        return None
    if words[0] in _MODULE_RUNNERS and len(words) >= 3 and words[1] == "-m":
        return " ".join(words[:3])
    if words[0] in _TWO_WORDS and len(words) >= 2 and not words[1].startswith("-"):
        return " ".join(words[:2])
    return words[0]


def _parts(command: str) -> list[str]:
    return [part.strip() for part in _SPLIT.split(command) if part.strip()]


class Approvals:
    """What the person allowed for this session: exact commands and prefixes."""

    def __init__(self) -> None:
        self.exact: set[str] = set()
        self.prefixes: set[str] = set()

    def allow(self, command: str) -> str:
        """Allow `command`'s prefix (or the command itself); returns what was allowed, for a person."""
        prefix = command_prefix(command)
        if prefix is None:
            self.exact.add(command)
            return command
        self.prefixes.add(prefix)
        return f"{prefix} …"

    def allowed_by(self, command: str) -> str | None:
        """Why `command` runs without asking (`always allowed: git status …`), or None."""
        if command in self.exact:
            return "always allowed: this command"
        if not self.prefixes or _NEVER_BY_PREFIX.search(command):
            return None
        matched = []
        for part in _parts(command):
            prefix = _prefix_of(part)
            if prefix is None or prefix not in self.prefixes:
                return None
            matched.append(prefix)
        return "always allowed: " + ", ".join(f"{prefix} …" for prefix in dict.fromkeys(matched)) if matched else None
