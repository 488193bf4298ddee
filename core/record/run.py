"""`swedeck record -- COMMAND`: the one function both the command line and a front end call.

COMMAND runs as a child in the person's terminal (it keeps its own screen and keys), with the
endpoint's base URL in the variables each client reads, and `{endpoint}` in its arguments
replaced by that URL (for a client that takes it only from its own config: Codex's
`model_providers`, docs/recording.md). The record is followed live from another terminal
with `swedeck replay --follow OUT.traj.jsonl`. When the child ends, the record ends with its
exit status and the final `.traj.json` is written; an interrupt ends the child first, and
the record is never lost.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..redact import Redactor, environment_secrets
from ..trajectory.join import note_record
from ..trajectory.writer import TrajectoryWriter
from .endpoint import TOKEN_VARIABLE, RecordingEndpoint, Upstreams
from .live import LiveAnswers
from .recorder import Recorder
from .wire import wire_of

ENDPOINT_PLACEHOLDER = "{endpoint}"


def child_environment(base_url: str, token: str) -> dict[str, str]:
    """The variables the clients read for their provider's URL, all pointing at the endpoint, and
    the token for a client whose URL is in its command line (it sends it as `TOKEN_HEADER`)."""
    return {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_BASE": base_url,
            "OPENAI_BASE_URL": f"{base_url}/v1", "OPENAI_API_BASE": f"{base_url}/v1",
            "SWEDECK_RECORD_URL": base_url, TOKEN_VARIABLE: token}


CONFIGS: dict[str, str] = {
    "codex": ("codex exec -c model_provider=swedeck -c 'model_providers.swedeck={name=\"swedeck\", "
              "base_url=\"{endpoint}/v1\", env_key=\"OPENAI_API_KEY\", wire_api=\"responses\", "
              "env_http_headers={\"X-Swedeck-Token\"=\"SWEDECK_RECORD_TOKEN\"}}' TASK"),
    "claude": "claude -p TASK  (reads ANTHROPIC_BASE_URL: nothing to add)",
    "mini-swe-agent": "mini -t TASK  (litellm reads OPENAI_API_BASE / ANTHROPIC_API_BASE: nothing to add)",
}
"""`swedeck record --print-config AGENT`: what a client needs beyond the variables (docs/recording.md)."""


@dataclass
class RecordResult:
    exit_code: int
    path: Path
    steps: int
    exchanges: int
    side: int
    errors: int


@dataclass
class Recording:
    """A record being made, the one way `swedeck record` and `swedeck run --acp` make it: its
    writer, the recorder the endpoint reports to, and the answers as they stream."""

    writer: TrajectoryWriter
    recorder: Recorder
    live: LiveAnswers
    upstreams: Upstreams

    @classmethod
    def open(cls, output: str | None, meta: Mapping[str, Any], upstream: str | None,
             environment: Mapping[str, str] | None = None) -> Recording:
        """`environment`: the person's, before swedeck sets its own (its base URL variables say
        where requests go when `upstream` does not)."""
        person = environment if environment is not None else os.environ
        upstreams = Upstreams.of(upstream, person)
        session_id = time.strftime("%Y%m%d-%H%M%S-") + os.urandom(3).hex()
        # the host's secret-named variables' values are masked wherever a record would hold them
        writer = TrajectoryWriter(output, {"id": session_id, "config": {}, **meta,
                                           "upstreams": upstreams.said()}, Redactor(environment_secrets(person)))
        live = LiveAnswers(writer.path, writer.redactor.text)
        return cls(writer, Recorder(writer, live), live, upstreams)

    @property
    def upstream(self) -> str | None:
        return self.upstreams.override

    def endpoint(self) -> RecordingEndpoint:
        """The endpoint for the child, forwarding each wire format to its upstream (not yet listening)."""
        return RecordingEndpoint(lambda path: self.upstreams.url(wire_of(path), path), self.recorder)

    @staticmethod
    def child(endpoint: RecordingEndpoint, command: Sequence[str],
              environment: Mapping[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
        """The child's command (`{endpoint}` replaced) and its environment (the endpoint in its variables)."""
        env = {**(environment if environment is not None else os.environ),
               **child_environment(endpoint.base_url, endpoint.token)}
        return [part.replace(ENDPOINT_PLACEHOLDER, endpoint.origin) for part in command], env

    def finish(self, exit_status: str, exit_code: int) -> Path:
        """The final file, noted for the join with the agent's own file (`trajectory.join`)."""
        self.live.close()
        self.recorder.close()
        state = self.recorder.state
        stats = {"api_calls": state.calls, "prompt_tokens": state.prompt_tokens,
                 "completion_tokens": state.completion_tokens, "instance_cost": 0.0}  # as mini-swe-agent's info has them
        path = self.writer.finish({"exit_status": exit_status, "exit_code": exit_code, "model_stats": stats,
                                   "model_name": state.models[0] if state.models else None})
        note_record(path, state.sessions)
        return path


CHILD_GRACE_S = 10.0
"""How long the agent has to end after it got the signal swedeck got, before it is ended."""


@contextmanager
def _forwarded_signals(process: subprocess.Popen[bytes]) -> Iterator[list[int]]:
    """SIGTERM and SIGHUP to swedeck go to the agent first (it ends its own way, and swedeck waits
    for it to write the record whole); a second one ends it. Yields the signals received."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def forward(number: int, frame: Any) -> None:
        if received and process.poll() is None:
            process.kill()
        received.append(number)
        if process.poll() is None:
            process.send_signal(number)
            ending = threading.Timer(CHILD_GRACE_S, _end, (process,))
            ending.daemon = True
            ending.start()

    before = {number: signal.signal(number, forward) for number in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield received
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def _end(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()


def record(command: Sequence[str], *, output: str | None = None, upstream: str | None = None,
           say: Callable[[str], None] = lambda line: None, environment: Mapping[str, str] | None = None) -> RecordResult:
    if not command:
        raise UsageError("swedeck record: give the agent's command after `--` (swedeck record -- claude -p TASK)")
    recording = Recording.open(output, {"recorder": {"command": list(command),
                                                     "upstream": upstream or "the provider's own"}}, upstream,
                               environment)
    writer = recording.writer
    code = 1
    with recording.endpoint() as endpoint:
        args, env = recording.child(endpoint, command, environment)
        say(f"swedeck record: {writer.path} (follow it: swedeck replay --follow {writer.path}); "
            f"{recording.upstreams.said()}")
        try:
            process = subprocess.Popen(args, env=env)
        except OSError as error:
            recording.live.close()
            writer.close()
            raise UsageError(f"swedeck record: cannot start {command[0]}: {error.strerror or error}") from None
        with _forwarded_signals(process) as received:
            try:
                code = process.wait()
            except KeyboardInterrupt:  # the child got the same Ctrl+C from the terminal; give it a moment
                received.append(signal.SIGINT)
                try:
                    code = process.wait(timeout=CHILD_GRACE_S)
                except subprocess.TimeoutExpired:
                    process.send_signal(signal.SIGTERM)
                    code = process.wait()
    if received:  # ended by a signal to swedeck: the child had it first, the record says which
        name = signal.Signals(received[0]).name
        path = recording.finish(f"Stopped by {name} (the agent exited {code})", 128 + received[0])
        code = 128 + received[0]
    else:
        path = recording.finish("Exited" if code == 0 else f"Exited ({code})", code)
    state = recording.recorder.state
    say(f"swedeck record: the agent exited {code}; {state.steps} steps, {state.exchanges} requests "
        f"({state.side} side calls, {state.errors} with errors): {path}")
    return RecordResult(code, path, state.steps, state.exchanges, state.side, state.errors)
