"""Messages and steps built when first asked for (SPEC §11.1: opening is lazy).

A 5,000-step trajectory is 10,000 messages; turning each record into a validated `Message`
costs far more than parsing the file. The readers find where each step starts from the raw
records (a role and a type per record), and build a block of messages (one step's) only
when something reads it: the replay UI's first screen builds one step, not the file.
Both sequences behave as read-only lists (`len`, indexing, slicing, iteration), and may be
read from several threads at once: the replay's UI and its workers (the token curve, the
search) share a document read whole (issue 49).
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

from ..actions import actions_of
from ..messages import Message, MessageType
from .errors import TrajectoryError
from .model import Step

ANSWER_TYPES = (MessageType.OBSERVATION, MessageType.FINAL, MessageType.FORMAT_ERROR, MessageType.EXIT,
                MessageType.USER_MESSAGE, MessageType.INTERRUPT, MessageType.TASK)
"""What answers a query, as shown with its step: its observations, the submission, a format
error, how the run ended (mini-swe-agent's `exit` message, on the last step), and what the
person said before the next query: a rejection with its comment, the note of an interrupt
and the message typed after it, a human-mode command, a follow-up task."""

BlockBuilder = Callable[[int, int], list[Message]]
"""Builds messages `start..end-1` of a trajectory (one block, in order)."""


T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


class Kept(Generic[K, T]):
    """The latest `size` values made, by key, the oldest let go first. Threads may share it:
    each change is made under a lock. Without it, two threads letting the oldest go at once
    raised `KeyError` or "dictionary changed size during iteration" in one of them: a replay's
    search or token curve stopped with that error while the other ran."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: dict[K, T] = {}
        self._lock = threading.Lock()

    def get(self, key: K) -> T | None:
        return self._values.get(key)

    def keep(self, key: K, value: T) -> T:
        """Keep `value` for `key`, letting the oldest go past `size`; returns `value`."""
        with self._lock:
            self._values[key] = value
            while len(self._values) > self.size:
                del self._values[next(iter(self._values))]
        return value

    def __len__(self) -> int:
        return len(self._values)


class OnDemand(Mapping[int, T]):
    """Step number -> a value made by `make(step)` when asked for, for the steps `planned`
    names (filled by the reader, maybe after this is made). Each value may cost the square of a
    run's length to keep all of (a request repeats the whole history: Claude Code's request
    records, Inspect's model inputs): the latest `keep` made are kept, for the step on screen."""

    def __init__(self, planned: Mapping[int, Any], make: Callable[[int], T], keep: int) -> None:
        self._planned, self._make, self.keep = planned, make, keep
        self.kept: Kept[int, T] = Kept(keep)
        """The values made, the latest `keep`."""

    def __contains__(self, number: object) -> bool:
        return number in self._planned  # Mapping's own would make the value to find out

    def __getitem__(self, number: int) -> T:
        if number not in self._planned:
            raise KeyError(number)
        value = self.kept.get(number)
        return self.kept.keep(number, self._make(number)) if value is None else value

    def __iter__(self) -> Iterator[int]:
        return iter(self._planned)

    def __len__(self) -> int:
        return len(self._planned)


class LazySequence(Sequence[T]):
    """A read-only list whose items are made by `_item(index)` when first read."""

    noun = "item"

    def __len__(self) -> int:
        raise NotImplementedError

    def _item(self, index: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        size = len(self)
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(size))]
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(f"{self.noun} {index} is out of range 0..{size - 1}")
        return self._item(index)

    def __iter__(self) -> Iterator[T]:
        return (self._item(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented


class MessageList(LazySequence[Message]):
    """The messages of a trajectory, built block by block.

    `blocks` are the indices where blocks start (the first is 0); a block is built whole,
    so a reader may use what comes earlier in the block (a type inferred from the
    assistant message a tool result answers).
    """

    KEEP = 1024
    """Built messages kept, the latest blocks' (issue 49: a pass over every step of a
    45,000-step file, the token curve's, kept them all: memory in proportion to the file, and
    hundreds of thousands of objects in each of the collector's full walks; 8,192 kept still
    made each full walk 150-190 ms while the curve was read). A block built again is the same
    messages, from the same records."""

    def __init__(self, size: int, blocks: Sequence[int], build: BlockBuilder, path: Path):
        self.path = path
        self._size = size
        if isinstance(blocks, array):  # a reader's column of ascending starts inside the list: kept as numbers
            self._blocks: Sequence[int] = blocks if blocks and blocks[0] == 0 else array("q", [0]) + blocks
        else:
            self._blocks = [0] + [start for start in blocks if 0 < start < size]
        self._build = build
        self._built: list[Message | None] = [None] * size
        self._kept: deque[tuple[int, int]] = deque()
        self._kept_count = 0
        self._lock = threading.Lock()
        """Held while the blocks kept change (a block is built outside it)."""
        self.compactions: Sequence[int] | None = None
        """The positions of the compaction markers, where the reader found them without building
        the messages (`compaction.positions`); None: look at each message."""

    noun = "message"

    def __len__(self) -> int:
        return self._size

    def _item(self, index: int) -> Message:
        message = self._built[index]
        while message is None:  # built again if another thread's blocks pushed it out meanwhile (a worker's)
            self._build_block(index)
            message = self._built[index]
        return message

    def _build_block(self, index: int) -> None:
        position = bisect_right(self._blocks, index) - 1
        start = self._blocks[position]
        end = self._blocks[position + 1] if position + 1 < len(self._blocks) else self._size
        try:
            built = self._build(start, end)
        except Exception as error:  # noqa: BLE001 - a damaged record shows up when its step is read: say which, no traceback
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise TrajectoryError(self.path, f"messages {start}..{end - 1}: {reason[:300]}") from None
        with self._lock:
            self._built[start:end] = built
            self._kept.append((start, end))
            self._kept_count += end - start
            while self._kept_count > self.KEEP and len(self._kept) > 1:
                first, last = self._kept.popleft()
                self._built[first:last] = [None] * (last - first)
                self._kept_count -= last - first


class StepList(LazySequence[Step]):
    """The steps of a trajectory: step k starts at message `starts[k - 1]` and holds the
    answers (observations, the submission, format errors) up to the next step."""

    def __init__(self, messages: Sequence[Message], starts: Sequence[int], states: Sequence[Any] = (),
                 provenance: Sequence[Any] = ()):
        self._messages = messages
        self.starts = starts
        self._states = states
        """SWE-agent's environment state after each step, where recorded."""
        self._provenance = provenance
        """How each step's prompt is known, where the reader says (`model.Provenance`)."""
        self._built: Kept[int, Step] = Kept(self.KEEP)

    noun = "step index"

    def __len__(self) -> int:
        return len(self.starts)

    KEEP = 1024
    """Built steps kept, the latest (a search over a 690,000-step rollout built every one)."""

    def provenance(self, index: int) -> Any:
        """How step `index + 1`'s prompt is known, where the reader says, without building the step."""
        return self._provenance[index] if index < len(self._provenance) else None

    def provenances(self) -> Sequence[Any]:
        """Each step's `provenance`, as the reader gave them (fewer than the steps: None for the rest)."""
        return self._provenance

    def _item(self, index: int) -> Step:
        step = self._built.get(index)
        return self._built.keep(index, self._step(index)) if step is None else step

    def _step(self, index: int) -> Step:
        start = self.starts[index]
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self._messages)
        message = self._messages[start]
        extra = message.extra
        answers = tuple(i for i in range(start + 1, end) if self._messages[i].message_type in ANSWER_TYPES)
        state = self._states[index] if index < len(self._states) else None
        provenance = self._provenance[index] if index < len(self._provenance) else None
        return Step(index=index + 1, message_index=start, actions=actions_of(message), observation_indices=answers,
                    prompt_end=start, usage=extra.usage, cost=extra.cost, context=extra.context,
                    processors=extra.processors, state=dict(state) if isinstance(state, Mapping) else None,
                    provenance=provenance)
