"""SPEC §7 fixture check: last_n_observations on a SWE-agent trajectory: the prompt of its
fifth query, history indices 0..9 (our fixture has SWE-agent's shape; the conformance test
runs the same checks on SWE-agent's own file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SWEAGENT_FIXTURE
from swedeck.core.messages import Message, MessageType
from swedeck.core.processors.last_n_observations import LastNObservations, observation_indices
from swedeck.core.trajectory.loader import load_trajectory


def fifth_prompt(path: Path) -> list[Message]:
    """The history SWE-agent sent with its fifth query: the messages before step 5."""
    trajectory = load_trajectory(path)
    return list(trajectory.messages[: trajectory.step(5).prompt_end])


@pytest.fixture(scope="module")
def history():
    messages = fifth_prompt(SWEAGENT_FIXTURE)
    assert len(messages) == 10
    return messages


def test_fixture_observations_are_at_odd_indices(history):
    assert history[1].extra.message_type is MessageType.TASK
    assert observation_indices(history) == [1, 3, 5, 7, 9]


@pytest.mark.parametrize(("n", "elided"), [(1, [3, 5, 7]), (3, [3])])
def test_fixture_last_n_observations_elides_the_documented_indices(history, n, elided):
    out = LastNObservations(n=n)(history)
    assert [i for i in range(len(history)) if out[i].content != history[i].content] == elided


def test_fixture_first_elided_text(history):
    out = LastNObservations(n=1)(history)
    assert out[3].content == "Old environment output: (5 lines omitted)"


def test_fixture_tagged_search_output_survives_last_n_observations(history):
    from swedeck.core.processors.chain import ProcessorChain

    chain = ProcessorChain([{"type": "tag_tool_call_observations", "function_names": ["find_file"]},
                            {"type": "last_n_observations", "n": 1}])
    out = chain.apply(history).messages
    assert [i for i in range(len(history)) if out[i].content != history[i].content] == [5, 7]
    assert "keep_output" in out[3].extra.tags


def test_fixture_context_filter_keeps_the_last_call_with_its_result(history):
    from swedeck.core.processors.context_filter import ContextFilter

    out = ContextFilter(num_invocations_to_keep=1)(history[:10])
    assert out == [history[0], *history[6:10]]
