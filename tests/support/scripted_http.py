"""What the scripted provider servers (Anthropic Messages, OpenAI Responses) share: a threaded
HTTP server on 127.0.0.1, every request's path, headers and JSON body kept in order, and the
helpers that answer with JSON or a chunked stream. Each server answers in its `answer`."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedHTTP:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        """Every body received, in order (its JSON; `{"_raw": …}` when it is not JSON)."""
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                owner._received(self)

            def do_GET(self) -> None:
                owner._received(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _received(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        with self._lock:
            self.paths.append(handler.path)
            self.requests.append(body)
            self.headers.append(dict(handler.headers.items()))
        self.answer(handler, handler.path.split("?")[0].rstrip("/"), body, raw)

    def answer(self, handler: BaseHTTPRequestHandler, path: str, body: dict[str, Any], raw: bytes) -> None:
        raise NotImplementedError

    @staticmethod
    def send_json(handler: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str] | None = None) -> bytes:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)
        return data

    @staticmethod
    def start_stream(handler: BaseHTTPRequestHandler, headers: dict[str, str] | None = None) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()

    @staticmethod
    def send_chunk(handler: BaseHTTPRequestHandler, chunk: bytes) -> None:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        handler.wfile.flush()
