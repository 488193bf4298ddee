"""How a `ShellSession` talks to its bash: a byte pipe in, a byte stream out, plus a way to
run a one-off helper beside the session (to stop a command's process tree)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Protocol

EOF_CHUNK = b""


class Channel(Protocol):
    orphans_are_ours: bool
    """True where nothing but the session runs beside PID 1 (a container): any process started
    while a command ran is that command's, and its stop kills it too."""
    tree_root: int | None
    """The subreaper above the shell (local: the watchdog that adopts the session's orphans)."""

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
        # Bounded: a command printing faster than we consume is held back by its pipe.
        self._queue: queue.Queue[bytes] = queue.Queue(maxsize=64)
        self._read = read
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._pump, name=name, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            while chunk := self._read():
                if not self._put(chunk):
                    return
        except (OSError, ValueError):
            pass
        self._put(EOF_CHUNK)

    def _put(self, chunk: bytes) -> bool:
        while not self._stopped.is_set():
            try:
                self._queue.put(chunk, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def stop(self) -> None:
        """Let the thread end once its blocking read returns (the channel is closing)."""
        self._stopped.set()

    def get(self, timeout: float) -> bytes | None:
        try:
            chunk = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if chunk == EOF_CHUNK:
            self._queue.put_nowait(EOF_CHUNK)  # stays at EOF for every later reader (the queue is empty now)
        return chunk
