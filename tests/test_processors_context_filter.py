"""SPEC §7 `context_filter`: ADK ContextFilterPlugin (Java) conformance cases and custom filters.

Indices in the cases are over the list without a system message; each case is also run
with a system message prepended, which is always kept.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from support.processors import action, msg, observation, system
from swedeck.core.messages import MessageType
from swedeck.core.processors.chain import ProcessorChain
from swedeck.core.processors.context_filter import ContextFilter


def u(text="u"):
    return msg("user", text, MessageType.USER_MESSAGE)


def m(text="m"):
    return msg("assistant", text, MessageType.ASSISTANT_MESSAGE)


def fc(call_id):
    return action("ls", call_id=call_id)


def fr(call_id):
    return observation("result", call_id=call_id)


CASES = {
    "u,m,u,m N=1": (lambda: [u(), m(), u(), m()], 1, [2, 3]),
    "u,m,FC1,FR1,u,m N=2": (lambda: [u(), m(), fc("1"), fr("1"), u(), m()], 2, [2, 3, 4, 5]),
    "u,m,FC2,m,FR2,u N=1": (lambda: [u(), m(), fc("2"), m(), fr("2"), u()], 1, [2, 3, 4, 5]),
    "u,m,FCf1,FRf1,FCf2,m,FRf2,u N=1": (
        lambda: [u(), m(), fc("f1"), fr("f1"), fc("f2"), m(), fr("f2"), u()], 1, [4, 5, 6, 7]),
    "u,FC,FR N=1": (lambda: [u(), fc("a"), fr("a")], 1, [0, 1, 2]),
    "u,FC,FR,m N=1": (lambda: [u(), fc("a"), fr("a"), m()], 1, [0, 1, 2, 3]),
    "u,m,u2a,u2b,m N=1": (lambda: [u(), m(), u("2a"), u("2b"), m()], 1, [2, 3, 4]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_context_filter_adk_conformance(name):
    build, keep, expected = CASES[name]
    history = build()
    out = ContextFilter(num_invocations_to_keep=keep)(history)
    assert out == [history[i] for i in expected]


@pytest.mark.parametrize("name", list(CASES))
def test_context_filter_always_keeps_the_system_message(name):
    build, keep, expected = CASES[name]
    history = [system(), *build()]
    out = ContextFilter(num_invocations_to_keep=keep)(history)
    assert out == [history[0]] + [history[i + 1] for i in expected]


def test_context_filter_without_options_leaves_the_history_unchanged():
    history = [system(), u(), m(), u(), m()]
    assert ContextFilter()(history) == history


def test_context_filter_n_must_be_positive():
    with pytest.raises(ValidationError):
        ContextFilter(num_invocations_to_keep=0)


def test_context_filter_custom_filter_runs_after_trimming():
    history = [system(), u(), m(), u(), m("drop me"), u(), m()]
    out = ContextFilter(num_invocations_to_keep=2,
                        custom_filter="tests.support.custom_filters:drop_assistant_text")(history)
    assert out == [history[0], history[3], history[5], history[6]]


@pytest.mark.parametrize("path", ["tests.support.custom_filters:explode", "tests.support.custom_filters:not_a_list",
                                  "tests.support.no_such_module:f"])
def test_context_filter_failing_custom_filter_leaves_the_prompt_unchanged_and_reports(path):
    history = [system(), u(), m(), u(), m()]
    chain = ProcessorChain([{"type": "context_filter", "num_invocations_to_keep": 1, "custom_filter": path}])
    result = chain.apply(history)
    assert result.messages == history
    assert len(result.errors) == 1 and path in result.errors[0]


def test_context_filter_custom_filter_error_names_the_cause():
    chain = ProcessorChain([{"type": "context_filter", "custom_filter": "tests.support.custom_filters:explode"}])
    assert "filter broke" in chain.apply([u(), m()]).errors[0]


def test_context_filter_custom_filter_must_be_a_dotted_path():
    with pytest.raises(ValidationError, match="package.module:function"):
        ContextFilter(custom_filter="not a path")


def _orphans(messages) -> list[int]:
    """Tool results whose call is not before them in the list (providers reject these)."""
    out, open_ids = [], set()
    for index, message in enumerate(messages):
        for call in message.tool_calls or ():
            open_ids.add(call.id)
        if message.tool_call_id:
            if message.tool_call_id not in open_ids:
                out.append(index)
            open_ids.discard(message.tool_call_id)
    return out


def test_a_reused_id_pairs_a_result_with_the_call_before_it():
    # FC(a) FR(a) FC(a) FR(a) m, keep 2: the first result belongs to the first call, not to the
    # later call that reuses its id (3 of 22 SWE-agent files reuse ids across turns).
    history = [u(), fc("a"), fr("a"), fc("a"), fr("a"), m()]
    out = ContextFilter(num_invocations_to_keep=2)(history)
    assert out == history and _orphans(out) == []  # back to the first call, then its user turn


@pytest.mark.parametrize("keep", [1, 2, 3])
def test_no_kept_result_ever_lacks_its_call_when_ids_repeat(keep):
    history = [u()]
    for turn in range(4):
        history += [fc("call_0"), fr("call_0"), u(f"note {turn}")]  # a provider that numbers calls per turn
    history.append(m())
    out = ContextFilter(num_invocations_to_keep=keep)(history)
    assert _orphans(out) == [] and len([x for x in out if x.role == "assistant"]) >= keep


def test_the_custom_filter_never_sees_or_drops_the_system_message():
    from tests.support import custom_filters

    custom_filters.SEEN.clear()
    history = [system(), u(), m(), u(), m()]
    out = ContextFilter(custom_filter="tests.support.custom_filters:keep_last_two")(history)
    assert custom_filters.SEEN == [["user", "assistant", "user", "assistant"]]
    assert out == [history[0], history[3], history[4]]
