"""The agent's ways of ending a step or a session (SPEC §6.4): what the loop raises and catches.
The statuses themselves are `core/exit_status.py`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..exit_status import ExitStatus

if TYPE_CHECKING:
    from ..messages import Message


class SessionEnd(Exception):
    """Raised inside the loop to end the session with `status`."""

    def __init__(self, status: ExitStatus, message: str = "", submission: str = ""):
        super().__init__(message or status.value)
        self.status = status
        self.message = message
        self.submission = submission


class FlowInterrupt(Exception):
    """A step ended early. It carries the messages that answer what the step left open (the
    tool calls that will not run); the loop adds them, in one place, before it acts on why
    the step ended (mini-swe-agent's `InterruptAgentFlow`)."""

    def __init__(self, *messages: Message):
        super().__init__(type(self).__name__)
        self.messages = messages


class Submitted(FlowInterrupt):
    """The current turn's task was submitted (SPEC §6.3)."""

    def __init__(self, submission: str, *messages: Message, warning: str = ""):
        super().__init__(*messages)
        self.submission = submission
        self.warning = warning
        """Set when the submission is not byte for byte what the command printed (a secret masked)."""


class Interrupted(FlowInterrupt):
    """The person interrupted a stream, a command or a pending confirmation."""


class Rejected(FlowInterrupt):
    """The person rejected a command; the model hears why and gets the next step."""


class LimitReached(Exception):
    pass


class QuitRequested(Exception):
    pass
