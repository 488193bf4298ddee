"""Issue 32.5: what a UI command does on its way to the first frame (bench B2, B3).

The command line holds the garbage collector and pydantic's plugin discovery from its start
to the app's first frame (`core/startup/holds.py`), only for a command that opens an app; the
replay imports only what its first screen needs.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys

import pytest

from conftest import FIXTURES, MINI_FIXTURE
from swedeck import cli
from swedeck.core.startup import gc_tuning
from swedeck.core.startup import holds as start_holds

FIRST_FRAME_PROBE = """
import gc, json, os, sys
from textual.app import App

seen = {}

def watched_mount(mount):
    def on_mount(screen):
        seen["collecting_while_the_screen_mounts"] = gc.isenabled()
        seen["plugins_while_the_screen_mounts"] = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
        return mount(screen)
    return on_mount

def ready(app, _event):  # App's own handler: after every subclass's, FirstFrame's included
    seen["modules"] = sorted(sys.modules)  # before the probe's own import of pydantic below
    from pydantic.plugin import _loader
    seen["plugins_looked_for_before_the_first_frame"] = _loader._plugins is not None
    seen["collecting_at_the_first_frame"] = gc.isenabled()
    seen["plugins_at_the_first_frame"] = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
    seen["frozen"] = gc.get_freeze_count()
    seen["header"] = str(app.screen.query_one("#replay-header").render())
    os.write(1, (json.dumps(seen) + "\\n").encode())
    os._exit(0)

def run_headless(app, *args, **kwargs):
    # imported by the command by now: the probe itself imports nothing of swedeck's before it
    from swedeck.tui.replay.replay_screen import ReplayScreen
    ReplayScreen.on_mount = watched_mount(ReplayScreen.on_mount)
    return run(app, *args, **{**kwargs, "headless": True, "size": (120, 36)})

App._on_ready = ready
run = App.run
App.run = run_headless
from swedeck.cli import main
sys.exit(main(sys.argv[1:]))
"""


def first_frame(*args: str, env: dict[str, str] | None = None) -> dict:
    done = subprocess.run([sys.executable, "-c", FIRST_FRAME_PROBE, *args], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_replay_holds_collections_until_its_first_frame_then_freezes_the_start():
    seen = first_frame("replay", str(MINI_FIXTURE), "--step", "-1")
    assert seen["collecting_while_the_screen_mounts"] is False
    assert seen["collecting_at_the_first_frame"] is True
    assert seen["frozen"] > 10_000  # the modules, classes and widgets of the start


def test_pydantic_looks_for_plugins_only_after_the_first_frame(monkeypatch):
    # Its scan of every installed distribution's entry points waits; the variable that holds
    # it off is gone at the first frame, so no later model or child process inherits it.
    monkeypatch.delenv(start_holds.PLUGINS_VARIABLE, raising=False)
    seen = first_frame("replay", str(MINI_FIXTURE), "--step", "-1")
    assert seen["plugins_while_the_screen_mounts"] == "__all__"
    assert seen["plugins_looked_for_before_the_first_frame"] is False
    assert seen["plugins_at_the_first_frame"] is None


def test_a_person_s_own_plugin_setting_is_left_as_it_is():
    import os

    for value in ("logfire", "__all__"):
        seen = first_frame("replay", str(MINI_FIXTURE), "--step", "-1",
                           env={**os.environ, start_holds.PLUGINS_VARIABLE: value})
        assert seen["plugins_while_the_screen_mounts"] == value
        assert seen["plugins_at_the_first_frame"] == value


def test_the_replay_imports_only_what_its_first_screen_needs():
    modules = set(first_frame("replay", str(MINI_FIXTURE), "--step", "-1")["modules"])
    assert "swedeck.core.trajectory.readers.mini_swe_agent" in modules  # the probe saw a real replay
    not_yet = {
        "litellm",
        "jinja2",
        "pydantic",  # the messages and the `ui` settings are msgspec Structs; the config's models wait
        "swedeck.core.agent.agent",  # the agent loop: a fork's
        "swedeck.core.config",  # every section's models: `t`, `p`, `b` and `f`
        "swedeck.core.events",  # a live session's events: the meter needs only ContextStatus
        "swedeck.tui.shared.help_screen",  # `?`
        "swedeck.themes.theme_file",  # the model of a user theme: only when the folder has one
    }
    assert not_yet & modules == set()


@pytest.mark.parametrize(("argv", "shows_ui"), [
    (["replay", "FILE"], True),
    (["replay", "FILE", "--print"], False),
    (["diff", "A", "B"], True),
    (["diff", "A", "B", "--print"], False),
    (["diff", "A", "B", "--json"], False),
    (["run", "--task", "x"], True),
    (["run", "--headless", "--task", "x"], False),
    (["watch", "DIR"], True),
    (["demo"], True),
    (["export", "FILE", "-o", "OUT"], False),
    (["config", "show"], False),
])
def test_the_start_is_held_only_by_a_command_that_opens_an_app(monkeypatch, argv, shows_ui):
    import os

    module = f"swedeck.commands.{argv[0]}"
    monkeypatch.delenv(start_holds.PLUGINS_VARIABLE, raising=False)
    seen = []

    def command(args):
        seen.append((gc.isenabled(), os.environ.get(start_holds.PLUGINS_VARIABLE)))
        return 0

    monkeypatch.setattr(f"{module}.run", command)
    assert gc.isenabled()
    assert cli.main(argv) == 0
    # the plugin scan only where no child process starts before the first frame: a live
    # session's shell starts while its app does, and would inherit the variable
    held = shows_ui and argv[0] in ("replay", "diff", "watch")
    assert seen == [(not shows_ui, "__all__" if held else None)]
    # released when the command ends, with or without a first frame
    assert gc.isenabled() and start_holds.PLUGINS_VARIABLE not in os.environ


def test_a_release_without_a_hold_changes_nothing(monkeypatch):
    # An app in a test (Pilot) reaches its first frame with no command line before it. Nothing is
    # frozen: counted as calls, since the freeze count also falls whenever a frozen object is
    # freed (a line Textual drew, by another test's thread: `tui/strip_cycles.py`).
    freezes: list[bool] = []
    monkeypatch.setattr(gc_tuning, "freeze_permanent_objects", lambda: freezes.append(True))
    gc_tuning.release_collections()
    assert gc.isenabled() and freezes == []


def test_the_replay_opens_one_run_of_a_file_that_holds_several():
    # `PATH#N` names run N of an OpenHands evaluation (or an Inspect log); the check that a
    # missing path is one line and exit 2 took the name with its `#` for a missing file.
    path = FIXTURES / "agents" / "openhands" / "eval-output.jsonl"
    seen = first_frame("replay", f"{path}#2")
    assert "openhands" in seen["header"] and "step 1/1" in seen["header"]


FRAME_RATE_PROBE = """
import json, os
from swedeck.tui.replay.app import ReplayApp  # what `swedeck replay` imports first of Textual's
from textual import screen
# each screen's update timer runs at this interval
print(json.dumps({"period": screen.UPDATE_PERIOD, "variable": os.environ.get("TEXTUAL_FPS")}))
"""


def frame_rate(env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", FRAME_RATE_PROBE], capture_output=True, text=True, timeout=120,
                          env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_swedeck_s_apps_start_a_frame_within_a_few_milliseconds_of_a_change():
    # Issue 49: Textual's 60 a second made a key wait up to 17 ms before its frame began. The
    # variable that sets the rate is gone once Textual has read it: no command a session runs sees it.
    import os

    from swedeck.tui import FPS_VARIABLE, FRAMES_PER_SECOND

    env = {name: value for name, value in os.environ.items() if name != FPS_VARIABLE}
    assert frame_rate(env) == {"period": pytest.approx(1 / FRAMES_PER_SECOND), "variable": None}
    assert FRAMES_PER_SECOND >= 200
    assert frame_rate({**env, FPS_VARIABLE: "30"}) == {"period": pytest.approx(1 / 30), "variable": "30"}
