"""The session controller: the bridge between the agent's thread and the UI thread.

`emit(event)` is the callable the core calls from its worker thread. It never touches a
widget: it appends the event to a queue and, when the queue was empty, posts one
`AgentEvents` message (`post_message` is thread-safe). The UI drains the whole queue per
message and merges runs of stream deltas and command output into one piece each, so a
fast stream costs one repaint per drain instead of one per token, and the event loop
never falls behind the agent.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass
from typing import Any, TypeVar

from swedeck.core import events as ev

from .messages import AgentEvents

Answer = TypeVar("Answer")


@dataclass(frozen=True, slots=True)
class OutputChunk:
    """Merged `CommandOutput` events of one command."""

    action_id: str
    text: str


def coalesce(events: list[ev.Event]) -> list[Any]:
    """Merge consecutive deltas of the same kind/step/index (and output of one command)."""
    merged: list[Any] = []
    texts: list[list[str]] = []  # the pieces of merged[i], joined once at the end
    for event in events:
        last = merged[-1] if merged else None
        if isinstance(event, ev.StreamDelta) and isinstance(last, ev.StreamDelta) and (
                last.kind, last.step, last.index) == (event.kind, event.step, event.index) and event.name is None:
            texts[-1].append(event.text)
            continue
        if isinstance(event, ev.CommandOutput):
            if isinstance(last, OutputChunk) and last.action_id == event.action_id:
                texts[-1].append(event.text)
                continue
            event = OutputChunk(event.action_id, event.text)
        merged.append(event)
        texts.append([event.text] if isinstance(event, (ev.StreamDelta, OutputChunk)) else [])
    for i, pieces in enumerate(texts):
        if len(pieces) > 1:
            merged[i] = dataclasses.replace(merged[i], text="".join(pieces))
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

    @property
    def queued(self) -> int:
        """Events the agent reported that the screen has not drawn yet."""
        with self._lock:
            return len(self._queue)

    def drain(self) -> list[Any]:
        """Called from the UI thread: everything queued so far, coalesced."""
        with self._lock:
            events = list(self._queue)
            self._queue.clear()
        return coalesce(events)


def resolve(future: Future[Answer], value: Answer) -> bool:
    """Answer a request; False if the agent gave up on it (quit, interrupt) meanwhile."""
    if future.done():
        return False
    try:
        future.set_result(value)
    except InvalidStateError:  # resolved by the agent's thread between the check and the set
        return False
    return True
