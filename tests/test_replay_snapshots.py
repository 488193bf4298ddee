"""SPEC §11.1 looks: the replay view of each format at a fixed size (no clock, no cursor)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from conftest import MINI_FIXTURE, SWEAGENT_FIXTURE
from support.replay import add_step, start_writer
from swedeck.tui.replay.app import ReplayApp

SIZE = (120, 36)


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def swedeck_file(tmp_path):
    writer = start_writer(tmp_path / "snap")
    for step in range(1, 6):
        add_step(writer, step, thought=f"Step {step}: check [bold]calc.py[/bold] for the divide bug.")
    return writer.finish({"exit_status": "Submitted"})


@pytest.mark.parametrize("fixture,step", [(MINI_FIXTURE, 3), (SWEAGENT_FIXTURE, 2)], ids=["mini", "sweagent"])
def test_other_formats(snap_compare, fixture, step):
    assert snap_compare(ReplayApp([fixture], start_step=step), terminal_size=SIZE, run_before=settle)


def test_swedeck_file_with_a_search(snap_compare, tmp_path):
    async def search(pilot) -> None:
        await settle(pilot)
        await pilot.press("slash", *"divide", "enter", "l")
        await settle(pilot)

    assert snap_compare(ReplayApp([swedeck_file(tmp_path)]), terminal_size=SIZE, run_before=search)


def test_error_view(snap_compare, tmp_path_factory):
    folder = Path(tempfile.gettempdir()) / "swedeck-snapshots"  # the message names the file: a fixed path
    folder.mkdir(exist_ok=True)
    path = folder / "broken.traj.json"
    path.write_bytes(b"\x00\x01 not json")
    assert snap_compare(ReplayApp([path]), terminal_size=SIZE, run_before=settle)
