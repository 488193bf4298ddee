"""Running `LitellmModel`'s calls in the stream process (`stream_worker`), one per swedeck
process, shared by every model and started on first use.

`start(kwargs, call)` sends the request and returns at once; a reader thread puts what
comes back into `call.items` exactly as a call run in this process would (chunks as
plain dicts, then the end or a classified error). `call.close()` sends a cancel. When the
process dies, its calls fail with a connection error, which the model retries in a new
one. When it cannot be started at all, `start` returns False and the model runs the call
in its own thread (`model.stream_process: false` does that always).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
from collections import deque
from typing import IO, Any

from .http_call import CHUNK, END, ERROR, Call
from .retry import Classified, RemoteQueryError

_MODULE = "swedeck.core.models.stream_worker"


class StreamProcess:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._calls: dict[int, Call] = {}  # the running process's calls
        self._ids = itertools.count(1)
        self._stderr: deque[str] = deque(maxlen=20)

    def start(self, kwargs: dict[str, Any], call: Call) -> bool:
        """Run `call` there; False when it cannot be (the caller runs it itself)."""
        try:
            body = json.dumps(kwargs)
        except (TypeError, ValueError):  # a model_kwargs value JSON cannot carry
            return False
        with self._lock:
            process = self._running()
            if process is None:
                return False
            call_id = next(self._ids)
            self._calls[call_id] = call
            call.on_close = lambda: self._send(process, {"cancel": call_id})
            if not self._send(process, f'{{"id":{call_id},"kwargs":{body}}}'):
                self._calls.pop(call_id, None)
                call.items.put((ERROR, ConnectionError("the stream process is not reading its input")))
        return True

    def warm_up(self) -> None:
        """Start the process now (it imports litellm before the first request arrives)."""
        with self._lock:
            self._running()

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
        if process is not None and process.stdin is not None:
            try:
                process.stdin.close()  # the worker leaves at the end of its input
            except OSError:
                pass

    # --- the process ------------------------------------------------------------------------

    def _running(self) -> subprocess.Popen[bytes] | None:
        if self._process is not None and self._process.poll() is None:
            return self._process
        try:
            process = subprocess.Popen([sys.executable, "-m", _MODULE], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=True)  # the terminal's Ctrl+C is ours to handle
        except OSError:
            return None
        self._process, self._calls = process, {}
        calls = self._calls
        threading.Thread(target=self._read, args=(process, calls), name="swedeck-stream-reader", daemon=True).start()
        threading.Thread(target=self._drain_stderr, args=(process.stderr,), name="swedeck-stream-stderr",
                         daemon=True).start()
        return process

    def _send(self, process: subprocess.Popen[bytes], message: dict[str, Any] | str) -> bool:
        line = message if isinstance(message, str) else json.dumps(message)
        try:
            assert process.stdin is not None
            process.stdin.write(line.encode() + b"\n")
            process.stdin.flush()
        except (OSError, ValueError):
            return False
        return True

    def _read(self, process: subprocess.Popen[bytes], calls: dict[int, Call]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            message = json.loads(line)
            call = calls.get(message["id"])
            if call is None:
                continue
            if "chunk" in message:
                call.items.put((CHUNK, message["chunk"]))
            elif "end" in message:
                calls.pop(message["id"], None)
                call.finished = message.get("finished")
                call.finish_reason = message.get("finish_reason")
                call.items.put((END, None))
            else:
                calls.pop(message["id"], None)
                call.items.put((ERROR, RemoteQueryError(Classified(**message["error"]))))
        code = process.wait()
        detail = self._stderr[-1] if self._stderr else "no message"
        with self._lock:
            orphans = list(calls.values())
            calls.clear()
        for call in orphans:
            call.items.put((ERROR, ConnectionError(f"the stream process exited (code {code}): {detail}")))

    def _drain_stderr(self, stream: IO[bytes] | None) -> None:
        for line in stream or ():
            text = line.decode(errors="replace").strip()
            if text:
                self._stderr.append(text[:300])


_instance: StreamProcess | None = None
_instance_lock = threading.Lock()


def stream_process() -> StreamProcess:
    global _instance
    with _instance_lock:
        if _instance is None:
            _instance = StreamProcess()
        return _instance
