"""A fast OpenAI-compatible chat server for B1 and B6, in its own process so that serving
never competes with the client for the GIL.

    python -m bench.stream_server SCRIPT.json [--keep-alive] [--tls CERT KEY]
                                                   prints `PORT` on its first stdout line

SCRIPT.json is a list of responses `{"tokens": N, "command": "...", "latency_s": S,
"tokens_per_s": R}`: request k gets response k (the last one repeats), after `latency_s`
(default 0: a real model's time to answer, without holding up the other requests), its
content deltas paced at R a second when R is given (B16: a model streaming at 100 tok/s). A response streams N one-token content deltas of
markdown-ish prose, then one `bash` tool call with the command, then a usage chunk. Each
whole response is encoded before the first request, so the socket writes as fast as the
client reads.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from pathlib import Path

WORDS = ("the", "parser", "reads", "each", "line", "and", "returns", "a", "token", "so", "we", "check",
         "whether", "config", "value", "is", "None", "before", "calling", "it")


def token(i: int) -> str:
    """Words with a line break every 12 tokens and a paragraph every 96, like a real answer."""
    if i % 96 == 95:
        return "\n\n"
    return WORDS[i % len(WORDS)] + ("\n" if i % 12 == 11 else " ")


def text_of(tokens: int) -> str:
    return "".join(token(i) for i in range(tokens))


def sse_body(tokens: int, command: str) -> bytes:
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "bench-model"}

    def event(choices: list, **extra) -> bytes:
        return b"data: " + json.dumps({**base, "choices": choices, **extra}).encode() + b"\n\n"

    parts = [event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    parts += [event([{"index": 0, "delta": {"content": token(i)}, "finish_reason": None}]) for i in range(tokens)]
    call = {"index": 0, "id": "call_bench", "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
    parts.append(event([{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]))
    parts.append(event([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]))
    parts.append(event([], usage={"prompt_tokens": 1000, "completion_tokens": tokens + 20,
                                  "total_tokens": tokens + 1020}))
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def paced(body: bytes, tokens_per_s: float) -> list[tuple[bytes, float]]:
    """The response's SSE events, each with the pause before the next: one token's time."""
    events = [event + b"\n\n" for event in body.split(b"\n\n") if event]
    return [(event, 1 / tokens_per_s if b'"content": "' in event else 0.0) for event in events]


KEEP_ALIVE = "--keep-alive" in sys.argv
"""Keep each connection for the client's next request (B10: an SDK keeps its connections)."""


def response(body: bytes) -> bytes:
    head = ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            f"Content-Length: {len(body)}\r\nConnection: {'keep-alive' if KEEP_ALIVE else 'close'}\r\n\r\n")
    return head.encode() + body


def read_request(conn: socket.socket, data: bytes = b"") -> tuple[bool, bytes]:
    """Reads one request; (whether one came, the bytes read past it)."""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return False, b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return False, b""
        body += chunk
    return True, body[length:]


def serve(responses: list[bytes], latencies: list[float], rates: list[float] | None = None,
          tls: tuple[str, str] | None = None) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    served = 0
    lock = threading.Lock()
    context = None
    if tls is not None:
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)

    def handle(conn: socket.socket) -> None:
        if context is not None:
            try:
                conn = context.wrap_socket(conn, server_side=True)
            except OSError:
                conn.close()
                return
        with conn:
            rest = b""
            while True:
                came, rest = read_request(conn, rest)
                if not came:
                    return
                one(conn)
                if not KEEP_ALIVE:
                    return

    def one(conn: socket.socket) -> None:
        nonlocal served
        with lock:
            index = min(served, len(responses) - 1)
            served += 1
        if latencies[index]:
            time.sleep(latencies[index])
        rate = rates[index] if rates else 0
        if not rate:
            conn.sendall(responses[index])
            return
        head, _, body = responses[index].partition(b"\r\n\r\n")
        conn.sendall(head + b"\r\n\r\n")
        for event, pause in paced(body, rate):
            conn.sendall(event)
            if pause:
                time.sleep(pause)

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    script = json.loads(Path(sys.argv[1]).read_text())
    tls = (sys.argv[sys.argv.index("--tls") + 1], sys.argv[sys.argv.index("--tls") + 2]) if "--tls" in sys.argv else None
    serve([response(sse_body(item["tokens"], item["command"])) for item in script],
          [float(item.get("latency_s", 0)) for item in script], [float(item.get("tokens_per_s", 0)) for item in script],
          tls)
