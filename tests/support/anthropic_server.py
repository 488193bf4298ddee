"""A scripted Anthropic Messages server for tests: real HTTP on 127.0.0.1, SSE as the API
streams it (`message_start`, content blocks with `text_delta` / `input_json_delta`,
`message_delta` with the stop reason and usage, `message_stop`), or one JSON body.

Each `POST /v1/messages` that offers tools takes the next scripted `Reply` (once they are
used up: a short text answer); one without tools (an agent's side call: a title, a summary)
gets a short text of its own, whenever it comes, so side calls never take a scripted turn; every request
body is kept in `requests`, with its path and headers. `count_tokens` is answered from the
body's length. A reply can be a status (429, 500) instead of an answer.
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from .scripted_http import ScriptedHTTP


@dataclass
class Reply:
    text: str = ""
    tool: tuple[str, dict[str, Any]] | None = None
    """(name, input) of one tool call."""
    input_tokens: int = 1200
    output_tokens: int = 40
    cache_read: int = 0
    cache_creation: int = 0
    status: int = 200
    cut: bool = False
    """The stream ends before `message_delta` (the connection closes)."""
    chunk_delay_s: float = 0.0

    @classmethod
    def bash(cls, command: str, text: str = "", **kwargs: Any) -> Reply:
        return cls(text=text, tool=("Bash", {"command": command, "description": "run it"}), **kwargs)

    @classmethod
    def acp_bash(cls, command: str, text: str = "", **kwargs: Any) -> Reply:
        """Claude Code's Bash under its ACP adapter when the client offers terminals: the
        adapter's own tool, which runs the command in the client's terminal."""
        return cls(text=text, tool=("mcp__acp__Bash", {"command": command, "timeout": 60000,
                                                       "description": "run it"}), **kwargs)


class AnthropicServer(ScriptedHTTP):
    def __init__(self, side_calls_apart: bool = True) -> None:
        super().__init__()
        self.replies: deque[Reply] = deque()
        self.answered: list[bytes] = []
        """The bytes of every answer body sent, in order."""
        self.side_calls_apart = side_calls_apart
        """A request that offers no tools (an agent's side call) gets a short text, not the next scripted reply."""
        self._ids = 0

    def script(self, *replies: Reply) -> AnthropicServer:
        with self._lock:
            self.replies.extend(replies)
        return self

    def answer(self, handler: BaseHTTPRequestHandler, path: str, body: dict[str, Any], raw: bytes) -> None:
        if path.endswith("/count_tokens"):
            self._json(handler, 200, {"input_tokens": max(1, len(raw) // 4)})
            return
        if not path.endswith("/v1/messages"):
            self._json(handler, 404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
            return
        with self._lock:
            if not body.get("tools") and self.side_calls_apart:  # a title, a summary: never a scripted turn
                reply = Reply(text="A short title", input_tokens=200, output_tokens=5)
            else:
                reply = self.replies.popleft() if self.replies else Reply(text="Done.")
            self._ids += 1
            number = self._ids
        if reply.status != 200:
            self._json(handler, reply.status, {"type": "error", "error": {
                "type": "rate_limit_error" if reply.status == 429 else "api_error", "message": f"scripted {reply.status}"}},
                retry_after=reply.status == 429)
            return
        model = str(body.get("model") or "claude-test")
        message_id = f"msg_{number:04d}"
        blocks: list[dict[str, Any]] = []
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        if reply.tool is not None:
            blocks.append({"type": "tool_use", "id": f"toolu_{number:04d}", "name": reply.tool[0], "input": reply.tool[1]})
        usage = {"input_tokens": reply.input_tokens, "cache_creation_input_tokens": reply.cache_creation,
                 "cache_read_input_tokens": reply.cache_read, "output_tokens": reply.output_tokens}
        stop = "tool_use" if reply.tool is not None else "end_turn"
        if not body.get("stream"):
            self._json(handler, 200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                                      "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage})
            return
        self._stream(handler, reply, message_id, model, blocks, usage, stop)

    def _stream(self, handler: BaseHTTPRequestHandler, reply: Reply, message_id: str, model: str,
                blocks: list[dict[str, Any]], usage: dict[str, int], stop: str) -> None:
        events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}})]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {"type": "text", "text": ""}}))
                text = block["text"]
                for start in range(0, len(text), 7):
                    events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                        "type": "text_delta", "text": text[start:start + 7]}}))
            else:
                events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
                arguments = json.dumps(block["input"])
                for start in range(0, len(arguments), 11):
                    events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                        "type": "input_json_delta", "partial_json": arguments[start:start + 11]}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        if not reply.cut:
            events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                             "usage": {"output_tokens": usage["output_tokens"]}}))
            events.append(("message_stop", {"type": "message_stop"}))
        self.start_stream(handler, {"request-id": f"req_{message_id}"})
        chunks = [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events]
        with self._lock:  # noted before it is sent: a client may be done before this thread returns
            self.answered.append(b"".join(chunks))
        try:
            for chunk in chunks:
                self.send_chunk(handler, chunk)
                if reply.chunk_delay_s:
                    time.sleep(reply.chunk_delay_s)
        except OSError:  # the client went away mid-stream (it cancelled)
            handler.close_connection = True
            return
        if reply.cut:
            handler.close_connection = True
        else:
            handler.wfile.write(b"0\r\n\r\n")

    def _json(self, handler: BaseHTTPRequestHandler, status: int, body: dict[str, Any], retry_after: bool = False) -> None:
        data = json.dumps(body).encode()
        with self._lock:
            self.answered.append(data)
        self.send_json(handler, status, body, {"retry-after": "0"} if retry_after else None)
