"""SPEC §11.1: the replay view driven with Pilot: navigation, search, folders, errors,
follow, the prompt inspector and what-if figures."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import FIXTURES as REPO_FIXTURES
from conftest import MINI_FIXTURE, MINI_V2_FIXTURE, SWEAGENT_FIXTURE, SWEAGENT_OLDER_FIXTURE
from support.replay import add_step, start_writer, write_trajectory
from support.waiting import wait_for
from swedeck.core.messages import Action, MessageType, make_message
from swedeck.core.prompt_view import step_prompt
from swedeck.core.replay.what_if import what_if_prompt
from swedeck.core.trajectory import load_trajectory
from swedeck.tui.replay.app import ReplayApp
from swedeck.tui.replay.replay_screen import ForkRequest, ReplayScreen
from swedeck.tui.replay.what_if_screen import WhatIfScreen
from swedeck.tui.shared.prompt_inspector import PromptInspector
from swedeck.tui.widgets.text_view import TextView

SIZE = (120, 36)
pytestmark = [pytest.mark.timeout(60), pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def screen_of(app) -> ReplayScreen:
    screen = app.screen_stack[0]
    assert isinstance(screen, ReplayScreen)
    return screen


def text_of(screen, selector: str) -> str:
    """What the widget shows (for a TextView: its lines as rendered, not the text it was given)."""
    widget = screen.query_one(selector)
    if isinstance(widget, TextView):
        lines = ("".join(segment.text for segment in widget.render_line(y)).rstrip() for y in range(widget.size.height))
        return "\n".join(lines).strip("\n")
    return str(widget.render())


async def test_navigation_keys(tmp_path):
    path = write_trajectory(tmp_path / "t", 5)
    app = ReplayApp([path], fork_model="openai/gpt-4o")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        assert screen.step == 1 and "echo step-1-output" in text_of(screen, "#model-command")
        assert "step-1-output" in text_of(screen, "#output-text")
        assert "context 100 / 10,000" in text_of(screen, "#replay-meter")
        await pilot.press("l", "right")
        assert screen.step == 3
        await pilot.press("h")
        assert screen.step == 2
        await pilot.press("dollar_sign")
        assert screen.step == 5 and "step 5/5" in text_of(screen, "#replay-header")
        await pilot.press("0")
        assert screen.step == 1
        await pilot.press("g", *"4", "enter")
        assert screen.step == 4
        await pilot.press("g", "minus", "2", "enter")
        assert screen.step == 4  # -2 = the one before last
        await pilot.press("f")
    assert app.return_value == ForkRequest(path, 4)


async def test_follow_goes_on_in_the_final_file_when_the_session_ends(tmp_path):

    writer = start_writer(tmp_path / "live")
    add_step(writer, 1)
    app = ReplayApp([writer.path], follow=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: screen.step == 1)
        add_step(writer, 2)
        add_step(writer, 3, command="echo the-last-step")
        final = writer.finish({"exit_status": "Submitted"})  # writes the .traj.json, removes the .jsonl
        assert not writer.path.exists()
        await wait_for(pilot, lambda: screen.path == final, timeout=10)
        assert screen.error is None and screen.step_count == 3 and screen.step == 3
        assert "echo the-last-step" in text_of(screen, "#model-command")
        assert "following" not in text_of(screen, "#replay-header")


async def test_fork_without_a_model_says_how_to_name_one_and_stays(tmp_path):
    path = write_trajectory(tmp_path / "t", 3)
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, ReplayScreen)
        assert any("-m NAME" in n.message for n in app._notifications)


async def test_search_moves_between_matches_and_highlights(tmp_path):
    writer = start_writer(tmp_path / "t")
    add_step(writer, 1)
    add_step(writer, 2, output="Traceback: ZeroDivisionError")
    add_step(writer, 3)
    add_step(writer, 4, command="python -c 'raise ZeroDivisionError'")
    path = writer.finish({"exit_status": "Submitted"})
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("slash", *"zerodivision", "enter")
        await wait_for(pilot, lambda: not screen.searching, 10)  # the search runs in a worker
        assert screen.matches == [2, 4] and screen.step == 2
        await pilot.pause()
        view = screen.query_one("#output-text", TextView)
        shown = [segment for y in range(view.size.height) for segment in view.render_line(y)]
        assert any(segment.style and segment.style.reverse and segment.text == "ZeroDivision" for segment in shown), shown
        await pilot.press("n")
        assert screen.step == 4
        await pilot.press("n")
        assert screen.step == 2
        await pilot.press("N")
        assert screen.step == 4
        shown: list[int] = []  # issue 49: matches found redraw nothing shown (the header counts them)
        show_step = screen.show_step
        screen.show_step = lambda: (shown.append(screen.step), show_step())[1]  # type: ignore[method-assign]
        await pilot.press("slash", *"error", "enter")
        await wait_for(pilot, lambda: not screen.searching and "/error: 2 steps" in text_of(screen, "#replay-header"), 10)
        assert screen.matches == [2, 4] and shown == [4]  # the marks of the new query, once
        await pilot.press("q")


@pytest.mark.parametrize("fixture", [MINI_FIXTURE, SWEAGENT_FIXTURE])
async def test_other_formats_open(fixture):
    app = ReplayApp([fixture], start_step=-1)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        trajectory = load_trajectory(fixture)
        assert screen.step == len(trajectory.steps)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(screen.curve) == len(trajectory.steps)
        assert screen.error is None


async def test_folder_with_a_bad_file_shows_its_error_and_moves_on(tmp_path):
    write_trajectory(tmp_path / "a", 2)
    (tmp_path / "b.traj.json").write_bytes(b"\x00\x00binary")
    (tmp_path / "c.traj.json").write_text('{"messages": 7}')
    shutil.copy(MINI_FIXTURE, tmp_path / "d.traj.json")
    paths = sorted(tmp_path.glob("*.traj.json"))
    app = ReplayApp(paths)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        assert screen.error is None and screen.step == 1
        await pilot.press("L")
        assert "b.traj.json" in screen.error and "binary" in screen.error
        assert "b.traj.json" in text_of(screen, "#replay-error")
        await pilot.press("l", "t", "p")  # nothing to show: no crash
        await pilot.press("L")
        assert "c.traj.json" in screen.error
        await pilot.press("L")
        assert screen.error is None and screen.path.name == "d.traj.json"
        await pilot.press("H", "H", "H")
        assert screen.error is None and screen.path.name == "a.traj.json"


async def test_truncated_jsonl_opens_with_an_error_view(tmp_path):
    path = tmp_path / "t.traj.jsonl"
    path.write_text('{"role":"meta","format":"swedeck-traj/1","session":{}}\n'
                    '{"role":"assistant","content":"cut', encoding="utf-8")
    app = ReplayApp([path])
    async with app.run_test(size=SIZE):
        screen = screen_of(app)
        assert "no steps" in screen.error


async def test_follow_sees_appended_steps_and_stays_on_the_last(tmp_path):
    writer = start_writer(tmp_path / "live")
    add_step(writer, 1)
    app = ReplayApp([writer.path], follow=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        assert screen.step_count == 1
        add_step(writer, 2)  # as the running session writes, while the replay shows the file
        add_step(writer, 3, command="echo appended")
        await wait_for(pilot, lambda: screen.step_count == 3, timeout=10)
        await wait_for(pilot, lambda: screen.step == 3 and "echo appended" in text_of(screen, "#model-command"))
    writer.close()


async def test_a_long_historys_prompt_is_worked_out_off_the_ui_thread(monkeypatch):
    """Past `PROMPT_IN_WORKER` messages (a huge run's last step: tens of seconds), `t` says it is
    working and opens the inspector when its worker is done, and what-if says it is working
    and shows the figures then; the same prompts."""
    from swedeck.core.replay import open_run

    monkeypatch.setattr(open_run, "PROMPT_IN_WORKER", 1)  # the one threshold: `t` and what-if alike
    trajectory = load_trajectory(MINI_FIXTURE)
    app = ReplayApp([MINI_FIXTURE], start_step=-1)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: screen.view is not None)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptInspector))
        assert any("working out step" in notice.message for notice in app._notifications)
        expected = step_prompt(trajectory, len(trajectory.steps))
        assert [line.tokens for line in app.screen.lines] == [line.tokens for line in expected.lines]
        await pilot.press("escape", "p")
        await wait_for(pilot, lambda: isinstance(app.screen, WhatIfScreen))
        what_if = app.screen
        await wait_for(pilot, lambda: what_if.prompt is not None)
        chosen = [p for p in what_if.processors if p["enabled"]]
        assert what_if.prompt.total_tokens == what_if_prompt(trajectory, screen.step, chosen).total_tokens
        await pilot.press("1")  # another choice: worked out again
        await wait_for(pilot, lambda: what_if.prompt is not None and what_if.prompt.total_tokens ==
                       what_if_prompt(trajectory, screen.step, [p for p in what_if.processors if p["enabled"]]).total_tokens)


async def test_prompt_inspector_and_what_if_equal_step_prompt():
    trajectory = load_trajectory(MINI_FIXTURE)
    app = ReplayApp([MINI_FIXTURE], start_step=-1)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("t")
        inspector = app.screen
        assert isinstance(inspector, PromptInspector)
        expected = step_prompt(trajectory, len(trajectory.steps))
        assert [line.tokens for line in inspector.lines] == [line.tokens for line in expected.lines]
        assert f"{expected.total_tokens:,} tokens / " in str(inspector.query_one("#inspector-summary").render())
        await pilot.press("escape", "p")
        what_if = app.screen
        assert isinstance(what_if, WhatIfScreen)
        chosen = [p for p in what_if.processors if p["enabled"]]
        assert what_if.prompt.total_tokens == what_if_prompt(trajectory, screen.step, chosen).total_tokens
        await pilot.press("2", "3", "4")  # only last_n_observations stays on
        only_last = what_if_prompt(trajectory, screen.step, [{"type": "last_n_observations", "n": 5}])
        assert what_if.prompt.total_tokens == only_last.total_tokens < only_last.history_tokens
        await pilot.press("minus")
        fewer = what_if_prompt(trajectory, screen.step, [{"type": "last_n_observations", "n": 4}])
        assert what_if.prompt.total_tokens == fewer.total_tokens
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(what_if.curve) == len(trajectory.steps) and max(what_if.curve) > 0
        await pilot.press("1")
        assert what_if.prompt.total_tokens == what_if.prompt.history_tokens


async def test_play_types_out_and_any_key_stops(tmp_path):
    full = "Thought: " + "a long look at the code " * 100  # ~8 s of typing at 80 tok/s
    path = write_trajectory(tmp_path / "t", 2, thought=full)
    app = ReplayApp([path], play=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        assert screen.playing and screen.step == 1
        shown = text_of(screen, "#model-text")
        assert shown.startswith("task: Fix the bug in calc.py\n\n")  # step 1 opens with the task (issue 43.11)
        typed = shown.removeprefix("task: Fix the bug in calc.py\n\n")
        assert len(typed) < len(full) and full.startswith(typed)  # typed out, not shown at once
        assert text_of(screen, "#output-text") == ""  # the output comes after the text
        await pilot.press("x")
        assert not screen.playing
        assert full.strip() in text_of(screen, "#model-text")
        assert "step-1-output" in text_of(screen, "#output-text") or screen.step == 2


async def test_markup_in_trajectories_is_literal(tmp_path):
    writer = start_writer(tmp_path / "t")
    add_step(writer, 1, thought="[red]not red[/red] [@click=app.quit]x[/]", output="[link=http://x]y[/link]")
    path = writer.finish({"exit_status": "Submitted"})
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        assert "[red]not red[/red]" in text_of(screen, "#model-text")
        assert "[link=http://x]y[/link]" in text_of(screen, "#output-text")


async def test_every_key_is_in_the_help_and_the_palette(tmp_path):
    from textual.widgets import DataTable

    from swedeck.tui.replay.bindings import REPLAY_BINDINGS
    from swedeck.tui.shared.help_screen import HelpScreen

    path = write_trajectory(tmp_path / "t", 1)
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        titles = {command.title for command in app.get_system_commands(screen)}
        assert {binding.description for binding in REPLAY_BINDINGS} <= titles
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one(DataTable)
        rows = [table.get_row_at(row) for row in range(table.row_count)]
        assert {binding.id for binding in REPLAY_BINDINGS} <= {str(row[1]) for row in rows}
        assert all(str(row[2]) for row in rows)  # every key says what it does
        await pilot.press("escape")
        assert app.screen is screen


async def test_the_keymap_and_theme_of_the_config_apply_to_replay_and_watch(tmp_path):
    from textual.widgets import DataTable

    from swedeck.core.config import UIConfig
    from swedeck.core.watch import DirectoryWatcher
    from swedeck.tui.shared.help_screen import HelpScreen
    from swedeck.tui.watch.app import WatchApp

    ui = UIConfig(theme="swedeck-light", keymap={"replay_next": "j"})
    path = write_trajectory(tmp_path / "t", 3)
    app = ReplayApp([path], ui=ui)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        assert app.theme == "swedeck-light"
        await wait_for(pilot, lambda: screen.step == 1, 10)
        await pilot.press("j")
        await wait_for(pilot, lambda: screen.step == 2, 10)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one(DataTable)
        keys = {str(table.get_row_at(row)[1]): str(table.get_row_at(row)[0]) for row in range(table.row_count)}
        assert keys["replay_next"] == "j"
    watch = WatchApp(DirectoryWatcher(tmp_path), ui=ui)
    async with watch.run_test(size=SIZE):
        assert watch.theme == "swedeck-light"


async def test_quick_jumps_end_on_the_last_one(tmp_path):
    # Moving the step list's highlight from code must not come back as a highlight event
    # after a later jump (it used to send the screen back to the earlier step).
    path = write_trajectory(tmp_path / "t", 12)
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        for step in (5, 9, 3, 11):
            screen.go(step)
        for _ in range(8):  # settled on 11 (it used to cycle 5, 9, 3, 11 for ever, one jump a message)
            await pilot.pause()
            assert screen.step == 11 and screen.query_one("#replay-steps").highlighted == 10


async def test_mini_v2_shows_the_command_once_its_output_with_the_exit_code_and_recorded_usage():
    app = ReplayApp([MINI_V2_FIXTURE], start_step=1)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.pause()
        model = text_of(screen, "#model-text") + text_of(screen, "#model-command")
        assert model.count("cat calc.py") == 1 and '"command"' not in model  # the command block, no raw JSON
        output = text_of(screen, "#output-text")
        assert output.startswith("── exit 0 ──") and "def average(values):" in output
        assert "<returncode>" not in output and "<output>" not in output  # the output, not what the model got
        meter = text_of(screen, "#replay-meter")
        assert "context 420 / " in meter and "recorded" in meter and "cached 120" in meter
        await pilot.press("l")
        output = text_of(screen, "#output-text")
        assert "── exit 1 ──" in output and "── format error ──" in output  # the turn after the observation
        await pilot.press("t")  # the inspector keeps what the model got: the wrapper included
        inspector = app.screen
        assert isinstance(inspector, PromptInspector)
        assert any("<returncode>0</returncode>" in line.message.text for line in inspector.lines)


async def test_an_older_sweagent_file_shows_each_observation_and_its_thought_once():
    raw = json.loads(SWEAGENT_OLDER_FIXTURE.read_text())
    app = ReplayApp([SWEAGENT_OLDER_FIXTURE], start_step=1)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        for number, record in enumerate(raw["trajectory"], 1):
            await pilot.pause()
            assert screen.step == number
            assert text_of(screen, "#model-text").count(record["thought"].strip()) == 1
            assert record["observation"].strip().splitlines()[0] in text_of(screen, "#output-text")
            await pilot.press("l")
        assert "step 5/5" in text_of(screen, "#replay-header")


async def test_t_and_what_if_know_the_window_the_meter_shows_and_say_what_if(tmp_path):
    """A file that recorded no window: the meter takes the model's from the map, and so do `t`
    and what-if; what-if's candidates are labelled what-if, not configured (issue 32)."""
    from swedeck.core.messages import Action, MessageType, make_message
    from swedeck.core.trajectory.writer import TrajectoryWriter

    writer = TrajectoryWriter(tmp_path / "nowindow", {"id": "w", "model": "openai/gpt-4o", "config": {}})
    writer.add_message(make_message("system", "s", MessageType.SYSTEM))
    writer.add_message(make_message("user", "t", MessageType.TASK))
    writer.add_message(make_message("assistant", "run ls", MessageType.ACTION, actions=(Action(command="ls"),)))
    writer.add_message(make_message("user", "a\nb", MessageType.OBSERVATION))
    path = writer.finish({"exit_status": "Submitted"})
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: screen.view is not None)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptInspector))
        summary = str(app.screen.query_one("#inspector-summary").render())
        assert "/ 128,000" in summary and "unknown window" not in summary, summary
        await pilot.press("escape", "p")
        await wait_for(pilot, lambda: isinstance(app.screen, WhatIfScreen))
        figures = str(app.screen.query_one("#what-if-figures").render())
        assert "/ 128,000" in figures and "(what-if)" in figures and "configured" not in figures, figures


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_the_last_step_is_shown_in_a_long_step_list(tmp_path, size):
    # A list longer than its pane has a vertical scrollbar; the lines it left must not grow a
    # horizontal one, which hid the current (last) step under it.
    path = write_trajectory(tmp_path / "t", 120)
    app = ReplayApp([path], start_step=-1)
    async with app.run_test(size=size) as pilot:
        screen = screen_of(app)
        steps = screen.query_one("#replay-steps")
        await wait_for(pilot, lambda: screen.step == 120)
        await pilot.pause()
        assert not steps.show_horizontal_scrollbar
        # the panes span the screen (a margin on the chart below them took two columns off them)
        assert screen.query_one("#replay-body").region.width == size[0]
        shown = [steps.scroll_offset.y + y for y in range(steps.scrollable_content_region.height)]
        assert steps.highlighted == 119 and 119 in shown
        lines = ["".join(segment.text for segment in steps.render_line(y)) for y in range(steps.size.height)]
        assert lines[-1].strip().startswith("120")
        await pilot.press("up")
        assert screen.step == 119


async def test_step_one_shows_the_task_and_long_lines_wrap_in_every_pane(tmp_path):
    """Issue 43.11: the task at the top of step 1 (not of later steps), and a person's long
    rejection comment and a long output line wrapped, whole, at 80 columns."""
    comment = "I rejected your command with this long comment: " + "use the test runner instead " * 4 + "END"
    writer = start_writer(tmp_path / "t")
    add_step(writer, 1, output="x" * 150 + "TAIL")
    writer.add_message(make_message("assistant", "rm it\n\n```bash\nrm -rf build\n```", MessageType.ACTION, step=2,
                                    actions=(Action(command="rm -rf build"),)))
    writer.add_message(make_message("user", comment, MessageType.USER_MESSAGE))
    path = writer.finish({"exit_status": "Submitted"})
    app = ReplayApp([path])
    async with app.run_test(size=(80, 24)) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: screen.step == 1 and "TAIL" in text_of(screen, "#output-text").replace("\n", ""))
        assert text_of(screen, "#model-text").startswith("task: ")
        output = text_of(screen, "#output-text")
        assert "x" * 150 + "TAIL" in output.replace("\n", "") and max(map(len, output.splitlines())) < 80
        await pilot.press("l")
        await wait_for(pilot, lambda: screen.step == 2)
        assert not text_of(screen, "#model-text").startswith("task: ")
        assert "".join(comment.split()) in "".join(text_of(screen, "#output-text").split())  # whole, wrapped


async def test_a_text_view_lets_its_lines_go_without_a_collection(tmp_path):
    """Issue 49: each step shown gives the output pane a new text. The lines drawn for the
    old one are freed when it goes, not left in reference cycles (Textual's `LRUCache` keeps
    its entries in a ring) for the next young collection: 15-37 ms each, twice a second
    while keys were pressed in a 45,000-step replay."""
    import gc

    from textual.strip import Strip

    path = write_trajectory(tmp_path / "t", 12)
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: screen.step == 1)
        view = screen.query_one("#output-text", TextView)
        view.update("\n".join(f"line {number} of the first text" for number in range(200)))
        await wait_for(pilot, lambda: any("of the first text" in line for line in text_of(screen, "#output-text").split("\n")))
        drawn = {id(strip) for strip in view._strips.values()}
        assert drawn
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds unreachable is kept in gc.garbage
        try:
            view.update("a second text")
            gc.collect()
            left = [thing for thing in gc.garbage if isinstance(thing, Strip) and id(thing) in drawn]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
        assert not left  # freed as the text changed, not by the collection


async def test_a_key_quiets_the_curve_worker_until_its_frame_is_drawn(tmp_path, monkeypatch):
    """Issue 49: from a key's arrival to the frame after its bindings, a worker that waits on
    the app's key quiet (`pacing.quiet`) sleeps (the GIL the UI's); it goes on once the frame is drawn. Here
    the focused widget is still busy when the key comes: the frame was asked for at the
    key's arrival, came at once with nothing to redraw, and workers went on through the key's
    own frame (a search's next match took 127 ms at p99)."""
    import asyncio
    import threading

    from swedeck.tui.kit import key_quiet
    monkeypatch.setattr(key_quiet, "UNHANDLED_S", 60.0)  # a quiet ends by its frame only
    monkeypatch.setattr(key_quiet, "MAX_WAIT_S", 60.0)
    path = write_trajectory(tmp_path / "t", 12)
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: screen.step == 1)
        quiet, drawn, at_bindings = app.pacing.quiet, [], []
        model = screen.query_one("#model-text")
        render = model.render
        model.render = lambda: (drawn.append((screen.step, quiet.quiet)), render())[1]  # type: ignore[method-assign]
        show_step = screen.show_step
        screen.show_step = lambda: (at_bindings.append(quiet.quiet), show_step())[1]  # type: ignore[method-assign]
        view = screen.query_one("#output-text", TextView)
        view.focus()  # a key goes to the focused widget's own queue
        await wait_for(pilot, lambda: app.focused is view)
        busy, free = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            busy.set()
            await free.wait()

        async def until(condition) -> None:  # not `wait_for`: Pilot's pause waits for every widget
            deadline = asyncio.get_running_loop().time() + 5
            while not condition():
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.005)
        view.call_later(hold)
        await until(busy.is_set)
        app.simulate_key("l")
        refreshed: list[bool] = []  # a frame asked for after the key's arrival has come
        app.call_after_refresh(lambda: app.screen.call_after_refresh(lambda: refreshed.append(True)))
        await until(lambda: bool(refreshed))
        while_busy = quiet.quiet, screen.step
        free.set()
        assert while_busy == (False, 1)  # the key waits in the view's queue: still quiet
        await wait_for(pilot, lambda: quiet.quiet and (2, False) in drawn, 5)
        assert at_bindings == [False] and screen.step == 2
        assert (2, True) not in drawn  # quiet through the frame that shows its step
        waited = threading.Event()
        quiet.arrived()  # a waiting worker sleeps until the frame after the key's bindings
        worker = threading.Thread(target=lambda: (quiet.wait(), waited.set()))
        worker.start()
        assert not waited.wait(0.05)
        quiet.handled(app)
        await wait_for(pilot, waited.is_set, 5)
        worker.join()
        quiet.arrived()
        quiet.handled(app)
        quiet.arrived()  # a second key before the first one's frame: that frame ends no quiet
        refreshed.clear()
        app.call_after_refresh(lambda: app.screen.call_after_refresh(lambda: refreshed.append(True)))
        await wait_for(pilot, lambda: bool(refreshed))
        assert not quiet.quiet
        quiet.handled(app)
        await wait_for(pilot, lambda: quiet.quiet)
        monkeypatch.setattr(key_quiet, "UNHANDLED_S", 0.2)
        quiet.arrived()  # a key no binding handled: it goes on after UNHANDLED_S
        waited.clear()
        worker = threading.Thread(target=lambda: (quiet.wait(), waited.set()))
        worker.start()
        assert waited.wait(5) and quiet.quiet
        worker.join()


async def test_a_click_quiets_the_workers_as_a_key_does(tmp_path, monkeypatch):
    """Issue 49: a click on the step list (a jump) quiets workers from the button's release
    until the frame after the click was handled, as a key does. The button's press and
    release are posted to the app as the terminal's driver posts them (Pilot's click hands
    them to the widget)."""
    from textual import events

    from swedeck.tui.kit import key_quiet
    monkeypatch.setattr(key_quiet, "UNHANDLED_S", 60.0)  # a quiet ends by its frame only
    path = write_trajectory(tmp_path / "t", 12)
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: screen.step == 1)
        quiet, at_show = app.pacing.quiet, []
        show_step = screen.show_step
        screen.show_step = lambda: (at_show.append((screen.step, quiet.quiet)), show_step())[1]  # type: ignore[method-assign]
        region = screen.query_one("#replay-steps").region
        x, y = region.x + 3, region.y + 4
        for kind in (events.MouseDown, events.MouseUp):
            app.post_message(kind(None, x, y, 0, 0, 1, False, False, False, screen_x=x, screen_y=y))
        await wait_for(pilot, lambda: screen.step != 1 and quiet.quiet)
        assert at_show and not at_show[0][1]  # the jump was shown while workers stepped aside


async def test_go_to_asks_on_a_line_over_the_view_and_the_footer_stays_as_it_is(tmp_path):
    """Issue 49: a go-to pushes no screen (a dialog's push and pop restyled and redrew every
    widget), the focus comes back where it was, and the footer is not composed again for the
    same keys (it was, six times a go-to)."""
    from swedeck.tui.widgets.ask_line import AskLine
    from swedeck.tui.widgets.fitted_footer import FittedFooter

    path = write_trajectory(tmp_path / "t", 12)
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: screen.step == 1)
        footer, composed = screen.query_one(FittedFooter), []
        recompose = footer.recompose

        async def counted() -> None:
            composed.append(1)
            await recompose()
        footer.recompose = counted  # type: ignore[method-assign]
        before = app.focused
        await pilot.press("g")
        line = await wait_for(pilot, lambda: app.focused if isinstance(app.focused, AskLine) else None)
        assert app.screen is screen and line.visible
        await pilot.press(*"9", "enter")
        await wait_for(pilot, lambda: screen.step == 9)
        assert app.screen is screen and not line.visible and app.focused is before
        await pilot.press("slash")  # a search asked, then let go: nothing searched
        await wait_for(pilot, lambda: app.focused is line and line.visible)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.focused is before and not line.visible)
        assert screen.search_text == ""
        assert composed == []


@pytest.mark.anyio
async def test_a_search_of_a_file_read_whole_reads_the_open_one_and_steps_aside_for_keys(monkeypatch):
    # Issue 49: the search parsed a 97 MB ATIF file a second time (200 MB more), and held the GIL
    # from the keys pressed while it ran (search next p99 294-298 ms).
    from swedeck.core.replay import open_run, search

    opened: list[object] = []
    open_document = open_run.open_document
    monkeypatch.setattr(open_run, "open_document", lambda *a, **k: opened.append(a[0]) or open_document(*a, **k))
    monkeypatch.setattr(search, "PAUSE_EVERY", 1)
    path = REPO_FIXTURES / "agents" / "atif" / "v1.5-plain.json"
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: screen.step_count > 0)
        paused: list[bool] = []
        monkeypatch.setattr(app.pacing.quiet, "wait", lambda: paused.append(True))
        opened.clear()
        await pilot.press("slash", *"e", "enter")
        await wait_for(pilot, lambda: not screen.searching and bool(screen.matches), 10)
        assert opened == []  # the open document was searched, not the file again
        assert len(paused) == screen.step_count  # a look at the keys before every step it read
        await pilot.press("q")





@pytest.mark.anyio
async def test_what_if_over_a_processor_config_swedeck_refuses_says_so_and_the_replay_goes_on(tmp_path):
    """Issue 64.3: a worker of the what-if dialog that raised left it at "whole run: computing…"
    for ever. A file that records a processor config swedeck refuses (here `n` is not a number)
    now says why in the dialog; Esc comes back to the replay."""
    path = write_trajectory(tmp_path / "hostile", 4, finish=False)
    lines = path.read_text().splitlines()
    digest = "0" * 16
    lines.insert(1, json.dumps({"role": "meta", "event": "processors_changed", "time": 0.0, "hash": digest,
                                "processors": [{"type": "last_n_observations", "n": "not a number"}]}))
    for index, line in enumerate(lines):
        record = json.loads(line)
        if record.get("role") == "assistant":
            record["extra"]["processors"] = digest
            lines[index] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    app = ReplayApp([path])
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: getattr(app.screen, "step", 0) == 1)
        await pilot.press("p")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, WhatIfScreen) and app.screen)
        await wait_for(pilot, lambda: "could not be computed" in str(dialog.query_one("#what-if-run").render()))
        assert "invalid history processor config" in str(dialog.query_one("#what-if-run").render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, WhatIfScreen))
        assert app.is_running and app.return_code is None
