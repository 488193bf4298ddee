"""The shape every history processor has (SPEC §7).

A processor is a small frozen pydantic model with a `type` discriminator. Calling it with
a history returns the prompt history: a new list. Messages are immutable, so a processor
that changes a message builds a new one (`message.model_copy(update=...)`) and the stored
history is never touched.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..messages import Message


class Processor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    enabled: bool = True
    """Switched off processors stay in the config (and in the UI's panel) but do nothing."""

    def __call__(self, history: list[Message]) -> list[Message]:
        raise NotImplementedError
