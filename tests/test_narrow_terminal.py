"""Issue 43.14: every view at 80x24, as a new user first opens it: keys whole in the footer (the
ones a person must find first: approve, quit, help), the diff's step list and header readable,
a Harbor job's trials told apart by name and reward."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets._footer import FooterKey

from support.openai_server import Turn
from support.replay import write_trajectory
from support.waiting import wait_for

NARROW = (80, 24)
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def footer_keys(screen) -> list[str] | None:
    """The footer's keys as drawn, each whole; None while one is cut (the footer is still fitting
    them after a change: the tests wait for a settled footer and then read it)."""
    footer = screen.query_one("FittedFooter")
    shown = []
    for key in screen.query(FooterKey):
        if key.display and key.region.width:
            if key.region.right > footer.region.right:
                return None
            shown.append(key.description)
    return shown


async def test_the_live_footer_shows_whole_keys_at_80_columns(openai_server, tmp_path):
    from test_tui_flows import live, pending, running

    session = live(openai_server, tmp_path, Turn.bash_tool("echo hi"))
    async with running(session, pending, size=NARROW) as (app, pilot):
        await pilot.pause()
        def settled() -> list[str] | None:
            keys = footer_keys(app.screen)
            return keys if keys and "Approve" in keys else None

        shown = await wait_for(pilot, settled)
        # the answers to the command first, then interrupt, quit and help: all whole at 80 (issue 62: the
        # footer stopped after `e Edit`, without `a`)
        assert shown[:7] == ["Approve", "Reject", "Always", "Edit", "Interrupt", "Quit", "Help"], shown


async def test_the_live_header_fits_80_columns_with_the_folders_name(openai_server, tmp_path):
    """Issue 62: at 80 columns the header's environment was cut mid-word ("commands run on this");
    it now says the environment's kind and the end of its folder, whole."""
    from test_tui_flows import live, pending, running

    folder = tmp_path / "calc-project"
    folder.mkdir()
    session = live(openai_server, folder, Turn.bash_tool("echo hi"))
    async with running(session, pending, size=NARROW) as (app, pilot):
        header = app.session_screen.query_one("HeaderBar")
        label = header.query_one("#environment")

        def fitted() -> str | None:
            text = str(label.render())
            return text if label.region.right <= header.region.right and text.rstrip().endswith(folder.name) \
                and len(text.strip()) <= label.region.width else None

        try:
            shown = await wait_for(pilot, fitted)
        except AssertionError:
            raise AssertionError((str(label.render()), label.region, header.region)) from None
        assert shown.strip().startswith("⚠ local …"), shown
    async with running(live(openai_server, folder, Turn.bash_tool("echo hi")), pending, size=(160, 48)) as (app, pilot):
        label = app.session_screen.query_one("HeaderBar").query_one("#environment")
        wide = await wait_for(pilot, lambda: (text := str(label.render()).strip()).endswith(folder.name) and text)
        assert len(wide) > len(shown.strip()) and (wide.startswith("⚠ host: local (commands run on this host)")
                                                     or str(folder.parent)[-20:] in wide), wide  # more of it, as it fits


async def test_the_replay_footer_keeps_quit_and_help_at_80_columns(tmp_path):
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.replay.replay_screen import ReplayScreen

    app = ReplayApp([write_trajectory(tmp_path / "t", 3)])
    async with app.run_test(size=NARROW) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen)
                       and {"Next", "Previous", "Quit", "Help"} <= set(footer_keys(app.screen) or []))


async def test_a_harbor_jobs_trials_are_named_with_their_reward(tmp_path):
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.replay.replay_screen import ReplayScreen

    job = Path(__file__).parent / "fixtures" / "agents" / "harbor-job"
    from swedeck.core.trajectory.loader import trajectory_files

    app = ReplayApp(trajectory_files(job))
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.step > 0)
        header = str(app.screen.query_one("#replay-header").render())
        assert header.startswith("trial-a__x1 (reward=") and "file 1/2" in header, header
        await pilot.press("L")
        await wait_for(pilot, lambda: str(app.screen.query_one("#replay-header").render()).startswith("trial-b__x2"))


async def test_the_diff_at_80_columns_names_both_runs_and_shows_the_commands(tmp_path):
    from swedeck.tui.diff.app import DiffApp
    from swedeck.tui.diff.diff_screen import DiffScreen
    from swedeck.tui.widgets.step_list import StepList

    a = write_trajectory(tmp_path / "first-run-with-a-long-name", 3)
    b = write_trajectory(tmp_path / "second-run-with-a-long-name", 3)
    app = DiffApp.of(str(a), str(b))
    async with app.run_test(size=NARROW) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
        screen = app.screen
        await pilot.pause()
        header = " ".join(str(screen.query_one("#diff-header").render()).split())
        assert "second-run-with-a-long-name" in header.replace("\n", "")
        rows = screen.query_one(StepList)
        drawn = "".join(segment.text for segment in rows.render_line(0)).strip()
        assert "echo step-1" in drawn, drawn
        await wait_for(pilot, lambda: "Quit" in (footer_keys(screen) or []))
