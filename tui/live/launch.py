"""Start the live UI for a session (`swedeck run` without --headless, `swedeck demo`, a fork
from replay), and say how it ended."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from swedeck.core.exit_status import ExitStatus, exit_line

from ..kit.crash import crash_message

if TYPE_CHECKING:
    from textual.app import App

    from swedeck.core.config import SwedeckConfig
    from swedeck.core.session import SessionControl


def run_ui(config: SwedeckConfig, task: str | None, resume: str | None = None, **session_options: Any) -> int:
    """Run a live session in the UI until the person quits; returns the exit code."""
    from swedeck.core.session import Session

    session = Session(config, task, interactive=True, resume=resume, **session_options)
    return run_session_ui(session)


FINISH_WAIT_S = 60.0
"""After a signal: how long the session may take to write its final file and close its environment."""
EXIT_GRACE_S = 5.0
"""After a signal and the final file: how long the process may take to leave by itself."""


def exit_when_stuck(session: SessionControl) -> None:
    """After a signal the process must end. Once the session has written its record (or the
    wait for it is over) it gets `EXIT_GRACE_S` to leave by itself; then it is ended here.
    Under load, a UI whose terminal had closed (SIGHUP) sometimes never got past its own
    shutdown and stayed, asleep, for good (46 of ~85 test runs left one behind)."""
    session.finished.wait(FINISH_WAIT_S)
    time.sleep(EXIT_GRACE_S)
    try:
        print(exit_line(ExitStatus.INTERRUPTED, "", session.trajectory_path), file=sys.stderr, flush=True)
    except OSError:  # the terminal is gone
        pass
    os._exit(130)


def run_session_ui(session: SessionControl) -> int:
    from swedeck.core.headless import ending_on_signals

    from .app import SwedeckApp

    app = SwedeckApp(session)
    signalled: list[bool] = []

    def end() -> None:  # SIGTERM / SIGHUP: as Ctrl+C headless, then leave the UI
        signalled.append(True)
        session.quit(ExitStatus.INTERRUPTED)
        app.exit()
        threading.Thread(target=exit_when_stuck, args=(session,), name="swedeck-exit-guard", daemon=True).start()

    with ending_on_signals(end, ctrl_c=True):  # `kill -INT` too: Interrupted and 130, as SPEC §2 says
        app.run()
    if signalled:
        session.finished.wait(FINISH_WAIT_S)
        print(exit_line(ExitStatus.INTERRUPTED, "", session.trajectory_path), file=sys.stderr)
        return 130
    return ui_ended(app, session)


def ui_ended(app: App[Any], session: SessionControl | None = None) -> int:
    """The exit code of a UI that has ended, with its summary, or, when the UI itself failed
    (Textual printed the traceback), one line that says so and where the trajectory is: 1."""
    if app.return_code:
        message = crash_message(app)
        if session is not None:  # the agent's thread ends too, and records the crash as what it was
            session.quit(ExitStatus.UI_ERROR, message)
        line = f"swedeck: {message}"
        where = session.trajectory_path if session is not None else None
        print(line + (f"; the session's trajectory: {where}" if where else ""), file=sys.stderr)
        return 1
    summary = getattr(app, "summary", None)  # the live app's one-line end (SwedeckApp.summary)
    if summary:
        print(summary)
    return getattr(app, "exit_code", 0) or 0
