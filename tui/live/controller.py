"""The session controller: the bridge between the agent's thread and the UI thread.

`emit(event)` is the callable the core calls from its worker thread. It never touches a
widget: it appends the event to a queue and, when the queue was empty, posts one
`AgentEvents` message (`post_message` is thread-safe). The UI drains the whole queue per
message, at most `DRAW_INTERVAL_S` apart (`wait_before_drain`), and merges runs of stream
deltas and command output into one piece each, so a fast stream costs one repaint per
drain instead of one per token, and the event loop never falls behind the agent.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass
from time import monotonic
from typing import Any, TypeVar

from swedeck.core import events as ev

from .messages import AgentEvents

Answer = TypeVar("Answer")

DRAW_INTERVAL_S = 1 / 12
"""The screen takes the agent's events at most this often. While a response streams, each
drain re-parses the tail of the Markdown and costs a frame; 12 a second reads as smooth
streaming and bounds the UI's work however fast tokens arrive (bench B1)."""


@dataclass(frozen=True, slots=True)
class OutputChunk:
    """Merged `CommandOutput` events of one command."""

    action_id: str
    text: str


Drained = ev.Event | OutputChunk
"""What a drain hands the screen: the events, with one command's output merged."""


def coalesce(events: list[ev.Event]) -> list[Drained]:
    """Merge consecutive deltas of the same kind/step/index (and output of one command)."""
    merged: list[Drained] = []
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
            merged.append(OutputChunk(event.action_id, event.text))
            texts.append([event.text])
            continue
        merged.append(event)
        texts.append([event.text] if isinstance(event, ev.StreamDelta) else [])
    for i, pieces in enumerate(texts):
        item = merged[i]
        if len(pieces) > 1 and isinstance(item, (ev.StreamDelta, OutputChunk)):
            merged[i] = dataclasses.replace(item, text="".join(pieces))
    return merged


class SessionController:
    """Queues the agent's events for one target (the session screen) and paces its drains."""

    def __init__(self, post: Callable[[AgentEvents], Any]):
        self._post = post
        self._queue: deque[ev.Event] = deque()
        self._lock = threading.Lock()
        self._last_drain = 0.0
        self._drain_due = False
        """A drain is scheduled (UI thread only)."""

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

    def wait_before_drain(self) -> float | None:
        """UI thread, on `AgentEvents`: 0 to drain now; seconds to schedule one drain in;
        None when one is already scheduled (it takes these events too)."""
        if self._drain_due:
            return None
        wait = self._last_drain + DRAW_INTERVAL_S - monotonic()
        if wait <= 0:
            return 0.0
        self._drain_due = True
        return wait

    @property
    def idle(self) -> bool:
        """Nothing queued and no drain scheduled."""
        return not self._drain_due and not self.queued

    def drain(self) -> list[Drained]:
        """Called from the UI thread: everything queued so far, coalesced."""
        self._last_drain = monotonic()
        self._drain_due = False
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
