"""An open run's events in a view (`core/replay/open_run.py`): its threads call `posting(node)`'s
sink, which posts each event to the node as a `RunEventMessage` (posting is safe from any
thread); the node handles it on the UI's thread, in `on_run_event_message`."""

from __future__ import annotations

from textual.message import Message
from textual.message_pump import MessagePump

from swedeck.core.replay.open_run import Emit, RunEvent


class RunEventMessage(Message):
    def __init__(self, event: RunEvent) -> None:
        super().__init__()
        self.event = event


def posting(node: MessagePump) -> Emit:
    """A sink for an open run that hands each event to `node` on its UI's thread."""
    def emit(event: RunEvent) -> None:
        node.post_message(RunEventMessage(event))
    return emit
