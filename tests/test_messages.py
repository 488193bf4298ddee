"""SPEC §6.2: the message model."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from swedeck.core.messages import Message, MessageType, make_message


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
    message = Message.model_validate(record)
    assert Message.model_validate(message.to_record()) == message
    assert message.extra.model_extra == {"response": {"id": "x"}}


def test_messages_are_immutable_and_message_type_is_checked():
    message = make_message("user", "hi", MessageType.TASK)
    with pytest.raises(ValidationError):
        message.content = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Message.model_validate({"role": "user", "content": "x", "extra": {"message_type": "chit-chat"}})
    assert message.with_extra(step=2).extra.step == 2 and message.extra.step is None
