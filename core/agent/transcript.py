"""The session's history as the agent writes it (SPEC §9): each message stamped with its turn,
recorded in the live trajectory, and announced to the front end, in that order."""

from __future__ import annotations

from typing import Any, Protocol

from .. import events as ev
from ..messages import Message, last_task


class Recorder(Protocol):
    """Where the history is written as it grows (`trajectory.writer.TrajectoryWriter`)."""

    def add_message(self, message: Message) -> None: ...

    def add_meta(self, event: str, **data: Any) -> None: ...


class Transcript:
    def __init__(self, history: list[Message], emit: ev.EventSink, record: Recorder | None = None):
        self.messages = history
        self._emit = emit
        self._record = record
        self.turn = max([m.extra.turn or 0 for m in history] + [0])
        self._task: str | None = None
        """The task of this turn, once given (a resumed history holds earlier ones)."""

    @property
    def task(self) -> str:
        return self._task if self._task is not None else last_task(self.messages)

    def start_turn(self, task: str) -> int:
        self.turn += 1
        self._task = task
        return self.turn

    def add(self, message: Message) -> None:
        if message.extra.turn is None and self.turn:
            message = message.with_extra(turn=self.turn)
        self.messages.append(message)
        if self._record is not None:
            self._record.add_message(message)
        self._emit(ev.MessageAdded(message=message, index=len(self.messages) - 1))

    def prepend(self, message: Message) -> None:
        """Put `message` (a system prompt) before a given history that has none, and record the
        whole history in that order: the session left it unwritten for this (`Session.run`)."""
        self.messages.insert(0, message)
        if self._record is not None:
            for each in self.messages:
                self._record.add_message(each)
        self._emit(ev.MessageAdded(message=message, index=0))

    def meta(self, event: str, **data: Any) -> None:
        """A session event that is not a message (mode and processor changes, lifted limits)."""
        if self._record is not None:
            self._record.add_meta(event, **data)
