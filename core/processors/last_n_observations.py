"""`last_n_observations`: elide old environment output (SWE-agent's LastNObservations)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..messages import Message, MessageType
from .base import Processor, TagSet, derived


def elided_text(message: Message) -> str:
    return f"Old environment output: ({len(message.text.splitlines())} lines omitted)"


def _elided(message: Message) -> Message:
    return message.updated(content=elided_text(message))


def observation_indices(history: list[Message]) -> list[int]:
    """Observations, with the first `task` counted as the first one (it is SWE-agent's instance template)."""
    indices: list[int] = []
    seen_task = False
    for index, message in enumerate(history):
        kind = message.extra.message_type
        if kind is MessageType.OBSERVATION or (kind is MessageType.TASK and not seen_task):
            indices.append(index)
        seen_task = seen_task or kind is MessageType.TASK
    return indices


class LastNObservations(Processor):
    """Keep the last `n` observations in full; older ones become a one-line note.

    `polling` > 1 elides in batches so the prompt prefix changes only every `polling` steps
    (friendlier to prompt caches). The first observation (the task) is never elided.
    """

    type: Literal["last_n_observations"] = "last_n_observations"
    shrink_options = tuple({"n": n} for n in (20, 10, 5, 3, 2, 1))
    n: int = Field(gt=0, examples=[5])
    """Observations kept in full."""
    polling: int = Field(default=1, ge=1)
    """Elide in batches of this many steps."""
    always_remove_output_for_tags: TagSet = ("remove_output",)
    """Observations with one of these tags are always elided."""
    always_keep_output_for_tags: TagSet = ("keep_output",)
    """Old observations with one of these tags are kept."""

    def __call__(self, history: list[Message]) -> list[Message]:
        observations = observation_indices(history)
        last = max(0, (len(observations) // self.polling) * self.polling - self.n)
        old = set(observations[1:last])
        remove, keep = set(self.always_remove_output_for_tags), set(self.always_keep_output_for_tags)
        out = list(history)
        # Only observations are ever elided: a remove tag elsewhere is ignored (SWE-agent asserts).
        for index in observations:
            tags = set(history[index].extra.tags)
            if (index in old and not tags & keep) or tags & remove:
                out[index] = derived("elide", history[index], _elided)
        return out
