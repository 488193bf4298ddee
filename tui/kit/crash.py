"""How a front end names a UI that stopped on an error: the exit line's words and the message
the session records. Imports no Textual (the launch path reads it before any app exists)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App


def crash_message(app: App[Any]) -> str:
    """`the UI stopped on an error (ZeroDivisionError: division by zero)`: the exit line's words
    and the message the session records."""
    error = getattr(app, "_exception", None)
    what = f"{type(error).__name__}: {error}" if error is not None else f"exit {app.return_code}"
    return f"the UI stopped on an error ({what})"
