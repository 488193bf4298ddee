"""The live screen's state (`SessionState`): how the agent's events and the person's answers
change it, without an app; and, in the real app, that the widgets follow it (`data_bind`)
and the footer's keys with it."""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from textual.widgets import Footer

from support.tui import ScriptedSession, ask, assistant_turn, screen_text, tui_config
from support.waiting import wait_for
from swedeck.core import events as ev
from swedeck.core.messages import MessageType, make_message
from swedeck.tui.live.app import SwedeckApp
from swedeck.tui.live.session_state import SessionState
from swedeck.tui.widgets.context_meter import ContextMeter
from swedeck.tui.widgets.header_bar import HeaderBar
from swedeck.tui.widgets.input_line import InputLine
from swedeck.tui.widgets.processors_panel import ProcessorsPanel


def confirmation(action_id: str = "a1", command: str = "ls") -> ev.ConfirmationRequested:
    return ev.ConfirmationRequested(future=Future(), action_id=action_id, command=command)


def question(kind: str) -> ev.InputRequested:
    return ev.InputRequested(future=Future(), kind=kind)  # type: ignore[arg-type]


def test_the_header_follows_the_agent():
    state = SessionState()
    state.apply(ev.SessionStarted(session_id="s", model_name="m1", environment="local (host: /x)", mode="yolo",
                                  trajectory_path=None, task="forked task", restored_messages=4))
    state.apply(ev.ProgressUpdated(step=3, step_limit=10, cost=0.5, cost_limit=2.0))
    state.apply(ev.StateChanged(state=ev.AgentState.RUNNING))
    info = state.info
    assert (info.model, info.host, info.mode, info.title) == ("m1", True, "yolo", "forked task")
    assert (info.step, info.step_limit, info.cost, info.cost_limit) == (3, 10, 0.5, 2.0)
    assert state.state == ev.AgentState.RUNNING and info.state == "running"
    state.apply(ev.QueryRetrying(step=3, attempt=1, attempts=6, wait_s=2.0, error="429"))
    assert state.info.state == "retry 1/6 in 2 s"
    state.apply(ev.MessageAdded(message=make_message("user", "x", MessageType.TASK, task="the new task"), index=5))
    assert state.info.title == "the new task"


def test_the_meter_says_what_the_last_priced_call_cost():
    """Issue 65.3: the live meter line names the last priced call's dollars (the header keeps the total)."""
    state = SessionState()
    answer = make_message("assistant", "ls", MessageType.ACTION)
    state.apply(ev.QueryFinished(step=1, message=answer, usage=None, cost=0.01234))
    assert state.meter_notes == ["$0.0123 last call"]
    state.apply(ev.QueryFinished(step=2, message=answer, usage=None, cost=0.0))  # a free call: the last priced one stays
    assert state.meter_notes == ["$0.0123 last call"]
    state.apply(ev.QueryFinished(step=3, message=answer, usage=None, cost=12.5))
    assert state.meter_notes == ["$12.50 last call"]


def test_a_fresh_session_does_not_take_the_task_from_its_start_event():
    """Only a resumed or forked trajectory names its task in SessionStarted; a new one's task
    message follows."""
    state = SessionState()
    state.apply(ev.SessionStarted(session_id="s", model_name="m", environment="docker (img)", mode="confirm",
                                  trajectory_path=None, task="not yet"))
    assert state.info.title == "(no task yet)" and not state.info.host


def test_a_confirmation_is_pending_until_its_decision():
    state = SessionState()
    asked = confirmation("a1")
    state.apply(asked)
    assert state.confirmation is asked
    assert state.answer_on_line("reject") and state.line_purpose == "reject"
    state.apply(ev.ActionDecided(action_id="other", decision="approved", command="ls"))
    assert state.confirmation is asked and state.line_purpose == "reject"
    state.apply(ev.ActionDecided(action_id="a1", decision="approved", command="ls"))  # e.g. decided elsewhere
    assert state.confirmation is None and state.line_purpose is None
    assert not state.answer_on_line("edit") and state.line_purpose is None  # nothing to answer now


def test_backing_out_of_a_comment_keeps_the_confirmation():
    state = SessionState()
    state.apply(confirmation())
    state.answer_on_line("edit")
    state.leave_line()
    assert state.line_purpose is None and state.confirmation is not None


def test_the_line_answers_the_open_question():
    state = SessionState()
    state.apply(question("human_command"))
    assert state.line_purpose == "human_command"
    request = state.take_input_request()
    assert request is not None and request.kind == "human_command"
    assert state.input_request is None and state.line_purpose is None
    assert state.take_input_request() is None


def test_an_equal_question_is_a_new_one():
    """Requests compare equal without their futures: asked twice alike, the line must answer
    the second (the first's future may be resolved or abandoned already)."""
    state = SessionState()
    first, second = question("after_interrupt"), question("after_interrupt")
    assert first == second
    state.apply(first)
    state.apply(second)
    assert state.input_request is second
    state.apply(confirmation("a1", "ls"))
    again = confirmation("a1", "ls")
    state.apply(again)
    assert state.confirmation is again


def test_leaving_human_mode_withdraws_its_question():
    state = SessionState()
    state.apply(question("follow_up"))
    state.apply(ev.ModeChanged(mode="yolo", previous="confirm"))
    assert state.line_purpose == "follow_up"  # only a human-mode command is withdrawn
    state.take_input_request()
    state.apply(question("human_command"))
    state.apply(ev.ModeChanged(mode="confirm", previous="human"))
    assert state.input_request is None and state.line_purpose is None and state.info.mode == "confirm"


def test_the_end_turns_the_line_off():
    state = SessionState()
    state.apply(question("task"))
    state.finish()
    assert state.ended and state.line_purpose is None and state.input_request is None
    assert state.info.state == "done"


def test_the_meter_takes_the_agents_context_report():
    state = SessionState()
    status = ev.ContextStatus(window=1000, prompt_tokens=250)
    state.apply(ev.ContextUpdated(status=status))
    assert state.context is status


# --- in the app: the widgets follow the state ----------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_widgets_follow_the_state():
    script = [*assistant_turn(1, "Looking.", "ls -la"), ask(ev.InputRequested, kind="follow_up")]
    app = SwedeckApp(ScriptedSession(tui_config(), script, task="a task"))
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.session_screen
        await wait_for(pilot, lambda: screen.confirmation is not None)
        line, footer = screen.query_one(InputLine), screen.query_one(Footer)

        def keys() -> set[str]:
            return {binding.action for (_, binding, enabled, _) in screen.active_bindings.values() if enabled}

        assert {"approve", "reject"} <= keys()
        screen.answer_on_line("edit")  # as `e` does, without the key
        await pilot.pause()
        assert line.purpose == "edit" and not line.disabled and line.has_class("-edit")
        assert "approve" not in keys() and footer.is_mounted  # y / n / e / a are text on the line now
        line.value = "half-typed"
        screen.leave_line()
        await pilot.pause()
        assert line.purpose is None and line.disabled and line.value == ""
        assert "approve" in keys()

        screen.header(title="a title from the state", step=7)
        screen.context = ev.ContextStatus(window=1000, prompt_tokens=900)
        screen.stacked = True
        screen.processors_open = True
        await pilot.pause()
        assert screen.query_one(HeaderBar).info.title == "a title from the state"
        assert "a title from the state" in screen_text(app) and "step 7" in screen_text(app)
        assert screen.query_one(ContextMeter).has_class("-danger")
        assert screen.query_one("#panes").is_stacked
        assert screen.query_one(ProcessorsPanel).has_class("-open")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_second_question_of_the_same_kind_starts_from_an_empty_line():
    """The line is readied on every question, not only when the kind changes."""
    script = [ask(ev.InputRequested, kind="human_command"), ask(ev.InputRequested, kind="human_command")]
    session = ScriptedSession(tui_config(), script, task="a task")
    app = SwedeckApp(session)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.session_screen
        line = screen.query_one(InputLine)
        await wait_for(pilot, lambda: line.purpose == "human_command" and line.has_focus)
        first = screen.input_request
        line.value = "typed, then withdrawn"
        screen.apply(ev.InputRequested(future=Future(), kind="human_command"))  # asked again, as after a cancel
        await pilot.pause()
        assert screen.input_request is not first and line.value == "" and line.purpose == "human_command"
