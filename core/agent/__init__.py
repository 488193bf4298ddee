"""Agent classes by name (SPEC §3 `agent.agent_class`)."""

from __future__ import annotations

import importlib

from ..config import AGENT_CLASS_NAMES
from ..errors import UsageError
from .agent import Agent
from .exits import ExitStatus, exit_code
from .variants import ReasoningToolCallAgent, TextAgent

AGENT_CLASSES: dict[str, type[Agent]] = {
    "default": Agent,
    "interactive": Agent,
    "reasoning_tool_call": ReasoningToolCallAgent,
    "text": TextAgent,
}
assert tuple(AGENT_CLASSES) == AGENT_CLASS_NAMES, "config.AGENT_CLASS_NAMES names the classes here"


def agent_class(name: str) -> type[Agent]:
    """A built-in agent class, or `package.module:Class` (a subclass of Agent)."""
    if name in AGENT_CLASSES:
        return AGENT_CLASSES[name]
    module_name, _, class_name = name.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"agent.agent_class: cannot load {name!r}: {exc}") from None
    if not (isinstance(found, type) and issubclass(found, Agent)):
        raise UsageError(f"agent.agent_class: {name!r} is not a subclass of swedeck's Agent")
    return found


__all__ = ["AGENT_CLASSES", "Agent", "ExitStatus", "agent_class", "exit_code"]
