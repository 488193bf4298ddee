"""Textual messages the session controller posts from the agent's thread."""

from __future__ import annotations

from textual.message import Message

from swedeck.core import events as ev


class AgentEvents(Message):
    """Events waiting in the controller's queue; the handler drains them all at once."""


class SessionFinished(Message):
    def __init__(self, exit_code: int, exit_status: str, message: str = "", trajectory_path: str | None = None) -> None:
        super().__init__()
        self.trajectory_path = trajectory_path
        self.exit_code = exit_code
        self.exit_status = exit_status
        self.message = message


__all__ = ["AgentEvents", "SessionFinished", "ev"]
