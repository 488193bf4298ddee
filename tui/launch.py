"""Start the live UI for a session (`swedeck run` without --headless, `swedeck demo`)."""

from __future__ import annotations

from typing import Any

from swedeck.core.config import SwedeckConfig


def run_ui(config: SwedeckConfig, task: str | None, resume: str | None = None, **session_options: Any) -> int:
    """Run a live session in the UI until the person quits; returns the exit code."""
    from swedeck.core.session import Session

    from .app import SwedeckApp

    session = Session(config, task, interactive=True, resume=resume, **session_options)
    app = SwedeckApp(session)
    app.run()
    if app.summary:
        print(app.summary)
    return app.exit_code
