"""What a name runs, asked of the shell itself (SPEC §6.5, issue 44.6): a rule made for `ls` must
run the `ls` it was made for. An earlier command (approved, or run in yolo mode) can re-route a
name: a function or an alias of that name, `hash -p`, a `PATH` change; or make a known program
run another: `GIT_CONFIG_PARAMETERS`, a repository's `core.fsmonitor` or `core.pager`.

Before a command runs by a rule, the session's shell says what each of its programs resolves to
(`type -t`, `type -P`: a hashed path included) and whether anything makes them run another; the
answer is compared with the one recorded when the rule was made. Anything else asks the person.
The probe is written with `\\builtin` forms that an alias cannot reach; a function named
`builtin` (or any of the names the probe uses) is itself tampering the shell's own report after
every command catches (`environments/shell.py`).
"""

from __future__ import annotations

from collections.abc import Callable

from ..environments.base import Environment

Resolver = Callable[[list[str]], dict[str, str]]
"""Names -> what each resolves to now, one line each (`file /usr/bin/ls`, `function`, ...)."""

RISKY_ENVIRONMENT = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_SSH",
                     "GIT_EXEC_PATH", "GIT_ASKPASS", "BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONSTARTUP",
                     "PYTHONPATH", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT")
"""Variables that make a program run (or load) something other than itself."""
GIT_RISKY_CONFIG = (r"^(core\.(fsmonitor|pager|sshcommand|hookspath|editor|askpass|gitproxy|alternaterefscommand)"
                    r"|alias\..*|pager\..*|diff\..*\.(textconv|command)|diff\.external|filter\..*|merge\..*\.driver"
                    r"|credential\..*|uploadpack\..*|sequence\.editor|gpg\.program|status\.showuntrackedfiles)$")
"""Configuration that makes git run another program (`git config --get-regexp`: git gives the
names in lower case, so the pattern is written in lower case; it has no `-i`)."""


def probe(names: list[str]) -> str:
    """The shell script that reports on `names`: one tab-separated line each, then the risky
    variables set, then (for git) the repository's configuration that runs other programs."""
    lines = [f"for __sd_n in {' '.join(_word(name) for name in names)}; do "
             "\\builtin printf '%s\\t%s\\t%s\\n' \"$__sd_n\" \"$(\\builtin type -t -- \"$__sd_n\" 2>/dev/null)\" "
             "\"$(\\builtin type -P -- \"$__sd_n\" 2>/dev/null)\"; done; \\builtin unset __sd_n",
             "\\builtin shopt -q expand_aliases && \\builtin printf 'option\\texpand_aliases\\n'",
             *(f"[[ -v {name} ]] && \\builtin printf 'variable\\t{name}\\n'" for name in RISKY_ENVIRONMENT)]
    if "git" in names:
        lines.append(f"\\command git config --get-regexp '{GIT_RISKY_CONFIG}' 2>/dev/null"
                     " | \\command sed 's/^/git-config\\t/'")
    return "; ".join(lines) + "; true"


def _word(name: str) -> str:
    return "'" + name.replace("'", "'\\''") + "'"


def resolver(env: Environment) -> Resolver:
    def resolve(names: list[str]) -> dict[str, str]:
        result = env.execute(probe(names), timeout=30)
        return parse(result.output, names) if result.returncode == 0 else {name: "unknown" for name in names}
    return resolve


def parse(output: str, names: list[str]) -> dict[str, str]:
    """Name -> `kind path` (`file /usr/bin/ls`, `function `, `alias `); `!` -> what makes any of
    them run something else (an option, a variable, git configuration), "" when nothing does."""
    found: dict[str, str] = {name: "not found" for name in names}
    risks = []
    for line in output.splitlines():
        fields = line.split("\t")
        if fields[0] in found and len(fields) == 3:
            found[fields[0]] = f"{fields[1] or 'not found'} {fields[2]}".strip()
        elif fields[0] in ("option", "variable", "git-config") and len(fields) >= 2:
            risks.append(f"{fields[0]} {fields[1].split(' ')[0]}")
    found["!"] = ", ".join(risks)
    return found


def changed(before: dict[str, str], now: dict[str, str]) -> str:
    """Why `now` is not what a rule was made for (`ls now resolves to function`), or ""."""
    reasons = []
    for name, was in before.items():
        if name == "!":
            continue
        is_now = now.get(name, "not found")
        if is_now != was:
            reasons.append(f"`{name}` now resolves to {is_now or 'nothing'} (it was {was})")
        elif not is_now.startswith(("file ", "builtin", "keyword")):
            reasons.append(f"`{name}` resolves to {is_now}")
    if now.get("!") and now["!"] != before.get("!"):
        reasons.append(f"something now makes them run another program ({now['!']})")
    return "; ".join(reasons)


def unusual(now: dict[str, str], names: list[str]) -> str:
    """Why programs a rule file allows by name do not run as those names say (a function, an
    alias, a variable or configuration that makes them run another), or ""."""
    reasons = [f"`{name}` resolves to {now.get(name) or 'nothing'}" for name in names
               if not now.get(name, "not found").startswith(("file ", "builtin", "keyword", "not found"))]
    if now.get("!"):
        reasons.append(f"something makes them run another program ({now['!']})")
    return "; ".join(reasons)
