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
trap 'return 137 2>/dev/null' USR1
"""
_RUNNER = '__swedeck_exec() { builtin eval "$1"; };'
"""Runs one command, in a function so the interrupt trap's `return` ends just it."""
_WATCHED_FUNCTIONS = ("builtin", "printf", "eval", "command", "declare", "trap", "readonly", "export", "unset", "set",
                      "shopt", "echo", "exec")
_CHECK = (f"trap -p DEBUG RETURN; builtin printf '\\037'; readonly -f; builtin printf '\\037'; "
          f"declare -F {' '.join(_WATCHED_FUNCTIONS)} 2>/dev/null; "
          "builtin printf '\\037%s\\037%s\\037' \"$BASHOPTS\" \"$SHELLOPTS\"; declare -p SWEDECK_CMD 2>/dev/null; ")
"""After the end marker, in the same line: what a command could have done to the shell to
forge its own result (a DEBUG or RETURN trap with extdebug, a function named `builtin`, a
readonly `__swedeck_exec`, a read-only `SWEDECK_CMD` that would tag later commands' programs
as its own). Checked from the same shell, so it defeats these routes, not a
command written against swedeck's protocol with full knowledge of it (docs/security.md)."""
_CHECK_WAIT_S = 5.0
"""How long the shell's report may follow its end marker; a report that never comes is tampering."""


def tampered(report: bytes | None) -> str:
    """Why the shell cannot be trusted after a command, from its report ("" when it can)."""
    if report is None:
        return "the command changed the shell so that it no longer reports on itself"
    parts = report.split(b"\x1f")
    if len(parts) != 6:
        return "the command changed the shell so that its report is garbled"
    traps, readonly, functions, bashopts, shellopts, tag = (part.decode("utf-8", "replace") for part in parts)
    found = []
    if traps.strip():
        found.append("a DEBUG or RETURN trap")
    if readonly.strip():
        found.append("a read-only shell function")
    if functions.strip():
        found.append("a function named " + ", ".join(functions.split()))
    if "extdebug" in bashopts.split(":") or "functrace" in shellopts.split(":"):
        found.append("extdebug or functrace on")
    flags = tag.split(" ", 2)[1] if tag.startswith("declare -") else ""  # `declare -rx SWEDECK_CMD=…`
    if "r" in flags:
        found.append("SWEDECK_CMD made read-only")
    return "the command tampered with the shell (" + "; ".join(found) + ")" if found else ""


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
        self._carry = 48  # longer than any marker, so one split across chunks is still found
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
        self._channel.send(
            f"{_RUNNER} export SWEDECK_CMD={command_id}; __swedeck_exec {bash_quote(command)} </dev/null; "
            f"builtin printf '\\036SDEND{secret}:%s\\036' \"$?\"; {_CHECK}"
            f"builtin printf '\\036SDOK{secret}\\036'; export SWEDECK_CMD=idle\n".encode()
        )
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
        if status.note:
            output = f"{output}\n{status.note}" if output else status.note
        collector.flush(final=True)
        output, masked = self._redactor.values_counted(output)
        return ExecutionResult(
            output=output, returncode=status.returncode, duration_s=duration,
            timed_out=status.timed_out, interrupted=status.interrupted, truncated=truncated,
            output_chars=collector.buffer.total_bytes, secrets_masked=masked,
        )

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
                    tampering = tampered(report.group(2) if report else None)
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
                start = pending.rfind(b"\x1e", max(len(pending) - self._carry, 0))
                keep_from = start if start >= 0 else len(pending)
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
    """The end of one command as the shell prints it: its end marker with the exit status, then
    the shell's report on itself (`_CHECK`), then the closing marker; all carry the secret."""

    def __init__(self, secret: bytes):
        self.end = re.compile(rb"\x1eSDEND" + secret + rb":(-?\d+)\x1e")
        self.checked = re.compile(rb"\x1eSDEND" + secret + rb":(-?\d+)\x1e(.*?)\x1eSDOK" + secret + rb"\x1e", re.DOTALL)
        self.closing = re.compile(rb"\x1eSDOK" + secret + rb"\x1e")


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
