"""`/` search in replay (SPEC §11.1): the steps whose model output or command output
contains the text, case-insensitively."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..messages import Message
from ..trajectory.errors import TrajectoryError
from .document import ReplayDocument, StepView


def step_texts(view: StepView) -> list[str]:
    texts = [view.assistant.text, view.assistant.extra.reasoning or ""]
    texts += [action.command for action in view.actions]
    texts += [_text(message) for message in view.observations]
    return texts


def step_matches(view: StepView, query: str) -> bool:
    needle = query.casefold()
    return bool(needle) and any(needle in text.casefold() for text in step_texts(view))


PAUSE_EVERY = 10
"""Steps read between calls of `matching_steps`' `pause`."""


def matching_steps(document: ReplayDocument, query: str, pause: Callable[[], None] | None = None) -> Iterator[int]:
    """The steps that match, one at a time (the UI's search worker hands them on as it goes);
    a damaged step is passed over (it shows its error when opened). `pause` is called every
    `PAUSE_EVERY` steps: the UI's worker waits there while a key is handled."""
    if not query:
        return
    for number in range(1, document.step_count + 1):
        if pause is not None and number % PAUSE_EVERY == 0:
            pause()
        try:
            view = document.step(number)
        except TrajectoryError:
            continue
        if step_matches(view, query):
            yield number



def next_match(matches: list[int], current: int, forward: bool = True) -> int | None:
    """The match after (or before) `current`, wrapping around."""
    if not matches:
        return None
    if forward:
        return next((m for m in matches if m > current), matches[0])
    return next((m for m in reversed(matches) if m < current), matches[-1])


def _text(message: Message) -> str:
    return message.text
