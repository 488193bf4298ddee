"""The live transcript lays out only its latest children while it follows its end (issue 49,
bench B16): the older ones are hidden with a line that counts them, scrolling up to the top
shows more with the view kept in place, `home` shows them all, and the children it lets go of
are freed although each fold freezes the collector's view of them."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult

from support.waiting import wait_for
from swedeck.core.startup import gc_tuning
from swedeck.tui.widgets import transcript as transcript_module
from swedeck.tui.widgets.note import Note
from swedeck.tui.widgets.transcript import REVEAL, Transcript


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class TranscriptApp(App):
    def compose(self) -> ComposeResult:
        yield Transcript()


@pytest.fixture(autouse=True)
def thawed():
    yield
    gc_tuning.thaw()  # what the folds froze goes back to the collector for the tests after


def shown(transcript: Transcript) -> list:
    return [item for item in transcript.items if item.display]


async def add_notes(transcript: Transcript, pilot, count: int, start: int = 0) -> None:
    for index in range(start, start + count):
        await transcript.add_note(f"note {index}: the parser reads each line and returns a token")
    await pilot.pause()


@asynccontextmanager
async def noted(count: int) -> AsyncIterator[tuple[TranscriptApp, Any, Transcript]]:
    """An 80x24 app whose transcript holds `count` one-line notes."""
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        await add_notes(transcript, pilot, count)
        yield app, pilot, transcript


@pytest.mark.anyio
async def test_a_following_transcript_lays_out_only_its_latest_children():
    async with noted(80) as (app, pilot, transcript):
        # once laid out (the notes came faster than frames), the older ones are hidden
        await wait_for(pilot, lambda: 0 < len(shown(transcript)) < 40 and transcript.scroll_y == transcript.max_scroll_y > 0)
        visible = shown(transcript)
        assert visible == transcript.items[transcript.hidden:]  # the hidden ones are the oldest
        assert sum(item.virtual_region_with_margin.height for item in visible) >= 2 * transcript.size.height
        assert transcript.earlier.display
        assert str(transcript.earlier.render()).startswith(f"▲ {transcript.hidden} earlier")
        assert "note 79:" in app.export_screenshot().replace("&#160;", " ")


@pytest.mark.anyio
async def test_scrolling_to_the_top_shows_more_with_the_view_kept_and_home_shows_all():
    async with noted(80) as (app, pilot, transcript):
        # laid out and at its end (under load the first layout can still leave nothing to scroll:
        # 0 == 0, and a scroll to the top then moves nothing, so nothing is shown)
        await wait_for(pilot, lambda: transcript.hidden > REVEAL and transcript.max_scroll_y > 0
                       and transcript.scroll_y == transcript.max_scroll_y)
        hidden = transcript.hidden
        first = transcript.items[hidden]

        def revealed() -> bool:
            """Scrolled to the top (again, where a layout since moved the view): some more shown."""
            if transcript.hidden < hidden:
                return True
            if transcript.scroll_y > 0:
                transcript.scroll_to(y=0, animate=False, immediate=True)
            return False
        await wait_for(pilot, revealed)
        assert transcript.hidden == hidden - REVEAL
        place = transcript.earlier.outer_size.height  # where `first` was: right under the line
        # once laid out, the item that was at the top of the view is there still
        await wait_for(pilot, lambda: transcript.scroll_y > 0 and first.virtual_region.y - transcript.scroll_y == place)
        assert shown(transcript)[0] is transcript.items[hidden - REVEAL]
        assert transcript.scroll_y > 0
        transcript.focus()
        await pilot.press("home")
        await wait_for(pilot, lambda: transcript.hidden == 0 and transcript.scroll_y == 0)
        assert not transcript.earlier.display
        assert "note 0:" in app.export_screenshot().replace("&#160;", " ")
        # back at the end, something new folds them again
        await pilot.press("end")
        await wait_for(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        await add_notes(transcript, pilot, 1, start=80)
        await wait_for(pilot, lambda: transcript.hidden > 0)


@pytest.mark.anyio
async def test_the_children_let_go_are_freed_although_the_folds_froze_them(monkeypatch):
    from swedeck.tui.kit.pacing import pacing_of

    monkeypatch.setattr(transcript_module, "MAX_CHILDREN", 40)
    async with noted(40) as (app, pilot, transcript):
        monkeypatch.setattr(pacing_of(app).long_lived, "THAW_AFTER", 10)
        oldest = weakref.ref(transcript.items[0])
        await add_notes(transcript, pilot, 12, start=40)
        assert len(transcript.items) == 40
        assert str(transcript.items[0].render()).startswith("note 12:")
        await wait_for(pilot, lambda: 0 < transcript.hidden < 40)
        assert all(isinstance(item, Note) for item in transcript.items)
        # what was let go is removed later than it is counted: every item before the shown ones
        # is still hidden (they used to be counted from the wrong end, and stayed shown)
        for index in range(52, 62):
            await transcript.add_note(f"note {index}: the parser reads each line and returns a token")
            transcript._fold()  # a layout's fold before the removal of the note let go
        await wait_for(pilot, lambda: len(transcript.children) == 41)
        assert shown(transcript) == transcript.items[transcript.hidden:]
        await wait_for(pilot, lambda: oldest() is None)  # freed once ten were let go, with no collection of the test's


class Cycle:
    def __init__(self) -> None:
        self.me = self


def frozen_cycle(long_lived: gc_tuning.LongLived) -> weakref.ref:
    """A cycle alive when `long_lived` settles, dropped after."""
    cycle = Cycle()
    long_lived.settled()
    return weakref.ref(cycle)


def test_long_lived_frees_what_died_frozen_after_enough_let_go():
    long_lived = gc_tuning.LongLived()
    long_lived.THAW_AFTER, long_lived.OVERDUE_AFTER = 3, 6
    cycle = frozen_cycle(long_lived)
    gc.collect()
    assert cycle() is not None  # frozen: no collection walks it
    long_lived.released(2)
    assert not long_lived.due
    long_lived.released(1)
    assert long_lived.due and not long_lived.overdue
    assert cycle() is not None  # the UI collects at a quiet moment
    long_lived.collect()
    assert cycle() is None and gc.get_freeze_count() > 0  # collected, and what lives is frozen again
    assert not long_lived.due  # counted from the collection
    long_lived.released(6)
    assert long_lived.overdue


@pytest.mark.anyio
async def test_the_collection_of_children_let_go_waits_for_a_quiet_moment(monkeypatch):
    # A walk of the whole heap takes a second with litellm loaded: never right after a key.
    from swedeck.tui.kit.pacing import pacing_of

    monkeypatch.setattr(transcript_module, "MAX_CHILDREN", 40)
    monkeypatch.setattr(transcript_module, "QUIET_S", 0.3)
    collected: list[float] = []
    async with noted(40) as (app, pilot, transcript):
        pacing = pacing_of(app)  # the app's own (issue 64.2: no process-wide one)
        monkeypatch.setattr(pacing.long_lived, "THAW_AFTER", 10)
        monkeypatch.setattr(pacing.long_lived, "OVERDUE_AFTER", 1000)
        monkeypatch.setattr(pacing.long_lived, "collect", lambda: collected.append(time.monotonic()))
        checks: list[int] = []
        check = Transcript._collect_when_quiet

        def checked(self: Transcript) -> None:
            checks.append(len(collected))
            if len(checks) <= 2:  # a key arrives as the check runs, twice (what `ViewApp.on_event` marks)
                pacing.quiet.arrived()
            check(self)
        monkeypatch.setattr(Transcript, "_collect_when_quiet", checked)
        await add_notes(transcript, pilot, 12, start=40)
        assert pacing.long_lived.due
        await wait_for(pilot, lambda: bool(collected))
        assert checks[:2] == [0, 0] and len(collected) == 1  # put off twice, then run once quiet
        assert collected[0] - pacing.quiet.last_key_at >= 0.3  # (a timer that fires early looks again)


def test_each_app_paces_its_own_workers_and_collections():
    """Issue 64.2: the pacing (key quiet, the transcript's long-lived children) is an app's, typed
    on `ViewApp`; no module keeps one for the whole process."""
    from textual.app import App

    from swedeck.tui.kit.pacing import Pacing, pacing_of
    from swedeck.tui.replay.app import ReplayApp

    plain, other = App(), App()
    assert pacing_of(plain) is pacing_of(plain) and pacing_of(plain) is not pacing_of(other)
    assert pacing_of(plain).long_lived is not pacing_of(other).long_lived
    view = ReplayApp([Path("run.traj.json")])
    assert isinstance(view.pacing, Pacing) and pacing_of(view) is view.pacing
    assert not hasattr(transcript_module, "long_lived")
