"""SPEC §11.4 in the UI: rows appear, update in place, Enter follows one live."""

from __future__ import annotations

import json
import os
import time

import pytest

from support.replay import add_step, start_writer, write_trajectory
from support.waiting import wait_for, wait_until
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
        assert isinstance(replay, ReplayScreen) and replay.following and replay.step == 2
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


async def test_a_running_batch_has_a_row_per_instance_and_enter_opens_one_live(openai_server, tmp_path):
    """`swedeck watch DIR` on a batch's folder while the batch runs (SPEC §15)."""
    import asyncio
    import threading

    from support.batch import Collect, conversation, write_instances
    from support.driver import make_config
    from support.openai_server import Turn, model_config
    from support.reliability import SUBMIT
    from swedeck.core.batch.instances import load_instances
    from swedeck.core.batch.progress import Tally
    from swedeck.core.batch.runner import Batch, BatchOptions

    openai_server.respond(lambda body: Turn.bash_tool("sleep 30") if "sleep" not in conversation(body)
                          else Turn.bash_tool(SUBMIT))
    out = tmp_path / "out"
    instances = load_instances(str(write_instances(tmp_path / "i.jsonl", ["w-1", "w-2", "w-3"])))
    tally = Tally()
    batch = Batch(make_config(tmp_path, model_config(openai_server)), instances, out, BatchOptions(), Collect(tally),
                  tally)
    runner = threading.Thread(target=batch.run, daemon=True)
    runner.start()
    try:
        live = out / "w-1" / "w-1.traj.jsonl"
        await asyncio.to_thread(wait_until, lambda: live.exists() and '"action"' in live.read_text(), timeout=60)
        app = WatchApp(DirectoryWatcher(out), interval_s=0.1)
        async with app.run_test(size=(120, 36)) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: screen.scans >= 1)
            from textual.widgets import DataTable, Static

            table = screen.query_one(DataTable)
            statuses = {str(table.get_row(key)[0]): str(table.get_row(key)[1]) for key in table.rows}
            assert statuses == {"w-1/w-1.traj.jsonl": "running", "w-2": "queued", "w-3": "queued"}
            header = str(screen.query_one("#watch-header", Static).render())
            assert "batch of 3 (local, 1 workers)" in header and "2 queued" in header

            table.move_cursor(row=table.get_row_index(str(out / "w-2" / "w-2")))
            await pilot.press("enter")
            assert app.screen is screen  # nothing to open yet: said, not crashed
            table.move_cursor(row=table.get_row_index(str(out / "w-1" / "w-1")))
            await pilot.press("enter")
            replay = app.screen
            assert isinstance(replay, ReplayScreen) and replay.following
    finally:
        batch.stop()
        runner.join(60)
    assert not runner.is_alive()
    assert json.loads((out / "w-1" / "w-1.traj.json").read_text())["info"]["exit_status"] == "Interrupted"


async def test_the_table_follows_file_system_notices_and_q_leaves_at_once(tmp_path):
    write_trajectory(tmp_path / "first", 1)
    app = WatchApp(DirectoryWatcher(tmp_path), interval_s=30)  # no polling that could stand in for the notices
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.scans >= 1)
        assert screen.notices
        from swedeck.tui.watch.watch_screen import DataTable

        table = screen.query_one(DataTable)
        write_trajectory(tmp_path / "sub" / "second", 3)
        await wait_for(pilot, lambda: table.row_count == 2, 10)
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, 5)
    workers = [worker for worker in app.workers if worker.group == "scan"]
    assert all(worker.is_finished for worker in workers)
