"""The live UI's flows (SPEC §10, §6.5), driven with Textual's Pilot.

The session is `ScriptedSession` (tests/support/tui.py): real core events and real
futures, no model. End-to-end runs with the real core are in test_tui_session.py.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input, Switch

from swedeck.core import events as ev
from swedeck.core.messages import MessageType
from swedeck.tui.app import SwedeckApp
from swedeck.tui.screens.help_screen import HelpScreen
from swedeck.tui.screens.pause_screen import PauseScreen
from swedeck.tui.screens.prompt_inspector import PromptInspector
from swedeck.tui.screens.quit_screen import QuitScreen
from swedeck.tui.widgets.context_meter import ContextMeter
from swedeck.tui.widgets.input_line import InputLine
from swedeck.tui.widgets.observation_pane import ObservationPane
from swedeck.tui.widgets.transcript import Transcript
from tests.support.tui import (
    ScriptedSession,
    add_message,
    ask,
    assistant_turn,
    emit_all,
    tui_config,
    wait_for,
)

pytestmark = [pytest.mark.timeout(60), pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

TASK = add_message("user", "Fix the failing test", MessageType.TASK, task="Fix the failing test")


def session_with(*steps, config=None, **flags) -> ScriptedSession:
    return ScriptedSession(config or tui_config(**flags), [TASK, *steps], task="Fix the failing test")


def pending(app: SwedeckApp) -> bool:
    return app.session_screen.confirmation is not None


async def test_approve_runs_the_command_and_shows_its_output():
    session = session_with(*assistant_turn(1, "Let me list the files.", "ls -la"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("y")
        await wait_for(pilot, lambda: session.answers)
        assert session.answers == [ev.Decision(kind="approve")]
        pane = app.session_screen.query_one(ObservationPane)
        await wait_for(pilot, lambda: pane.records.get("1.0") and pane.records["1.0"].finished)
        assert "output of ls -la" in pane.records["1.0"].output
        block = app.session_screen.query_one(Transcript).commands["1.0"]
        assert block.state == "ran" and block.returncode == 0


async def test_enter_approves():
    session = session_with(*assistant_turn(1, "Run it.", "true"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.answers)
        assert session.answers[0].kind == "approve"


async def test_reject_sends_the_comment_to_the_model():
    session = session_with(*assistant_turn(1, "Delete everything.", "rm -rf /tmp/x"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("n")
        line = app.session_screen.query_one(InputLine)
        assert line.purpose == "reject" and app.focused is line
        await pilot.press(*"use git clean")
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.answers)
        assert session.answers == [ev.Decision(kind="reject", comment="use git clean")]
        block = app.session_screen.query_one(Transcript).commands["1.0"]
        await wait_for(pilot, lambda: block.state == "rejected")


async def test_escape_backs_out_of_a_rejection_comment():
    session = session_with(*assistant_turn(1, "Run.", "echo hi"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("n", "escape")
        assert app.session_screen.query_one(InputLine).purpose is None
        assert pending(app) and ("interrupt", None) not in session.calls
        await pilot.press("y")
        await wait_for(pilot, lambda: session.answers)
        assert session.answers[0].kind == "approve"


async def test_edit_runs_the_edited_command():
    session = session_with(*assistant_turn(1, "Run the tests.", "pytest"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("e")
        line = app.session_screen.query_one(InputLine)
        assert line.value == "pytest"
        await pilot.press(*" -x")
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.answers)
        assert session.answers == [ev.Decision(kind="edit", command="pytest -x")]
        pane = app.session_screen.query_one(ObservationPane)
        await wait_for(pilot, lambda: "1.0" in pane.records and pane.records["1.0"].finished)
        assert pane.records["1.0"].command == "pytest -x"


async def test_always_allow():
    session = session_with(*assistant_turn(1, "Look.", "ls"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("a")
        await wait_for(pilot, lambda: session.answers)
        assert session.answers == [ev.Decision(kind="always_allow")]


async def test_switching_to_yolo_never_runs_the_pending_command():
    session = session_with(*assistant_turn(1, "Look.", "ls"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.session_screen.info.mode == "yolo")
        await pilot.pause(0.2)
        assert ("set_mode", "yolo") in session.calls
        assert session.answers == [] and pending(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: session.answers)


async def test_m_cycles_the_modes():
    session = session_with(ask(ev.InputRequested, kind="follow_up"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.input_request is not None)
        app.session_screen.query_one(Transcript).focus()
        await pilot.press("m")
        await pilot.press("m")
        await pilot.press("m")
        assert [call for call in session.calls if call[0] == "set_mode"] == [
            ("set_mode", "yolo"), ("set_mode", "human"), ("set_mode", "confirm")]
        await wait_for(pilot, lambda: app.session_screen.info.mode == "confirm")


async def test_human_mode_runs_typed_commands():
    session = session_with(ask(ev.InputRequested, kind="human_command"),
                           config=tui_config("agent.mode=human"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        line = app.session_screen.query_one(InputLine)
        await wait_for(pilot, lambda: line.purpose == "human_command")
        assert "HUMAN" in str(app.session_screen.query_one("#mode-badge").render())
        await pilot.press(*"git status")
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.answers)
        assert session.answers == ["git status"]


async def test_escape_interrupts_and_a_follow_up_message_can_be_given():
    session = session_with(*assistant_turn(1, "Thinking...", "sleep 100"),
                           ask(ev.InputRequested, kind="after_interrupt"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("escape")
        assert ("interrupt", None) in session.calls
        line = app.session_screen.query_one(InputLine)
        await wait_for(pilot, lambda: line.purpose == "after_interrupt")
        await pilot.press(*"try grep instead")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "try grep instead" in session.answers)


async def test_ctrl_c_interrupts():
    session = session_with(*assistant_turn(1, "Thinking...", "sleep 100"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("ctrl+c")
        assert ("interrupt", None) in session.calls
        assert app.is_running


async def test_follow_up_task_after_submission():
    session = session_with(*assistant_turn(1, "Done.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", needs_confirmation=False),
                           ask(ev.InputRequested, kind="follow_up"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        line = app.session_screen.query_one(InputLine)
        await wait_for(pilot, lambda: line.purpose == "follow_up")
        assert "follow-up" in line.placeholder.lower()
        await pilot.press(*"now add a test")
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.answers == ["now add a test"])


@pytest.mark.parametrize("reason,key,expected", [("api_error", "r", "retry"), ("limit", "r", "raise_limits"),
                                                  ("limit", "q", "quit")])
async def test_pause_offers_retry_raise_or_quit(reason, key, expected):
    session = session_with(ask(ev.PauseRequested, reason=reason, detail="step limit reached (3/3 steps)"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PauseScreen))
        await pilot.press(key)
        await wait_for(pilot, lambda: session.answers)
        assert session.answers[0].kind == expected


async def test_context_exceeded_offers_to_switch_on_a_processor():
    session = session_with(ask(ev.PauseRequested, reason="context_exceeded", detail="too long"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PauseScreen))
        await wait_for(pilot, lambda: app.screen.query_one("#enable_processor").region.width > 0)
        await pilot.press("p")
        await wait_for(pilot, lambda: session.answers)
        assert session.answers[0].kind == "enable_processor"
        assert session.answers[0].processor == {"type": "last_n_observations", "n": 5}


async def test_retry_discards_the_partial_response():
    partial = [ev.QueryStarted(step=1), ev.StreamDelta(step=1, kind="text", text="half an ans"),
               ev.QueryRetrying(step=1, attempt=1, attempts=6, wait_s=2, error="503")]
    session = session_with(emit_all(*partial), ask(ev.InputRequested, kind="follow_up"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.input_request is not None)
        sources = [md.source for md in app.session_screen.query("Markdown")]
        assert not any("half an ans" in source for source in sources)
        assert "retry 1/6 in 2 s" in app.session_screen.info.state


MARKUP = "[red]x[/red] [@click=app.quit]q[/]"


async def test_markup_in_model_and_command_text_is_shown_literally_and_does_nothing():
    session = session_with(*assistant_turn(1, f"Look: {MARKUP}", f"echo '{MARKUP}'", needs_confirmation=False),
                           ask(ev.InputRequested, kind="follow_up"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.input_request is not None)
        screenshot = app.export_screenshot()
        assert "[red]x[/red]" in screenshot and "[@click=app.quit]q[/]" in screenshot
        for widget in app.session_screen.query("Markdown, CommandBlock"):
            await pilot.click(widget)
        await pilot.pause(0.1)
        assert app.is_running and app.return_code is None


async def test_processors_panel_toggles_and_the_prediction_updates():
    session = session_with(
        add_message("assistant", "step", MessageType.ACTION),
        *[add_message("user", "output " * 200, MessageType.OBSERVATION) for _ in range(4)],
        ask(ev.InputRequested, kind="follow_up"))
    app = SwedeckApp(session)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.input_request is not None)
        app.session_screen.query_one(Transcript).focus()
        await pilot.press("p")
        panel = app.session_screen.query_one("#processors")
        assert panel.has_class("-open")
        row = panel.query_one(".processor-last_n_observations")
        row.query_one(Input).value = "1"  # keep only the last observation's output
        switch = row.query_one(Switch)
        switch.value = True
        await wait_for(pilot, lambda: any(c[0] == "set_processors" for c in session.calls))
        processors = [c for c in session.calls if c[0] == "set_processors"][-1][1]
        assert [p.type for p in processors] == ["last_n_observations"]
        meter = app.session_screen.query_one(ContextMeter)
        assert any(label.startswith("last_n_observations") for label in meter.processors)
        with_processor = meter.status.next_estimate
        switch.value = False
        await wait_for(pilot, lambda: meter.status.next_estimate != with_processor)
        assert meter.status.next_estimate > with_processor


async def test_processor_parameters_are_validated():
    session = session_with(ask(ev.InputRequested, kind="follow_up"))
    app = SwedeckApp(session)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.input_request is not None)
        app.session_screen.query_one(Transcript).focus()
        await pilot.press("p")
        row = app.session_screen.query_one(".processor-last_n_observations")
        field = row.query_one(Input)
        field.value = "not a number"
        row.query_one(Switch).value = True
        await pilot.pause(0.2)
        assert not any(c[0] == "set_processors" for c in session.calls)
        assert field.has_class("-invalid")


async def test_prompt_inspector_shows_the_next_prompt():
    session = session_with(add_message("system", "You are a helpful agent.", MessageType.SYSTEM),
                           ask(ev.InputRequested, kind="follow_up"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.input_request is not None)
        app.session_screen.query_one(Transcript).focus()
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptInspector))
        rows = app.screen.query("PromptMessage")
        assert [row.message.role for row in rows] == ["user", "system"]
        summary = str(app.screen.query_one("#inspector-summary").render())
        assert "2 messages" in summary and "/ 1,000" in summary
        await pilot.press("escape")
        assert not isinstance(app.screen, PromptInspector)


async def test_help_lists_every_binding_with_its_id():
    from swedeck.tui.bindings import all_bindings

    session = session_with(ask(ev.InputRequested, kind="follow_up"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.input_request is not None)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        table = app.screen.query_one("DataTable")
        ids = {table.get_row_at(i)[1] for i in range(table.row_count)}
        assert {binding.id for binding in all_bindings()} <= ids


async def test_command_palette_offers_every_action():
    from swedeck.tui.bindings import all_bindings

    session = session_with(ask(ev.InputRequested, kind="follow_up"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.input_request is not None)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {b.description for b in all_bindings()} <= titles
        assert "Theme" in titles


async def test_keymap_from_config_remaps_a_binding():
    config = tui_config("ui.keymap={approve: o}")
    session = session_with(*assistant_turn(1, "Look.", "ls"), config=config)
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: pending(app))
        await pilot.press("y")
        await pilot.pause(0.1)
        assert session.answers == []
        await pilot.press("o")
        await wait_for(pilot, lambda: session.answers)


async def test_80x24_stacks_the_panes_and_still_confirms():
    session = session_with(*assistant_turn(1, "Look.", "ls"))
    app = SwedeckApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: pending(app))
        assert app.session_screen.query_one("#panes").has_class("-stacked")
        for widget_id in ("#transcript", "#observation", "#meter", "#input"):
            widget = app.session_screen.query_one(widget_id)
            assert widget.region.height > 0 and widget.region.width > 0
        await pilot.press("s")
        assert not app.session_screen.query_one("#panes").has_class("-stacked")
        await pilot.press("y")
        await wait_for(pilot, lambda: session.answers)


async def test_quit_asks_while_a_command_runs():
    session = session_with(emit_all(ev.StateChanged(ev.AgentState.RUNNING, "sleep 100")),
                           ask(ev.InputRequested, kind="follow_up"))
    app = SwedeckApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.input_request is not None)
        app.session_screen.state = ev.AgentState.RUNNING
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        await pilot.press("n")
        assert app.is_running and ("quit", None) not in session.calls
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: ("quit", None) in session.calls)
        await wait_for(pilot, lambda: not app.is_running)
