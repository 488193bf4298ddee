"""A scripted OpenAI Responses server for tests (Codex's wire format): real HTTP on 127.0.0.1.

Each `POST …/responses` takes the next scripted `Step` (once they are used up: a short text
answer) and streams it as the API does: `response.created`, the output items
(`response.output_item.added`, text deltas, `response.output_item.done`), then
`response.completed` with the whole response and its usage; or one JSON body when the request
does not stream. Every request body is kept in `requests`.
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from .scripted_http import ScriptedHTTP

SUB_AGENT_HEADER = "x-codex-parent-thread-id"
"""What Codex sends on a sub-agent's requests (its parent's thread)."""


@dataclass
class Step:
    text: str = ""
    call: tuple[str, dict[str, Any]] | None = None
    """(tool name, arguments) of one function call."""
    input_tokens: int = 900
    cached_tokens: int = 0
    output_tokens: int = 30
    chunk_delay_s: float = 0.0
    """A pause after each event of the stream (a slow model, to interrupt)."""
    code: str | None = None
    """JavaScript for Codex's `exec` cell (its code mode: a custom tool call whose input is the code)."""


class ResponsesServer(ScriptedHTTP):
    def __init__(self) -> None:
        super().__init__()
        self.steps: deque[Step] = deque()
        self.sub_agent_steps: deque[Step] = deque()
        self._count = 0

    def script(self, *steps: Step) -> ResponsesServer:
        with self._lock:
            self.steps.extend(steps)
        return self

    def script_sub_agents(self, *steps: Step) -> ResponsesServer:
        """The answers to Codex's sub-agents (requests that name a parent thread), apart from the
        root's: the two run at once, and each takes its own next step."""
        with self._lock:
            self.sub_agent_steps.extend(steps)
        return self

    def answer(self, handler: BaseHTTPRequestHandler, path: str, body: dict[str, Any], raw: bytes) -> None:
        if not path.endswith("/responses"):
            self.send_json(handler, 200 if handler.command == "GET" else 404, {"object": "list", "data": []})
            return
        with self._lock:
            queue = self.sub_agent_steps if handler.headers.get(SUB_AGENT_HEADER) else self.steps
            step = queue.popleft() if queue else Step(text="Done.")
            self._count += 1
            number = self._count
        items: list[dict[str, Any]] = []
        if step.text:
            items.append({"type": "message", "id": f"msg_{number}", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "text": step.text, "annotations": []}]})
        if step.call is not None:
            namespace, _, name = step.call[0].rpartition(".")  # `collaboration.spawn_agent`: a namespace's tool
            items.append({"type": "function_call", "id": f"fc_{number}", "status": "completed",
                          "call_id": f"call_{number}", "name": name, "arguments": json.dumps(step.call[1]),
                          **({"namespace": namespace} if namespace else {})})
        if step.code is not None:
            items.append({"type": "custom_tool_call", "id": f"ctc_{number}", "status": "completed",
                          "call_id": f"call_{number}", "name": "exec", "input": step.code})
        usage = {"input_tokens": step.input_tokens, "input_tokens_details": {"cached_tokens": step.cached_tokens},
                 "output_tokens": step.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": step.input_tokens + step.output_tokens}
        response = {"id": f"resp_{number}", "object": "response", "created_at": 0, "status": "completed",
                    "model": body.get("model", "gpt-test"), "output": items, "usage": usage}
        if not body.get("stream"):
            self.send_json(handler, 200, response)
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
        self.start_stream(handler)
        try:
            for event in events:
                self.send_chunk(handler, f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                if step.chunk_delay_s:
                    time.sleep(step.chunk_delay_s)
            handler.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client went away mid-stream (it cancelled)
            handler.close_connection = True
