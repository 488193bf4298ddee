"""SPEC §7: one test per rule of each history processor (context_filter: test_processors_context_filter.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from support.processors import action, contents, msg, observation, steps, system, task
from swedeck.core.messages import MessageType
from swedeck.core.processors import PROCESSORS
from swedeck.core.processors.cache_control import CacheControl
from swedeck.core.processors.default import DefaultProcessor
from swedeck.core.processors.last_n_observations import LastNObservations
from swedeck.core.processors.manager import Manager
from swedeck.core.processors.orchestrator import Orchestrator
from swedeck.core.processors.remove_regex import RemoveRegex
from swedeck.core.processors.tag_tool_call_observations import TagToolCallObservations
from swedeck.core.processors.worker import Worker

ELIDED3 = "Old environment output: (3 lines omitted)"


def elided_indices(before, after) -> list[int]:
    return [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a.content != b.content]


# default

def test_default_returns_the_history_unchanged_as_a_new_list():
    history = steps(3)
    out = DefaultProcessor()(history)
    assert out == history and out is not history


def test_every_processor_is_registered_by_its_type():
    assert set(PROCESSORS) == {"default", "last_n_observations", "tag_tool_call_observations", "cache_control",
                               "remove_regex", "context_filter", "worker", "orchestrator", "manager", "summarize"}
    for name, cls in PROCESSORS.items():
        assert cls.model_fields["type"].default == name


def test_processor_configs_forbid_unknown_fields():
    with pytest.raises(ValidationError):
        LastNObservations(n=1, keep=3)


# last_n_observations

def test_last_n_observations_keeps_the_last_n_and_elides_older_ones():
    history = steps(5)  # task at 1, observations at 3,5,7,9,11
    out = LastNObservations(n=2)(history)
    assert elided_indices(history, out) == [3, 5, 7]
    assert out[9] is history[9] and out[11] is history[11]


def test_last_n_observations_never_elides_the_first_task():
    history = steps(5)
    out = LastNObservations(n=1)(history)
    assert out[1] is history[1]
    assert 1 not in elided_indices(history, out)


def test_last_n_observations_elided_text_counts_the_lines():
    history = steps(3, lines=3)
    out = LastNObservations(n=1)(history)
    assert out[3].content == ELIDED3
    assert out[3].extra == history[3].extra


def test_last_n_observations_polling_elides_in_batches():
    # obs = [task, o1..o4] -> 5 with polling 2: last = (5//2)*2 - 1 = 3 -> elide obs[1:3]
    history = steps(4)
    assert elided_indices(history, LastNObservations(n=1, polling=2)(history)) == [3, 5]
    # one more observation: (6//2)*2 - 1 = 5 -> obs[1:5]
    history = steps(5)
    assert elided_indices(history, LastNObservations(n=1, polling=2)(history)) == [3, 5, 7, 9]


def test_last_n_observations_keep_tag_protects_an_old_observation():
    history = steps(4)
    history[3] = observation("a\nb", tags=("keep_output",))
    out = LastNObservations(n=1)(history)
    assert elided_indices(history, out) == [5, 7]


def test_last_n_observations_remove_tag_elides_even_recent_output():
    history = steps(3)
    history[7] = observation("a\nb\nc\nd", tags=("remove_output",))
    out = LastNObservations(n=5)(history)
    assert elided_indices(history, out) == [7]
    assert out[7].content == "Old environment output: (4 lines omitted)"


def test_last_n_observations_remove_tag_on_a_non_observation_is_ignored():
    history = steps(2)
    history[2] = msg("assistant", "thinking", MessageType.ACTION, tags=("remove_output",))
    out = LastNObservations(n=5)(history)
    assert out[2] is history[2]


def test_last_n_observations_custom_tag_sets():
    history = steps(3)
    history[3] = observation("x", tags=("pin",))
    history[7] = observation("y", tags=("drop",))
    out = LastNObservations(n=5, always_keep_output_for_tags=["pin"], always_remove_output_for_tags=["drop"])(history)
    assert elided_indices(history, out) == [7]


def test_last_n_observations_n_must_be_positive():
    with pytest.raises(ValidationError):
        LastNObservations(n=0)


# tag_tool_call_observations

def _tool_history():
    return [system(), task(),
            action("find . -name x.py", call_id="c1", function="find_file"), observation("found", call_id="c1"),
            action("pytest -q", call_id="c2"), observation("1 passed", call_id="c2"),
            action("cat x.py", call_id="c3"), observation("code", call_id="c3")]


def test_tag_tool_call_observations_tags_the_observation_not_the_assistant_message():
    history = _tool_history()
    out = TagToolCallObservations(function_names=["find_file"])(history)
    assert out[3].extra.tags == ("keep_output",)
    assert out[2] is history[2]
    assert [i for i, m in enumerate(out) if m.extra.tags] == [3]


def test_tag_tool_call_observations_command_regex_matches_the_command_text():
    history = _tool_history()
    out = TagToolCallObservations(command_regex=r"^pytest\b", tags=["tests"])(history)
    assert [i for i, m in enumerate(out) if m.extra.tags] == [5]
    assert out[5].extra.tags == ("tests",)


def test_tag_tool_call_observations_text_actions_tag_the_following_observation():
    history = [system(), task(), action("pytest -q"), observation("ok"), action("ls"), observation("files")]
    out = TagToolCallObservations(command_regex="pytest")(history)
    assert [i for i, m in enumerate(out) if m.extra.tags] == [3]


def test_tag_tool_call_observations_keeps_existing_tags():
    history = _tool_history()
    history[3] = observation("found", call_id="c1", tags=("mine",))
    out = TagToolCallObservations(function_names=["find_file"])(history)
    assert out[3].extra.tags == ("keep_output", "mine")


def test_tag_tool_call_observations_pairs_with_last_n_observations_to_keep_output():
    history = _tool_history()
    tagged = TagToolCallObservations(function_names=["find_file"])(history)
    out = LastNObservations(n=1)(tagged)
    assert out[3].content == "found"      # kept by its tag
    assert out[5].content.startswith("Old environment output")
    assert out[7].content == "code"


def test_tag_tool_call_observations_rejects_a_bad_regex():
    with pytest.raises(ValidationError, match="not a valid regular expression"):
        TagToolCallObservations(command_regex="(")


# cache_control

def test_cache_control_marks_the_last_n_tagged_messages_as_content_parts():
    history = steps(3)
    out = CacheControl(last_n_messages=2)(history)
    marked = [i for i, m in enumerate(out) if isinstance(m.content, list)]
    assert marked == [5, 7]
    assert out[7].content == [{"type": "text", "text": history[7].content, "cache_control": {"type": "ephemeral"}}]


def test_cache_control_puts_the_mark_on_a_tool_message_itself():
    history = _tool_history()
    out = CacheControl(last_n_messages=1)(history)
    assert out[7].cache_control == {"type": "ephemeral"}
    assert out[7].content == "code"


def test_cache_control_offset_skips_the_last_tagged_messages():
    history = steps(3)
    out = CacheControl(last_n_messages=1, last_n_messages_offset=1)(history)
    assert [i for i, m in enumerate(out) if isinstance(m.content, list)] == [5]


def test_cache_control_clears_old_marks_first():
    history = steps(3)
    once = CacheControl(last_n_messages=1)(history)          # marks 7
    twice = CacheControl(last_n_messages=1)(once + [action("x"), observation("new")])
    assert [i for i, m in enumerate(twice) if isinstance(m.content, list) and "cache_control" in m.content[0]] == [9]


def test_cache_control_zero_or_less_clears_all_marks():
    marked = CacheControl(last_n_messages=3)(_tool_history())
    for n in (0, -1):
        out = CacheControl(last_n_messages=n)(marked)
        assert all(m.cache_control is None for m in out)
        assert not any(isinstance(m.content, list) and any("cache_control" in p for p in m.content) for m in out)


def test_cache_control_tagged_roles_choose_what_is_marked():
    history = _tool_history()
    out = CacheControl(last_n_messages=1, tagged_roles=["assistant"])(history)
    assert [i for i, m in enumerate(out) if m is not history[i]] == [6]


# remove_regex

def test_remove_regex_removes_the_pattern_across_lines():
    history = [system(), task(), observation("before <diff>\n-a\n+b\n</diff> after")]
    out = RemoveRegex()(history)
    assert out[2].content == "before  after"
    assert out[1] is history[1]


def test_remove_regex_keeps_the_last_messages_untouched():
    history = [task(), observation("1<diff>x</diff>"), observation("2<diff>y</diff>")]
    out = RemoveRegex(keep_last=1)(history)
    assert contents(out)[1:] == ["1", "2<diff>y</diff>"]


def test_remove_regex_several_patterns_and_list_content():
    history = [msg("user", [{"type": "text", "text": "a SECRET b"}], MessageType.OBSERVATION), observation("x TODO y")]
    out = RemoveRegex(remove=["SECRET ", " TODO"])(history)
    assert out[0].content == [{"type": "text", "text": "a b"}]
    assert out[1].content == "x y"


def test_remove_regex_rejects_a_bad_pattern():
    with pytest.raises(ValidationError, match="not a valid regular expression"):
        RemoveRegex(remove=["[unclosed"])


# turn-scoped role filters

def _turns():
    return [
        system(),
        task("first task"), action("ls"), observation("a"),
        msg("user", "comment", MessageType.USER_MESSAGE), msg("assistant", "reply", MessageType.ASSISTANT_MESSAGE),
        msg("user", "submitted one", MessageType.FINAL),
        task("second task"), action("pwd"), observation("/"),
        msg("assistant", "note", MessageType.ASSISTANT_MESSAGE),
    ]


def test_worker_keeps_the_current_turn_only():
    history = _turns()
    assert Worker()(history) == [history[0], *history[7:]]


def test_orchestrator_keeps_the_last_n_conversation_messages_without_work():
    history = _turns()
    assert Orchestrator(max_conversation_turns=3)(history) == [history[0], history[6], history[7], history[10]]
    assert Orchestrator()(history) == [history[0], history[1], history[4], history[5], history[6], history[7],
                                       history[10]]


def test_orchestrator_zero_keeps_no_conversation():
    history = _turns()
    assert Orchestrator(max_conversation_turns=0)(history) == [history[0]]


def test_manager_keeps_previous_submissions_and_the_current_turn():
    history = _turns()
    assert Manager()(history) == [history[0], history[6], *history[7:]]


@pytest.mark.parametrize("processor", [Worker(), Manager()])
def test_turn_filters_without_a_task_keep_everything(processor):
    history = [system(), msg("user", "hi", MessageType.USER_MESSAGE)]
    assert processor(history) == history
