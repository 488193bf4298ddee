"""How the live UI looks (pytest-textual-snapshot): the main states, fixed sizes, no clock,
no blinking cursor. Regenerate with `pytest tests/test_tui_snapshots.py --snapshot-update`."""

from __future__ import annotations

import pytest

from support.tui import ScriptedSession, add_message, ask, assistant_turn, emit_all, tui_config
from support.waiting import wait_for
from swedeck.core import events as ev
from swedeck.core.messages import MessageType
from swedeck.tui.live.app import SwedeckApp
from swedeck.tui.widgets.input_line import InputLine

pytestmark = pytest.mark.timeout(60)
TASK = add_message("user", "Fix the failing test", MessageType.TASK, task="Fix the failing test")
CONTEXT = emit_all(ev.ContextUpdated(ev.ContextStatus(window=1000, prompt_tokens=640, cached_tokens=128,
                                                      next_estimate=700)),
                   ev.ProgressUpdated(step=1, step_limit=20, cost=0.0123, cost_limit=3.0))


def app_with(*steps, config=None) -> SwedeckApp:
    session = ScriptedSession(config or tui_config(), [TASK, CONTEXT, *steps], task="Fix the failing test")
    return SwedeckApp(session)


async def settle(pilot) -> None:
    # Every script ends waiting on a request: wait for it, then for the screen to have drawn
    # everything it was sent, then for the layout and animations that drawing started.
    app = pilot.app
    await wait_for(pilot, lambda: app.session._waiting is not None, timeout=10)
    await wait_for(pilot, lambda: app.session_screen.caught_up, timeout=10)
    for line in app.screen.query(InputLine):
        line.cursor_blink = False
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


CONFIRM = assistant_turn(1, "Let me run the **tests** first.", "python3 test_calc.py", reasoning="Check tests.")


def test_awaiting_confirmation(snap_compare):
    assert snap_compare(app_with(*CONFIRM), terminal_size=(120, 36), run_before=settle)


def test_awaiting_confirmation_80x24(snap_compare):
    assert snap_compare(app_with(*CONFIRM), terminal_size=(80, 24), run_before=settle)


@pytest.mark.parametrize("theme", ["swedeck-light", "swedeck-high-contrast"])
def test_themes(snap_compare, theme):
    config = tui_config(**{"ui.theme": theme})
    assert snap_compare(app_with(*CONFIRM, config=config), terminal_size=(120, 36), run_before=settle)


def test_human_mode(snap_compare):
    config = tui_config("agent.mode=human")
    assert snap_compare(app_with(ask(ev.InputRequested, kind="human_command"), config=config),
                        terminal_size=(120, 36), run_before=settle)


def test_processors_panel_open(snap_compare):
    async def open_panel(pilot) -> None:
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)

    assert snap_compare(app_with(*CONFIRM), terminal_size=(140, 40), run_before=open_panel)


def test_prompt_inspector(snap_compare):
    async def open_inspector(pilot) -> None:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)

    assert snap_compare(app_with(*CONFIRM), terminal_size=(120, 36), run_before=open_inspector)


def test_streaming(snap_compare):
    deltas = [ev.StateChanged(ev.AgentState.THINKING), ev.QueryStarted(step=2),
              ev.StreamDelta(step=2, kind="reasoning", text="The test expects 5; "),
              ev.StreamDelta(step=2, kind="text", text="The bug is in `add`: it "),
              ev.StreamDelta(step=2, kind="text", text="subtracts. I will fix")]
    assert snap_compare(app_with(emit_all(*deltas), ask(ev.InputRequested, kind="after_interrupt")),
                        terminal_size=(120, 36), run_before=settle)
