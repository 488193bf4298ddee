"""SPEC §11.4: the watch table's rows, read incrementally, without the UI."""

from __future__ import annotations

import os
import shutil
import time

from conftest import MINI_FIXTURE, SWEAGENT_FIXTURE
from support.replay import add_step, start_writer, write_trajectory
from swedeck.core.watch import DirectoryWatcher, status_text


def by_name(watcher: DirectoryWatcher) -> dict:
    return {row.name: row for row in watcher.rows.values()}


def test_running_finished_stale_and_foreign_files(tmp_path):
    write_trajectory(tmp_path / "done", 3)
    running = start_writer(tmp_path / "sub" / "live")
    add_step(running, 1)
    crashed = write_trajectory(tmp_path / "crashed", 2, finish=False)
    old = time.time() - 600
    os.utime(crashed, (old, old))
    shutil.copy(MINI_FIXTURE, tmp_path / "mini.traj.json")
    shutil.copy(SWEAGENT_FIXTURE, tmp_path / "swe.traj")

    watcher = DirectoryWatcher(tmp_path, stale_after_s=60)
    update = watcher.scan()
    rows = by_name(watcher)

    assert len(update.changed) == 5
    assert rows["done.traj.json"].status == "finished"
    assert status_text(rows["done.traj.json"]) == "finished: Submitted"
    assert rows["done.traj.json"].steps == 3
    assert rows["done.traj.json"].cost == 0.03
    assert rows["done.traj.json"].last_action == "echo step-3-output"
    assert rows["done.traj.json"].context_left == 97.0
    live = rows[os.path.join("sub", "live.traj.jsonl")]
    assert (live.status, live.steps, live.last_action) == ("running", 1, "echo step-1-output")
    assert rows["crashed.traj.jsonl"].status == "stale"
    assert rows["crashed.traj.jsonl"].steps == 2
    assert rows["mini.traj.json"].status == "finished" and rows["mini.traj.json"].steps > 0
    assert rows["swe.traj"].status == "finished" and rows["swe.traj"].steps > 0
    running.close()


def test_growth_reads_only_new_messages_and_updates_one_row(tmp_path):
    write_trajectory(tmp_path / "done", 2)
    writer = start_writer(tmp_path / "live")
    add_step(writer, 1)
    watcher = DirectoryWatcher(tmp_path)
    watcher.scan()
    live_file = watcher._live[writer.path]
    assert live_file.parsed == 4

    assert watcher.scan().changed == []  # nothing changed, nothing reported
    add_step(writer, 2, command="pytest -q")
    update = watcher.scan()
    assert [row.name for row in update.changed] == ["live.traj.jsonl"]
    assert update.changed[0].steps == 2 and update.changed[0].last_action == "pytest -q"
    assert live_file.parsed == 6 and watcher._live[writer.path] is live_file

    writer.finish({"exit_status": "LimitsExceeded"})
    update = watcher.scan()
    assert [(row.name, row.status, row.exit_status) for row in update.changed] == [
        ("live.traj.json", "finished", "LimitsExceeded")]
    assert update.removed == []


def test_a_file_that_stops_growing_becomes_stale(tmp_path):
    now = [1000.0]
    writer = start_writer(tmp_path / "live")
    add_step(writer, 1)
    os.utime(writer.path, (now[0], now[0]))
    watcher = DirectoryWatcher(tmp_path, stale_after_s=30, clock=lambda: now[0])
    assert watcher.scan().changed[0].status == "running"
    now[0] += 31
    assert watcher.scan().changed[0].status == "stale"
    add_step(writer, 2)
    assert watcher.scan().changed[0].status == "running"
    writer.close()


def test_bad_files_are_rows_with_a_reason(tmp_path):
    (tmp_path / "binary.traj.json").write_bytes(b"\x00\x01\x02garbage")
    (tmp_path / "wrong.traj.json").write_text('{"messages": 42}')
    (tmp_path / "notswedeck.traj.jsonl").write_text('{"hello": 1}\n')
    write_trajectory(tmp_path / "good", 1)
    watcher = DirectoryWatcher(tmp_path)
    watcher.scan()
    rows = by_name(watcher)
    assert rows["good.traj.json"].status == "finished"
    assert rows["binary.traj.json"].status == "error" and "binary" in rows["binary.traj.json"].error
    assert rows["wrong.traj.json"].status == "error" and rows["wrong.traj.json"].error
    assert rows["notswedeck.traj.jsonl"].status == "error" and "header" in rows["notswedeck.traj.jsonl"].error


def test_removed_files_are_reported(tmp_path):
    path = write_trajectory(tmp_path / "gone", 1)
    watcher = DirectoryWatcher(tmp_path)
    watcher.scan()
    path.unlink()
    update = watcher.scan()
    assert update.removed == [str(tmp_path / "gone")] and watcher.rows == {}


def test_a_thousand_files_rescan_reads_nothing_new(tmp_path):
    source = write_trajectory(tmp_path / "seed", 2)
    for number in range(1000):
        folder = tmp_path / f"d{number % 10}"
        folder.mkdir(exist_ok=True)
        shutil.copy(source, folder / f"t{number}.traj.json")
    watcher = DirectoryWatcher(tmp_path)
    assert len(watcher.scan().changed) == 1001
    assert watcher.scan().changed == []


def test_watch_a_missing_folder_is_a_usage_error(tmp_path, capsys):
    from swedeck.cli import main

    assert main(["watch", str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_told_what_changed_it_looks_at_those_files_and_the_live_ones_only(tmp_path):
    """The UI's file watcher reports paths; a scan given them never walks the folder again."""
    for number in range(30):
        write_trajectory(tmp_path / "old" / f"done-{number:02d}", 1)
    writer = start_writer(tmp_path / "live")
    add_step(writer, 1)
    watcher = DirectoryWatcher(tmp_path, stale_after_s=60)
    watcher.scan()
    assert len(watcher.rows) == 31
    walked = []
    watcher._files = lambda: walked.append(1) or {}  # a walk now would empty the table

    new = write_trajectory(tmp_path / "old" / "new", 2)
    update = watcher.scan({str(new)})
    assert [row.name for row in update.changed] == [os.path.join("old", "new.traj.json")] and not walked
    add_step(writer, 2)  # the live file grows: no notice needed, live files are looked at every time
    update = watcher.scan(set())
    assert [(row.name, row.steps) for row in update.changed] == [("live.traj.jsonl", 2)]
    final = writer.finish({"exit_status": "Submitted"})  # the .jsonl goes, the .json comes
    update = watcher.scan({str(final), str(tmp_path / "live.traj.jsonl")})
    assert by_name(watcher)["live.traj.json"].status == "finished" and "live.traj.jsonl" not in by_name(watcher)
    new.unlink()
    update = watcher.scan({str(new)})
    assert update.removed == [str(tmp_path / "old" / "new")] and len(watcher.rows) == 31 and not walked
    (tmp_path / "fresh-folder").mkdir()
    watcher.scan({str(tmp_path / "fresh-folder")})  # a folder came: the whole tree is walked again
    assert walked


def test_a_finished_run_with_no_cost_of_its_own_is_priced_from_its_usage(tmp_path):
    """Issue 65.3: another agent's run records tokens, not dollars: its row's cost is priced
    from its usage (litellm's prices, `model.prices` over them), as `replay` prices it."""
    from pathlib import Path

    from swedeck.core.cost import Prices, cost_of
    from swedeck.core.trajectory.loader import load_trajectory

    session = Path(__file__).parent / "fixtures" / "agents" / "claude-code" / "cc-session-1.jsonl"
    shutil.copy(session, tmp_path / "claude.traj.json")
    watcher = DirectoryWatcher(tmp_path)
    watcher.scan()
    row = by_name(watcher)["claude.traj.json"]
    expected = cost_of(load_trajectory(tmp_path / "claude.traj.json"), Prices()).total_usd
    assert row.status == "finished" and row.cost == expected > 0
    repriced = DirectoryWatcher(tmp_path, prices=Prices({"claude-sonnet-4-5": {"input": 0, "output": 0}}))
    repriced.scan()
    assert by_name(repriced)["claude.traj.json"].cost == 0
