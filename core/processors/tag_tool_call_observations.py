"""`tag_tool_call_observations`: tag the output of chosen commands (e.g. to keep it in full).

SWE-agent's TagToolCallObservations tags the assistant message, but `last_n_observations`
reads tags on observations, so that pairing did nothing. swedeck tags the observation.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import field_validator

from ..messages import Message, MessageType
from .base import Processor, TagSet, derived

TEXT_ACTION_FUNCTION = "bash"
"""Actions parsed from text (no tool calls) count as calls of this function."""


def _command_of(arguments: str) -> str:
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return arguments
    command = parsed.get("command") if isinstance(parsed, dict) else None
    return command if isinstance(command, str) else arguments


class TagToolCallObservations(Processor):
    type: Literal["tag_tool_call_observations"] = "tag_tool_call_observations"
    tags: TagSet = ("keep_output",)
    """Tags added to the matching observations."""
    function_names: TagSet = ()
    """Tool functions whose results are tagged."""
    command_regex: str | None = None
    """A regular expression searched in the command."""

    @field_validator("command_regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"command_regex {value!r} is not a valid regular expression: {exc}") from None
        return value

    def _matches(self, function: str, command: str) -> bool:
        if function in self.function_names:
            return True
        return self.command_regex is not None and re.search(self.command_regex, command) is not None

    def _matched_calls(self, message: Message) -> tuple[frozenset[str], bool]:
        """The ids of the matching tool calls, and whether a matching text action (no id) is there."""
        ids = frozenset(call.id for call in message.tool_calls or ()
                        if self._matches(call.function.name, _command_of(call.function.arguments)))
        text = any(action.tool_call_id is None and self._matches(TEXT_ACTION_FUNCTION, action.command)
                   for action in message.extra.actions)
        return ids, text

    def _tagged(self, message: Message) -> Message:
        if set(self.tags) <= set(message.extra.tags):
            return message
        return message.with_extra(tags=tuple(sorted({*message.extra.tags, *self.tags})))

    def __call__(self, history: list[Message]) -> list[Message]:
        match_key = ("tag_match", self.function_names, self.command_regex)
        tag_key = ("tag", self.tags)
        matched_ids: set[str] = set()
        text_action_matched = False  # observations without ids answer the last assistant message
        out = list(history)
        for index, message in enumerate(history):
            if message.role == "assistant":
                ids, text_action_matched = derived(match_key, message, self._matched_calls)
                matched_ids.update(ids)
            elif message.extra.message_type is MessageType.OBSERVATION:
                answered = message.tool_call_id in matched_ids if message.tool_call_id else text_action_matched
                if answered:
                    out[index] = derived(tag_key, message, self._tagged)
        return out
