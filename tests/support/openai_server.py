"""A scripted OpenAI-compatible chat server for tests: real HTTP on 127.0.0.1.

Tests queue `Turn`s; each request to `POST /v1/chat/completions` takes the next turn and
answers it as SSE (when the request says `stream: true`) or as one JSON body. Every
request body is recorded in `server.requests` so tests can assert on what was sent.

    def test_something(openai_server):
        openai_server.script(Turn(text="Let me look", tool_calls=[ToolCallSpec("bash", {"command": "ls"})],
                                  usage=Usage(100, 20)))
        config = model_config(openai_server)
        ...
        assert openai_server.requests[0]["stream"] is True

Streams use chunked transfer encoding, so a `drop_after` turn (the connection closes
mid-body) is a real protocol error for the client, not a clean end of stream.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from swedeck.core.config import ModelConfig, RetryConfig

CONTEXT_LENGTH_EXCEEDED = {
    "error": {
        "message": (
            "This model's maximum context length is 8192 tokens. However, your messages resulted in "
            "9000 tokens. Please reduce the length of the messages."
        ),
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


@dataclass
class Usage:
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }
        if self.cached_tokens:
            out["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        return out


@dataclass
class ToolCallSpec:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    """A dict is sent as JSON; a str is sent verbatim (use it for invalid JSON)."""
    id: str | None = None
    send_id: bool = True
    """False: the call goes out with no `id` at all, as some providers send it."""
    chunks: int = 4
    """How many deltas the arguments are split over."""

    @property
    def arguments_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Turn:
    """One response of the server."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    usage: Usage | None = None
    """None: no usage at all (no usage chunk when streaming, no `usage` in JSON)."""
    chunks: int = 4
    """How many deltas `text` (and `reasoning`) are split over."""
    finish_reason: str | None = None
    """Default: `tool_calls` when there are tool calls, else `stop`."""
    status: int = 200
    body: Any = None
    """The error body (dict -> JSON, str verbatim) when `status` is not 200."""
    headers: dict[str, str] = field(default_factory=dict)
    drop_after: int | None = None
    """Close the connection after this many SSE events (mid-stream, no terminating chunk)."""
    end_after: int | None = None
    """End the body cleanly after this many SSE events, with no `finish_reason` and no
    `[DONE]`: the body has no length and no chunked encoding and ends when the connection
    closes (`Connection: close`), as behind real proxies, so the client sees a normal end."""
    garbage: str | None = None
    """Answer 200 with this body instead of a completion (a proxy's error page, a broken gateway)."""
    hang_s: float = 0.0
    """Sleep this long before answering (longer than the client timeout = a hang)."""
    chunk_delay_s: float = 0.0
    keepalive_s: float = 0.0
    """After the first event, keep the stream open this long with nothing in it: `: ping`
    comments and empty deltas every 0.1 s, as proxies and busy providers do."""
    model: str = "scripted-model"

    @classmethod
    def error(cls, status: int, body: Any = None, headers: dict[str, str] | None = None) -> Turn:
        if body is None:
            body = {"error": {"message": f"scripted error {status}", "type": "server_error", "code": status}}
        return cls(status=status, body=body, headers=headers or {})

    @classmethod
    def rate_limited(cls, retry_after: str = "0") -> Turn:
        body = {"error": {"message": "Rate limit reached", "type": "rate_limit_error", "code": "rate_limit_exceeded"}}
        return cls.error(429, body, {"Retry-After": retry_after})

    @classmethod
    def context_exceeded(cls) -> Turn:
        return cls.error(400, CONTEXT_LENGTH_EXCEEDED)

    @classmethod
    def unauthorized(cls) -> Turn:
        body = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}
        return cls.error(401, body)

    @classmethod
    def bash_text(cls, command: str, before: str = "I will run:", fence: str = "bash", **kwargs: Any) -> Turn:
        """A text-format turn: the content holds one fenced bash block."""
        return cls(text=f"{before}\n\n```{fence}\n{command}\n```\n", **kwargs)

    @classmethod
    def bash_tool(cls, command: str, text: str = "", usage: Usage | None = None, **kwargs: Any) -> Turn:
        """A tool-call turn: one `bash` call with `command`."""
        return cls(text=text, tool_calls=[ToolCallSpec("bash", {"command": command})], usage=usage, **kwargs)


def _split(text: str, parts: int) -> list[str]:
    if not text:
        return []
    parts = max(1, min(parts, len(text)))
    size = -(-len(text) // parts)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _stream_events(turn: Turn, completion_id: str, include_usage: bool) -> list[dict[str, Any]]:
    base = {"id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()), "model": turn.model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": piece}) for piece in _split(turn.reasoning, turn.chunks)]
    events += [chunk({"content": piece}) for piece in _split(turn.text, turn.chunks)]
    for index, call in enumerate(turn.tool_calls):
        head = {"index": index, "type": "function", "function": {"name": call.name, "arguments": ""}}
        if call.send_id:
            head["id"] = call.id or f"call_{completion_id}_{index}"
        events.append(chunk({"tool_calls": [head]}))
        for piece in _split(call.arguments_text, call.chunks):
            events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    finish = turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")
    events.append(chunk({}, finish))
    if turn.usage is not None and include_usage:
        events.append({**base, "choices": [], "usage": turn.usage.to_json()})
    return events


def _completion(turn: Turn, completion_id: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.reasoning:
        message["reasoning_content"] = turn.reasoning
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or f"call_{completion_id}_{index}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_text},
            }
            for index, call in enumerate(turn.tool_calls)
        ]
    out: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": turn.model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")}
        ],
    }
    if turn.usage is not None:
        out["usage"] = turn.usage.to_json()
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        owner = self.server.owner
        owner._record(self.path, dict(self.headers), body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        turn = owner._next_turn(body)
        if turn is None:
            self._send_json(500, {"error": {"message": "openai_server: no scripted turn left", "type": "server_error"}})
            return
        if turn.hang_s and owner._stopping.wait(turn.hang_s):
            return
        if turn.status != 200:
            self._send_json(turn.status, turn.body, turn.headers)
            return
        if turn.garbage is not None:
            self._send_json(200, turn.garbage, {"Content-Type": "text/html"})
            return
        completion_id = f"chatcmpl-{owner._count}"
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(turn, _stream_events(turn, completion_id, include_usage))
        else:
            self._send_json(200, _completion(turn, completion_id), turn.headers)

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, turn: Turn, events: list[dict[str, Any]]) -> None:
        if turn.end_after is not None:
            self._stream_until_close(turn, events[: turn.end_after])
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in turn.headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            for number, event in enumerate(events):
                if turn.drop_after is not None and number >= turn.drop_after:
                    self._drop()
                    return
                if turn.chunk_delay_s and self.server.owner._stopping.wait(turn.chunk_delay_s):
                    return
                if number == 1 and turn.keepalive_s and self._keep_alive(turn.keepalive_s, event):
                    return
                self._write_chunk(f"data: {json.dumps(event)}\n\n".encode())
            if turn.drop_after is not None:
                self._drop()
                return
            self._write_chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True  # the client went away (cancelled): fine, and counted
            with self.server.owner._lock:
                self.server.owner.client_disconnects += 1

    def _keep_alive(self, seconds: float, like: dict[str, Any]) -> bool:
        """Pings and empty deltas for `seconds`; True when the server is stopping."""
        empty = {**like, "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": None}]}
        empty.pop("usage", None)
        end = time.monotonic() + seconds
        ping = True
        while time.monotonic() < end:
            self._write_chunk(b": ping\n\n" if ping else f"data: {json.dumps(empty)}\n\n".encode())
            ping = not ping
            if self.server.owner._stopping.wait(0.1):
                return True
        return False

    def _stream_until_close(self, turn: Turn, events: list[dict[str, Any]]) -> None:
        """A body delimited by closing the connection: a clean end for HTTP, cut short for SSE."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        for name, value in turn.headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            for event in events:
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        self.close_connection = True

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        self.wfile.flush()
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: OpenAIServer


class OpenAIServer:
    """The server; `url` is the api_base (ends with /v1)."""

    def __init__(self) -> None:
        self._turns: deque[Turn] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._count = 0
        self._responder: Callable[[dict[str, Any]], Turn | None] | None = None
        self.requests: list[dict[str, Any]] = []
        """Every request body received, in order."""
        self.request_headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.client_disconnects = 0
        """Streams the client closed before their end (a cancelled query closes its stream)."""
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> OpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def script(self, *turns: Turn) -> OpenAIServer:
        """Queue responses; each request takes the next one."""
        with self._lock:
            self._turns.extend(turns)
        return self

    @property
    def pending(self) -> int:
        """Turns not yet answered."""
        with self._lock:
            return len(self._turns)

    def respond(self, responder: Callable[[dict[str, Any]], Turn | None]) -> OpenAIServer:
        """Answer from the request itself (once the scripted turns are used up): parallel
        sessions (a batch) each get the turn their own conversation calls for."""
        self._responder = responder
        return self

    def _next_turn(self, body: dict[str, Any]) -> Turn | None:
        with self._lock:
            self._count += 1
            if self._turns:
                return self._turns.popleft()
            responder = self._responder
        return responder(body) if responder is not None else None

    def _record(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> None:
        with self._lock:
            self.paths.append(path)
            self.request_headers.append(headers)
            self.requests.append(body)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A started scripted server; stopped after the test."""
    with OpenAIServer() as server:
        yield server


def model_config(
    server: OpenAIServer,
    name: str = "test-model",
    provider: str = "hosted_vllm",
    *,
    attempts: int = 3,
    backoff_min_s: float = 0.01,
    backoff_max_s: float = 0.05,
    timeout_s: float = 10,
    **fields: Any,
) -> ModelConfig:
    """A ModelConfig for `<provider>/<name>` at the server, with tiny retry waits.

    Cost tracking ignores errors (scripted models have no price) unless `fields` says otherwise.
    """
    model_kwargs = {"api_base": server.url, **fields.pop("model_kwargs", {})}
    fields.setdefault("cost_tracking", "ignore_errors")
    return ModelConfig(
        model_name=f"{provider}/{name}",
        model_kwargs=model_kwargs,
        timeout_s=timeout_s,
        retry=RetryConfig(attempts=attempts, backoff_min_s=backoff_min_s, backoff_max_s=backoff_max_s),
        **fields,
    )
