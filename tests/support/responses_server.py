"""A scripted OpenAI Responses server for tests (Codex's wire format): real HTTP on 127.0.0.1.

Each `POST …/responses` takes the next scripted `Step` (once they are used up: a short text
answer) and streams it as the API does: `response.created`, the output items
(`response.output_item.added`, text deltas, `response.output_item.done`), then
`response.completed` with the whole response and its usage; or one JSON body when the request
does not stream. Every request body is kept in `requests`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Step:
    text: str = ""
    call: tuple[str, dict[str, Any]] | None = None
    """(tool name, arguments) of one function call."""
    input_tokens: int = 900
    cached_tokens: int = 0
    output_tokens: int = 30


@dataclass
class ResponsesServer:
    steps: deque[Step] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                owner._serve(self)

            def do_GET(self) -> None:
                owner._serve(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def script(self, *steps: Step) -> ResponsesServer:
        with self._lock:
            self.steps.extend(steps)
        return self

    def __enter__(self) -> ResponsesServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def responses_requests(self) -> list[dict[str, Any]]:
        return [body for path, body in zip(self.paths, self.requests, strict=True)
                if path.split("?")[0].rstrip("/").endswith("/responses")]

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        with self._lock:
            self.paths.append(handler.path)
            self.requests.append(body)
        if not handler.path.split("?")[0].rstrip("/").endswith("/responses"):
            data = json.dumps({"object": "list", "data": []}).encode()
            handler.send_response(200 if handler.command == "GET" else 404)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return
        with self._lock:
            step = self.steps.popleft() if self.steps else Step(text="Done.")
            self._count += 1
            number = self._count
        items: list[dict[str, Any]] = []
        if step.text:
            items.append({"type": "message", "id": f"msg_{number}", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "text": step.text, "annotations": []}]})
        if step.call is not None:
            items.append({"type": "function_call", "id": f"fc_{number}", "status": "completed",
                          "call_id": f"call_{number}", "name": step.call[0], "arguments": json.dumps(step.call[1])})
        usage = {"input_tokens": step.input_tokens, "input_tokens_details": {"cached_tokens": step.cached_tokens},
                 "output_tokens": step.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": step.input_tokens + step.output_tokens}
        response = {"id": f"resp_{number}", "object": "response", "created_at": 0, "status": "completed",
                    "model": body.get("model", "gpt-test"), "output": items, "usage": usage}
        if not body.get("stream"):
            data = json.dumps(response).encode()
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return
        events: list[dict[str, Any]] = [{"type": "response.created", "response": {**response, "status": "in_progress",
                                                                                  "output": [], "usage": None}}]
        for index, item in enumerate(items):
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": {**item, "status": "in_progress"}})
            if item["type"] == "message":
                for start in range(0, len(step.text), 9):
                    events.append({"type": "response.output_text.delta", "output_index": index, "item_id": item["id"],
                                   "content_index": 0, "delta": step.text[start:start + 9]})
            events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        events.append({"type": "response.completed", "response": response})
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for event in events:
            chunk = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
