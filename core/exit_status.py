"""How a session ends (SPEC §6.4) and the exit code each end gives (SPEC §2): the statuses every
layer names (events, the batch, the front ends), under the agent that raises them."""

from __future__ import annotations

from enum import Enum


class ExitStatus(str, Enum):
    SUBMITTED = "Submitted"
    LIMITS_EXCEEDED = "LimitsExceeded"
    FORMAT_ERROR = "FormatError"
    CONTEXT_WINDOW_EXCEEDED = "ContextWindowExceeded"
    API_ERROR = "APIError"
    ENVIRONMENT_ERROR = "EnvironmentError"
    INTERRUPTED = "Interrupted"
    USER_QUIT = "UserQuit"
    REPLAY_EXHAUSTED = "ReplayExhausted"
    """The replay model has no more responses (SPEC §4.5: a clean end)."""
    UI_ERROR = "UIError"
    """The live UI itself failed: the session was ended by that crash, not by the person."""

    def __str__(self) -> str:  # in messages and f-strings a status reads as recorded: `Submitted`
        return self.value

    def __format__(self, spec: str) -> str:
        return self.value.__format__(spec)


EXIT_CODES = {
    ExitStatus.SUBMITTED: 0,
    ExitStatus.USER_QUIT: 0,
    ExitStatus.REPLAY_EXHAUSTED: 0,
    ExitStatus.LIMITS_EXCEEDED: 3,
    ExitStatus.INTERRUPTED: 130,
}


def exit_code(status: ExitStatus | str) -> int:
    return EXIT_CODES.get(ExitStatus(status), 1)


WORDS = {
    ExitStatus.SUBMITTED: "submitted",
    ExitStatus.LIMITS_EXCEEDED: "stopped at a limit",
    ExitStatus.FORMAT_ERROR: "stopped: too many malformed answers in a row",
    ExitStatus.CONTEXT_WINDOW_EXCEEDED: "stopped: the prompt no longer fits the model's context window",
    ExitStatus.API_ERROR: "stopped: the model's API kept failing",
    ExitStatus.ENVIRONMENT_ERROR: "stopped: the environment failed",
    ExitStatus.INTERRUPTED: "interrupted",
    ExitStatus.USER_QUIT: "you quit",
    ExitStatus.REPLAY_EXHAUSTED: "the replayed trajectory has no more answers",
    ExitStatus.UI_ERROR: "the UI stopped on an error",
}


def in_words(status: ExitStatus | str) -> str:
    """How a session ended, for a person (exit lines); the recorded name stays in the files."""
    try:
        return WORDS[ExitStatus(status)]
    except ValueError:
        return str(status)


def exit_line(status: ExitStatus | str, message: str = "", trajectory_path: str | None = None) -> str:
    """The one line a front end prints when a session has ended: what happened, in words."""
    words = in_words(status)
    same = message.strip().lower() in ("", str(status).lower(), words.lower(), "quit by the user")
    detail = "" if same else f" ({message})"
    where = f"; trajectory: {trajectory_path}" if trajectory_path else ""
    return f"swedeck: {words}{detail}{where}"
