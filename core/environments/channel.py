"""How a `ShellSession` talks to its bash: a byte pipe in, a byte stream out, plus a way to
run a one-off helper beside the session (to stop a command's process tree)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Protocol

EOF_CHUNK = b""


class Channel(Protocol):
    def send(self, data: bytes) -> None: ...
    def recv(self, timeout: float) -> bytes | None:
        """Next output bytes, None when nothing arrived within `timeout`, b"" once the shell is gone."""
    def run_helper(self, argv: list[str], timeout: float) -> tuple[int, bytes]:
        """Run a program beside the session (same machine/container), return (exit code, output)."""
    def alive(self) -> bool:
        """False once the shell process has exited (background jobs may still hold its output open)."""
    def close(self) -> None: ...


class ReaderQueue:
    """A daemon thread moving chunks from a blocking `read` into a queue, so `recv` can time out."""

    def __init__(self, read: Callable[[], bytes], name: str):
        self._queue: queue.Queue[bytes] = queue.Queue()
        self._read = read
        self._thread = threading.Thread(target=self._pump, name=name, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            while chunk := self._read():
                self._queue.put(chunk)
        except (OSError, ValueError):
            pass
        self._queue.put(EOF_CHUNK)

    def get(self, timeout: float) -> bytes | None:
        try:
            chunk = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if chunk == EOF_CHUNK:
            self._queue.put(EOF_CHUNK)  # stays at EOF for every later reader
        return chunk
