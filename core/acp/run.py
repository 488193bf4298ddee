"""One ACP session (SPEC §19): `swedeck run --acp PRESET|COMMAND [--headless] -t TASK`.

The agent runs as a child over stdio and speaks ACP version 1 (JSON-RPC 2.0), with the types
of the `agent-client-protocol` package: `initialize` with the capabilities swedeck implements
(`fs/read_text_file`, `fs/write_text_file` in the session's folder; `terminal/*` in swedeck's
environment, `core/acp/terminal.py`),
`session/new`, then `session/prompt` with the task, and with each follow-up the person gives.
Its model traffic goes through `swedeck record`'s endpoint (the child gets the endpoint in the
variables the adapters' SDKs read), so the session's record is exact: every request, answer,
usage and timing (SPEC §18). The record also holds the session (`acp_session`), the person's
words (`acp_prompt`), each permission asked and its answer (`acp_permission`), each tool call
as the agent reported it (`acp_tool`), its terminals (`acp_terminal`), the files it wrote
through swedeck (`acp_write`), and each message of the agent's swedeck could not read
(`acp_unreadable`: said and counted, never a crash).

What the agent does reaches a `Driver`: headless, `Printer` says it as progress lines and
answers permissions by yolo (the agent's allow-once option, never "always"); live,
`core/acp/session.py` turns it into swedeck's events for the live panes and asks the person.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shlex
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import acp
from acp import RequestError, schema
from pydantic import ValidationError

from ..config import EnvironmentConfig, SwedeckConfig
from ..errors import SwedeckError, UsageError
from ..events import PlanEntry
from ..record.recorder import Recorder
from ..record.run import Recording
from ..text import visible
from ..trajectory.files import read_bounded
from ..trajectory.writer import TrajectoryWriter
from .gate import REFUSED_EXIT, AcpGate
from .presets import agent_command
from .terminal import Terminals

READ_LIMIT = 64 << 20
"""The largest file an agent reads through swedeck (`fs/read_text_file`)."""
LINE_LIMIT = 64 << 20
"""The longest line (one JSON-RPC message) read from the agent."""
START_TIMEOUT_S = 120.0
"""How long the agent may stay silent while it answers `initialize` or `session/new` (the wait
starts again at each message or line on stderr it gives)."""


@dataclass(frozen=True)
class Option:
    """A way to answer a permission request, as the agent offers it."""

    option_id: str
    name: str
    kind: str
    """`allow_once`, `allow_always`, `reject_once`, `reject_always`."""


def title_beside(command: str, title: str) -> str | None:
    """The agent's title of a call, when it says something other than the command that runs
    (it is shown beside it, the command first); None when it is the command (Claude Code
    backticks it), empty, or a bare `terminal`."""
    said = title.strip().strip("`").strip()
    return None if said in ("", command, "terminal") else said


def reject_option(options: list[Option]) -> Option | None:
    """A refusal: the agent's reject-once option, else reject-always (None: answered "cancelled")."""
    return next((option for option in options if option.kind == "reject_once"),
                next((option for option in options if option.kind.startswith("reject")), None))


def allow_once(options: list[Option]) -> Option | None:
    """What yolo answers: the agent's allow-once option, else another allow (never a reject)."""
    return next((option for option in options if option.kind == "allow_once"),
                next((option for option in options if option.kind.startswith("allow")), None))


class Driver(Protocol):
    """What swedeck does with what the agent does (headless: `Printer`; live: `AcpSession`)."""

    async def words(self, text: str, thought: bool) -> None: ...
    async def tool_call(self, call_id: str, title: str, command: str | None = None) -> None:
        """A tool call began; `command`: the shell command it runs, when its `rawInput` says."""
    async def tool_done(self, call_id: str, status: str, output: str) -> None: ...
    async def permission(self, call_id: str, title: str, options: list[Option], command: str | None,
                         raw_input: Any) -> Option | None:
        """The answer to a permission request (None: cancelled); `command`: the shell command it
        would run, when the agent says (its `rawInput`), which swedeck's rules decide."""
    async def terminal(self, command: str) -> str | None:
        """Whether a terminal the agent creates may run `command`: None, or why not (it exits 126 with that)."""
    async def write(self, path: str, chars: int) -> str | None:
        """Whether the agent may write `path` through swedeck: None, or why not."""
    async def plan(self, entries: tuple[PlanEntry, ...]) -> None: ...
    async def usage(self, used: int | None, size: int | None) -> None: ...
    def tool_output(self, call_id: str | None, text: str) -> None:
        """A chunk of a terminal's output as it arrives (`call_id`: the tool call showing it, if known)."""
    def note(self, text: str) -> None:
        """Something the person should know that is not the agent's (a message swedeck could not read)."""
    def phase(self, name: str, seconds: float) -> None:
        """A start-up phase reached (`spawn`, `initialize`, `session/new`, `first update`), seconds since the spawn began."""
    async def prompt_ended(self, stop: str) -> str | None:
        """The next words for the agent (a follow-up), or None: the session ends."""


@dataclass
class AcpRun:
    """One session's parts: its record (writer, recorder, endpoint) and the agent's command."""

    spec: str
    command: list[str]
    recording: Recording

    resume: str | None = None
    """The agent's session to load (`session/load`) instead of a new one: a fork (`acp.fork`)."""
    signal: int | None = None
    """The signal that stopped the session (SIGTERM, SIGHUP), if one did."""

    @classmethod
    def open(cls, spec: str, output: str | None, upstream: str | None, cwd: Path | None = None,
             resume: str | None = None) -> AcpRun:
        command = agent_command(spec)
        meta = {"agent": spec, "command": command, "cwd": str(cwd) if cwd else None, "upstream": upstream,
                **({"loaded_session": resume} if resume else {})}
        return cls(spec, command, Recording.open(output, {"acp": meta}, upstream), resume)

    @property
    def writer(self) -> TrajectoryWriter:
        return self.recording.writer

    @property
    def recorder(self) -> Recorder:
        return self.recording.recorder

    def run(self, task: str, cwd: Path, driver: Driver, cancel: Callable[[Callable[[], None]], None] | None = None,
            say: Callable[[str], None] = lambda line: None, environment: EnvironmentConfig | None = None) -> str:
        """The session until the agent's last prompt ends; its stop reason (`error` when it failed).

        `environment` is where the agent's terminals run (swedeck's `environment` section; local
        ones start in the session's folder, `cwd`, as the agent's own tools do)."""
        environment = environment or EnvironmentConfig()
        if environment.environment_class == "local":
            environment = environment.model_copy(update={"cwd": str(cwd)})
        with self.recording.endpoint() as endpoint, tempfile.TemporaryFile() as errors, \
                _unreadable(self.writer, driver) as unreadable:
            command, env = self.recording.child(endpoint, self.command)
            try:
                return asyncio.run(_session(self, command, env, cwd, task, driver, errors, cancel, environment,
                                            unreadable))
            except Exception as error:  # noqa: BLE001 - the agent failed: said with what it printed, and recorded
                errors.seek(0)
                said = errors.read()[-2000:].decode("utf-8", "replace").strip()
                self.writer.add_meta("acp_error", error=f"{type(error).__name__}: {error}", agent_stderr=said)
                say(visible(f"swedeck: the ACP agent failed: {_failure(error)}" + (f"\n{said}" if said else "")))
                return "error"

    def finish(self, stop: str) -> tuple[Path, int]:
        code = 0 if stop == "end_turn" else 128 + self.signal if self.signal is not None else 1
        return self.recording.finish(f"ACP: {stop}", code), code


@dataclass
class AcpResult:
    exit_code: int
    path: Path
    stop_reason: str
    steps: int
    permissions: int


def run_acp(spec: str, task: str, *, cwd: Path, output: str | None = None, upstream: str | None = None,
            say: Callable[[str], None] = lambda line: None, environment: EnvironmentConfig | None = None,
            resume: str | None = None, config: SwedeckConfig | None = None) -> AcpResult:
    """Headless: progress lines; permissions, terminals and writes through the session's gate
    in yolo mode (what `agent.rules` deny is refused, the rest allowed once)."""
    if not task:
        raise UsageError("swedeck run --acp: give the task (-t TEXT)")
    gate = AcpGate.of(config or SwedeckConfig())
    run = AcpRun.open(spec, output, upstream, cwd, resume)
    printer = Printer(say, gate, cwd)
    say(f"swedeck: ACP agent {spec} ({run.command[0]}); record: {run.writer.path}; {run.recording.upstreams.said()}")
    stop = run.run(task, cwd, printer, say=say, environment=environment)
    path, code = run.finish(stop)
    say(f"swedeck: {stop}; {run.recorder.state.steps} model calls, {printer.permissions} permissions asked: {path}")
    return AcpResult(code, path, stop, run.recorder.state.steps, printer.permissions)


SessionUpdate = (schema.UserMessageChunk | schema.AgentMessageChunk | schema.AgentThoughtChunk | schema.ToolCallStart
                 | schema.ToolCallProgress | schema.AgentPlanUpdate | schema.AvailableCommandsUpdate
                 | schema.CurrentModeUpdate | schema.SessionInfoUpdate | schema.UsageUpdate | Any)
"""What `session/update` carries (the package's Protocol names the same union)."""


async def _session(run: AcpRun, command: list[str], env: dict[str, str], cwd: Path, task: str, driver: Driver,
                   errors: IO[bytes], cancel: Callable[[Callable[[], None]], None] | None,
                   environment: EnvironmentConfig, unreadable: Unreadable) -> str:
    # as `asyncio.create_subprocess_exec`, with the transport in hand (closed here, while the loop
    # runs) and lines of any size (a JSON-RPC message is one line; the default limit is 64 KiB)
    loop = asyncio.get_running_loop()
    start = Startup(driver, errors)
    before = _adopt_orphans()
    transport, protocol = await loop.subprocess_exec(  # its own process group: ended whole (a wrapper's child too)
        lambda: asyncio.subprocess.SubprocessStreamProtocol(limit=LINE_LIMIT, loop=loop), *command,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=errors, env=env, cwd=cwd,
        start_new_session=True)
    process = asyncio.subprocess.Process(transport, protocol, loop)
    assert process.stdin is not None and process.stdout is not None
    stopping = _stop_on_signals(run, loop)
    start.reached("spawn")
    client = _Client(cwd, run.writer, driver, Terminals(environment, f"acp-{os.urandom(4).hex()}"))
    client.startup = start
    connection = acp.connect_to_agent(client, _Lines(process.stdout, process.stdin, unreadable))
    try:
        capabilities = schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True)
        init = await start.answer("initialize", connection.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=capabilities,
            client_info=schema.Implementation(name="swedeck", version=_version())), process)
        if init.protocol_version != acp.PROTOCOL_VERSION:
            raise SwedeckError(f"the agent speaks ACP version {init.protocol_version}, swedeck {acp.PROTOCOL_VERSION}")
        can_load = bool(init.agent_capabilities and init.agent_capabilities.load_session)
        if run.resume is not None and not can_load:
            raise SwedeckError("the agent cannot load a session (no loadSession): the fork cannot continue it")

        async def open_session() -> str:
            if run.resume is None:
                return str((await start.answer("session/new", connection.new_session(cwd=str(cwd), mcp_servers=[]),
                                               process)).session_id)
            client.loading = True  # the agent replays the session's history as updates: counted, not new steps
            try:
                await start.answer("session/load", connection.load_session(cwd=str(cwd), session_id=run.resume,
                                                                           mcp_servers=[]), process)
            finally:
                client.loading = False
            return run.resume

        try:
            session_id = await open_session()
        except acp.RequestError as error:  # Codex's adapter: sign in first, with a key the environment holds
            method = _env_auth(init.auth_methods or [], env)
            if method is None:
                raise
            await start.answer("authenticate", connection.authenticate(method_id=method), process)
            run.writer.add_meta("acp_auth", method=method, after=str(error))
            session_id = await open_session()
        info = init.agent_info
        run.writer.add_meta("acp_session", session_id=session_id, protocol_version=init.protocol_version,
                            agent=getattr(info, "name", None), agent_version=getattr(info, "version", None),
                            load_session=can_load, startup_s=dict(start.times),
                            **({"loaded": True, "history_updates": client.replayed} if run.resume else {}))
        if run.resume is not None:
            driver.note(f"continuing the agent's session {session_id} ({client.replayed} updates of its history "
                        "replayed by the agent as it loaded)")
        if cancel is not None:  # the person's interrupt, from another thread: session/cancel
            loop = asyncio.get_running_loop()

            def cancel_prompt() -> None:
                def send() -> None:
                    client.cancelled = True  # permission requests from now on are answered "cancelled"
                    loop.create_task(connection.cancel(session_id=session_id))
                loop.call_soon_threadsafe(send)
            cancel(cancel_prompt)
        words: str | None = task
        stop = "end_turn"
        while words:
            run.writer.add_meta("acp_prompt", text=words)
            client.cancelled = False
            response = await connection.prompt(session_id=session_id, prompt=[acp.text_block(words)])
            stop = str(response.stop_reason)
            words = await driver.prompt_ended(stop)
        return stop
    except asyncio.CancelledError:
        if run.signal is None:
            raise
        return f"stopped by {signal.Signals(run.signal).name}"
    finally:
        for number in stopping:
            loop.remove_signal_handler(number)
        await client.close()
        await connection.close()  # its reader stops; then the pipes are ended here, not by the collector
        process.stdin.close()
        await _end_group(process)
        _end_adopted(before)
        transport.close()


class Startup:
    """An ACP agent's start, phase by phase (spawn, `initialize`, `session/new`, the first update),
    each said with its time since the spawn began. A phase waits `START_TIMEOUT_S` from the
    agent's last sign of life (a message, a line on stderr), not from its start: a slow adapter
    that is still talking is waited for; one that exits or falls silent is said, by phase."""

    def __init__(self, driver: Driver, errors: IO[bytes]) -> None:
        self.driver = driver
        self.errors = errors
        self.began = time.monotonic()
        self.times: dict[str, float] = {}
        self.alive = self.began
        """When the agent last showed it was alive."""

    def reached(self, phase: str) -> None:
        if phase not in self.times:
            self.times[phase] = round(time.monotonic() - self.began, 3)
            self.driver.phase(phase, self.times[phase])

    def activity(self) -> None:
        self.alive = time.monotonic()

    async def answer(self, phase: str, request: Any, process: asyncio.subprocess.Process) -> Any:
        """The agent's answer to a start-up request, or a clear error: it exited, or said nothing for too long."""
        task = asyncio.ensure_future(request)
        stderr = self._stderr_size()
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=min(1.0, START_TIMEOUT_S))
                if done:
                    try:
                        result = task.result()
                    except ConnectionError:  # its output closed: it exited, or is about to
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(process.wait(), 2)
                        how = (f"exited (code {process.returncode})" if process.returncode is not None
                               else "closed its output")
                        raise SwedeckError(f"it {how} before it answered {phase}") from None
                    self.reached(phase)
                    return result
                if process.returncode is not None:
                    raise SwedeckError(f"it exited (code {process.returncode}) before it answered {phase}")
                size = self._stderr_size()
                if size != stderr:
                    stderr = size
                    self.activity()
                if time.monotonic() - self.alive > START_TIMEOUT_S:
                    raise SwedeckError(f"it did not answer {phase} and said nothing for {START_TIMEOUT_S:.0f} s")
        finally:
            task.cancel()

    def _stderr_size(self) -> int:
        try:
            return os.fstat(self.errors.fileno()).st_size
        except (OSError, ValueError):
            return 0


def _stop_on_signals(run: AcpRun, loop: asyncio.AbstractEventLoop) -> list[int]:
    """SIGTERM and SIGHUP end the session as an interrupt does (the agent's group ended, the
    final file written), where the session runs on the main thread (headless)."""
    if threading.current_thread() is not threading.main_thread():
        return []
    task = asyncio.current_task()
    assert task is not None

    def stop(number: int) -> None:
        if run.signal is None:
            run.signal = number
            task.cancel()

    for number in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(number, stop, number)
    return [signal.SIGTERM, signal.SIGHUP]


_PR_SET_CHILD_SUBREAPER = 36


def _parents() -> dict[int, int]:
    """Every process's parent, read from /proc once."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return found


def _adopt_orphans() -> set[int]:
    """swedeck becomes its descendants' subreaper (Linux): a process the agent starts in a session
    of its own (`setsid`), left behind when the agent ends, is swedeck's child then, not init's,
    and ends with the session. Returns swedeck's children before the agent starts."""
    if sys.platform != "linux":
        return set()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        return set()
    me = os.getpid()
    return {pid for pid, parent in _parents().items() if parent == me}


def _end_adopted(before: set[int]) -> None:
    """What the agent left behind and swedeck adopted (not its own children from before): each
    whole tree ended (the local environment's watchdog ends its session's the same way)."""
    if sys.platform != "linux":
        return
    parents, me = _parents(), os.getpid()
    adopted = {pid for pid, parent in parents.items() if parent == me} - before
    tree, frontier = set(adopted), set(adopted)
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier and pid not in tree}
        tree |= frontier
    for victim in tree:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(victim, signal.SIGKILL)
    for pid in adopted:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)


async def _end_group(process: asyncio.subprocess.Process) -> None:
    """The agent, then every process left in its group (an npm wrapper's native child, a tool it
    started): the agent first, alone, so it ends its children its own way (Claude Code's CLI
    writes its session file as it goes); then SIGTERM to the group, then SIGKILL."""
    def group_alive(number: int = 0) -> bool:
        try:
            os.killpg(process.pid, number)
            return True
        except (ProcessLookupError, PermissionError):
            return False

    async def wait_group(seconds: float) -> None:
        deadline = asyncio.get_running_loop().time() + seconds
        while group_alive() and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)

    if process.returncode is None:
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            pass
    await wait_group(3)  # its children, ending as it asked them to
    if group_alive(signal.SIGTERM):
        await wait_group(3)
    group_alive(signal.SIGKILL)
    if process.returncode is None:
        await process.wait()


def _failure(error: Exception) -> str:
    if isinstance(error, SwedeckError):
        return str(error)
    if isinstance(error, ConnectionError):
        return "it ended (or closed its output) before it answered; what it did until then is recorded"
    return f"{type(error).__name__}: {error}"


UNREADABLE_SAID = 20
"""Messages swedeck could not read that are said one by one; the rest are counted."""


class Unreadable:
    """The agent's messages swedeck cannot read: said to the person (the first 20), recorded
    (`acp_unreadable`) and counted; the session goes on."""

    def __init__(self, writer: TrajectoryWriter, driver: Driver) -> None:
        self.writer = writer
        self.driver = driver
        self.count = 0

    def add(self, what: str, detail: str = "") -> None:
        self.count += 1
        self.writer.add_meta("acp_unreadable", what=what, detail=detail[:2000])
        if self.count <= UNREADABLE_SAID:
            self.driver.note(visible(f"the agent sent a message swedeck cannot read ({self.count}): {what}"))
        elif self.count == UNREADABLE_SAID + 1:
            self.driver.note("the agent keeps sending messages swedeck cannot read: counted in the record, no longer said")

    def close(self) -> None:
        if self.count:
            self.writer.add_meta("acp_unreadable_total", count=self.count)


class _Lines:
    """The agent's stdio as the ACP package's `Transport` (one JSON-RPC message a line), read by
    swedeck: a line that is not JSON, and an update of a type the protocol's schema does not
    know, are `Unreadable` here and never reach the package (which would only log them)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, unreadable: Unreadable) -> None:
        self.reader = reader
        self.writer = writer
        self.unreadable = unreadable
        self._sending = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        async with self._sending:
            self.writer.write((json.dumps(message, separators=(",", ":")) + "\n").encode())
            await self.writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._line()
            if line is None:
                return None
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self.unreadable.add("not JSON", line[:2000].decode("utf-8", "replace"))
                continue
            if not isinstance(message, dict):
                self.unreadable.add("not a JSON-RPC message", line[:2000].decode("utf-8", "replace"))
                continue
            if message.get("method") == "session/update" and "id" not in message:
                try:
                    schema.SessionNotification.model_validate(message.get("params"))
                except ValidationError as error:
                    params = message.get("params")
                    update = params.get("update") if isinstance(params, dict) else None
                    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
                    self.unreadable.add(f"session/update of an unknown type {kind!r}" if kind is not None
                                        else "a session/update swedeck cannot read", str(error))
                    continue
            return message

    async def _line(self) -> bytes | None:
        """The next line (None at the end); one longer than `LINE_LIMIT` is skipped, and said."""
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as error:
            return error.partial or None
        except asyncio.LimitOverrunError:
            while True:  # the rest of the line, dropped a limit at a time
                try:
                    await self.reader.readuntil(b"\n")
                    break
                except asyncio.LimitOverrunError as error:
                    await self.reader.readexactly(error.consumed)
                except asyncio.IncompleteReadError:
                    break
            self.unreadable.add(f"a message longer than {LINE_LIMIT >> 20} MiB")
            return b""

    async def close(self) -> None:
        self.writer.close()


class _PackageErrors(logging.Handler):
    """What the ACP package logs of an error in a handler of swedeck's (an exception it answers
    with an internal error): kept off the person's terminal, recorded by its exception."""

    def __init__(self, unreadable: Unreadable) -> None:
        super().__init__(logging.ERROR)
        self.unreadable = unreadable
        self.package = str(Path(acp.__file__).parent)

    def emit(self, record: logging.LogRecord) -> None:
        if not record.pathname.startswith(self.package):
            return
        error = record.exc_info[1] if record.exc_info else None
        method = record.args[0] if isinstance(record.args, tuple) and record.args else None
        self.unreadable.add(f"{method or 'a message'}: {type(error).__name__ if error else 'an error'}",
                            str(error or ""))


@contextmanager
def _unreadable(writer: TrajectoryWriter, driver: Driver) -> Iterator[Unreadable]:
    unreadable = Unreadable(writer, driver)
    handler = _PackageErrors(unreadable)
    logging.getLogger().addHandler(handler)
    try:
        yield unreadable
    finally:
        logging.getLogger().removeHandler(handler)
        unreadable.close()


def _env_auth(methods: list[Any], env: dict[str, str]) -> str | None:
    """An authentication method of the agent's that a variable of the environment satisfies."""
    for method in methods:
        variables = getattr(method, "vars", None)
        if getattr(method, "type", None) == "env_var" and variables and all(
                getattr(variable, "optional", False) or env.get(str(getattr(variable, "name", ""))) for variable in variables):
            return str(method.id)
    return None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("swedeck")
    except PackageNotFoundError:
        return "0"


class Printer:
    """Headless: what the agent does as progress lines; permissions, terminals and writes
    through the gate in yolo mode."""

    def __init__(self, say: Callable[[str], None], gate: AcpGate, cwd: Path) -> None:
        self.say = say
        self.gate = gate
        self.cwd = cwd
        self.permissions = 0
        self._words: list[str] = []

    def _flush(self) -> None:
        text = "".join(self._words).strip()
        self._words.clear()
        if text:
            self.say(visible(f"agent: {text}"))

    async def words(self, text: str, thought: bool) -> None:
        if not thought:
            self._words.append(text)

    async def tool_call(self, call_id: str, title: str, command: str | None = None) -> None:
        self._flush()
        self.say(visible(f"$ {command}" if command else f"tool: {title}"))

    async def tool_done(self, call_id: str, status: str, output: str) -> None:
        self.say(visible(f"  {status}" + (f": {output.strip()[:200]}" if output.strip() else "")))

    async def permission(self, call_id: str, title: str, options: list[Option], command: str | None,
                         raw_input: Any) -> Option | None:
        self.permissions += 1
        beside = title_beside(command, title) if command else None
        shown = f"$ {command}" + (f"  ({beside})" if beside else "") if command else title
        ruling = self.gate.permission("yolo", command)
        if ruling.decision == "deny":
            reject = reject_option(options)
            self.say(visible(f"  permission: {shown} -> {reject.name if reject else 'cancelled'}: {ruling.reason}"))
            return reject
        allow = allow_once(options)
        if allow is not None:
            self.gate.allowed(command, raw_input, self.cwd)
        self.say(visible(f"  permission: {shown} -> {allow.name if allow is not None else 'cancelled (no allow option)'}"))
        return allow

    async def terminal(self, command: str) -> str | None:
        ruling = self.gate.terminal("yolo", command)
        if ruling.decision == "deny":
            self.say(visible(f"  terminal refused: $ {command}: {ruling.reason}"))
            return ruling.reason
        return None

    async def write(self, path: str, chars: int) -> str | None:
        return None

    async def plan(self, entries: tuple[PlanEntry, ...]) -> None:
        self.say(visible("plan: " + "; ".join(f"[{entry.status}] {entry.content}" for entry in entries)))

    async def usage(self, used: int | None, size: int | None) -> None:
        self.say(f"context: {used if used is not None else '?'} / {size if size is not None else '?'} tokens")

    def tool_output(self, call_id: str | None, text: str) -> None:
        return None  # said when the tool call ends

    def note(self, text: str) -> None:
        self.say(f"swedeck: {text}")

    def phase(self, name: str, seconds: float) -> None:
        self.say(f"swedeck: start-up: {name} at {seconds:.2f} s")

    async def prompt_ended(self, stop: str) -> str | None:
        self._flush()
        return None


class _Client(acp.Client):
    """What swedeck answers an ACP agent (the package's `Client`, typed by its schema), handing
    what it does to the driver."""

    def __init__(self, cwd: Path, writer: TrajectoryWriter, driver: Driver, terminals: Terminals) -> None:
        self.cwd = cwd.resolve()
        self.writer = writer
        self.driver = driver
        self.terminals = terminals
        terminals.output = self._terminal_output
        self.loading = False
        """The agent is loading a session (`session/load`): its updates are its history, replayed."""
        self.replayed = 0
        self.cancelled = False
        """The person cancelled the prompt running: every permission asked until it ends is "cancelled"."""
        self._shown_in: dict[str, str] = {}
        """Terminal id -> the tool call that shows it (its `terminal` content)."""
        self._titles: dict[str, str] = {}
        self._inputs: dict[str, Any] = {}
        self.startup: Startup | None = None

    async def close(self) -> None:
        """The terminals the agent left: killed, and recorded as those it released."""
        for terminal_id in sorted(self.terminals.ids):
            terminal = self.terminals.get(terminal_id)
            await self.terminals.release(terminal)
            self.writer.add_meta("acp_terminal", **self.terminals.record(terminal), released_by="swedeck")
        await asyncio.get_running_loop().run_in_executor(None, self.terminals.close)

    async def request_permission(self, session_id: str, tool_call: schema.ToolCallUpdate,
                                 options: list[schema.PermissionOption], **kwargs: Any) -> schema.RequestPermissionResponse:
        offered = [Option(str(option.option_id), str(option.name), str(option.kind)) for option in options]
        title = str(getattr(tool_call, "title", None) or getattr(tool_call, "tool_call_id", ""))
        call_id = str(getattr(tool_call, "tool_call_id", ""))
        after_cancel = self.cancelled
        raw_input = _plain(getattr(tool_call, "raw_input", None)) or self._inputs.get(call_id)
        command = command_of(raw_input)
        chosen = None if after_cancel else await self.driver.permission(call_id, title, offered, command, raw_input)
        if self.cancelled:  # cancelled while the person was asked: the protocol's answer is "cancelled"
            chosen = None
        self.writer.add_meta("acp_permission", tool_call_id=call_id, title=title,
                             options=[{"id": o.option_id, "name": o.name, "kind": o.kind} for o in offered],
                             answer=chosen.option_id if chosen is not None else None,
                             kind=chosen.kind if chosen is not None else "cancelled", command=command,
                             **({"reason": "asked after session/cancel"} if after_cancel else {}))
        if chosen is None:
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(outcome=schema.AllowedOutcome(option_id=chosen.option_id,
                                                                              outcome="selected"))

    async def session_update(self, session_id: str, update: SessionUpdate, **kwargs: Any) -> None:
        kind = getattr(update, "session_update", "")
        if self.startup is not None:
            self.startup.activity()
            self.startup.reached("first update")
        if self.loading:
            self.replayed += 1
            return
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            await self.driver.words(_text(update.content), kind == "agent_thought_chunk")
        elif kind == "tool_call":
            self._terminals_of(update)
            self._titles[str(update.tool_call_id)] = str(update.title)
            self._inputs[str(update.tool_call_id)] = _plain(getattr(update, "raw_input", None))
            await self.driver.tool_call(str(update.tool_call_id), str(update.title),
                                        command_of(self._inputs[str(update.tool_call_id)]))
        elif kind == "tool_call_update":
            call_id = str(update.tool_call_id)
            shown = self._terminals_of(update)
            if getattr(update, "title", None):
                self._titles[call_id] = str(update.title)
            if getattr(update, "status", None) in ("completed", "failed"):
                parts = [_text(getattr(item, "content", item)) for item in update.content or []]
                parts += [terminal.output for terminal in map(self.terminals.find, shown) if terminal is not None]
                output = "\n".join(part for part in parts if part) or _raw_output(getattr(update, "raw_output", None))
                self.writer.add_meta("acp_tool", tool_call_id=call_id, title=self._titles.get(call_id, call_id),
                                     status=str(update.status), output=output,
                                     raw_input=_plain(getattr(update, "raw_input", None)) or self._inputs.get(call_id))
                await self.driver.tool_done(call_id, str(update.status), output)
        elif kind == "plan":
            entries = tuple(PlanEntry(str(entry.content), str(entry.status), str(entry.priority))
                            for entry in update.entries)
            self.writer.add_meta("acp_plan", entries=[{"content": entry.content, "status": entry.status,
                                                       "priority": entry.priority} for entry in entries])
            await self.driver.plan(entries)
        elif kind == "usage_update":
            await self.driver.usage(getattr(update, "used", None), getattr(update, "size", None))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> schema.ReadTextFileResponse:
        try:  # a regular file, bounded: a FIFO the agent made would hang the session, a huge file take its memory
            text = read_bounded(self._inside(path), READ_LIMIT).decode("utf-8", "replace")
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None
        except ValueError as error:
            raise RequestError.invalid_params({"path": path, "reason": str(error)}) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start: start + limit if limit is not None else None])
        return schema.ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> schema.WriteTextFileResponse:
        target = self._inside(path)
        refused = await self.driver.write(str(target), len(content))
        if refused is not None:
            self.writer.add_meta("acp_write", path=str(target), chars=len(content), refused=refused)
            raise RequestError(-32000, f"swedeck refused to write {target}: {refused}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        self.writer.add_meta("acp_write", path=str(target), chars=len(content))
        return schema.WriteTextFileResponse()

    def _inside(self, path: str) -> Path:
        """A file the agent names, inside the session's folder (anywhere else is refused)."""
        target = Path(path) if Path(path).is_absolute() else self.cwd / path
        resolved = target.resolve()
        if resolved != self.cwd and self.cwd not in resolved.parents:
            raise RequestError.invalid_params({"path": path, "reason": "outside the session's folder"})
        return resolved

    def _terminals_of(self, update: Any) -> list[str]:
        """The terminals a tool call shows (`{"type": "terminal", "terminalId": …}` in its content)."""
        found = [str(item.terminal_id) for item in getattr(update, "content", None) or []
                 if getattr(item, "type", None) == "terminal" and getattr(item, "terminal_id", None)]
        for terminal_id in found:
            self._shown_in[terminal_id] = str(update.tool_call_id)
        return found

    def _terminal_output(self, terminal_id: str, text: str) -> None:
        self.driver.tool_output(self._shown_in.get(terminal_id), text)

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: list[schema.EnvVariable] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **kwargs: Any) -> schema.CreateTerminalResponse:
        variables = {str(variable.name): str(variable.value) for variable in env or []}
        refused = await self.driver.terminal(shlex.join([command, *args]) if args else command)
        if refused is not None:  # never run: a terminal that exits as bash does for a command it cannot run
            terminal = self.terminals.refused(command, args, refused, REFUSED_EXIT)
            return schema.CreateTerminalResponse(terminal_id=terminal.terminal_id)
        terminal = await self.terminals.create(command, args, cwd, variables, output_byte_limit)
        return schema.CreateTerminalResponse(terminal_id=terminal.terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> schema.TerminalOutputResponse:
        terminal = self.terminals.get(terminal_id)
        status = (schema.TerminalExitStatus(exit_code=terminal.exit_code, signal=terminal.signal)
                  if terminal.done.is_set() else None)
        return schema.TerminalOutputResponse(output=terminal.output, truncated=terminal.truncated, exit_status=status)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> schema.WaitForTerminalExitResponse:
        terminal = self.terminals.get(terminal_id)
        await terminal.done.wait()
        return schema.WaitForTerminalExitResponse(exit_code=terminal.exit_code, signal=terminal.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> schema.KillTerminalResponse:
        await self.terminals.kill(self.terminals.get(terminal_id))
        return schema.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str,
                               **kwargs: Any) -> schema.ReleaseTerminalResponse:
        terminal = self.terminals.get(terminal_id)
        await self.terminals.release(terminal)
        self.writer.add_meta("acp_terminal", **self.terminals.record(terminal))
        return schema.ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def create_elicitation(self, message: str, mode: schema.ElicitationMode,
                                 **kwargs: Any) -> schema.CreateElicitationResponse:
        """swedeck asks the person nothing on an agent's behalf (ACP's elicitation is unstable): declined."""
        return schema.DeclineElicitationResponse(action="decline")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        return None

    def on_connect(self, conn: acp.Agent) -> None:
        return None


def command_of(raw_input: Any) -> str | None:
    """The shell command a tool call runs, from its `rawInput`: Claude Code's `{"command": "…"}`,
    Codex's `{"command": ["/bin/bash", "-lc", "…"]}`; None when it says none (the readers' rule,
    `chat.shell_command`, for a tool whose input has a command)."""
    from ..trajectory.readers.chat import shell_command

    return shell_command("bash", raw_input) if isinstance(raw_input, dict) else None


RAW_OUTPUT_KEYS = ("formatted_output", "aggregated_output", "output", "stdout")
"""Where an agent that reports a command's output only in `rawOutput` puts it (Codex's adapter)."""


def _raw_output(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict):
        return next((raw[key] for key in RAW_OUTPUT_KEYS if isinstance(raw.get(key), str)), "")
    return ""


def _plain(value: Any) -> Any:
    """A schema value as JSON's own types (what the trajectory keeps)."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if callable(dump) else value


def _text(content: Any) -> str:
    text = getattr(content, "text", None)
    return text if isinstance(text, str) else ""
