"""SPEC §6.2: the message model."""

from __future__ import annotations

import pytest

from swedeck.core.messages import Message, MessageError, MessageType, make_message


def test_to_api_strips_extra_and_keeps_tool_fields():
    message = make_message(
        "assistant", "thinking", MessageType.ACTION, step=3,
        tool_calls=[{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}],
    )
    api = message.to_api()
    assert "extra" not in api
    assert api["tool_calls"][0]["function"]["name"] == "bash"
    assert message.extra.step == 3 and message.message_type is MessageType.ACTION


def test_records_round_trip_and_keep_unknown_extra_keys():
    record = {"role": "tool", "content": "ok", "tool_call_id": "c1",
              "extra": {"message_type": "observation", "returncode": 0, "response": {"id": "x"}}}
    message = Message.from_record(record)
    assert Message.from_record(message.to_record()) == message
    assert message.extra.unknown == {"response": {"id": "x"}}


def test_messages_are_immutable_and_message_type_is_checked():
    message = make_message("user", "hi", MessageType.TASK)
    with pytest.raises(AttributeError):
        message.content = "changed"  # type: ignore[misc]
    with pytest.raises(MessageError):
        Message.from_record({"role": "user", "content": "x", "extra": {"message_type": "chit-chat"}})
    assert message.with_extra(step=2).extra.step == 2 and message.extra.step is None


def test_a_record_keeps_every_key_another_tool_wrote_at_every_level_in_its_order():
    record = {
        "role": "assistant", "content": "look",
        "tool_calls": [{"id": "c1", "type": "function", "index": 0,
                        "function": {"name": "bash", "arguments": '{"command": "ls"}', "parsed": {"command": "ls"}}}],
        "extra": {"message_type": "action", "step": 1, "tags": [],
                  "actions": [{"command": "ls", "tool_call_id": "c1", "tool": "bash", "shell": True}],
                  "usage": {"prompt_tokens": 10, "completion_tokens": 2, "cached_tokens": 0, "estimated": False,
                            "reasoning_tokens": 1},
                  "response": {"id": "x", "choices": [{"finish_reason": None}]}, "unknown": "a key of that name"},
    }
    message = Message.from_record(record)
    assert message.to_record() == record
    assert list(message.to_record()["extra"]) == list(record["extra"])  # fields first, then the others
    assert message.tool_calls[0].unknown == {"index": 0} and message.extra.actions[0].unknown["shell"] is True
    assert message.extra.unknown == {"response": {"id": "x", "choices": [{"finish_reason": None}]},
                                     "unknown": "a key of that name"}
    assert message.to_api()["tool_calls"] == record["tool_calls"]


def test_fields_are_read_as_json_allows_and_a_wrong_one_is_named_with_its_path():
    message = Message.from_record({"role": "tool", "content": "out", "extra": {
        "message_type": "observation", "step": "3", "duration_s": 2, "tags": ["a"], "output_truncated": "true"}})
    assert (message.extra.step, message.extra.duration_s, message.extra.tags, message.extra.output_truncated) \
        == (3, 2.0, ("a",), True)
    assert message.message_type is MessageType.OBSERVATION
    with pytest.raises(MessageError, match=r"at `\$\.extra\.usage\.prompt_tokens`"):
        Message.from_record({"role": "assistant", "extra": {"message_type": "action", "usage": {"prompt_tokens": "many"}}})
    with pytest.raises(MessageError, match=r"missing required field `function` - at `\$\.tool_calls\[0\]`"):
        Message.from_record({"role": "assistant", "tool_calls": [{"id": "c1"}]})
    with pytest.raises(MessageError, match="unknown field `colour`"):
        Message.from_record({"role": "user", "content": "x", "colour": "red"})  # a message has no other keys


def test_a_copy_sets_fields_as_given_and_keeps_other_keys_beside_them():
    message = make_message("user", "Fix it", MessageType.TASK, task="Fix it well", colour="red")
    assert message.extra.task == "Fix it well" and message.extra.unknown == {"colour": "red"}
    changed = message.with_extra(step=4, replaces=(1, 2), shade="dark")
    assert changed.extra.step == 4 and changed.extra.replaces == (1, 2)
    assert changed.extra.unknown == {"colour": "red", "shade": "dark"}
    assert message.extra.unknown == {"colour": "red"} and message.extra.step is None
    assert changed.updated(content="Fix it now").text == "Fix it now" and changed.text == "Fix it"


def test_swedecks_own_fields_are_typed_and_written_where_they_always_were():
    """Compaction, `task` and `requeried` are fields of the extra, not keys of the `unknown` bag
    (which holds other tools' keys); on disk they are the same flat keys as before."""
    record = {"role": "user", "content": "summary text", "extra": {
        "message_type": "compaction", "summary": "we fixed calc.py", "replaces": [2, 3, 4], "tokens_before": 9000,
        "tokens_after": 1200, "model": "openai/gpt-4o", "reason": "threshold", "edited": False,
        "summary_usage": {"prompt_tokens": 800, "completion_tokens": 60, "cached_tokens": 0, "estimated": False},
        "summary_cost": 0.01, "theirs": 1}}
    message = Message.from_record(record)
    extra = message.extra
    assert (extra.summary, extra.replaces, extra.tokens_before, extra.tokens_after) == ("we fixed calc.py", (2, 3, 4),
                                                                                          9000, 1200)
    assert extra.summary_usage is not None and extra.summary_usage.prompt_tokens == 800
    assert extra.unknown == {"theirs": 1}
    written = message.to_record()["extra"]
    assert {key: written[key] for key in record["extra"]} == record["extra"]
    undo = Message.from_record({"role": "user", "content": "", "extra": {"message_type": "compaction", "undoes": 5}})
    assert undo.extra.undoes == 5 and not undo.extra.unknown
    odd = Message.from_record({"role": "user", "content": "", "extra": {
        "message_type": "compaction", "replaces": [True, False], "tokens_before": "many"}})
    assert odd.extra.replaces is None and odd.extra.tokens_before is None  # what does not fit stays as written
    assert odd.to_record()["extra"]["replaces"] == [True, False] and odd.extra.unknown["tokens_before"] == "many"
