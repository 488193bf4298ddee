"""SPEC §7 properties over generated histories: processors never change their input, the
system message survives every processor, context_filter never orphans a tool result."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from support.processors import action, msg, observation, system, task
from swedeck.core.messages import Message, MessageType
from swedeck.core.processors import PROCESSORS
from swedeck.core.processors.context_filter import ContextFilter

CONFIGS = [
    {"type": "default"},
    {"type": "last_n_observations", "n": 1, "polling": 2},
    {"type": "last_n_observations", "n": 2},
    {"type": "tag_tool_call_observations", "function_names": ["bash"], "command_regex": "cmd1"},
    {"type": "cache_control", "last_n_messages": 2, "last_n_messages_offset": 1},
    {"type": "cache_control", "last_n_messages": 0},
    {"type": "remove_regex", "remove": ["o.t"], "keep_last": 1},
    {"type": "context_filter", "num_invocations_to_keep": 1},
    {"type": "context_filter", "num_invocations_to_keep": 3},
    {"type": "worker"},
    {"type": "orchestrator", "max_conversation_turns": 2},
    {"type": "orchestrator", "max_conversation_turns": 0},
    {"type": "manager"},
]
PROCESSOR_LIST = [PROCESSORS[c["type"]].model_validate(c) for c in CONFIGS]


@st.composite
def histories(draw) -> list[Message]:
    """A system message, a task, then turns of tool calls (sometimes several per message),
    text actions, chat, submissions and follow-up tasks, with random tags and cache marks."""
    history = [system(), task()]
    counter = 0
    for kind in draw(st.lists(st.sampled_from(["tool", "multi", "text", "chat", "final", "task", "marked"]),
                              max_size=14)):
        tags = tuple(draw(st.sets(st.sampled_from(["keep_output", "remove_output", "x"]), max_size=2)))
        counter += 1
        if kind == "tool":
            cid = f"c{counter}"
            history += [action(f"cmd{counter}", call_id=cid), observation(f"out\n{counter}", call_id=cid, tags=tags)]
        elif kind == "multi":
            first, second = f"a{counter}", f"b{counter}"
            call = action("x", call_id=first)
            other = action("y", call_id=second)
            both = call.updated(tool_calls=call.tool_calls + other.tool_calls)
            history += [both, observation("1", call_id=first), observation("2", call_id=second, tags=tags)]
        elif kind == "text":
            history += [action(f"cmd{counter}"), observation("out text", tags=tags)]
        elif kind == "chat":
            history += [msg("user", "hi", MessageType.USER_MESSAGE), msg("assistant", "yo", MessageType.ASSISTANT_MESSAGE)]
        elif kind == "final":
            history.append(msg("user", "done", MessageType.FINAL))
        elif kind == "task":
            history.append(task(f"task {counter}"))
        else:
            history.append(msg("user", [{"type": "text", "text": "m", "cache_control": {"type": "ephemeral"}}],
                               MessageType.USER_MESSAGE))
    return history


@settings(max_examples=100, deadline=None)
@given(histories())
def test_no_processor_changes_its_input(history):
    before = [m.to_record() for m in history]
    snapshot = list(history)
    for processor in PROCESSOR_LIST:
        out = processor(history)
        assert out is not history
        assert [m.to_record() for m in history] == before, processor.type
        assert all(a is b for a, b in zip(history, snapshot, strict=True))


@settings(max_examples=100, deadline=None)
@given(histories())
def test_the_system_message_survives_every_processor(history):
    for processor in PROCESSOR_LIST:
        out = processor(history)
        assert out and out[0].role == "system", processor.type
        assert out[0].text == history[0].text, processor.type


@settings(max_examples=100, deadline=None)
@given(histories(), st.integers(min_value=1, max_value=5))
def test_context_filter_never_leaves_a_tool_result_without_its_call(history, keep):
    out = ContextFilter(num_invocations_to_keep=keep)(history)
    called = {call.id for m in out for call in (m.tool_calls or ())}
    for message in out:
        if message.tool_call_id is not None:
            assert message.tool_call_id in called
    # what is kept is a suffix of the history after the system message
    rest = history[1:]
    assert out[1:] == rest[len(rest) - len(out) + 1:]
