"""The session controller: the bridge between the agent's thread and the UI thread.

`emit(event)` is the callable the core calls from its worker thread. It never touches a
widget: it appends the event to a queue and, when the queue was empty, posts one
`AgentEvents` message (`post_message` is thread-safe). The UI drains the whole queue per
message and merges runs of stream deltas and command output into one piece each, so a
fast stream costs one repaint per drain instead of one per token, and the event loop
never falls behind the agent.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from swedeck.core import events as ev

from .messages import AgentEvents


@dataclass(frozen=True, slots=True)
class OutputChunk:
    """Merged `CommandOutput` events of one command."""

    action_id: str
    text: str


def coalesce(events: list[ev.Event]) -> list[Any]:
    """Merge consecutive deltas of the same kind/step/index (and output of one command)."""
    merged: list[Any] = []
    for event in events:
        last = merged[-1] if merged else None
        if isinstance(event, ev.StreamDelta) and isinstance(last, ev.StreamDelta) and (
            last.kind, last.step, last.index) == (event.kind, event.step, event.index) and event.name is None:
            merged[-1] = ev.StreamDelta(step=last.step, kind=last.kind, text=last.text + event.text,
                                        index=last.index, name=last.name)
        elif isinstance(event, ev.CommandOutput):
            if isinstance(last, OutputChunk) and last.action_id == event.action_id:
                merged[-1] = OutputChunk(last.action_id, last.text + event.text)
            else:
                merged.append(OutputChunk(event.action_id, event.text))
        else:
            merged.append(event)
    return merged


class SessionController:
    """Queues the agent's events for one target (the session screen)."""

    def __init__(self, post: Callable[[AgentEvents], Any]):
        self._post = post
        self._queue: deque[ev.Event] = deque()
        self._lock = threading.Lock()

    def emit(self, event: ev.Event) -> None:
        """Called from the agent's thread."""
        with self._lock:
            wake = not self._queue
            self._queue.append(event)
        if wake:
            self._post(AgentEvents())

    def drain(self) -> list[Any]:
        """Called from the UI thread: everything queued so far, coalesced."""
        with self._lock:
            events = list(self._queue)
            self._queue.clear()
        return coalesce(events)


def resolve(future: Any, value: Any) -> bool:
    """Answer a request; False if the agent gave up on it (quit, interrupt) meanwhile."""
    if future.done():
        return False
    try:
        future.set_result(value)
    except Exception:  # resolved by the agent's thread between the check and the set
        return False
    return True
