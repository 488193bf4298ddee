"""The UI driving a real session: replay model over the demo trajectory, local shell."""

from __future__ import annotations

import pytest

from support.demo import demo_session
from support.waiting import wait_for
from swedeck.tui.live.app import SwedeckApp
from swedeck.tui.widgets.input_line import InputLine
from swedeck.tui.widgets.observation_pane import ObservationPane

pytestmark = [pytest.mark.timeout(90), pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_demo_session_fixes_the_bug_through_the_ui(tmp_path):
    session, repo = demo_session(tmp_path)
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.session_screen
        line = screen.query_one(InputLine)
        for _ in range(6):
            await wait_for(pilot, lambda: screen.confirmation is not None or line.purpose == "follow_up", 20)
            if line.purpose == "follow_up":
                break
            asked = screen.confirmation
            await pilot.press("y")
            await wait_for(pilot, lambda asked=asked: screen.confirmation is not asked, 20)
        await wait_for(pilot, lambda: line.purpose == "follow_up", 20)
        outputs = [record.output for record in screen.query_one(ObservationPane).records.values()]
        assert any("all tests passed" in output for output in outputs)
        assert "return a + b" in (repo / "calc.py").read_text()
        from swedeck.tui.widgets.note import Note

        assert any("no more answers" in note._text for note in screen.query(Note))  # said before it is asked
        model = str(screen.query_one("#model").render())
        assert model == "replay: demo.traj.json"  # a name, not a path
        await pilot.press("enter", *"and now document it", "enter")  # a follow-up the replay cannot answer
        await wait_for(pilot, lambda: screen.ended, 20)
        assert app.exit_code == 0 and app.summary.startswith("swedeck: submitted")  # not ReplayExhausted
