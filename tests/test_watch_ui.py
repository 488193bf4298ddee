"""SPEC §11.4 in the UI: rows appear, update in place, Enter follows one live."""

from __future__ import annotations

import os
import time

import pytest

from support.replay import add_step, start_writer, write_trajectory
from support.waiting import wait_for
from swedeck.core.watch import DirectoryWatcher
from swedeck.tui.replay.replay_screen import ReplayScreen
from swedeck.tui.watch.app import WatchApp
from swedeck.tui.watch.watch_screen import WatchScreen

pytestmark = [pytest.mark.timeout(60), pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_table_updates_in_place_and_enter_follows(tmp_path):
    write_trajectory(tmp_path / "done", 2)
    crashed = write_trajectory(tmp_path / "crashed", 1, finish=False)
    old = time.time() - 3600
    os.utime(crashed, (old, old))
    writer = start_writer(tmp_path / "zlive")
    add_step(writer, 1)
    app = WatchApp(DirectoryWatcher(tmp_path, stale_after_s=60), interval_s=0.1)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        await wait_for(pilot, lambda: screen.scans >= 1)
        from swedeck.tui.watch.watch_screen import DataTable

        table = screen.query_one(DataTable)
        assert table.row_count == 3
        statuses = {str(table.get_row(key)[0]): str(table.get_row(key)[1]) for key in table.rows}
        assert statuses == {"done.traj.json": "finished: Submitted", "crashed.traj.jsonl": "stale",
                            "zlive.traj.jsonl": "running"}
        live_key = str(tmp_path / "zlive")
        add_step(writer, 2, command="echo grew")
        await wait_for(pilot, lambda: str(table.get_cell(live_key, "steps")) == "2")
        assert str(table.get_cell(live_key, "last action")) == "echo grew"
        assert table.row_count == 3
        table.move_cursor(row=table.get_row_index(live_key))
        await pilot.press("enter")
        replay = app.screen
        assert isinstance(replay, ReplayScreen) and replay.follow and replay.step == 2
        add_step(writer, 3)
        await wait_for(pilot, lambda: replay.step == 3)
        await pilot.press("q")
        assert isinstance(app.screen, WatchScreen)
        writer.finish({"exit_status": "Submitted"})
        await wait_for(pilot, lambda: live_key in table.rows
                       and str(table.get_cell(live_key, "status")) == "finished: Submitted")
        # the column grew with its content: the whole status shows, not "runnin"
        status = next(column for key, column in table.columns.items() if key.value == "status")
        assert status.content_width >= len("finished: Submitted")
        await pilot.press("q")
