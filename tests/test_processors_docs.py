"""docs/history-processors.md: every YAML example in it does what it says."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from conftest import REPO
from swedeck.core.agent.prompt import PromptBuilder
from swedeck.core.messages import Action, FunctionCall, Message, MessageExtra, MessageType, ToolCall
from swedeck.core.processors import PROCESSORS
from swedeck.core.processors.chain import validate_processors

DOC = REPO / "docs" / "history-processors.md"
ROLES = {
    MessageType.SYSTEM: "system", MessageType.TASK: "user", MessageType.USER_MESSAGE: "user",
    MessageType.FINAL: "user", MessageType.OBSERVATION: "user", MessageType.ACTION: "assistant",
    MessageType.ASSISTANT_MESSAGE: "assistant", MessageType.COMPACTION: "user",
}


def yaml_blocks() -> list[dict]:
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.DOTALL)]


def examples() -> list[dict]:
    return [block for block in yaml_blocks() if {"processors", "history", "prompt"} <= set(block)]


def to_message(entry: list) -> Message:
    kind, content, details = MessageType(entry[0]), entry[1], (entry[2] if len(entry) > 2 else {})
    call_id, tags = details.get("call"), tuple(details.get("tags", ()))
    role, fields = ROLES[kind], {}
    if kind is MessageType.ACTION:
        if call_id:
            arguments = json.dumps({"command": content})
            fields["tool_calls"] = (ToolCall(id=call_id, function=FunctionCall(name=details.get("function", "bash"),
                                                                               arguments=arguments)),)
            extra = MessageExtra(message_type=kind, tags=tags, actions=(Action(command=content, tool_call_id=call_id),))
            return Message(role=role, content="", extra=extra, **fields)
        extra = MessageExtra(message_type=kind, tags=tags, actions=(Action(command=content),))
        return Message(role=role, content=content, extra=extra)
    if kind is MessageType.OBSERVATION and call_id:
        role, fields["tool_call_id"] = "tool", call_id
    replaces = tuple(details["replaces"]) if "replaces" in details else None
    return Message(role=role, content=content, extra=MessageExtra(message_type=kind, tags=tags, replaces=replaces),
                   **fields)


def shown(message: Message) -> list:
    """A prompt message in the doc's notation."""
    kind = message.extra.message_type.value
    call = message.tool_calls[0] if message.tool_calls else None
    text = message.extra.actions[0].command if call else message.text
    details: dict = {}
    if call or message.tool_call_id:
        details["call"] = call.id if call else message.tool_call_id
    if call and call.function.name != "bash":
        details["function"] = call.function.name
    if message.extra.tags:
        details["tags"] = list(message.extra.tags)
    if message.extra.replaces is not None:
        details["replaces"] = list(message.extra.replaces)
    marked = message.cache_control is not None or (
        isinstance(message.content, list) and any("cache_control" in part for part in message.content))
    if marked:
        details["cached"] = True
    return [kind, text, details] if details else [kind, text]


def test_the_doc_has_an_example_for_every_processor():
    covered = {p["type"] for example in examples() for p in example["processors"]}
    assert covered == set(PROCESSORS)


@pytest.mark.parametrize("index", range(len(examples())))
def test_documented_example_produces_the_documented_prompt(index):
    example = examples()[index]
    history = [to_message(entry) for entry in example["history"]]
    result = PromptBuilder(example["processors"]).build(history)  # as the agent builds it: compactions first
    assert result.errors == []
    assert [shown(m) for m in result.messages] == example["prompt"]


def test_documented_config_snippet_is_valid():
    configs = [block["agent"]["history_processors"] for block in yaml_blocks() if "agent" in block]
    assert configs
    for config in configs:
        assert len(validate_processors(config)) == len(config)
