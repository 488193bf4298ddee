"""The live UI's flows (SPEC §10, §6.5), driven with Textual's Pilot against the real core.

Each test runs a real `Session` (the agent loop, a local shell in `tmp_path`) whose model
is the scripted OpenAI-compatible server over real HTTP, and asserts on what the core did
(commands run, requests the model received, the saved trajectory) as well as on the screen.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Label, Switch

from support.driver import make_config
from support.openai_server import Turn, Usage, model_config
from support.reliability import SUBMIT
from support.waiting import wait_for
from swedeck.core import events as ev
from swedeck.core.session import Session
from swedeck.tui.kit.app_base import APP_BINDINGS
from swedeck.tui.live.app import SwedeckApp
from swedeck.tui.live.bindings import SESSION_BINDINGS
from swedeck.tui.live.pause_screen import PauseScreen
from swedeck.tui.live.quit_screen import QuitScreen
from swedeck.tui.shared.help_screen import HelpScreen
from swedeck.tui.shared.prompt_inspector import PromptInspector
from swedeck.tui.widgets.context_meter import ContextMeter
from swedeck.tui.widgets.input_line import InputLine
from swedeck.tui.widgets.observation_pane import CommandRecord, ObservationPane
from swedeck.tui.widgets.transcript import Transcript

pytestmark = [pytest.mark.timeout(60), pytest.mark.anyio]

TASK = "Fix the failing test"
WAIT = 15  # the first query imports litellm


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def live(server, tmp_path: Path, *turns: Turn, model=None, **fields) -> Session:
    """A real session whose model answers `turns` in order."""
    server.script(*turns)
    return Session(make_config(tmp_path, model or model_config(server), **fields), TASK)


@asynccontextmanager
async def running(session: Session, until: Callable[[SwedeckApp], object] | None = None,
                  size: tuple[int, int] = (120, 36)) -> AsyncIterator[tuple[SwedeckApp, Pilot]]:
    """The live app on `session`, once `until(app)` holds (the first query imports litellm)."""
    app = SwedeckApp(session)
    async with app.run_test(size=size) as pilot:
        if until is not None:
            await wait_for(pilot, lambda: until(app), WAIT)
        yield app, pilot


def pending(app: SwedeckApp) -> bool:
    return app.session_screen.confirmation is not None


async def still_asking(pilot, app: SwedeckApp) -> bool:
    """After the UI handled every key pressed so far, the confirmation is still unanswered (so
    the agent, which waits on its future, cannot have run the command)."""
    await pilot.pause()
    return pending(app) and not app.session_screen.confirmation.future.done()


def asked(app: SwedeckApp, purpose: str) -> bool:
    return app.session_screen.query_one(InputLine).purpose == purpose


def record(app: SwedeckApp, command: str) -> CommandRecord | None:
    records = app.session_screen.query_one(ObservationPane).records.values()
    return next((r for r in records if r.command == command and r.result is not None), None)


def last_sent(server) -> dict:
    return server.requests[-1]["messages"][-1]


def saved_messages(tmp_path: Path) -> list[dict]:
    return json.loads((tmp_path / "session.traj.json").read_text())["messages"]


async def test_approve_runs_the_command_and_shows_its_output(openai_server, tmp_path):
    command = "echo hello > a.txt && ls"
    session = live(openai_server, tmp_path, Turn.bash_tool(command, text="Let me list the files."),
                   Turn.bash_tool(SUBMIT))
    async with running(session, pending) as (app, pilot):
        await pilot.press("y")
        done = await wait_for(pilot, lambda: record(app, command), WAIT)
        assert "a.txt" in done.output and (tmp_path / "a.txt").read_text() == "hello\n"
        block = next(b for b in app.session_screen.query_one(Transcript).commands.values() if b.command == command)
        assert block.state == "ran" and block.returncode == 0
        await wait_for(pilot, lambda: len(openai_server.requests) == 2, WAIT)
        assert "a.txt" in last_sent(openai_server)["content"]  # the output reached the model


async def test_enter_approves(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("touch entered.txt", text="Run it."))
    async with running(session, pending) as (app, pilot):
        await pilot.press("enter")
        await wait_for(pilot, lambda: (tmp_path / "entered.txt").exists(), WAIT)


async def test_reject_sends_the_comment_to_the_model(openai_server, tmp_path):
    (tmp_path / "build").mkdir()
    session = live(openai_server, tmp_path, Turn.bash_tool("rm -rf build", text="Delete everything."),
                   Turn.bash_tool(SUBMIT))
    async with running(session, pending) as (app, pilot):
        await pilot.press("n")
        line = app.session_screen.query_one(InputLine)
        assert line.purpose == "reject" and app.focused is line
        await pilot.press(*"use git clean")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(openai_server.requests) == 2, WAIT)
        assert "use git clean" in last_sent(openai_server)["content"]
        assert (tmp_path / "build").is_dir()
        block = next(b for b in app.session_screen.query_one(Transcript).commands.values() if b.command == "rm -rf build")
        await wait_for(pilot, lambda: block.state == "rejected")


async def test_escape_backs_out_of_a_rejection_comment(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("echo hi > hi.txt", text="Run."))
    async with running(session, pending) as (app, pilot):
        await pilot.press("n", "escape")
        assert app.session_screen.query_one(InputLine).purpose is None
        assert await still_asking(pilot, app) and not (tmp_path / "hi.txt").exists()  # not interrupted
        await pilot.press("y")
        await wait_for(pilot, lambda: (tmp_path / "hi.txt").exists(), WAIT)


async def test_edit_runs_the_edited_command(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("echo one", text="Run the tests."))
    async with running(session, pending) as (app, pilot):
        await pilot.press("e")
        line = app.session_screen.query_one(InputLine)
        assert line.value == "echo one"
        await pilot.press(*" two")
        await pilot.press("enter")
        done = await wait_for(pilot, lambda: record(app, "echo one two"), WAIT)
        assert done.output == "one two\n"
        assert record(app, "echo one") is None


async def test_always_allow(openai_server, tmp_path):
    command = "echo a >> log.txt"
    session = live(openai_server, tmp_path, Turn.bash_tool(command, text="Look."), Turn.bash_tool(command),
                   Turn.bash_tool(SUBMIT))
    async with running(session, pending) as (app, pilot):
        await pilot.press("a")
        # the same command again runs without asking; the next, different one asks
        await wait_for(pilot, lambda: pending(app) and app.session_screen.confirmation.command == SUBMIT, WAIT)
        assert (tmp_path / "log.txt").read_text() == "a\na\n"


async def test_switching_to_yolo_never_runs_the_pending_command(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("touch ran.txt", text="Look."), Turn.bash_tool(SUBMIT))
    async with running(session, pending) as (app, pilot):
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.session_screen.info.mode == "yolo")
        assert session.mode == "yolo"
        assert await still_asking(pilot, app) and not (tmp_path / "ran.txt").exists()
        await pilot.press("y")
        await wait_for(pilot, lambda: asked(app, "follow_up"), WAIT)  # the submission ran unasked
        assert (tmp_path / "ran.txt").exists()


async def test_m_cycles_the_modes(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool(SUBMIT), agent__mode="yolo")
    async with running(session, lambda app: asked(app, "follow_up")) as (app, pilot):
        app.session_screen.query_one(Transcript).focus()
        modes = []
        for _ in range(3):
            await pilot.press("m")
            await wait_for(pilot, lambda: app.session_screen.info.mode == session.mode and session.mode not in modes[-1:])
            modes.append(session.mode)
        assert modes == ["human", "confirm", "yolo"]


async def test_human_mode_runs_typed_commands(openai_server, tmp_path):
    session = live(openai_server, tmp_path, agent__mode="human")
    async with running(session, lambda app: asked(app, "human_command")) as (app, pilot):
        assert "HUMAN" in str(app.session_screen.query_one("#mode-badge").render())
        await pilot.press(*"echo typed > human.txt")
        await pilot.press("enter")
        await wait_for(pilot, lambda: record(app, "echo typed > human.txt"), WAIT)
        assert (tmp_path / "human.txt").read_text() == "typed\n"
        assert any(m.content == "echo typed > human.txt" for m in session.history)
        assert openai_server.requests == []  # human mode never asks the model
        await wait_for(pilot, lambda: asked(app, "human_command"), WAIT)
        await pilot.press(*"echo second", "enter")
        await wait_for(pilot, lambda: record(app, "echo second"), WAIT)
        await wait_for(pilot, lambda: asked(app, "human_command"), WAIT)
        line = app.session_screen.query_one(InputLine)
        await pilot.press(*"dra", "up")  # the input line's history: ↑ the last line sent, ↑ the one before
        assert line.value == "echo second"
        await pilot.press("up", "up")
        assert line.value == "echo typed > human.txt"
        await pilot.press("down", "down")
        assert line.value == "dra"  # past the newest: what was being typed


async def test_escape_interrupts_and_a_follow_up_message_can_be_given(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("sleep 100", text="Thinking..."), Turn.bash_tool(SUBMIT))
    async with running(session, pending) as (app, pilot):
        await pilot.press("escape")
        await wait_for(pilot, lambda: asked(app, "after_interrupt"), WAIT)
        await pilot.press(*"try grep instead")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(openai_server.requests) == 2, WAIT)
        assert last_sent(openai_server)["content"] == "try grep instead"
        assert record(app, "sleep 100") is None


async def test_ctrl_c_interrupts(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("sleep 100", text="Thinking..."))
    async with running(session, pending) as (app, pilot):
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: asked(app, "after_interrupt"), WAIT)
        assert app.is_running and record(app, "sleep 100") is None


async def test_ctrl_c_copies_a_selection_instead_of_interrupting(openai_server, tmp_path):
    session = live(openai_server, tmp_path, agent__mode="human")
    async with running(session, lambda app: asked(app, "human_command")) as (app, pilot):
        await pilot.press(*"echo to copy", "shift+home")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "echo to copy"
        assert asked(app, "human_command") and app.session_screen.query_one(InputLine).value == "echo to copy"


async def test_follow_up_task_after_submission(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool(f"{SUBMIT} && echo first", text="Done."),
                   Turn.bash_tool(f"{SUBMIT} && echo second"), agent__mode="yolo")
    async with running(session) as (app, pilot):
        line = app.session_screen.query_one(InputLine)
        await wait_for(pilot, lambda: line.purpose == "follow_up", WAIT)
        assert "follow-up" in line.placeholder.lower()
        await pilot.press("y", "n", "a")  # keys meant for a confirmation that is over: not a task
        assert line.value == "" and not line.has_focus
        assert len(openai_server.requests) == 1
        await pilot.press("enter")  # Enter (or i) starts typing
        assert line.has_focus
        await pilot.press(*"now add a test")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(openai_server.requests) == 2 and line.purpose == "follow_up", WAIT)
        await pilot.press("i", "enter")  # nothing more: the session ends
        await wait_for(pilot, lambda: app.session_screen.ended, WAIT)
    tasks = [m for m in saved_messages(tmp_path) if m["extra"]["message_type"] == "task"]
    assert len(tasks) == 2 and "now add a test" in tasks[1]["content"]


async def test_keys_of_a_text_line_are_text_and_esc_closes_the_innermost_thing(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("echo from-model"), Turn.bash_tool(SUBMIT),
                   agent__mode="human")
    async with running(session) as (app, pilot):
        screen = app.session_screen
        line = screen.query_one(InputLine)
        await wait_for(pilot, lambda: line.purpose == "human_command" and line.has_focus, WAIT)

        def offered() -> set[str]:
            return {key.description for key in screen.query("FooterKey")}

        await wait_for(pilot, lambda: "Mode" not in offered())  # not offered while it would type
        assert "Approve" not in offered()
        await pilot.press("m")
        assert line.value == "m" and session.mode == "human"
        await pilot.press("escape")  # leaves the line, the command is still asked for
        assert not line.has_focus and line.purpose == "human_command" and not screen.ended
        await wait_for(pilot, lambda: "Mode" in offered())
        await pilot.press("p")  # the processors panel opens ...
        panel = screen.query_one("#processors")
        assert panel.has_class("-open")
        await pilot.press("escape")  # ... and Esc closes it, interrupting nothing
        assert not panel.has_class("-open") and session.mode == "human" and not screen.ended
        await pilot.press("m")  # now m switches mode
        await wait_for(pilot, lambda: session.mode != "human", WAIT)


@pytest.mark.parametrize("reason,key", [("api_error", "r"), ("limit", "r"), ("limit", "q")])
async def test_pause_offers_retry_raise_or_quit(openai_server, tmp_path, reason, key):
    if reason == "api_error":
        session = live(openai_server, tmp_path, Turn.error(500), Turn.bash_tool(SUBMIT),
                       model=model_config(openai_server, attempts=1), agent__mode="yolo")
    else:
        session = live(openai_server, tmp_path, Turn.bash_tool("echo 1"), Turn.bash_tool(SUBMIT),
                       agent__mode="yolo", agent__step_limit=1)
    async with running(session, lambda app: isinstance(app.screen, PauseScreen)) as (app, pilot):
        assert app.screen.reason == reason
        await pilot.press(key)
        if key == "q":
            await wait_for(pilot, lambda: app.session_screen.ended, WAIT)
            assert len(openai_server.requests) == 1
            assert app.summary.startswith("swedeck: stopped at a limit")
        else:  # retried / raised: the session went on to the submission
            await wait_for(pilot, lambda: asked(app, "follow_up"), WAIT)
            assert len(openai_server.requests) == 2


async def test_context_exceeded_offers_the_change_that_fits(openai_server, tmp_path):
    from test_agent import OVERFLOW_WINDOW, script_an_overflow

    script_an_overflow(openai_server)
    session = Session(make_config(tmp_path, model_config(openai_server, context_window=OVERFLOW_WINDOW),
                                  agent__mode="yolo"), TASK)
    async with running(session, lambda app: isinstance(app.screen, PauseScreen)) as (app, pilot):
        assert app.screen.reason == "context_exceeded"
        # the screen may still be composing its buttons
        await wait_for(pilot, lambda: any(b.region.width > 0 for b in app.screen.query("#enable_processor")))
        assert "Use last_n_observations(n=1) (p)" in str(app.screen.query_one("#enable_processor").label)
        meter = str(app.session_screen.query_one(ContextMeter).render())
        assert "fits with last_n_observations(n=1)" in meter
        await pilot.press("p")
        await wait_for(pilot, lambda: asked(app, "follow_up"), WAIT)
        assert [(p.type, p.n) for p in session.processors] == [("last_n_observations", 1)]
        assert len(openai_server.requests) == 4
        meter = str(app.session_screen.query_one(ContextMeter).render())
        assert "processors: none" not in meter and "last_n_observations" in meter  # the meter names it


PARTIAL = "half an answer that breaks"


async def test_retry_discards_the_partial_response(openai_server, tmp_path):
    # backoff fixed at 2 s so the retry is on screen long enough to read
    model = model_config(openai_server, attempts=6, backoff_min_s=2, backoff_max_s=2)
    session = live(openai_server, tmp_path, Turn(text=PARTIAL, chunks=4, drop_after=3),
                   Turn.bash_tool(SUBMIT, text="All done."), model=model, agent__mode="yolo")
    async with running(session, lambda app: "retry 1/6 in 2 s" in app.session_screen.info.state) as (app, pilot):
        await wait_for(pilot, lambda: asked(app, "follow_up"), WAIT)
        sources = [md.source for md in app.session_screen.query("Markdown")]
        assert any("All done." in source for source in sources)
        assert not any(PARTIAL[:8] in source for source in sources)
        assert len(openai_server.requests) == 2


MARKUP = "[red]x[/red] [@click=app.quit]q[/]"


async def test_markup_in_model_and_command_text_is_shown_literally_and_does_nothing(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool(f"echo '{MARKUP}'", text=f"Look: {MARKUP}"),
                   Turn.bash_tool(SUBMIT), agent__mode="yolo")
    async with running(session, lambda app: asked(app, "follow_up")) as (app, pilot):
        screenshot = app.export_screenshot()
        assert "[red]x[/red]" in screenshot and "[@click=app.quit]q[/]" in screenshot
        for widget in app.session_screen.query("Markdown, CommandBlock"):
            await pilot.click(widget)
        await pilot.pause()
        assert app.is_running and app.return_code is None


def big_output_turns(count: int) -> list[Turn]:
    return [Turn.bash_tool(f"seq {1000 * i} {1000 * i + 400}", usage=Usage(100, 10)) for i in range(1, count + 1)]


async def test_processors_panel_toggles_and_the_prediction_updates(openai_server, tmp_path):
    session = live(openai_server, tmp_path, *big_output_turns(4), Turn.bash_tool(SUBMIT), agent__mode="yolo",
                   model=model_config(openai_server, context_window=50_000))
    async with running(session, lambda app: asked(app, "follow_up"), size=(140, 44)) as (app, pilot):
        app.session_screen.query_one(Transcript).focus()
        await pilot.press("p")
        panel = app.session_screen.query_one("#processors")
        assert panel.has_class("-open")
        row = panel.query_one(".processor-last_n_observations")
        row.query_one(Input).value = "1"  # keep only the last observation's output
        switch = row.query_one(Switch)
        switch.value = True
        await wait_for(pilot, lambda: session.processors)
        assert [(p.type, p.n) for p in session.processors] == [("last_n_observations", 1)]
        meter = app.session_screen.query_one(ContextMeter)
        await wait_for(pilot, lambda: any(label.startswith("last_n_observations") for label in meter.processors))
        with_processor = meter.status.next_estimate
        assert with_processor == session.prompt_preview().total
        switch.value = False
        await wait_for(pilot, lambda: meter.status.next_estimate != with_processor)
        assert session.processors == [] and meter.status.next_estimate > with_processor


async def processors_row(app: SwedeckApp, pilot: Pilot, processor: str = "last_n_observations"):
    """Open the processors panel with `p` (from the transcript) and give `processor`'s row."""
    app.session_screen.query_one(Transcript).focus()
    await pilot.press("p")
    return app.session_screen.query_one("#processors").query_one(f".processor-{processor}")


async def test_the_processors_panel_is_driven_by_keys_and_a_typed_value_replaces_the_old(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool(SUBMIT), agent__mode="yolo")
    async with running(session, lambda app: asked(app, "follow_up"), size=(140, 44)) as (app, pilot):
        row = await processors_row(app, pilot)
        switch, field = row.query_one(Switch), row.query_one(Input)
        panel = app.session_screen.query_one("#processors")
        # keys reach a control at once: the first switch, not the panel (a digit typed went nowhere, issue 62)
        assert isinstance(app.focused, Switch) and app.focused is panel.query(Switch).first()
        for _ in range(40):  # ↓ walks the panel's controls, as Tab does
            if app.focused is switch:
                break
            await pilot.press("down")
        assert app.focused is switch
        await pilot.press("space")  # on
        await pilot.press("down")
        assert app.focused is field
        await pilot.press("1", "enter")  # the old value is selected on focus: typing replaces it
        await wait_for(pilot, lambda: session.processors)
        assert [(p.type, p.n) for p in session.processors] == [("last_n_observations", 1)]
        label = row.query(Label).first()
        assert label.size.width >= len("last_n_observations")  # the names are not cut


async def test_a_value_typed_in_the_panel_never_approves_the_pending_command(openai_server, tmp_path):
    """While a command waits: a processor switched on and its value changed from the keyboard,
    the panel closed, and Enter pressed again approves nothing; y does (issue 43.12)."""
    session = live(openai_server, tmp_path, Turn.bash_tool("touch approved.txt"), Turn.bash_tool(SUBMIT))
    async with running(session, pending, size=(140, 44)) as (app, pilot):
        row = await processors_row(app, pilot)
        switch, field = row.query_one(Switch), row.query_one(Input)
        for _ in range(40):
            if app.focused is switch:
                break
            await pilot.press("down")
        await pilot.press("space", "down")
        assert app.focused is field
        await pilot.press("3", "enter")
        await wait_for(pilot, lambda: [(p.type, p.n) for p in session.processors] == [("last_n_observations", 3)])
        await pilot.press("escape")  # closes the panel, interrupting nothing
        assert not app.session_screen.processors_open and pending(app)
        await pilot.press("enter", "enter")
        await pilot.pause()
        assert pending(app) and not (tmp_path / "approved.txt").exists()
        await pilot.press("y")
        await wait_for(pilot, lambda: (tmp_path / "approved.txt").exists(), WAIT)


async def test_processor_parameters_are_validated(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool(SUBMIT), agent__mode="yolo")
    async with running(session, lambda app: asked(app, "follow_up"), size=(140, 44)) as (app, pilot):
        row = await processors_row(app, pilot)
        field = row.query_one(Input)
        field.value = "not a number"
        row.query_one(Switch).value = True
        await pilot.pause()
        assert session.processors == []
        assert field.has_class("-invalid")


async def test_prompt_inspector_shows_the_next_prompt(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool(SUBMIT), agent__mode="yolo",
                   model=model_config(openai_server, context_window=50_000))
    async with running(session, lambda app: asked(app, "follow_up")) as (app, pilot):
        app.session_screen.query_one(Transcript).focus()
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptInspector))
        rows = app.screen.query("PromptMessage")
        prompt = session.prompt_preview().messages
        assert [row.message.role for row in rows] == [m.role for m in prompt]
        assert [m.role for m in prompt[:2]] == ["system", "user"] and TASK in prompt[1].content
        summary = str(app.screen.query_one("#inspector-summary").render())
        assert f"{len(prompt)} messages" in summary and "/ 50,000" in summary
        await pilot.press("escape")
        assert not isinstance(app.screen, PromptInspector)


async def test_help_lists_every_binding_with_its_id(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("ls"))
    async with running(session, pending) as (app, pilot):
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        table = app.screen.query_one("DataTable")
        ids = {table.get_row_at(i)[1] for i in range(table.row_count)}
        assert {binding.id for binding in [*SESSION_BINDINGS, *APP_BINDINGS]} <= ids


async def test_command_palette_offers_every_action(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("ls"))
    async with running(session, pending) as (app, pilot):
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {b.description for b in [*SESSION_BINDINGS, *APP_BINDINGS]} <= titles
        assert "Theme" in titles


async def test_keymap_from_config_remaps_a_binding(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("touch ok.txt", text="Look."),
                   ui__keymap={"approve": "o"})
    async with running(session, pending) as (app, pilot):
        await pilot.press("y")
        assert await still_asking(pilot, app) and not (tmp_path / "ok.txt").exists()
        await pilot.press("o")
        await wait_for(pilot, lambda: (tmp_path / "ok.txt").exists(), WAIT)


async def test_80x24_stacks_the_panes_and_still_confirms(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("touch small.txt", text="Look."))
    async with running(session, pending, size=(80, 24)) as (app, pilot):
        assert app.session_screen.query_one("#panes").is_stacked
        for widget_id in ("#transcript", "#observation", "#meter", "#input"):
            widget = app.session_screen.query_one(widget_id)
            assert widget.region.height > 0 and widget.region.width > 0
        await pilot.press("s")
        await wait_for(pilot, lambda: not app.session_screen.query_one("#panes").is_stacked, WAIT)
        await pilot.press("y")
        await wait_for(pilot, lambda: (tmp_path / "small.txt").exists(), WAIT)


async def test_quit_asks_while_a_command_runs(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("sleep 30"), agent__mode="yolo", timeout=40)
    async with running(session) as (app, pilot):
        screen = app.session_screen
        await wait_for(pilot, lambda: screen.state == ev.AgentState.RUNNING, WAIT)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        await pilot.press("n")
        assert app.is_running and not screen.ended
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.is_running, WAIT)
    assert screen.ended and app.summary.startswith("swedeck: you quit")
    assert json.loads((tmp_path / "session.traj.json").read_text())["info"]["exit_status"] == "UserQuit"


async def test_an_output_flood_keeps_the_pane_bounded_and_shows_its_end(openai_server, tmp_path):
    # 50 MB of output: the pane streams the capped live part, keeps at most MAX_LINES lines
    # and its end, and the model gets head and tail (SPEC §12 B6, measured in bench/).
    from textual.widgets import Log

    from swedeck.tui.widgets.observation_pane import KEEP_CHARS, MAX_LINES

    command = "seq 1 9000000 | head -c 50000000"
    # the next answer comes 2 s later: the pane is still the flood's when it is looked at (under
    # load, an at-once submission's output had already replaced it)
    session = live(openai_server, tmp_path, Turn.bash_tool(command), Turn.bash_tool(SUBMIT, hang_s=2),
                   agent__mode="yolo")
    async with running(session, lambda app: record(app, command) is not None) as (app, pilot):
        flood = record(app, command)
        assert flood.result.truncated and len(flood.output) <= KEEP_CHARS
        log = app.session_screen.query_one(ObservationPane).query_one(Log)
        lines = [line for line in log.lines if line]
        assert 0 < len(lines) <= MAX_LINES
        assert lines[-1] == "<live output capped; the result shows head and tail>"
        assert lines[-2].isdigit()  # whole lines of the command's output before the note
        await wait_for(pilot, lambda: len(openai_server.requests) >= 2, WAIT)
        sent = next(m for m in openai_server.requests[1]["messages"] if m["role"] == "tool")
        assert sent["content"].count("\n") < 2000 and "output truncated" in sent["content"]


async def test_the_transcript_follows_a_long_answer_until_the_user_scrolls_up(openai_server, tmp_path):
    long_text = "\n\n".join(f"Paragraph {i}: the parser reads each line and returns a token." for i in range(150))
    session = live(openai_server, tmp_path, Turn.bash_tool("echo one", text=long_text, chunks=60),
                   Turn.bash_tool(SUBMIT, text=long_text, chunks=150, chunk_delay_s=0.02), agent__mode="yolo")
    async with running(session) as (app, pilot):
        transcript = app.session_screen.query_one(Transcript)
        await wait_for(pilot, lambda: len(openai_server.requests) == 2, WAIT)
        before = transcript.max_scroll_y
        # the second answer streams for 3 s: while it grows, the transcript stays at its end
        await wait_for(pilot, lambda: transcript.max_scroll_y > before + 20
                       and transcript.scroll_y == transcript.max_scroll_y, WAIT)
        transcript.focus()
        await pilot.press("home")
        await wait_for(pilot, lambda: asked(app, "follow_up"), WAIT)
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        assert 0 == transcript.scroll_y < transcript.max_scroll_y  # left where the user put it
        transcript.focus()  # the follow-up input took the focus
        await pilot.press("end")
        await wait_for(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y > 0, WAIT)
        assert "COMPLETE_TASK_AND_SUBMIT" in app.export_screenshot().replace("&#160;", " ")


async def test_a_crash_in_the_ui_exits_1_with_one_line_and_the_trajectory(openai_server, tmp_path, capsys):
    from swedeck.tui.live.launch import ui_ended

    session = live(openai_server, tmp_path, Turn.bash_tool(SUBMIT))
    app = SwedeckApp(session)
    with pytest.raises(ZeroDivisionError):
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_for(pilot, lambda: pending(app), WAIT)
            app.call_later(lambda: 1 / 0)  # anything that escapes a handler ends a Textual app
            await pilot.pause()
    assert app.return_code == 1
    assert ui_ended(app, session) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("swedeck: the UI stopped on an error (ZeroDivisionError")
    assert str(session.trajectory_path) in err[-1]
    assert session.finished.wait(WAIT)
    info = json.loads((tmp_path / "session.traj.json").read_text())["info"]
    assert info["exit_status"] == "UIError"  # what it was, not a quit by the person
    assert "ZeroDivisionError" in info["message"]


async def test_quitting_at_the_follow_up_prompt_keeps_the_run_submitted(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool(f"{SUBMIT} && echo the-patch"))
    async with running(session, pending) as (app, pilot):
        await pilot.press("y")
        await wait_for(pilot, lambda: asked(app, "follow_up"), WAIT)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.summary, WAIT)
    assert session.finished.wait(WAIT)
    info = json.loads((tmp_path / "session.traj.json").read_text())["info"]
    assert info["exit_status"] == "Submitted" and info["submission"] == "the-patch\n"
    assert app.exit_code == 0
    assert app.summary.splitlines()[0].startswith("swedeck: submitted")


async def test_at_80x24_the_step_count_and_the_keys_that_matter_are_on_screen(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("echo hi"), Turn.bash_tool(SUBMIT))
    async with running(session, pending, size=(80, 24)) as (app, pilot):
        await pilot.pause()
        step = app.session_screen.query_one("#step")
        assert str(step.render()).startswith("step 1") and step.region.right <= 80 and step.region.width > 0
        shown = {key.description for key in app.screen.query("FooterKey")
                 if key.region.width > 0 and key.region.right <= 80}
        assert {"Approve", "Reject", "Interrupt", "Quit", "Help"} <= shown


async def test_q_leaves_a_session_that_ended_in_one_key(openai_server, tmp_path):
    """Issue 62: after the agent submitted, `q` leaves at once (it used to take Enter, then Enter
    on the empty line); before, while the model works, `q` is not a key of the session."""
    session = live(openai_server, tmp_path, Turn.bash_tool(SUBMIT), agent__mode="yolo")
    async with running(session, lambda app: asked(app, "follow_up")) as (app, pilot):
        app.session_screen.query_one(Transcript).focus()
        assert app.session_screen.check_action("leave", ())
        await pilot.press("q")
        await wait_for(pilot, lambda: app._exit, WAIT)
    assert app.return_code == 0


async def test_q_is_not_a_key_while_the_command_is_asked_about(openai_server, tmp_path):
    session = live(openai_server, tmp_path, Turn.bash_tool("touch ran.txt"), Turn.bash_tool(SUBMIT))
    async with running(session, pending) as (app, pilot):
        assert not app.session_screen.check_action("leave", ())
        await pilot.press("q")
        assert await still_asking(pilot, app) and not app._exit
