"""The screen kit (`tui/kit/`): every view (live, replay, diff, watch) is a title and a default
screen on one app base, so the F1 help shows the person's keymap in each, the palette offers
each view's keys, and a worker that fails is said and ends its busy state. The views' state
classes run without an app (as `SessionState` does)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from support.replay import add_step, start_writer, write_trajectory
from support.waiting import wait_for
from swedeck.core.ui_settings import UIConfig
from swedeck.core.watch import DirectoryWatcher, WatchRow
from swedeck.tui.diff.app import DiffApp
from swedeck.tui.diff.bindings import DIFF_BINDINGS
from swedeck.tui.diff.diff_state import DiffState
from swedeck.tui.kit.app_base import APP_BINDINGS, ViewApp
from swedeck.tui.replay.app import ReplayApp
from swedeck.tui.replay.bindings import REPLAY_BINDINGS
from swedeck.tui.replay.replay_state import OpenedFile, ReplayState
from swedeck.tui.shared.help_screen import HelpScreen
from swedeck.tui.watch.app import WatchApp
from swedeck.tui.watch.watch_screen import WatchScreen
from swedeck.tui.watch.watch_state import BatchLine, WatchState

SIZE = (120, 36)
pytestmark = [pytest.mark.timeout(60), pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    return write_trajectory(tmp_path / "a", 3), write_trajectory(tmp_path / "b", 4)


def apps(tmp_path: Path, ui: UIConfig) -> dict[str, ViewApp]:
    a, b = two_runs(tmp_path)
    return {"replay": ReplayApp([a], ui=ui), "diff": DiffApp.of(str(a), str(b), ui=ui),
            "watch": WatchApp(DirectoryWatcher(tmp_path), ui=ui, interval_s=0.1)}


@pytest.mark.parametrize("view", ["replay", "diff", "watch"])
async def test_help_shows_the_persons_keymap_in_every_view(tmp_path, view):
    keymap = {"replay_search": "z", "diff_search": "z", "watch_filter": "z"}
    app = apps(tmp_path, UIConfig(keymap=keymap))[view]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        table = app.screen.query_one(DataTable)
        rows = {table.get_row_at(i)[1]: table.get_row_at(i)[0] for i in range(table.row_count)}
        remapped = next(key for key in keymap if key.startswith(view))
        assert rows[remapped] == "z", rows
        assert "quit" in rows and "help" not in rows  # the app's keys, those the view does not repeat
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))
        await pilot.press("z")  # and the remapped key does what its binding does
        if view == "watch":
            await wait_for(pilot, lambda: app.screen.filter is not None)
        else:
            await wait_for(pilot, lambda: type(app.focused).__name__ == "AskLine")  # the question, over the view


@pytest.mark.parametrize(("view", "bindings"), [("replay", REPLAY_BINDINGS), ("diff", DIFF_BINDINGS)])
async def test_the_palette_offers_every_key_of_the_view(tmp_path, view, bindings):
    app = apps(tmp_path, UIConfig())[view]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {binding.description for binding in [*bindings, *APP_BINDINGS]} <= titles
        assert "Theme" in titles
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Last")
        await command.callback()
        await wait_for(pilot, lambda: app.screen.here == app.screen.count)


@pytest.mark.parametrize("work", ["search", "curve"])
async def test_a_worker_whose_file_disappears_says_so_and_ends_its_busy_state(tmp_path, work):
    """The search says it stopped and its header no longer says "(searching…)"; a worker
    without words of its own (the token curve) is said by the kit; the app goes on. (A file
    read whole is searched and its curve read where it is open: a live file is read again, by its
    lines.)"""
    path = write_trajectory(tmp_path / "t", 3, finish=False)
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.step == 1)
        path.unlink()
        if work == "search":
            screen.search("echo")
            await wait_for(pilot, lambda: not screen.searching, 10)
            assert "(searching…)" not in screen.header.text() and screen.header.query == "echo"
            said = [n for n in app._notifications if n.title == "The search stopped"]
            assert said and path.name in said[0].message, [(n.title, n.message) for n in app._notifications]
        else:
            screen.run.start_curve()  # reads the live file again, in the open run's thread
            await wait_for(pilot, lambda: any(n.title == "The token curve failed" for n in app._notifications), 10)
        assert app.is_running


async def test_diff_search_runs_in_a_worker_over_the_cores_match_rule(tmp_path):
    a, b = two_runs(tmp_path)
    writer = start_writer(tmp_path / "c")
    add_step(writer, 1)
    add_step(writer, 2, output="Traceback: ZeroDivisionError")
    c = writer.finish({"exit_status": "Submitted"})
    app = DiffApp.of(str(a), str(c))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("slash", *"zerodivision", "enter")
        await wait_for(pilot, lambda: screen.search_text == "zerodivision" and not screen.searching, 10)
        assert screen.matches == [2] and screen.row == 1
        assert "/zerodivision: 1 rows" in screen.header


# --- the state classes, without an app -------------------------------------------------------

def test_replay_state_computes_its_header():
    state = ReplayState()
    assert state.header.text() == ""
    state.opened = OpenedFile("run.traj.json", "swedeck", "openai/gpt-4o", 12)
    state.step = 3
    assert state.header.text() == "run.traj.json · swedeck · step 3/12 · openai/gpt-4o"
    state.search_text, state.searching = "error", True
    state.matches = [2, 5]
    assert state.header.text().endswith("/error: 2 steps (searching…)")
    state.searching, state.following, state.files, state.file_index = False, True, 3, 1
    assert state.header.text() == ("run.traj.json · file 2/3 · swedeck · step 3/12 · openai/gpt-4o · "
                                   "/error: 2 steps · following")
    state.add_curve({2: 200, 1: 100})
    state.add_curve({3: 300})
    assert state.curve_points == [100, 200, 300]


def test_diff_state_computes_its_header():
    state = DiffState()
    state.names, state.rows, state.first_divergence = ("a.json", "b.json"), 7, 3
    state.row = 2
    assert state.header == "A a.json ↔ B b.json · row 3/7 · first divergence: step 3 of A"
    state.search_text, state.matches, state.searching = "x", [1], True
    assert state.header.endswith("/x: 1 rows (searching…)")
    state.first_divergence = None
    assert "the runs never part" in state.header


def test_watch_state_computes_its_header():
    state = WatchState()
    state.root = "/runs"
    assert state.header == "watching /runs"
    rows = {f"k{i}": WatchRow(key=f"k{i}", name=f"n{i}", path=Path(f"/runs/n{i}"), status=status, cost=0.5,
                              verdict=verdict)
            for i, (status, verdict) in enumerate([("running", None), ("finished", "resolved"),
                                                   ("finished", "unresolved")])}
    state.rows, state.scans = rows, 1
    assert state.header == "watching /runs · 2 finished, 1 running · resolved 1, unresolved 1"
    state.filter = "resolved"
    assert "showing resolved (v: next)" in state.header
    assert [row.key for row in rows.values() if state.shown(row)] == ["k1"]
    state.batch_line = BatchLine(instances=3, ended=False, executor="local", workers=2)
    assert state.header.startswith("watching /runs · batch of 3 (local, 2 workers) · ")
    assert state.header.endswith("· $1.50")


async def test_watch_screen_takes_scans_as_messages(tmp_path):
    write_trajectory(tmp_path / "done", 2)
    app = WatchApp(DirectoryWatcher(tmp_path), interval_s=0.1)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        await wait_for(pilot, lambda: screen.scans >= 1 and screen.query_one(DataTable).row_count == 1)
        assert list(screen.rows) == list(app.watcher.rows)
        assert "1 finished" in screen.header
