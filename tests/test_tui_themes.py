"""Themes (SPEC §10.4) and the controller's batching (SPEC §10.3)."""

from __future__ import annotations

import pytest

from support.tui import ScriptedSession, ask, tui_config
from support.waiting import wait_for
from swedeck.core import events as ev
from swedeck.themes import SHIPPED_THEMES, load_user_themes
from swedeck.tui.live.app import SwedeckApp
from swedeck.tui.live.controller import OutputChunk, SessionController

pytestmark = [pytest.mark.timeout(60), pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_three_themes_ship():
    assert set(SHIPPED_THEMES) == {"swedeck-dark", "swedeck-light", "swedeck-high-contrast"}
    assert SHIPPED_THEMES["swedeck-light"].dark is False


def test_user_themes_load_and_invalid_ones_are_reported(tmp_path):
    (tmp_path / "ocean.yaml").write_text("name: ocean\nprimary: '#0077be'\nbackground: '#001f3f'\n")
    (tmp_path / "broken.yaml").write_text("name: broken\nprimary: not-a-colour\n")
    (tmp_path / "typo.yaml").write_text("name: typo\nprimary: '#fff'\nprimay: '#000'\n")
    loaded = load_user_themes(tmp_path)
    assert [theme.name for theme in loaded.themes] == ["ocean"]
    assert len(loaded.errors) == 2
    assert any("broken.yaml" in error and "primary" in error for error in loaded.errors)
    assert any("typo.yaml" in error and "primay" in error for error in loaded.errors)


@pytest.mark.parametrize("theme", ["swedeck-light", "swedeck-high-contrast", "nord"])
async def test_theme_from_config(theme):
    session = ScriptedSession(tui_config(**{"ui.theme": theme}), [ask(ev.InputRequested, kind="task")])
    app = SwedeckApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.input_request is not None)
        assert app.theme == theme


async def test_user_theme_dir_and_unknown_theme_notify(tmp_path):
    (tmp_path / "bad.yaml").write_text("- not a mapping\n")
    session = ScriptedSession(tui_config(**{"ui.theme": "no-such-theme"}), [ask(ev.InputRequested, kind="task")])
    app = SwedeckApp(session, themes_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_screen.input_request is not None)
        assert app.theme == "swedeck-dark"
        messages = [n.message for n in app._notifications]
        assert any("bad.yaml" in m for m in messages) and any("no-such-theme" in m for m in messages)


def test_controller_merges_deltas_and_output_in_order():
    posted = []
    controller = SessionController(posted.append)
    for part in ("Hel", "lo"):
        controller.emit(ev.StreamDelta(step=1, kind="text", text=part))
    controller.emit(ev.StreamDelta(step=1, kind="reasoning", text="hm"))
    controller.emit(ev.CommandOutput(action_id="1.0", text="a\n"))
    controller.emit(ev.CommandOutput(action_id="1.0", text="b\n"))
    controller.emit(ev.QueryCancelled(step=1))
    assert len(posted) == 1  # one wake-up per batch, not one per event
    drained = controller.drain()
    assert [type(e) for e in drained] == [ev.StreamDelta, ev.StreamDelta, OutputChunk, ev.QueryCancelled]
    assert drained[0].text == "Hello" and drained[2].text == "a\nb\n"
    controller.emit(ev.QueryStarted(step=2))
    assert len(posted) == 2
