"""An ACP agent's `terminal/*` requests, run in swedeck's environment (SPEC §19).

A terminal is one command of the agent's, run by swedeck's own session shell (local, or in
swedeck's Docker container), so it is contained and recorded like swedeck's own commands: in a
subshell (`cd`, `export` of the terminal's variables), one at a time in the order asked, with
no timeout of its own (the agent ends it with `terminal/kill`, which is swedeck's interrupt).
Its output streams to the driver as it arrives and is kept up to `output_byte_limit` bytes
(the newest; the cut is at a character's start, as the protocol says).

The environment starts on the first terminal, and closes with the session.
"""

from __future__ import annotations

import asyncio
import itertools
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..config import EnvironmentConfig
from ..environments import Environment, ExecutionResult, get_environment
from ..environments.shell import bash_quote

TERMINAL_TIMEOUT_S = 24 * 3600.0
"""A terminal runs until it ends or the agent kills it; this only bounds a forgotten one."""
DEFAULT_OUTPUT_LIMIT = 16 << 20
"""Bytes of output kept when the agent does not say (`output_byte_limit`)."""


@dataclass
class Terminal:
    terminal_id: str
    command: str
    limit: int
    chunks: list[str] = field(default_factory=list)
    size: int = 0
    truncated: bool = False
    result: ExecutionResult | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    refused: str | None = None
    """Why swedeck never ran it (the rules' deny, the person's no), or None."""

    def add(self, text: str) -> None:
        self.chunks.append(text)
        self.size += len(text.encode("utf-8", "replace"))
        if self.size > 2 * self.limit:  # cut now and then, not at every chunk
            self._cut()

    def _cut(self) -> None:
        if self.size <= self.limit:
            return
        data = "".join(self.chunks).encode("utf-8", "replace")
        kept = data[len(data) - self.limit:] if self.limit else b""
        while kept and (kept[0] & 0xC0) == 0x80:  # not inside a character
            kept = kept[1:]
        self.chunks = [kept.decode("utf-8", "replace")]
        self.size = len(kept)
        self.truncated = True

    @property
    def output(self) -> str:
        self._cut()
        return "".join(self.chunks)

    @property
    def exit_code(self) -> int | None:
        return self.result.returncode if self.result is not None else None

    @property
    def signal(self) -> str | None:
        if self.result is None or self.result.returncode is not None:
            return None
        return "SIGKILL" if self.result.interrupted else "SIGTERM"


def command_line(command: str, args: list[str] | None, cwd: str | None, env: dict[str, str]) -> str:
    """The shell line a terminal runs: in a subshell, so the session shell keeps its state."""
    line = shlex.join([command, *args]) if args else command
    setup = [f"cd -- {bash_quote(cwd)}"] if cwd else []
    setup += [f"export {name}={bash_quote(value)}" for name, value in env.items()]
    return f"( {' && '.join(setup)} && {line} )" if setup else f"( {line} )"


class Terminals:
    """The session's terminals, over one environment made when the first is asked for."""

    def __init__(self, config: EnvironmentConfig, session_id: str,
                 output: Callable[[str, str], None] = lambda terminal_id, text: None) -> None:
        self.config = config
        self.session_id = session_id
        self.output = output
        """Called (on the session's loop) with each chunk of a terminal's output as it arrives."""
        self.environment: Environment | None = None
        self._terminals: dict[str, Terminal] = {}
        self._released: dict[str, Terminal] = {}
        """Released terminals: no longer the agent's to ask about, still shown by their tool call."""
        self._numbers = itertools.count(1)
        self._turn = asyncio.Lock()
        self._running: Terminal | None = None

    async def create(self, command: str, args: list[str] | None, cwd: str | None, env: dict[str, str],
                     limit: int | None) -> Terminal:
        terminal = Terminal(f"term-{next(self._numbers)}", command_line(command, args, cwd, env),
                            limit if limit is not None and limit >= 0 else DEFAULT_OUTPUT_LIMIT)
        self._terminals[terminal.terminal_id] = terminal
        asyncio.get_running_loop().create_task(self._run(terminal))
        return terminal

    def refused(self, command: str, args: list[str] | None, why: str, code: int) -> Terminal:
        """A terminal that never ran: ended at once with `code`, its output why."""
        said = f"swedeck: not run: {why}\n"
        terminal = Terminal(f"term-{next(self._numbers)}", command_line(command, args, None, {}), DEFAULT_OUTPUT_LIMIT)
        terminal.result = ExecutionResult(output=said, returncode=code, duration_s=0.0)
        terminal.refused = why
        terminal.add(said)
        terminal.done.set()
        self._terminals[terminal.terminal_id] = terminal
        return terminal

    @property
    def ids(self) -> set[str]:
        return set(self._terminals)

    def find(self, terminal_id: str) -> Terminal | None:
        """A terminal, released or not (what a tool call shows)."""
        return self._terminals.get(terminal_id) or self._released.get(terminal_id)

    def get(self, terminal_id: str) -> Terminal:
        from acp import RequestError

        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.invalid_params({"terminalId": terminal_id, "reason": "no such terminal"})
        return terminal

    async def _run(self, terminal: Terminal) -> None:
        loop = asyncio.get_running_loop()

        def arrived(text: str) -> None:  # the environment's reader thread
            loop.call_soon_threadsafe(self._arrived, terminal, text)

        async with self._turn:
            try:
                if terminal.done.is_set():  # killed while it waited for its turn
                    return
                self._running = terminal
                environment = await loop.run_in_executor(None, self._environment)
                terminal.result = await loop.run_in_executor(
                    None, lambda: environment.execute(terminal.command, timeout=TERMINAL_TIMEOUT_S, on_output=arrived))
            except Exception as error:  # noqa: BLE001 - the environment failed: the terminal says so, and ends
                self._arrived(terminal, f"swedeck: the environment could not run this: {error}\n")
                terminal.result = ExecutionResult(output="", returncode=127, duration_s=0.0)
            finally:
                self._running = None
                await asyncio.sleep(0)  # the reader's last chunks, handed over by call_soon_threadsafe
                terminal.done.set()

    def _arrived(self, terminal: Terminal, text: str) -> None:
        terminal.add(text)
        self.output(terminal.terminal_id, text)

    def _environment(self) -> Environment:
        if self.environment is None:
            environment = get_environment(self.config, self.session_id)
            environment.start()
            self.environment = environment
        return self.environment

    async def kill(self, terminal: Terminal) -> None:
        if terminal.done.is_set():
            return
        if self._running is terminal and self.environment is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.environment.interrupt_session)
            await terminal.done.wait()
        elif terminal.result is None:  # not started: it never will
            terminal.result = ExecutionResult(output="", returncode=None, duration_s=0.0, interrupted=True)
            terminal.done.set()

    async def release(self, terminal: Terminal) -> None:
        await self.kill(terminal)
        self._released[terminal.terminal_id] = self._terminals.pop(terminal.terminal_id, terminal)

    def close(self) -> None:
        if self.environment is not None:
            self.environment.close()
            self.environment = None

    def record(self, terminal: Terminal) -> dict[str, Any]:
        """What the trajectory keeps of a terminal (`acp_terminal`)."""
        return {"terminal_id": terminal.terminal_id, "command": terminal.command, "exit_code": terminal.exit_code,
                "signal": terminal.signal, "output": terminal.output, "truncated": terminal.truncated,
                "environment": self.config.environment_class,
                **({"refused": terminal.refused} if terminal.refused is not None else {})}
