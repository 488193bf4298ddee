"""The stream process: runs litellm calls for `LitellmModel` and sends back what it needs.

    python -m swedeck.core.models.stream_worker      (started by `stream_process`)

Parsing a provider's stream is litellm's heaviest work (a pydantic object graph per
token). In the UI's process it held the GIL half the time the UI wanted it (bench B1), so
it runs here, on its own interpreter. The protocol is JSON lines:

- in (stdin): `{"id": N, "kwargs": {...}}` starts call N (`litellm.completion(**kwargs)`);
  `{"cancel": N}` closes its HTTP response. End of input ends the process.
- out (stdout): `{"id": N, "chunk": {...}}` per chunk, reduced to what the assembler reads
  (OpenAI's shape: choices[].delta with content, reasoning_content, tool_calls); the
  provider's own usage, if it sent any, as a last chunk `{"usage": {...}}`; a non-streaming
  call's whole response as one chunk; then `{"id": N, "end": true}`, or
  `{"id": N, "error": {...}}` with the error classified here (`retry.classify`).

Request arguments (API keys included) travel only over the pipe, never in argv or logs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import sys
import threading
from typing import Any

from .assembler import _get
from .http_call import CHUNK, END, ERROR, Call, provider_usage, run_call
from .litellm_loader import litellm
from .retry import classify, with_credential_hint


def compact(chunk: Any) -> dict[str, Any] | None:
    """The parts of a stream chunk the assembler reads; None when it holds none of them."""
    choices = []
    for choice in _get(chunk, "choices") or ():
        delta = _get(choice, "delta")
        if delta is None:
            continue
        out: dict[str, Any] = {}
        for key in ("content", "reasoning_content"):
            value = _get(delta, key)
            if value:
                out[key] = value
        calls = [{"index": _get(call, "index") or 0, "id": _get(call, "id"),
                  "function": {"name": _get(_get(call, "function"), "name"),
                               "arguments": _get(_get(call, "function"), "arguments")}}
                 for call in _get(delta, "tool_calls") or ()]
        if calls:
            out["tool_calls"] = calls
        if out:
            choices.append({"delta": out})
    return {"choices": choices} if choices else None


def plain(value: Any) -> Any:
    """A litellm response or usage object as JSON-ready data."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return value
    return {key: getattr(value, key) for key in ("prompt_tokens", "completion_tokens", "total_tokens")
            if getattr(value, key, None) is not None}


class Worker:
    def __init__(self, out: Any):
        self._out = out
        self._lock = threading.Lock()
        self._calls: dict[int, Call] = {}

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":"), default=str).encode() + b"\n"
        with self._lock:
            self._out.write(line)
            self._out.flush()

    def serve(self, lines: Any) -> None:
        for line in lines:
            message = json.loads(line)
            if "cancel" in message:
                call = self._calls.get(message["cancel"])
                if call is not None:
                    call.close()
            else:
                call = self._calls[message["id"]] = Call(items=queue.SimpleQueue())
                threading.Thread(target=self.run, args=(message["id"], message["kwargs"], call),
                                 name=f"swedeck-stream-{message['id']}", daemon=True).start()

    def run(self, call_id: int, kwargs: dict[str, Any], call: Call) -> None:
        streaming = bool(kwargs.get("stream"))
        began = False

        def put(kind: str, item: Any) -> None:
            nonlocal began
            if kind == CHUNK:
                data = compact(item) if streaming else plain(item)
                if data is None and not began:  # the stream has begun: the caller's stall clock starts
                    data = {"choices": []}
                began = True
                if data is not None:
                    self.send({"id": call_id, "chunk": data})
            elif kind == END:
                usage = provider_usage(call.stream, None) if streaming else None
                if usage is not None:
                    self.send({"id": call_id, "chunk": {"choices": [], "usage": plain(usage)}})
                self.send({"id": call_id, "end": True, "finished": call.finished,
                           "finish_reason": call.finish_reason})
            elif kind == ERROR:
                problem = with_credential_hint(classify(item), litellm(), str(kwargs.get("model")))
                self.send({"id": call_id, "error": dataclasses.asdict(problem)})

        try:
            run_call(litellm(), kwargs, call, put)
        except BaseException as exc:  # noqa: BLE001 - litellm failed to load: the caller must hear of it
            put(ERROR, exc)
        finally:
            self._calls.pop(call_id, None)


def _preload() -> None:
    try:
        litellm()  # before the first request arrives, if it has not already
    except BaseException:  # noqa: BLE001 - each call reports it (see `run`)
        pass


def main() -> None:
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed by accident must not corrupt the protocol
    # litellm loads (seconds) beside the input loop, not before it: a parent that dies
    # meanwhile closes our stdin, and we must see that at once, not after the import.
    threading.Thread(target=_preload, name="swedeck-stream-preload", daemon=True).start()
    Worker(out).serve(sys.stdin.buffer)
    os._exit(0)  # the caller is gone: calls still running have no one to answer


if __name__ == "__main__":
    main()
