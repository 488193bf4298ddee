"""SPEC §9.3, §11.1: other agents' records in the replay view, driven with Pilot and, for each
new format, the installed `swedeck replay` in a real terminal (tmux): the step list, the
meter's provenance and compaction notes, the fidelity panel (`i`), the prompt inspector
(`t`), folders of mixed formats (`L`/`H`)."""

from __future__ import annotations

import shutil
import subprocess
import uuid

import pytest
from test_other_agents import AGENTS, CLAUDE, CODEX, INSPECT_EVAL, OPENHANDS_V0, OPENHANDS_V1
from test_replay_ui import screen_of, text_of

from conftest import swedeck_command
from support.terminal import TMUX, exit_code, send_keys, wait_for_text
from support.waiting import wait_for
from swedeck.tui.replay.app import ReplayApp
from swedeck.tui.replay.fidelity_screen import FidelityScreen
from swedeck.tui.shared.prompt_inspector import PromptInspector

SIZE = (120, 36)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_claude_code_in_the_replay_view():
    app = ReplayApp([CLAUDE])
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: "step 1/5" in text_of(screen, "#replay-header"))
        assert "prompt reconstructed" in text_of(screen, "#replay-meter")
        await pilot.press("l", "l")
        assert "compacted: 180,000 -> summary" in text_of(screen, "#replay-meter")
        # the compaction is a mark in the step list, with its figures (issue 43.13)
        await wait_for(pilot, lambda: 3 in screen.step_list.commands)
        assert screen.step_list.commands[3].startswith("⟲ compacted: 180,000 -> summary · Edit ")
        assert not screen.step_list.commands[2].startswith("⟲")
        await pilot.press("i")
        assert isinstance(app.screen, FidelityScreen)
        panel = str(app.screen.query_one("#fidelity-text").render())
        assert "system prompt: unknown" in panel and "compactions: 1" in panel and "summary x1" in panel
        await pilot.press("escape", "t")
        assert isinstance(app.screen, PromptInspector)
        assert "reconstructed" in str(app.screen.query_one("#inspector-summary").render())
        assert app.screen.lines[0].message.text.startswith("This session is being continued")


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_b_opens_a_branch_in_place_and_q_comes_back():
    from swedeck.tui.replay.branch_screen import BranchScreen
    from swedeck.tui.replay.replay_screen import ReplayScreen

    app = ReplayApp([CLAUDE])
    async with app.run_test(size=SIZE) as pilot:
        main = screen_of(app)
        await wait_for(pilot, lambda: "step 1/5" in text_of(main, "#replay-header"))
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, BranchScreen))
        labels = [branch.label for branch in app.screen.branches]
        assert labels[0].startswith("branch of 10 records") and labels[1].startswith("sidechain of 2 records")
        assert labels[2] == "subagent file agent-ag1"
        await pilot.press("down", "enter")  # the sidechain: a Task's run inside the session file
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen is not main)
        branch = app.screen
        await wait_for(pilot, lambda: "step 1/1" in text_of(branch, "#replay-header"))
        header = text_of(branch, "#replay-header")
        assert "step 1/1 · branch: sidechain of 2 records" in header and "#s2" in header
        assert "Only calc.py uses it." in text_of(branch, "#model-text")
        await pilot.press("q")
        await wait_for(pilot, lambda: app.screen is main)
        assert "step 1/5" in text_of(main, "#replay-header") and app.is_running
        await pilot.press("b", "escape")  # the list closes without opening anything
        assert app.screen is main


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_an_inspect_step_shows_its_recorded_input():
    app = ReplayApp([INSPECT_EVAL])
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: "step 1/3" in text_of(screen, "#replay-header"))
        await pilot.press("dollar_sign")
        assert "prompt recorded" in text_of(screen, "#replay-meter")
        await pilot.press("t")
        assert isinstance(app.screen, PromptInspector)
        assert "step 3 · recorded" in str(app.screen.query_one("#inspector-summary").render())
        assert app.screen.lines[-1].message.text == "(a note the solver added to this call only)"


@pytest.mark.anyio
@pytest.mark.timeout(90)
async def test_a_folder_of_every_format_moves_with_L_and_H():
    from swedeck.core.trajectory.loader import trajectory_files

    paths = trajectory_files(AGENTS)
    app = ReplayApp(paths)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        seen = set()
        for _ in paths:
            await wait_for(pilot, lambda: screen.document is not None and "step 1/" in text_of(screen, "#replay-header"))
            seen.add(screen.document.format)
            assert not screen.error
            await pilot.press("L")
        assert seen == {"atif", "claude-code", "codex", "openhands", "inspect"}


TMUX_CASES = [
    (AGENTS / "atif" / "v1.5-plain.json", "atif", "Done: the test passes."),
    (CLAUDE, "claude-code", "Fixed: average() now divides by len(xs)."),
    (CODEX, "codex", "Fixed; the test passes."),
    (OPENHANDS_V0, "openhands", "finish Fixed the off-by-one."),
    (OPENHANDS_V1, "openhands", "finish Fixed."),
    (INSPECT_EVAL, "inspect", "The answer is 3."),
]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.timeout(90)
@pytest.mark.parametrize(("path", "kind", "last"), TMUX_CASES, ids=lambda v: getattr(v, "name", None))
def test_each_format_in_a_real_terminal(tmp_path, path, kind, last):
    session = f"swedeck-agents-{uuid.uuid4().hex[:6]}"
    done = tmp_path / "exit-code"
    command = " ".join([*swedeck_command(), "replay", f"'{path}'"]) + f"; echo $? > {done}"
    subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "140", "-y", "40", command], check=True)
    try:
        # the header's words, waited for: "step 1/" alone is also the token chart's caption,
        # which can be on the screen a frame before the header names the format
        wait_for_text(session, f"{kind} · step 1/", timeout=30)
        send_keys(session, "$")
        wait_for_text(session, last, timeout=20)
        send_keys(session, "i")
        wait_for_text(session, "what the model saw:", timeout=20)
        send_keys(session, "i")  # closes the panel (an Escape then `q` would read as alt+q)
        wait_for_text(session, "step ", timeout=20)
        send_keys(session, "q")
        assert exit_code(done) == "0"
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)
