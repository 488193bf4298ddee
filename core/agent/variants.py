"""The built-in agent classes besides the default one (SPEC §3 `agent_class`, §4.2)."""

from __future__ import annotations

from ..models.base import ModelSpec
from .agent import Agent


class ReasoningToolCallAgent(Agent):
    """The `bash` tool gains a required, non-empty `reasoning` argument before `command`."""

    model_spec = ModelSpec(action_format="tool_call", require_reasoning=True)


class TextAgent(Agent):
    """No tools: exactly one fenced bash block per response is the action (models without tool calling)."""

    model_spec = ModelSpec(action_format="text")
