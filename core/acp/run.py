"""One ACP session, headless (SPEC §19): `swedeck run --acp PRESET|COMMAND --headless -t TASK`.

The agent runs as a child over stdio and speaks ACP version 1 (JSON-RPC 2.0), with the types
of the `agent-client-protocol` package: `initialize` with the capabilities swedeck implements
(`fs/read_text_file`, `fs/write_text_file` in the session's folder; no terminal yet),
`session/new`, then `session/prompt` with the task. Its model traffic goes through `swedeck
record`'s endpoint (the child gets the endpoint in the variables the adapters' SDKs read), so
the session's record is exact: every request, answer, usage and timing (SPEC §18). What the
agent streams (`session/update`) is said as progress lines; `session/request_permission` is
answered by swedeck's mode, headless yolo: the agent's allow-once option, never "always";
each request and its answer is written to the record (`acp_permission`), with the session
(`acp_session`) and the person's words (`acp_prompt`).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SwedeckError, UsageError
from ..record.endpoint import RecordingEndpoint, default_upstream
from ..record.join import note_record
from ..record.live import LiveAnswers
from ..record.recorder import Recorder
from ..record.run import child_environment
from ..record.wire import wire_of
from ..redact import Redactor
from ..text import visible
from ..trajectory.writer import TrajectoryWriter
from .presets import agent_command

START_TIMEOUT_S = 120.0
"""How long the agent may take to answer `initialize` and `session/new`."""


@dataclass
class AcpResult:
    exit_code: int
    path: Path
    stop_reason: str
    steps: int
    permissions: int


def run_acp(spec: str, task: str, *, cwd: Path, output: str | None = None, upstream: str | None = None,
            say: Callable[[str], None] = lambda line: None) -> AcpResult:
    if not task:
        raise UsageError("swedeck run --acp: give the task (-t TEXT)")
    command = agent_command(spec)
    session_id = time.strftime("%Y%m%d-%H%M%S-") + os.urandom(3).hex()
    writer = TrajectoryWriter(output, {"id": session_id, "config": {}, "acp": {"agent": spec, "command": command}},
                              Redactor())
    live = LiveAnswers(writer.path)
    recorder = Recorder(writer, live)
    client = _Client(cwd, writer, say)
    endpoint = RecordingEndpoint(lambda path: default_upstream(upstream, wire_of(path)) + path, recorder)
    with endpoint, tempfile.TemporaryFile() as errors:
        env = {**os.environ, **child_environment(endpoint.base_url)}
        say(f"swedeck: ACP agent {spec} ({command[0]}); record: {writer.path}")
        try:
            stop = asyncio.run(_session(command, env, cwd, task, client, writer, errors))
        except Exception as error:  # noqa: BLE001 - the agent failed: said with what it printed, and recorded
            errors.seek(0)
            said = errors.read()[-2000:].decode("utf-8", "replace").strip()
            writer.add_meta("acp_error", error=f"{type(error).__name__}: {error}", agent_stderr=said)
            stop = "error"
            say(visible(f"swedeck: the ACP agent failed: {type(error).__name__}: {error}"
                        + (f"\n{said}" if said else "")))
    live.close()
    state = recorder.state
    code = 0 if stop == "end_turn" else 1
    path = writer.finish({"exit_status": f"ACP: {stop}", "exit_code": code,
                          "model_name": state.models[0] if state.models else None})
    note_record(path, state.sessions)
    say(f"swedeck: {stop}; {state.steps} model calls, {client.permissions} permissions asked: {path}")
    return AcpResult(code, path, stop, state.steps, client.permissions)


async def _session(command: list[str], env: dict[str, str], cwd: Path, task: str, client: _Client,
                   writer: TrajectoryWriter, errors: Any) -> str:
    import acp
    from acp import schema

    process = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE, stderr=errors, env=env, cwd=cwd)
    try:
        assert process.stdin is not None and process.stdout is not None
        # our methods take the schema types as Any (read by attribute): the package's Protocol names them exactly
        connection = acp.connect_to_agent(client, process.stdin, process.stdout)  # type: ignore[arg-type]
        capabilities = schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False)
        init = await asyncio.wait_for(connection.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=capabilities,
            client_info=schema.Implementation(name="swedeck", version=_version())), START_TIMEOUT_S)
        if init.protocol_version != acp.PROTOCOL_VERSION:
            raise SwedeckError(f"the agent speaks ACP version {init.protocol_version}, swedeck {acp.PROTOCOL_VERSION}")
        session = await asyncio.wait_for(connection.new_session(cwd=str(cwd), mcp_servers=[]), START_TIMEOUT_S)
        info = init.agent_info
        writer.add_meta("acp_session", session_id=session.session_id, protocol_version=init.protocol_version,
                        agent=getattr(info, "name", None), agent_version=getattr(info, "version", None),
                        load_session=bool(init.agent_capabilities and init.agent_capabilities.load_session))
        writer.add_meta("acp_prompt", text=task)
        response = await connection.prompt(session_id=session.session_id, prompt=[acp.text_block(task)])
        client.flush()
        return str(response.stop_reason)
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("swedeck")
    except PackageNotFoundError:
        return "0"


class _Client:
    """What swedeck answers an ACP agent (its `Client` side)."""

    def __init__(self, cwd: Path, writer: TrajectoryWriter, say: Callable[[str], None]) -> None:
        self.cwd = cwd.resolve()
        self.writer = writer
        self.say = say
        self.permissions = 0
        self._words: list[str] = []

    def flush(self) -> None:
        """Say what the agent wrote since its last tool call."""
        text = "".join(self._words).strip()
        self._words.clear()
        if text:
            self.say(visible(f"agent: {text}"))

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        from acp import schema

        self.permissions += 1
        allow = next((option for option in options if option.kind == "allow_once"),
                     next((option for option in options if str(option.kind).startswith("allow")), None))
        title = str(getattr(tool_call, "title", None) or getattr(tool_call, "tool_call_id", ""))
        answer = allow.option_id if allow is not None else None
        self.writer.add_meta("acp_permission", tool_call_id=getattr(tool_call, "tool_call_id", None), title=title,
                             options=[{"id": option.option_id, "name": option.name, "kind": option.kind}
                                      for option in options], answer=answer, how="auto: yolo (headless)")
        self.say(visible(f"  permission: {title} -> {allow.name if allow is not None else 'rejected (no allow option)'}"))
        if allow is None:
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(outcome=schema.AllowedOutcome(option_id=allow.option_id,
                                                                              outcome="selected"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        kind = getattr(update, "session_update", "")
        if kind == "agent_message_chunk":
            self._words.append(_text(update.content))
        elif kind == "agent_thought_chunk":
            return
        elif kind == "tool_call":
            self.flush()
            self.say(visible(f"$ {update.title}"))
        elif kind == "tool_call_update" and getattr(update, "status", None) in ("completed", "failed"):
            shown = " ".join(_text(getattr(item, "content", item)) for item in update.content or []).strip()
            self.say(visible(f"  {update.status}" + (f": {shown[:200]}" if shown else "")))
        elif kind == "plan":
            self.say(visible("plan: " + "; ".join(f"[{entry.status}] {entry.content}" for entry in update.entries)))
        elif kind == "usage_update":
            self.say(f"context: {getattr(update, 'used', '?')} / {getattr(update, 'size', '?')} tokens")

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> Any:
        from acp import schema

        text = self._inside(path).read_text(encoding="utf-8", errors="replace")
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start: start + limit if limit is not None else None])
        return schema.ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        from acp import schema

        target = self._inside(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        self.writer.add_meta("acp_write", path=str(target), chars=len(content))
        return schema.WriteTextFileResponse()

    def _inside(self, path: str) -> Path:
        """A file the agent names, inside the session's folder (anywhere else is refused)."""
        from acp import RequestError

        target = Path(path) if Path(path).is_absolute() else self.cwd / path
        resolved = target.resolve()
        if resolved != self.cwd and self.cwd not in resolved.parents:
            raise RequestError.invalid_params({"path": path, "reason": "outside the session's folder"})
        return resolved

    async def create_terminal(self, *args: Any, **kwargs: Any) -> Any:
        from acp import RequestError

        raise RequestError.method_not_found("terminal/create")

    terminal_output = release_terminal = wait_for_terminal_exit = kill_terminal = create_terminal

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from acp import RequestError

        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, connection: Any) -> None:
        return None


def _text(content: Any) -> str:
    text = getattr(content, "text", None)
    return text if isinstance(text, str) else ""
