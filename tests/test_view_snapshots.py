"""How the other views look (pytest-textual-snapshot), at fixed sizes: the diff, the watch
table, what-if, and the compaction review of the live view. Files are written under one
fixed folder where a view names their paths. Regenerate with `--snapshot-update`."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from support.replay import add_step, start_writer
from support.tui import add_message, ask, assistant_turn
from support.waiting import wait_for
from swedeck.core import events as ev
from swedeck.core.messages import MessageType
from swedeck.core.watch import DirectoryWatcher
from swedeck.tui.diff.app import DiffApp
from swedeck.tui.replay.app import ReplayApp
from swedeck.tui.watch.app import WatchApp

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 36)
STAMP = 1_700_000_000


def fixed_folder(name: str) -> Path:
    """A folder whose path is the same every run (the watch view shows it)."""
    folder = Path(tempfile.gettempdir()) / "swedeck-snapshots" / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def run(base: Path, commands: list[str], output: dict[int, str] | None = None) -> Path:
    writer = start_writer(base)
    for step, command in enumerate(commands, start=1):
        add_step(writer, step, command=command, output=(output or {}).get(step))
    path = writer.finish({"exit_status": "Submitted", "submission": "done"})
    os.utime(path, (STAMP, STAMP))
    return path


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_diff_view_at_the_first_divergence(snap_compare, tmp_path):
    a = run(tmp_path / "a", ["ls", "cat calc.py", "python -m pytest", "git diff"])
    b = run(tmp_path / "b", ["ls", "cat calc.py", "sed -i s/a/b/ calc.py", "python -m pytest", "git diff"],
            output={4: "1 passed"})
    assert snap_compare(DiffApp.of(str(a), str(b)), terminal_size=SIZE, run_before=settle)


def test_watch_table(snap_compare):
    folder = fixed_folder("watch")
    run(folder / "first", ["ls", "python -m pytest"])
    run(folder / "second", ["cat README.md"])

    async def scanned(pilot) -> None:
        await wait_for(pilot, lambda: pilot.app.screen.scans >= 1 and pilot.app.screen.query_one("DataTable").row_count == 2)
        await pilot.pause()

    app = WatchApp(DirectoryWatcher(folder), interval_s=30)
    assert snap_compare(app, terminal_size=SIZE, run_before=scanned)


def test_what_if(snap_compare, tmp_path):
    path = run(tmp_path / "t", ["ls", "cat calc.py", "python -m pytest", "git diff", "git status"],
               output={step: "line\n" * 40 for step in range(1, 6)})

    async def what_if(pilot) -> None:
        await settle(pilot)
        await pilot.press("dollar_sign", "p")
        await wait_for(pilot, lambda: type(pilot.app.screen).__name__ == "WhatIfScreen")
        await settle(pilot)

    assert snap_compare(ReplayApp([path]), terminal_size=SIZE, run_before=what_if)


def test_compaction_review(snap_compare):
    from support.tui import ScriptedSession, tui_config
    from swedeck.tui.live.app import SwedeckApp
    from swedeck.tui.widgets.input_line import InputLine

    task = add_message("user", "Fix the failing test", MessageType.TASK, task="Fix the failing test")
    review = ask(ev.CompactionReview, summary="We read calc.py; divide() lacks a zero check; tests fail in "
                                              "test_calc.py::test_divide.", messages=12, tokens_before=9_000,
                 tokens_after=1_200, ledger="What the replaced part touched, kept word for word (swedeck's ledger):\n"
                 "Files:\n- calc.py\n- test_calc.py\nCommands:\n- `python -m pytest -q` (exit 1)\n"
                 "Failing tests:\n- test_calc.py::test_divide")
    steps = [task, *assistant_turn(1, "Run the tests.", "python3 test_calc.py", needs_confirmation=False), review]
    app = SwedeckApp(ScriptedSession(tui_config(), steps, task="Fix the failing test"))

    async def reviewing(pilot) -> None:
        # the screen, then its summary box (mounted after the screen: under load, frames later)
        await wait_for(pilot, lambda: type(pilot.app.screen).__name__ == "CompactionScreen"
                       and bool(pilot.app.screen.query("TextArea")), timeout=10)
        for line in pilot.app.screen_stack[0].query(InputLine):
            line.cursor_blink = False
        pilot.app.screen.query_one("TextArea").cursor_blink = False
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=reviewing)
