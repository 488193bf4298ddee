"""The programs a simple command runs, whatever wraps or spells them (SPEC §20).

`runs(words)` gives the command itself (its assignments set aside) and every command it makes
run: behind a process wrapper (`env`, `timeout 5`, `nice -n 5`, `nohup`, `time`, `xargs`,
`watch`, `ionice`, `setsid`, `stdbuf`, `command`, `builtin`, `exec`, `busybox`), behind a
privilege wrapper (`sudo`, `doas`, `su -c`, `chroot`, `nsenter`, `unshare`, `flock`), in a
shell's `-c` string (read as a line of its own), in `find -exec … ;` (and `-delete`, which is
`rm`), and code handed to an interpreter (`python -c`, `node -e`, `perl -e`: no rule can say
what that code runs).

Deny rules are matched against every run, its program named as the rule names it (`/bin/rm`
is `rm`): a denied program anywhere in a line denies the line (Claude Code strips the same
wrappers before its deny rules match). An allow holds only where every run is allowed: a
plain wrapper is decided by what it wraps, a privileged one by both, `find -exec` by `find`
and its command, and code given to an interpreter always asks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import shell_split

ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?=")

_WITH_VALUE: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}),
    "xargs": frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-i", "-L", "-l", "-n",
                        "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"}),
    "watch": frozenset({"-n", "--interval", "-d", "--differences"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "exec": frozenset({"-a"}),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "sudo": frozenset({"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host",
                       "-p", "--prompt", "-R", "--chroot", "-T", "--command-timeout", "-U", "--other-user"}),
    "doas": frozenset({"-u", "-C"}),
    "chroot": frozenset({"--userspec", "--groups"}),
    "nsenter": frozenset({"-t", "--target", "-S", "--setuid", "-G", "--setgid", "-r", "--root", "-w", "--wd"}),
    "unshare": frozenset({"--map-user", "--map-group", "--setuid", "--setgid", "--root", "--wd"}),
    "flock": frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}),
    "setsid": frozenset(),
    "nohup": frozenset(),
    "command": frozenset(),
    "builtin": frozenset(),
    "busybox": frozenset(),
    "taskset": frozenset(),
    "chrt": frozenset(),
    "caffeinate": frozenset(),
    "unbuffer": frozenset(),
    "script": frozenset(),
}
"""A wrapper's options that take a value (`timeout -s KILL 5 rm x`): skipped with their value."""
_POSITIONAL: dict[str, int] = {"timeout": 1, "taskset": 1, "chrt": 1, "chroot": 1, "flock": 1}
"""Arguments a wrapper takes before the command (timeout's duration, chroot's root, flock's lock)."""
PLAIN_WRAPPERS = frozenset({"env", "timeout", "nice", "nohup", "time", "xargs", "watch", "ionice", "setsid", "stdbuf",
                            "command", "builtin", "exec", "busybox", "taskset", "chrt", "caffeinate", "unbuffer"})
"""Run what they wrap as it is: decided by what they wrap."""
PRIVILEGED = frozenset({"sudo", "doas", "chroot", "nsenter", "unshare", "flock", "script"})
"""Change who or where it runs: decided by both (an allowed `sudo` never allows what it wraps)."""
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "su"})
"""Run their `-c` string as a command line (`su -c` too)."""
DECIDED_BY_WHAT_THEY_RUN = PLAIN_WRAPPERS | SHELLS
INTERPRETERS: dict[str, frozenset[str]] = {
    "python": frozenset({"-c"}), "python2": frozenset({"-c"}), "python3": frozenset({"-c"}),
    "pypy": frozenset({"-c"}), "pypy3": frozenset({"-c"}),
    "node": frozenset({"-e", "--eval", "-p", "--print"}), "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "deno": frozenset({"eval"}), "bun": frozenset({"-e", "--eval"}),
    "perl": frozenset({"-e", "-E"}), "ruby": frozenset({"-e"}), "php": frozenset({"-r"}), "lua": frozenset({"-e"}),
    "osascript": frozenset({"-e"}), "pwsh": frozenset({"-c", "-Command"}), "awk": frozenset(),
}
"""Interpreters and the options that hand them code."""
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
SAME_AS = {"unlink": "rm", "shred": "rm"}
"""Programs a deny of another program also names (`Bash(rm:*)` denies `unlink x`)."""


@dataclass(frozen=True)
class Run:
    words: tuple[str, ...]
    """The program and its arguments, as a rule matches them."""
    via: str = ""
    """How the line reaches it (`timeout`, `bash -c`, `find -exec`); "" for the command itself."""
    code: bool = False
    """Code handed to an interpreter (`python -c …`), or what `find -exec`/`-delete` runs: no
    prefix rule allows it (its words still meet the deny rules)."""
    kind: str = ""
    """The wrapper it is under: `plain`, `privileged`, `exec` (find's), or "" at the top."""

    @property
    def program(self) -> str:
        return program_name(self.words[0]) if self.words else ""

    @property
    def text(self) -> str:
        import shlex

        return shlex.join(self.words)


def program_name(word: str) -> str:
    """A program as a rule names it: `/usr/bin/rm` is `rm`."""
    return word.rsplit("/", 1)[-1] or word


def strip_assignments(words: tuple[str, ...]) -> tuple[str, ...]:
    index = 0
    while index < len(words) and ASSIGNMENT.match(words[index]):
        index += 1
    return words[index:]


def _skip_options(name: str, rest: list[str]) -> list[str]:
    """What a wrapper runs: its own options, assignments (`env`) and leading arguments skipped."""
    values = _WITH_VALUE.get(name, frozenset())
    while rest:
        word = rest[0]
        if word == "--":
            rest = rest[1:]
            break
        if name == "env" and ASSIGNMENT.match(word):
            rest = rest[1:]
            continue
        if word.startswith("-") and len(word) > 1:
            rest = rest[1:]
            if word in values and rest:
                rest = rest[1:]
            continue
        break
    return rest[_POSITIONAL.get(name, 0):] if name in _POSITIONAL else rest


def runs(words: tuple[str, ...], depth: int = 0) -> list[Run]:
    """The command (first) and every command it makes run."""
    words = strip_assignments(words)
    while words and words[0] in shell_split.RESERVED_FIRST - {"{", "}"}:  # `do rm x`, `! rm x`, `then …`
        words = words[1:]
    if not words:
        return []
    found = [Run(words)]
    if depth > 8:
        return found
    name = program_name(words[0])
    rest = list(words[1:])
    if name in PLAIN_WRAPPERS or name in PRIVILEGED:
        if name == "env" and any(word in ("-S", "--split-string") or word.startswith("--split-string=")
                                 for word in rest):
            return [*found, Run(tuple(rest), via="env -S", code=True, kind="plain")]
        inner = tuple(_skip_options(name, rest))
        if name == "busybox" and not inner:
            return found
        kind = "privileged" if name in PRIVILEGED else "plain"
        for run in runs(inner, depth + 1):
            found.append(Run(run.words, via=f"{name}{' → ' + run.via if run.via else ''}", code=run.code,
                             kind=run.kind if run.kind == "privileged" else kind))
        return found
    if name in SHELLS:
        for index, word in enumerate(rest):
            if word == "-c" or (word.startswith("-") and not word.startswith("--") and "c" in word[1:]):
                if index + 1 < len(rest):
                    found += _line_runs(rest[index + 1], f"{name} -c", depth)
                else:
                    found.append(Run(tuple(rest), via=f"{name} -c", code=True, kind="plain"))
                break
        else:
            if rest and not rest[0].startswith("-"):  # `bash script.sh`: the script's commands are not read
                found.append(Run((rest[0],), via=f"{name} SCRIPT", code=True, kind="plain"))
        return found
    if name in INTERPRETERS:
        flags = INTERPRETERS[name]
        if any(word in flags or any(word.startswith(flag) and len(flag) == 2 and len(word) > 2 for flag in flags)
               for word in rest):
            found.append(Run(words, via=f"{name} code", code=True, kind="plain"))
        return found
    if name == "find":
        index = 0
        while index < len(rest):
            word = rest[index]
            if word in _FIND_EXEC:
                end = index + 1
                while end < len(rest) and rest[end] not in (";", "+"):
                    end += 1
                for run in runs(tuple(rest[index + 1:end]), depth + 1):  # never allowed by a prefix (Claude Code)
                    found.append(Run(run.words, via=f"find {word}", code=True, kind="exec"))
                index = end + 1
                continue
            if word == "-delete":
                found.append(Run(("rm", *[item for item in rest if not item.startswith("-")][:1]), via="find -delete",
                                 code=True, kind="exec"))
            index += 1
        return found
    return found


def _line_runs(line: str, via: str, depth: int) -> list[Run]:
    """The runs of a command line handed to a shell (`bash -c LINE`): every simple command of it."""
    split = shell_split.split(line)
    if split.error is not None or split.grouped or split.substitutes:
        found = [Run(("-c", line), via=via, code=True, kind="plain")]  # asks; its readable parts are still denied
    else:
        found = []
    for part in split.parts:
        for run in runs(part.words, depth + 1):
            found.append(Run(run.words, via=f"{via}{' → ' + run.via if run.via else ''}", code=run.code,
                             kind=run.kind or "plain"))
    return found


def deny_forms(run: Run) -> list[tuple[str, ...]]:
    """A run's words as deny rules are matched against them: as written, by the program's name
    (`/bin/rm` is `rm`), and by the program it is the same as (`unlink` is `rm`)."""
    name = run.program
    forms = [run.words]
    for other in (name, SAME_AS.get(name)):
        if other is not None and (other, *run.words[1:]) not in forms:
            forms.append((other, *run.words[1:]))
    return forms


_NAMES_TAKEN = frozenset({"printf", "read", "test", "[", "[[", "declare", "typeset", "local", "export", "readonly",
                          "unset", "mapfile", "readarray", "getopts", "wait", "let", "eval", "source",
                          "."})
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def evaluates(words: tuple[str, ...]) -> str | None:
    """Why bash would evaluate something a simple command names as code, or None: an array
    subscript where a builtin takes a variable's name (`printf -v 'a[$(…)]'`, `read`, `test -v`,
    `declare`), `[[`'s arithmetic comparisons (their operands' values are evaluated), `let`."""
    words = strip_assignments(words)
    if not words:
        return None
    name = words[0]
    if name not in _NAMES_TAKEN:
        return None
    if name in ("let", "eval", "source", "."):
        return f"{name} runs what it is given"
    if name == "[[" and any(word in _ARITHMETIC_TESTS or word == "-v" for word in words[1:]):
        return "[[ evaluates the operands of an arithmetic test (an array subscript in them runs)"
    if any("[" in word for word in words[1:] if word not in ("]", "]]")):
        return f"{name} takes a variable's name here, and bash evaluates an array subscript in it"
    return None


STATE_CHANGERS = frozenset({"cd", "pushd", "popd", "export", "source", ".", "hash", "alias", "unalias", "enable", "set",
                            "shopt", "declare", "typeset", "local", "readonly", "unset", "eval", "read", "mapfile",
                            "readarray", "trap", "umask", "ulimit", "builtin", "command", "exec", "function"})
"""Builtins that change what the shell's later commands resolve to or where they run."""


def changes_state(words: tuple[str, ...]) -> bool:
    """Whether a simple command can change the state later commands run in: a directory, a
    variable (`PATH`, `GIT_DIR`), a function, an alias, an option (`printf -v` sets a variable)."""
    if words and all(ASSIGNMENT.match(word) for word in words):
        return True
    rest = strip_assignments(words)
    if not rest:
        return False
    name = rest[0]
    return name in STATE_CHANGERS or (name == "printf" and "-v" in rest[1:]) or name.endswith("()")
