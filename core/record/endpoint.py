"""The recording endpoint (SPEC §18): an HTTP server on 127.0.0.1 for one child process.

Every request must start with the run's token (`/t/<token>/…`, in the base URL the child is
given), so no other local process can reach the person's provider through it. The rest of
the path goes to the upstream unchanged (`https://api.anthropic.com/v1/messages`, a local
server's `/v1/chat/completions`), with the request's own headers and body. The answer comes
back as it arrives, a read at a time, with the upstream's status and headers; its bytes are
passed on first and looked at after (`on_bytes`, the assembler). A refused, hung or garbled
upstream is the agent's to see exactly as it would without swedeck: a connection that fails
is a 502 with the reason, said in the record too.
"""

from __future__ import annotations

import http.client
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

TOKEN_HEADER = "X-Swedeck-Token"
TOKEN_VARIABLE = "SWEDECK_RECORD_TOKEN"
"""A child whose provider URL is in its command line (`{endpoint}`: Codex's config) sends the
token in this header, from this variable of its environment: another local user reads argv
(`/proc/*/cmdline`), never another process's environment."""
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "content-length", TOKEN_HEADER.lower()})
UPSTREAM_TIMEOUT_S = 600.0
"""How long a read from the upstream may wait (a model thinking before its first byte)."""
READ_BYTES = 65536
STOP_WAIT_S = 15.0
"""How long the end of a run waits for the exchanges still under way to be recorded."""


@dataclass
class Exchange:
    """One request and its answer, as the endpoint saw them pass."""

    number: int
    method: str
    path: str
    """Without the token."""
    upstream: str
    body: bytes
    headers: dict[str, str]
    """The request's headers without the credentials (for the record)."""
    started: float = field(default_factory=time.time)
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    first_byte_s: float | None = None
    last_byte_s: float | None = None
    error: str | None = None
    chunks: int = 0


CREDENTIALS = frozenset({"authorization", "x-api-key", "api-key", "proxy-authorization", "cookie", "x-goog-api-key",
                         "openai-organization", "openai-project", "anthropic-admin-key"})
"""Headers that are never written anywhere."""


class Handlers:
    """What the endpoint asks of its owner (`recorder.Recorder`)."""

    def started(self, exchange: Exchange) -> Any:
        """An exchange began; what it returns is handed to `bytes_passed` and `ended`."""

    def bytes_passed(self, state: Any, data: bytes) -> None:
        """A read of the answer, after it was passed on to the agent."""

    def ended(self, state: Any, exchange: Exchange) -> None:
        """The answer ended (or failed)."""


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Never a traceback on the person's terminal (the agent owns it): what went wrong with an
        exchange is in its record; an agent that hung up is the agent's own business."""


class RecordingEndpoint:
    def __init__(self, upstream: Callable[[str], str], handlers: Handlers) -> None:
        """`upstream(path)`: the URL a request for `path` goes to."""
        self.token = secrets.token_urlsafe(18)
        self.upstream = upstream
        self.handlers = handlers
        self._count = 0
        self._lock = threading.Lock()
        self._active = 0
        self._idle = threading.Condition(self._lock)
        self._pool = _Pool()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # each read is passed on at once: Nagle's wait for the previous write's ACK cost up to 40 ms
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                endpoint._serve(self)

            def do_GET(self) -> None:
                endpoint._serve(self)

            def do_PUT(self) -> None:
                endpoint._serve(self)

            def do_DELETE(self) -> None:
                endpoint._serve(self)

            def log_message(self, format: str, *args: Any) -> None:  # never on the person's terminal
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="swedeck-record-endpoint", daemon=True)

    @property
    def base_url(self) -> str:
        """What the child is given in its environment: the endpoint with its token (the SDKs add
        `/v1/messages` or their paths)."""
        return f"{self.origin}/t/{self.token}"

    @property
    def origin(self) -> str:
        """The endpoint without its token: what may appear in a command line (`{endpoint}`), whose
        client sends the token in a header from the environment (`TOKEN_HEADER`)."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> RecordingEndpoint:
        self._thread.start()
        return self

    def stop(self, wait_s: float = STOP_WAIT_S) -> None:
        """No new requests; the exchanges under way end and are recorded first (at most `wait_s`):
        an agent that exits once it has its answer must not leave its last exchange unwritten."""
        self.server.shutdown()
        with self._idle:
            self._idle.wait_for(lambda: self._active == 0, timeout=wait_s)
        self.server.server_close()
        self._pool.close()

    def __enter__(self) -> RecordingEndpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- one request ---------------------------------------------------------------------

    def _serve(self, request: BaseHTTPRequestHandler) -> None:
        prefix = f"/t/{self.token}"
        if request.path == prefix or request.path.startswith(prefix + "/"):
            path = request.path[len(prefix):] or "/"
        elif secrets.compare_digest(request.headers.get(TOKEN_HEADER, ""), self.token):
            path = request.path  # the token in a header the child's config reads from its environment
        else:
            _plain(request, 403, "swedeck record: this endpoint serves its own agent only (wrong or missing token: "
                                 f"in the base URL, or the {TOKEN_HEADER} header from ${TOKEN_VARIABLE})\n")
            return
        port = self.server.server_address[1]
        if request.headers.get("Host", f"127.0.0.1:{port}") not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            _plain(request, 421, "swedeck record: this endpoint answers for 127.0.0.1 only (its Host header)\n")
            return
        try:
            body = _request_body(request)
        except ValueError as error:  # too large, or not HTTP: said, and the connection is not reused
            _plain(request, 413 if "larger" in str(error) else 400, f"swedeck record: {error}\n")
            return
        with self._lock:
            self._count += 1
            self._active += 1
            number = self._count
        target = self.upstream(path)
        exchange = Exchange(number, request.command, path, target, body,
                            {key: value for key, value in request.headers.items() if key.lower() not in CREDENTIALS})
        try:
            state = self.handlers.started(exchange)
            try:
                self._forward(request, exchange, state)
            finally:
                exchange.last_byte_s = exchange.last_byte_s or time.time() - exchange.started
                self.handlers.ended(state, exchange)
        finally:
            with self._idle:
                self._active -= 1
                self._idle.notify_all()

    def _forward(self, request: BaseHTTPRequestHandler, exchange: Exchange, state: Any) -> None:
        url = urlsplit(exchange.upstream)
        headers = {key: value for key, value in request.headers.items() if key.lower() not in HOP_BY_HOP}
        headers["Host"] = url.netloc
        if exchange.body or request.command in ("POST", "PUT"):
            headers["Content-Length"] = str(len(exchange.body))
        target = url.path + (f"?{url.query}" if url.query else "")
        for attempt in range(2):  # a kept connection the upstream has since closed: once more, on a new one
            connection, reused = self._pool.take(url.scheme, url.netloc)
            try:
                connection.request(request.command, target or "/", body=exchange.body, headers=headers)
                response = connection.getresponse()
                break
            except (OSError, http.client.HTTPException) as error:
                connection.close()
                if reused and attempt == 0 and isinstance(error, STALE):
                    continue
                exchange.error = f"the upstream {url.scheme}://{url.netloc} did not answer: {error}"
                exchange.status = 502
                _plain(request, 502, f"swedeck record: {exchange.error}\n")
                return
        exchange.status = response.status
        exchange.response_headers = {key: value for key, value in response.getheaders()
                                     if key.lower() not in CREDENTIALS}
        request.send_response_only(response.status, response.reason)
        for key, value in response.getheaders():
            if key.lower() not in HOP_BY_HOP:
                request.send_header(key, value)
        request.send_header("Transfer-Encoding", "chunked")  # the agent's connection is kept for its next request
        request.end_headers()
        whole = False
        try:
            while True:
                data = response.read1(READ_BYTES)
                if not data:
                    break
                if exchange.first_byte_s is None:
                    exchange.first_byte_s = time.time() - exchange.started
                request.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                request.wfile.flush()
                exchange.chunks += 1
                self.handlers.bytes_passed(state, data)
            request.wfile.write(b"0\r\n\r\n")
            request.wfile.flush()
            whole = True
        except (OSError, http.client.HTTPException) as error:  # the upstream cut, or the agent left
            exchange.error = f"the answer was cut: {error}"
            request.close_connection = True  # the agent sees the cut as it came
        finally:
            exchange.last_byte_s = time.time() - exchange.started
            if whole and not response.will_close:
                response.close()  # read to its end: the connection is ready for the next request
                self._pool.give(url.scheme, url.netloc, connection)
            else:
                connection.close()


STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, http.client.CannotSendRequest)
"""What a kept connection says when the upstream closed it while it sat idle."""
MAX_REQUEST = 256 << 20
"""A request body larger than this is refused (413) and recorded as refused: bounded memory."""


class _Pool:
    """Upstream connections kept alive, a few per origin (an SDK keeps its own the same way): a
    request over TLS costs its handshake once, not each time."""

    KEPT = 8

    def __init__(self) -> None:
        self._idle: dict[tuple[str, str], list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()

    def take(self, scheme: str, netloc: str) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            idle = self._idle.get((scheme, netloc))
            if idle:
                return idle.pop(), True
        kind = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
        connection = kind(netloc, timeout=UPSTREAM_TIMEOUT_S)
        return connection, False

    def give(self, scheme: str, netloc: str, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault((scheme, netloc), [])
            if len(idle) < self.KEPT:
                idle.append(connection)
                return
        connection.close()

    def close(self) -> None:
        with self._lock:
            for idle in self._idle.values():
                for connection in idle:
                    connection.close()
            self._idle.clear()


def _request_body(request: BaseHTTPRequestHandler) -> bytes:
    """The agent's request body, whole: by its length, or its chunks (a chunked request is read to
    its last chunk, never forwarded empty); larger than `MAX_REQUEST`: ValueError."""
    if "chunked" in request.headers.get("Transfer-Encoding", "").lower():
        body = bytearray()
        while True:
            line = request.rfile.readline(1024)
            try:
                size = int(line.split(b";")[0].strip() or b"x", 16)
            except ValueError:
                raise ValueError("a chunked request whose chunk size is not a number") from None
            if size == 0:
                while request.rfile.readline(65536).strip():  # trailers
                    pass
                return bytes(body)
            if len(body) + size > MAX_REQUEST:
                raise ValueError(f"a request larger than {MAX_REQUEST >> 20} MB: not forwarded")
            body += request.rfile.read(size)
            request.rfile.readline(16)
    try:
        length = int(request.headers.get("Content-Length") or 0)
    except ValueError:
        raise ValueError("a Content-Length that is not a number") from None
    if length > MAX_REQUEST or length < 0:
        raise ValueError(f"a request larger than {MAX_REQUEST >> 20} MB (Content-Length {length}): not forwarded")
    return request.rfile.read(length) if length else b""


def _plain(request: BaseHTTPRequestHandler, status: int, text: str) -> None:
    data = text.encode()
    request.send_response_only(status)
    request.send_header("Content-Type", "text/plain; charset=utf-8")
    request.send_header("Content-Length", str(len(data)))
    request.send_header("Connection", "close")
    request.end_headers()
    request.close_connection = True
    request.wfile.write(data)


PROVIDERS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
BASE_VARIABLES = {"anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"), "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE")}
"""The person's own base URL variables, as each provider's SDK reads them (first set wins)."""


@dataclass(frozen=True)
class Upstreams:
    """Where requests go (SPEC §18): `--upstream`, else the person's own base URL variables as
    they were before swedeck set its own (a LiteLLM proxy, a Bedrock or Vertex gateway, a
    corporate proxy), else the provider."""

    override: str | None
    bases: dict[str, tuple[str, str]]
    """Provider -> (its base URL as the person's SDK would use it, where that came from)."""

    @classmethod
    def of(cls, override: str | None, environment: Mapping[str, str]) -> Upstreams:
        bases = {}
        for provider, provider_url in PROVIDERS.items():
            found = next(((environment[name], name) for name in BASE_VARIABLES[provider]
                          if environment.get(name, "").strip()), None)
            bases[provider] = (found[0].strip().rstrip("/"), found[1]) if found else (provider_url, "the provider")
        return cls(override.rstrip("/") if override else None, bases)

    def url(self, wire: str, path: str) -> str:
        """The URL a request for `path` (as the agent asked the endpoint: `/v1/messages`,
        `/v1/responses`) goes to: the agent's SDK was given the endpoint with `/v1` for OpenAI's
        wires, so a person's OpenAI base (which holds its own version path) takes the rest."""
        if self.override:
            return self.override + path
        if wire == "anthropic" or path.startswith(("/v1/messages", "/v1/complete")):
            return self.bases["anthropic"][0] + path
        base = self.bases["openai"][0]
        return base + (path.removeprefix("/v1") if path.startswith("/v1/") else path)

    def said(self) -> str:
        """Where requests go, for the run's first line."""
        if self.override:
            return f"requests go to {self.override} (--upstream)"
        return "requests go to " + "; ".join(f"{provider}: {base} ({source})"
                                              for provider, (base, source) in self.bases.items())
