"""Agent classes by name (SPEC §3 `agent.agent_class`).

The classes load on first use (`AGENT_CLASSES`, `Agent`, `agent_class`): importing a light
part of this package (`agent.exits` for an exit status, as the replay UI does) must not
import the agent loop and everything it runs on (bench B2's first frame).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..exit_status import ExitStatus, exit_code

if TYPE_CHECKING:
    from .agent import Agent


def _classes() -> dict[str, type[Agent]]:
    from ..config import AGENT_CLASS_NAMES
    from .agent import Agent
    from .variants import ReasoningToolCallAgent, TextAgent

    classes: dict[str, type[Agent]] = {
        "default": Agent,
        "interactive": Agent,
        "reasoning_tool_call": ReasoningToolCallAgent,
        "text": TextAgent,
    }
    assert tuple(classes) == AGENT_CLASS_NAMES, "config.AGENT_CLASS_NAMES names the classes here"
    return classes


def agent_class(name: str) -> type[Agent]:
    """A built-in agent class, or `package.module:Class` (a subclass of Agent)."""
    from ..errors import UsageError
    from .agent import Agent

    classes = _classes()
    if name in classes:
        return classes[name]
    module_name, _, class_name = name.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"agent.agent_class: cannot load {name!r}: {exc}") from None
    if not (isinstance(found, type) and issubclass(found, Agent)):
        raise UsageError(f"agent.agent_class: {name!r} is not a subclass of swedeck's Agent")
    return found


def __getattr__(name: str) -> Any:
    if name == "Agent":
        from .agent import Agent

        return Agent
    if name == "AGENT_CLASSES":
        return _classes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["AGENT_CLASSES", "Agent", "ExitStatus", "agent_class", "exit_code"]
