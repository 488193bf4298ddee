"""The seam between the front ends and a session is one Protocol (`SessionControl`): the real
`Session` and the tests' `ScriptedSession` stand-in must both match it, member by member and
signature by signature, so the stand-in cannot drift from what the UI really holds."""

from __future__ import annotations

import inspect

import pytest

from support.tui import ScriptedSession, tui_config
from swedeck.core.session import Session, SessionControl

MEMBERS = [name for name in dir(SessionControl) if not name.startswith("_")]
FIELDS = list(SessionControl.__annotations__)


def instances() -> list[object]:
    config = tui_config()
    return [Session(config, "a task"), ScriptedSession(config, [], task="a task")]


def test_the_protocol_names_what_the_ui_uses():
    assert set(MEMBERS) >= {"mode", "processors", "history", "set_mode", "set_processors", "interrupt", "quit",
                            "context_status", "prompt_preview", "run"}
    assert set(FIELDS) == {"config", "task", "trajectory_path", "finished"}


@pytest.mark.parametrize("session", instances(), ids=["Session", "ScriptedSession"])
def test_every_session_matches_the_protocol(session):
    for name in FIELDS:
        assert hasattr(session, name), f"{type(session).__name__} has no {name}"
    for name in MEMBERS:
        wanted = getattr(SessionControl, name)
        have = getattr(type(session), name, None)
        assert have is not None, f"{type(session).__name__} has no {name}"
        if isinstance(wanted, property):
            assert isinstance(have, property), f"{type(session).__name__}.{name} is not a property"
            continue
        want_params = list(inspect.signature(wanted).parameters.values())
        have_params = list(inspect.signature(have).parameters.values())
        assert [(p.name, p.kind, p.default) for p in have_params] == [(p.name, p.kind, p.default) for p in want_params], \
            f"{type(session).__name__}.{name}{inspect.signature(have)} differs from the protocol's {inspect.signature(wanted)}"
