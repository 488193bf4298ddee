"""SPEC §9.3, §14: the peers' own files, read as their own viewers show them.

Runs on the real trajectories of SWE-agent and mini-swe-agent in the folder that
`SWEDECK_PEER_FIXTURES` names (`.ci/run` sets it to `../shared/fixtures`; there a missing
folder fails). A fresh clone has no such folder: the same variants are covered by our own
files in `tests/fixtures/`. The references are the peers' views: SWE-agent's `trajectory`
list (one record per step, each with its observation) and mini-swe-agent's inspector pages,
computed by mini-swe-agent's own code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_trajectory_steps import mini_inspector_pages

from swedeck.core.messages import MessageType
from swedeck.core.processors.last_n_observations import LastNObservations
from swedeck.core.trajectory.loader import load_trajectory
from swedeck.core.trajectory.output import command_output
from swedeck.tui.replay.app import ReplayApp

VARIABLE = "SWEDECK_PEER_FIXTURES"
FOLDER = os.environ.get(VARIABLE)
pytestmark = [pytest.mark.skipif(not FOLDER, reason=f"{VARIABLE} is not set (a fresh clone; tests/fixtures covers it)"),
              pytest.mark.anyio]

SWEAGENT = ["6e44b9__sweagenttestrepo-1c2844.traj", "swe-agent__test-repo-i1.traj", "katy.traj",
            "function_calling_simple.traj", "marshmallow-1867.function_calling_replace.traj"]
MINI = ["github_issue.traj.json", "django__django-13710.traj.json"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def peer_file(name: str) -> Path:
    path = Path(FOLDER or ".") / name
    if not path.is_file():
        pytest.fail(f"{VARIABLE}={FOLDER} has no {name}: the peer fixtures are missing")
    return path


@pytest.mark.parametrize("name", SWEAGENT)
def test_sweagent_steps_are_its_trajectory_records(name: str):
    path = peer_file(name)
    raw = json.loads(path.read_text())
    trajectory = load_trajectory(path)
    records = raw.get("trajectory") or []
    if records:
        assert len(trajectory.steps) == len(records)
        for step, record in zip(trajectory.steps, records, strict=True):
            assert step.commands == [record["action"].rstrip("\n")]
            shown = [trajectory.messages[i] for i in step.observation_indices]
            outputs = [command_output(m).text for m in shown if m.message_type == MessageType.OBSERVATION]
            assert outputs == [record["observation"]]
    else:  # `history` only: one step per query in it
        queries = [e for e in raw["history"] if e["role"] == "assistant" and not e.get("is_demo")]
        assert len(trajectory.steps) == len(queries)
        assert all(step.observation_indices for step in trajectory.steps)


@pytest.mark.parametrize("name", MINI)
def test_mini_steps_are_its_inspector_pages(name: str):
    path = peer_file(name)
    raw = json.loads(path.read_text())
    messages = raw if isinstance(raw, list) else raw["messages"]
    trajectory = load_trajectory(path)
    assert len(trajectory.steps) == mini_inspector_pages(messages) - 1
    recorded = [m for m in messages if m["role"] == "assistant"]
    for step, record in zip(trajectory.steps, recorded, strict=True):
        usage = ((record.get("extra") or {}).get("response") or {}).get("usage")
        if usage:
            assert step.usage is not None and not step.usage.estimated
            assert step.usage.prompt_tokens == usage["prompt_tokens"]
            assert step.usage.cached_tokens == (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        else:
            assert step.usage is None


def test_sweagent_last_n_observations_on_its_own_file():
    # SPEC §7's fixture check: the history SWE-agent sent with its fifth query.
    trajectory = load_trajectory(peer_file("6e44b9__sweagenttestrepo-1c2844.traj"))
    history = list(trajectory.messages[: trajectory.step(5).prompt_end])
    assert len(history) == 10
    out = LastNObservations(n=1)(history)
    assert [i for i in range(10) if out[i].content != history[i].content] == [3, 5, 7]
    assert out[3].content == "Old environment output: (5 lines omitted)"
    out = LastNObservations(n=3)(history)
    assert [i for i in range(10) if out[i].content != history[i].content] == [3]


@pytest.mark.parametrize("name", SWEAGENT + MINI)
async def test_the_replay_ui_shows_the_last_step_with_its_output(name: str):
    path = peer_file(name)
    steps = len(load_trajectory(path).steps)
    app = ReplayApp([path], start_step=-1)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.error is None and screen.step == steps
        assert f"step {steps}/{steps}" in str(screen.query_one("#replay-header").render())
        assert screen.view is not None and screen.view.observations
