"""Containers must not outlive swedeck (SPEC §8): removed on close, on SIGINT/SIGTERM, at
interpreter exit, and, for sessions whose process died anyway (SIGKILL, power loss), by
the next start on the same host."""

from __future__ import annotations

import atexit
import os
import signal
import socket
import threading
from collections.abc import Callable
from typing import Any

LABEL = "swedeck"
LABEL_SESSION = "swedeck.session"
LABEL_PID = "swedeck.pid"
LABEL_HOST = "swedeck.host"

_live: dict[str, Any] = {}
"""container id -> container object, for the exit and signal handlers."""
_lock = threading.Lock()
_installed = False


def labels(session_id: str) -> dict[str, str]:
    return {LABEL: "1", LABEL_SESSION: session_id, LABEL_PID: str(os.getpid()), LABEL_HOST: socket.gethostname()}


def register(container: Any) -> None:
    with _lock:
        _live[container.id] = container
    _install_handlers()


def remove(container: Any) -> None:
    with _lock:
        _live.pop(container.id, None)
    _force_remove(container)


def remove_all() -> None:
    with _lock:
        containers = list(_live.values())
        _live.clear()
    for container in containers:
        _force_remove(container)


def remove_stale(client: Any) -> list[str]:
    """Remove labelled containers on this host whose owning process is gone; their names."""
    removed = []
    host = socket.gethostname()
    # ignore_removed: another session may remove its container between listing and inspecting.
    found = client.containers.list(all=True, ignore_removed=True,
                                   filters={"label": [f"{LABEL}=1", f"{LABEL_HOST}={host}"]})
    for container in found:
        pid = container.labels.get(LABEL_PID, "")
        if pid.isdigit() and not _process_alive(int(pid)):
            _force_remove(container)
            removed.append(container.name)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _force_remove(container: Any) -> None:
    try:
        container.remove(force=True)
    except Exception:  # noqa: BLE001 - already gone, or the engine went away: nothing left to do
        pass


def _install_handlers() -> None:
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(remove_all)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread; atexit still runs
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)
        signal.signal(signum, _chained(previous))


def _chained(previous: Any) -> Callable[[int, Any], None]:
    def handler(signum: int, frame: Any) -> None:
        remove_all()
        if callable(previous):
            previous(signum, frame)  # Python's SIGINT handler raises KeyboardInterrupt as usual
        elif previous == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    return handler
