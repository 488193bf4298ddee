"""The prompt of a query: the history after the active history processors (SPEC §6.1, §7).

Wraps the processor chain so the agent, the TUI's meter and prompt inspector, and
`swedeck prompt` build prompts the same way: every compaction recorded in the history is
applied first (`trajectory.compaction.compacted`, as `prompt_view.history_before` does for
a file), then the processors. Messages whose role is `exit` are records, never sent.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..messages import Message
from ..trajectory.compaction import sendable

if TYPE_CHECKING:
    from ..processors.chain import ProcessorChain


def _chain(processors: list[Any]) -> ProcessorChain:
    from ..processors.chain import ProcessorChain  # validates plain dicts from front ends too

    return ProcessorChain(processors)


@dataclass
class Prompt:
    messages: list[Message]
    processors_hash: str | None
    errors: list[str] = field(default_factory=list)


class PromptBuilder:
    def __init__(self, processors: list[Any]):
        self._lock = threading.Lock()
        self._chain = _chain(processors)

    @property
    def processors(self) -> list[Any]:
        return list(self._chain.processors)

    @property
    def processors_hash(self) -> str | None:
        return self._chain.config_hash()

    def set_processors(self, processors: list[Any]) -> None:
        chain = _chain(processors)
        with self._lock:
            self._chain = chain

    def describe(self) -> list[dict[str, Any]]:
        return [processor.model_dump(mode="json") for processor in self._chain.processors]

    def build(self, history: list[Message]) -> Prompt:
        with self._lock:
            chain = self._chain
        result = chain.apply(sendable(history))
        return Prompt(messages=result.messages, processors_hash=chain.config_hash(), errors=list(result.errors))
