"""One persistent bash session driven over a `Channel` (SPEC §8 session semantics).

Each command runs IN the session shell (so `cd`, `export`, variables and functions carry
over) as `eval` inside a function, with stdin from /dev/null, followed by an end marker
carrying its exit status. The marker, not EOF, ends a command, so background jobs that
keep the output open never block.

Stopping a command (timeout, interrupt) must leave the shell alive: the shell traps
SIGUSR1 with `return`, which unwinds the wrapper function once the running program dies,
and `kill_tree.KILL_TREE` kills the command's process tree, found by the `SWEDECK_CMD=<n>` tag
that every program it starts inherits. If the shell still does not come back, it is
restarted (state lost, and the output says so).
"""

from __future__ import annotations

import codecs
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..redact import Redactor
from ..text import split_incomplete_escape
from .base import ExecutionResult, OutputCallback
from .channel import Channel
from .kill_tree import KILL_TREE
from .output import OutputBuffer, clean, limit

QUIET_ENV = {
    "PAGER": "cat", "GIT_PAGER": "cat", "MANPAGER": "cat", "SYSTEMD_PAGER": "", "LESS": "-R",
    "TERM": "dumb", "NO_COLOR": "1", "PIP_PROGRESS_BAR": "off", "PIP_NO_INPUT": "1", "TQDM_DISABLE": "1",
    "GIT_TERMINAL_PROMPT": "0", "DEBIAN_FRONTEND": "noninteractive", "PYTHONUNBUFFERED": "1",
}
"""Tools must not page, prompt or draw progress bars: nobody is there to answer."""

_BOOTSTRAP = """exec 2>&1
set +m +o history
trap '[[ ${FUNCNAME[0]-} ]] && return 137' USR1
"""
_PROTOCOL_NAMES = ("builtin", "printf", "eval", "command", "declare", "trap", "readonly", "export", "unset", "set",
                   "shopt", "echo", "exec", "enable", "type", "hash", "alias", ":", "__swedeck_exec")
"""The names the protocol runs: no function, alias, hashed program or disabled builtin may stand in for them."""
_NEUTRAL = f"POSIXLY_CORRECT=1; \\unset -f {' '.join(_PROTOCOL_NAMES)} 2>/dev/null; \\unset POSIXLY_CORRECT; "
"""Functions named like the protocol's words, removed: in POSIX mode `unset` is a special
builtin, found before any function (a read-only one survives: the report names it)."""
_RUNNER = '__swedeck_exec() { \\builtin eval "$1"; };'
"""Runs one command, in a function so the interrupt trap's `return` ends just it."""


EARLIER_OUTPUT_START = "<printed by background jobs of earlier commands, before this one ran:>\n"
EARLIER_OUTPUT_END = "<end of their output>\n"
"""Around what earlier commands' background jobs printed between two commands, before a command's own output."""


def protocol_line(command: str, command_id: str, secret: str) -> str:
    """One command as the shell reads it (SPEC §8, docs/security.md).

    The command runs in the session's shell; then the shell says how it ended, with nothing
    the command left behind able to speak for it:
    - the markers and the report are printed by `trap -p` in POSIX mode, where `trap`,
      `readonly` and `unset` are special builtins, found before any function; the markers carry
      `secret`, a fresh random one per command, and no program is ever handed it;
    - `PATH` is set to nowhere first, which also empties the hash table, so a disabled builtin
      (`enable -n trap` with a `trap` script on PATH, or `hash -p`) is "not found"; a read-only
      `PATH` or `POSIXLY_CORRECT` prints no marker at all;
    - every protocol word is quoted (`\\trap`), which no alias reaches, and functions named like
      protocol words are removed before the next use (a read-only one is reported);
    - nothing forks after the command, so a stop's kill of what it started never meets the report.
    What the report says is read by `tampered`."""
    s = secret
    sep = "$'\\037'"
    values = sep.join(f'"${{{name}}}"' for name in ("BASHOPTS", "SHELLOPTS", "SWEDECK_CMD@a", "!BASH_CMDS[*]",
                                                   "!BASH_ALIASES[*]"))
    return (f"{_NEUTRAL}{_RUNNER} \\builtin export SWEDECK_CMD={command_id}; "
            f"\\__swedeck_exec {bash_quote(command)} </dev/null; __sd_{s}=$?; "
            f"[[ ${{PATH@a}}${{POSIXLY_CORRECT@a}} == *r* ]] || {{ __sd_{s}_p=$PATH; PATH=/-; POSIXLY_CORRECT=1; "
            f"\\trap \"SDEND{s}:$__sd_{s}\" USR2; \\trap -p USR2; \\readonly -f; \\trap -p DEBUG RETURN; "
            f"\\trap \"R{s}:\"{values} USR2; \\trap -p USR2; \\unset -f {' '.join(_PROTOCOL_NAMES)} 2>/dev/null; "
            f"\\unset POSIXLY_CORRECT; \\builtin enable -n; POSIXLY_CORRECT=1; "
            f"\\trap \"SDOK{s}\" USR2; \\trap -p USR2; \\trap - USR2; \\unset POSIXLY_CORRECT; PATH=$__sd_{s}_p; }}; "
            f"\\builtin unset __sd_{s} __sd_{s}_p; \\builtin export SWEDECK_CMD=idle\n")


_CHECK_WAIT_S = 5.0
"""How long the shell's report may follow its end marker; a report that never comes is tampering."""
_REPORT_PARTS = 5
_NO_STAND_IN = set(_PROTOCOL_NAMES)


def tampered(report: bytes | None, secret: bytes = b"") -> str:
    """What the shell says of itself after a command (`protocol_line`: what it printed between
    its end and closing markers). A command could have made the shell forge later results with
    a DEBUG or RETURN trap and extdebug, a read-only function in a protocol word's place, a
    disabled builtin, a program hashed for one, an alias of one, verbose input or history (which
    show the next line, secret and all, to the command that runs in it), or a read-only
    `SWEDECK_CMD` (later commands' programs tagged as its own). Why the shell cannot be trusted
    ("" when it can)."""
    if report is None:
        return "the command changed the shell so that it no longer reports on itself"
    text = report.decode("utf-8", "replace")
    values = re.search(r"^trap -- 'R" + re.escape(secret.decode()) + r":(.*)' (?:SIG)?USR2$", text, re.MULTILINE | re.DOTALL)
    if values is None or len(values.group(1).split("\x1f")) != _REPORT_PARTS:
        return "the command changed the shell so that its report is garbled"
    bashopts, shellopts, attributes, hashed, aliases = values.group(1).split("\x1f")
    rest = text[: values.start()] + text[values.end():]
    found = []
    if _READONLY_FUNCTION.search(rest):
        found.append("a read-only shell function")
    if any(action != "-" for action in re.findall(r"^trap -- (.*?) (?:DEBUG|RETURN)$", rest, re.MULTILINE)):
        found.append("a DEBUG or RETURN trap")  # POSIX mode lists an unset one as `trap -- - DEBUG`
    disabled = re.findall(r"^enable -n (\S+)$", rest, re.MULTILINE)
    if disabled:
        found.append("builtins disabled (" + ", ".join(disabled) + ")")
    if "extdebug" in bashopts.split(":") or "functrace" in shellopts.split(":"):
        found.append("extdebug or functrace on")
    shown = [option for option in ("verbose", "history") if option in shellopts.split(":")]
    if shown:
        found.append(" and ".join(shown) + " on (the next line would be shown to the command)")
    stand_ins = sorted(_NO_STAND_IN & set(hashed.split()))
    if stand_ins:
        found.append("a program in place of " + ", ".join(stand_ins))
    aliased = sorted(name for name in aliases.split() if name in _NO_STAND_IN or name.startswith("__s"))
    if aliased:
        found.append("an alias for " + ", ".join(aliased))
    if "r" in attributes:
        found.append("SWEDECK_CMD made read-only")
    if re.search(r"not found|readonly variable", rest):
        found.append("a builtin the protocol uses is missing")
    return "the command tampered with the shell (" + "; ".join(found) + ")" if found else ""


_READONLY_FUNCTION = re.compile(r"^(?:declare -f\S*r\S*|readonly -f) \S+$", re.MULTILINE)
"""How bash lists a read-only function (`readonly -f` in POSIX mode)."""


_KILLED_REPORT = re.compile(r"^[^\n]*: line \d+: +\d+ Killed +[^\n]*\n?", re.MULTILINE)
"""bash's report of a program our stop killed: noise to the model, and it echoes the command."""
_STOP_GRACE_S = 2.0
_STOP_ATTEMPTS = 3
_STREAM_INTERVAL_S = 0.05
_STREAM_CHUNK = 16_384
_STREAM_CAP = 2_000_000
"""The UI gets at most this much live; the full (truncated) result follows at the end."""

ShellStarter = Callable[[], Channel]


def bash_quote(text: str) -> str:
    """`$'...'` with every byte outside a safe set escaped: any command text, one line, exact bytes."""
    safe = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-./,:=+@%")
    return "$'" + "".join(chr(b) if b in safe else f"\\x{b:02x}" for b in text.encode()) + "'"


class ShellSession:
    def __init__(self, start_channel: ShellStarter, output_limit: int, redactor: Redactor | None = None):
        self._start_channel = start_channel
        self._output_limit = output_limit
        self._redactor = redactor or Redactor()
        self._nonce = secrets.token_hex(6)
        """Tags the command's processes (`SWEDECK_CMD`, visible to the command) for the stop."""
        self._carry = 64  # longer than any marker, so one split across chunks is still found
        self._counter = 0
        self._since_ticks = -1
        """When the running command began (`boot_ticks`): what started since is its own."""
        self._after_stop = False
        """The last command was stopped: bash reports its jobs as killed at the next one."""
        self._interrupt = threading.Event()
        self._channel: Channel | None = None
        self.shell_pid = 0
        self.setup: list[str] = []
        """Commands replayed after a restart (cwd, exported variables)."""

    # -- life cycle --
    def start(self) -> None:
        self._channel = self._start_channel()
        self._channel.send(_BOOTSTRAP.encode())
        result = self.run("echo $$", timeout=30)
        if result.returncode != 0 or not result.output.strip().isdigit():
            raise RuntimeError(f"the shell did not start: {result.output.strip()[:500]}")
        self.shell_pid = int(result.output.strip())
        for command in self.setup:
            self.run(command, timeout=30)

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def restart(self) -> None:
        self.close()
        self.start()

    def interrupt(self) -> None:
        """Thread-safe: the running `run` notices within one poll interval."""
        self._interrupt.set()

    # -- commands --
    def run(self, command: str, timeout: float, on_output: OutputCallback | None = None) -> ExecutionResult:
        if self._channel is None:
            raise RuntimeError("the environment is not started")
        self._interrupt.clear()
        self._counter += 1
        command_id = f"{self._nonce}-{self._counter}"
        # The end marker is new for every command and only in the line bash reads (never in the
        # environment or on disk): a command cannot print it to fake its own end or exit code.
        # The runner function is defined again each time, so `unset -f` cannot break the next
        # command, and `builtin printf` is not a function a command could have defined.
        secret = secrets.token_hex(8)
        started = time.monotonic()
        self._since_ticks = boot_ticks()
        earlier = self._earlier_output()
        self._channel.send(protocol_line(command, command_id, secret).encode())
        collector = _Collector(self._output_limit, on_output, self._redactor)
        status = self._wait(collector, started, timeout, command_id, _Markers(secret.encode()))
        duration = time.monotonic() - started
        head, tail = collector.buffer.text()
        # bash reports a stopped command's background jobs as killed at its next command too
        stopped = status.returncode is None or self._after_stop
        self._after_stop = status.returncode is None
        text = _drop_kill_reports(clean(head), stopped)
        tail_text = None if tail is None else _drop_kill_reports(clean(tail), stopped)
        dropped_lines = 0
        if tail is not None:
            dropped_lines = max(collector.buffer.total_lines - head.count("\n") - tail.count("\n"), 0)
        output, truncated = limit(text, tail_text, self._output_limit, collector.buffer.elided_bytes, dropped_lines)
        if earlier:  # kept apart from this command's own output, and said to be what it is
            output = f"{EARLIER_OUTPUT_START}{earlier}\n{EARLIER_OUTPUT_END}{output}"
        if status.note:
            output = f"{output}\n{status.note}" if output else status.note
        collector.flush(final=True)
        output, masked = self._redactor.values_counted(output)
        return ExecutionResult(
            output=output, returncode=status.returncode, duration_s=duration,
            timed_out=status.timed_out, interrupted=status.interrupted, truncated=truncated,
            output_chars=collector.buffer.total_bytes, secrets_masked=masked,
        )

    def _earlier_output(self) -> str:
        """What arrived since the last command ended: the output of background jobs earlier
        commands started (`(sleep 2; echo '12 passed') &`), never the next command's own."""
        assert self._channel is not None
        chunks: list[bytes] = []
        size = 0
        while size < _STREAM_CAP:
            chunk = self._channel.recv(0)
            if not chunk:  # nothing more now (None), or the shell is gone (b"": the command's wait says so)
                break
            chunks.append(chunk)
            size += len(chunk)
        if not chunks:
            return ""
        text = clean(b"".join(chunks).decode("utf-8", "replace"))  # masked with the result it joins
        return text if len(text) <= self._output_limit else text[: self._output_limit] + "\n<cut>"

    def _wait(self, collector: _Collector, started: float, timeout: float, command_id: str,
              markers: _Markers) -> _Status:
        marker, checked, closing = markers.end, markers.checked, markers.closing
        deadline = started + timeout
        check_deadline = 0.0
        pending = b""
        stopping: _Status | None = None
        attempts = 0
        stop_deadline = 0.0
        while True:
            assert self._channel is not None
            chunk = self._channel.recv(_STREAM_INTERVAL_S)
            if chunk is None and not self._channel.alive():
                chunk = self._channel.recv(0.1) or b""  # what it printed last, then treat as gone
            if chunk == b"":
                collector.add(pending)
                self._recover()
                return _Status(None, note="<the shell exited; a new session was started, its state is lost>",
                               timed_out=bool(stopping and stopping.timed_out),
                               interrupted=bool(stopping and stopping.interrupted))
            if chunk or check_deadline:
                pending += chunk or b""
                match = marker.search(pending)
                closed = closing.search(pending)
                if match or closed:
                    report = checked.search(pending, match.start()) if match else None
                    if report is None and closed is None:  # the end marker is in; the report follows at once
                        check_deadline = check_deadline or time.monotonic() + _CHECK_WAIT_S
                        if time.monotonic() < check_deadline:
                            continue
                    collector.add(pending[: (match or closed).start()])  # type: ignore[union-attr]
                    tampering = tampered(report.group(2) if report else None, markers.secret)
                    if tampering:
                        self._recover()
                        return _Status(None, note=f"<{tampering}: its exit status and output cannot be trusted; "
                                                  "a new shell session was started, its state is lost>",
                                       timed_out=bool(stopping and stopping.timed_out),
                                       interrupted=bool(stopping and stopping.interrupted))
                    if stopping:
                        return stopping
                    assert match is not None  # a report without an end marker is tampering
                    return _Status(int(match.group(1)))
                # Hold back only what may be the start of a marker split across chunks.
                start = pending.rfind(b"trap", max(len(pending) - self._carry, 0))
                partial = next((len(pending) - size for size in range(min(4, len(pending)), 0, -1)
                                if b"trap".startswith(pending[-size:])), len(pending))
                keep_from = start if start >= 0 else partial
                collector.add(pending[:keep_from])
                pending = pending[keep_from:]
            collector.flush()
            now = time.monotonic()
            if stopping is None and (now >= deadline or self._interrupt.is_set()):
                timed_out = not self._interrupt.is_set()
                stopping = _Status(None, timed_out=timed_out, interrupted=not timed_out)
            if stopping and now >= stop_deadline:
                if attempts == _STOP_ATTEMPTS:
                    collector.add(pending)
                    self._recover()
                    stopping.note = "<the command could not be stopped; a new shell session was started, its state is lost>"
                    return stopping
                attempts += 1
                self._stop(command_id)
                stop_deadline = time.monotonic() + _STOP_GRACE_S

    def _stop(self, command_id: str) -> None:
        assert self._channel is not None
        argv = ["bash", "-c", KILL_TREE, "swedeck-kill", str(self.shell_pid), command_id, str(self._since_ticks),
                "container" if self._channel.orphans_are_ours else "tree"]
        if self._channel.tree_root:
            argv.append(str(self._channel.tree_root))
        try:
            self._channel.run_helper(argv, timeout=20)
        except Exception:  # noqa: BLE001 - the next attempt or the restart handles it
            pass

    def _recover(self) -> None:
        self.close()
        try:
            self.start()
        except RuntimeError:  # once, under load, the new shell said nothing to its first command: a second one
            self.close()
            self.start()


def boot_ticks() -> int:
    """Now, in the clock ticks since boot (USER_HZ, 100 on Linux) that /proc/PID/stat gives start
    times in; -1 where there is no /proc. A program started in the same 10 ms tick as the
    command counts as the command's. A container shares the kernel, so its processes' start
    times count from the same boot."""
    try:
        with open("/proc/uptime", encoding="ascii") as handle:
            return int(float(handle.read().split()[0]) * 100)
    except (OSError, ValueError, IndexError):
        return -1


def _drop_kill_reports(text: str, stopped: bool) -> str:
    return _KILLED_REPORT.sub("", text) if stopped else text


class _Markers:
    """The end of one command as the shell prints it (`protocol_line`): the end marker with the
    exit status, the shell's report on itself, the closing marker; both markers carry the secret
    and are printed by `trap -p` (POSIX mode: `trap -- 'SDEND<secret>:1' USR2`)."""

    def __init__(self, secret: bytes):
        self.secret = secret
        end = rb"trap -- 'SDEND" + secret + rb":(-?\d+)' (?:SIG)?USR2\n"
        closing = rb"trap -- 'SDOK" + secret + rb"' (?:SIG)?USR2\n"
        self.end = re.compile(end)
        self.checked = re.compile(end + rb"(.*?)" + closing, re.DOTALL)
        self.closing = re.compile(closing)


@dataclass
class _Status:
    returncode: int | None
    note: str = ""
    timed_out: bool = False
    interrupted: bool = False


class _Collector:
    """Bounded output plus throttled, capped streaming to the UI."""

    def __init__(self, output_limit: int, on_output: OutputCallback | None, redactor: Redactor):
        self.buffer = OutputBuffer(keep=max(output_limit * 4, 65_536))
        self._on_output = on_output
        self._redactor = redactor
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending: list[str] = []
        self._pending_size = 0
        self._streamed = 0
        self._last_flush = time.monotonic()

    def add(self, data: bytes) -> None:
        if not data:
            return
        self.buffer.add(data)
        if self._on_output is None or self._streamed >= _STREAM_CAP:
            return
        text = self._decoder.decode(data)
        self._pending.append(text)
        self._pending_size += len(text)
        if self._pending_size >= _STREAM_CHUNK:
            self.flush(force=True)

    def flush(self, force: bool = False, final: bool = False) -> None:
        if self._on_output is None or not self._pending:
            return
        if not (force or final or time.monotonic() - self._last_flush >= _STREAM_INTERVAL_S):
            return
        text, cut = "".join(self._pending), ""
        if not final:  # an escape sequence split between reads is sent whole, with the next chunk
            text, cut = split_incomplete_escape(text)
        self._pending, self._pending_size = ([cut], len(cut)) if cut else ([], 0)
        if not text:
            return
        self._last_flush = time.monotonic()
        room = _STREAM_CAP - self._streamed
        if len(text) > room:
            text = text[:room] + "\n<live output capped; the result shows head and tail>\n"
        self._streamed += len(text)
        self._on_output(self._redactor.text(text))
