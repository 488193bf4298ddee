"""Compaction in the live UI (SPEC §17, issue 31), the real app under Pilot against the
scripted server: in confirm mode the summary is shown before it is used and can be edited
or declined; the transcript and the meter name the compaction; ctrl+z undoes it."""

from __future__ import annotations

import json

import pytest
from test_compaction import SUMMARY, config_for, scripted, step_requests

from support.waiting import wait_for
from swedeck.core.messages import MessageType
from swedeck.core.session import Session
from swedeck.core.trajectory.loader import load_trajectory
from swedeck.tui.live.app import SwedeckApp
from swedeck.tui.live.compaction_screen import CompactionScreen
from swedeck.tui.widgets.context_meter import ContextMeter
from swedeck.tui.widgets.input_line import InputLine
from swedeck.tui.widgets.note import Note

pytestmark = [pytest.mark.timeout(120), pytest.mark.anyio]
WAIT = 20


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def submitted(app: SwedeckApp) -> bool:
    """The agent submitted: the line asks for a follow-up (or the session ended)."""
    return app.session_screen.ended or app.session_screen.query_one(InputLine).purpose == "follow_up"


def notes(app: SwedeckApp) -> list[str]:
    return [note._text for note in app.session_screen.query(Note)]


async def approve_until(pilot, app: SwedeckApp, done) -> None:
    """Approve each proposed command until `done()` holds."""
    screen = app.session_screen
    for _ in range(20):
        try:
            await wait_for(pilot, lambda: done() or screen.confirmation is not None or screen.ended, WAIT)
        except AssertionError:
            raise AssertionError(f"stuck: {notes(app)[-6:]} {app.screen} {screen.query_one(InputLine).purpose}") from None
        if done() or screen.ended:
            return
        asked = screen.confirmation
        await pilot.press("y")
        await wait_for(pilot, lambda asked=asked: screen.confirmation is not asked or done(), WAIT)
    raise AssertionError(f"never happened: {notes(app)[-6:]} {app.screen} {screen.confirmation}")


def confirm_mode_app(server, tmp_path, steps_before_submit: int) -> SwedeckApp:
    """The live app in confirm mode on a run that crosses the summarize threshold."""
    server.respond(scripted(steps_before_submit=steps_before_submit))
    config = config_for(server, tmp_path)
    config.agent.mode = "confirm"
    return SwedeckApp(Session(config, "print numbers"))


async def test_the_summary_is_shown_edited_used_and_undone(openai_server, tmp_path):
    app = confirm_mode_app(openai_server, tmp_path, 6)
    async with app.run_test(size=(120, 36)) as pilot:
        await approve_until(pilot, app, lambda: isinstance(app.screen, CompactionScreen))
        review = app.screen
        assert isinstance(review, CompactionScreen) and review.summary == SUMMARY
        assert "messages -> one summary · next prompt ≈" in str(review.query_one("#compaction-detail").render())
        await pilot.press("y")  # meant for the command the review came up over (issue 62): lands nowhere
        from textual.widgets import TextArea

        assert review.query_one(TextArea).text == review.shown and isinstance(app.screen, CompactionScreen)
        await pilot.press("e", *"EDITED ")  # e: edit the summary
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any(t.startswith("compacted ") for t in notes(app)), WAIT)
        note = next(t for t in notes(app) if t.startswith("compacted "))
        assert "messages summarized by" in note and "ctrl+z undoes" in note
        meter = str(app.session_screen.query_one(ContextMeter).render())
        assert "compacted " in meter and " -> " in meter
        # the next query is sent with the edited summary
        await wait_for(pilot, lambda: any("EDITED " + SUMMARY in json.dumps(b) for b in step_requests(openai_server)),
                       WAIT)
        await pilot.press("ctrl+z")
        await approve_until(pilot, app, lambda: any(t.startswith("compaction undone") for t in notes(app)))
        await approve_until(pilot, app, lambda: submitted(app))
        await pilot.press("enter", "enter")  # no follow-up: the session ends and writes its file
        await wait_for(pilot, lambda: app.session_screen.ended, WAIT)
    trajectory = load_trajectory(tmp_path / "session.traj.json")
    markers = [m.extra.to_record() for m in trajectory.messages if m.message_type == MessageType.COMPACTION]
    assert markers[0]["summary"] == "EDITED " + SUMMARY and markers[0]["edited"] is True
    assert any("undoes" in marker for marker in markers)
    assert SUMMARY not in json.dumps(step_requests(openai_server)[-1]["messages"])  # undone: the full history again


async def test_keeping_the_full_history_declines_the_summary(openai_server, tmp_path):
    app = confirm_mode_app(openai_server, tmp_path, 5)
    async with app.run_test(size=(120, 36)) as pilot:
        await approve_until(pilot, app, lambda: isinstance(app.screen, CompactionScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: any("kept the full history" in t for t in notes(app)), WAIT)
        await approve_until(pilot, app, lambda: submitted(app))
        await pilot.press("enter", "enter")  # no follow-up: the session ends and writes its file
        await wait_for(pilot, lambda: app.session_screen.ended, WAIT)
    trajectory = load_trajectory(tmp_path / "session.traj.json")
    assert not [m for m in trajectory.messages if m.message_type == MessageType.COMPACTION]
    assert all(SUMMARY not in json.dumps(body) for body in step_requests(openai_server))


async def test_the_demo_shows_a_compaction(tmp_path):
    """`swedeck demo`: ctrl+k compacts with the summary the bundled run recorded (the replay
    model answers a summary request with it), reviewed first in confirm mode."""
    from support.demo import demo_session

    session, repo = demo_session(tmp_path)
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.session_screen
        await approve_until(pilot, app, lambda: screen.info.step >= 3)
        await pilot.press("ctrl+k")
        await approve_until(pilot, app, lambda: isinstance(app.screen, CompactionScreen))
        assert "add(2, 3) returned -1" in app.screen.summary
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any(t.startswith("compacted ") for t in notes(app)), WAIT)
        await approve_until(pilot, app, lambda: submitted(app))
    assert "return a + b" in (repo / "calc.py").read_text()


async def test_the_review_shows_a_hostile_summary_inert_and_masked():
    """Issue 44.15: the summary's escape codes are marks and a key in it is masked in the box;
    used as it is, the summary is the model's own text."""
    from textual.app import App
    from textual.widgets import TextArea

    key = "sk-proj-" + "a1B2c3D4e5" * 4
    summary = f"Read calc.py.\x1b]0;owned\x07 The key is {key}.\x1b[2J"
    answers: list[str | None] = []

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(CompactionScreen(summary, 4, 1000, 100), answers.append)

    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CompactionScreen))
        shown = app.screen.query_one(TextArea).text
        assert "\x1b" not in shown and "\x07" not in shown and key not in shown and "sk-proj-***" in shown
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: answers)
    assert answers == [summary]
