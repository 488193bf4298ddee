"""Messages and steps built when first asked for (SPEC §11.1: opening is lazy).

A 5,000-step trajectory is 10,000 messages; turning each record into a validated `Message`
costs far more than parsing the file. The readers find where each step starts from the raw
records (a role and a type per record), and build a block of messages (one step's) only
when something reads it: the replay UI's first screen builds one step, not the file.
Both sequences behave as read-only lists (`len`, indexing, slicing, iteration).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

from ..messages import Message, MessageType
from .errors import TrajectoryError
from .model import Step

ANSWER_TYPES = (MessageType.OBSERVATION, MessageType.FINAL, MessageType.FORMAT_ERROR, MessageType.EXIT)
"""What answers a query, as shown with its step: its observations, the submission, a format
error, and how the run ended (mini-swe-agent's `exit` message, on the last step)."""

BlockBuilder = Callable[[int, int], list[Message]]
"""Builds messages `start..end-1` of a trajectory (one block, in order)."""


class MessageList(Sequence[Message]):
    """The messages of a trajectory, built block by block.

    `blocks` are the indices where blocks start (the first is 0); a block is built whole,
    so a reader may use what comes earlier in the block (a type inferred from the
    assistant message a tool result answers).
    """

    def __init__(self, size: int, blocks: list[int], build: BlockBuilder, path: Path):
        self.path = path
        self._size = size
        self._blocks = [0] + [start for start in blocks if 0 < start < size]
        self._build = build
        self._built: list[Message | None] = [None] * size

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._size))]
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError(f"message {index} is out of range 0..{self._size - 1}")
        message = self._built[index]
        if message is None:
            self._build_block(index)
            message = self._built[index]
            assert message is not None
        return message

    def __iter__(self) -> Iterator[Message]:
        return (self[i] for i in range(self._size))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    def _build_block(self, index: int) -> None:
        position = bisect_right(self._blocks, index) - 1
        start = self._blocks[position]
        end = self._blocks[position + 1] if position + 1 < len(self._blocks) else self._size
        try:
            built = self._build(start, end)
        except Exception as error:  # a damaged record shows up when its step is read: say which, no traceback
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise TrajectoryError(self.path, f"messages {start}..{end - 1}: {reason[:300]}") from None
        self._built[start:end] = built


class StepList(Sequence[Step]):
    """The steps of a trajectory: step k starts at message `starts[k - 1]` and holds the
    answers (observations, the submission, format errors) up to the next step."""

    def __init__(self, messages: Sequence[Message], starts: list[int], states: Sequence[Any] = ()):
        self._messages = messages
        self.starts = starts
        self._states = states
        """SWE-agent's environment state after each step, where recorded."""
        self._built: dict[int, Step] = {}

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> list[Step]: ...

    def __getitem__(self, index: int | slice) -> Step | list[Step]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.starts)))]
        if index < 0:
            index += len(self.starts)
        if not 0 <= index < len(self.starts):
            raise IndexError(f"step {index + 1} is out of range 1..{len(self.starts)}")
        if index not in self._built:
            self._built[index] = self._step(index)
        return self._built[index]

    def __iter__(self) -> Iterator[Step]:
        return (self[i] for i in range(len(self.starts)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    def _step(self, index: int) -> Step:
        from .normalize import actions_of

        start = self.starts[index]
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self._messages)
        message = self._messages[start]
        extra = message.extra
        answers = tuple(i for i in range(start + 1, end) if self._messages[i].message_type in ANSWER_TYPES)
        state = self._states[index] if index < len(self._states) else None
        return Step(index=index + 1, message_index=start, actions=actions_of(message), observation_indices=answers,
                    prompt_end=start, usage=extra.usage, cost=extra.cost, context=extra.context,
                    processors=extra.processors, state=state if isinstance(state, Mapping) else None)
