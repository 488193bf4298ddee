"""What-if processors (SPEC §11.1 `p`): the prompt the model would have seen at a step with
other history processors, and the tokens that saves, for one step and as a curve.

Every figure comes from `prompt_view.step_prompt`, the function behind `swedeck prompt`,
so the UI and the command always agree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..processors.chain import ProcessorChain
from ..prompt_view import (
    StepPrompt,
    recorded_processors,
    resolve_step_number,
    step_prompt,
    without_recorded_code,
)
from ..trajectory.model import Trajectory

NO_PROCESSORS: list[dict[str, Any]] = [{"type": "default"}]
"""An explicit "none" (an empty list would mean "the recorded ones")."""

CANDIDATES: list[dict[str, Any]] = [
    {"type": "last_n_observations", "n": 5},
    {"type": "remove_regex", "remove": ["<diff>.*</diff>"]},
    {"type": "context_filter", "num_invocations_to_keep": 3},
    {"type": "worker"},
]
"""Offered beside what the run had (on when the run had none, off when it had some)."""


def starting_processors(trajectory: Trajectory, step: int, configured: list[Any] | None) -> list[dict[str, Any]]:
    """What the what-if view starts from: the configured processors, else those the run really
    had at this step (recorded), followed by the candidates it did not have."""
    if configured:
        return [dict(p, enabled=p.get("enabled", True)) for p in configured]
    recorded = recorded_processors(trajectory, resolve_step_number(trajectory, step)) or []
    active = [p for p in recorded if p.get("enabled", True)]
    had = [dict(p, enabled=True) for p in without_recorded_code(active, [])]  # the file's custom filters stay the file's
    types = {p["type"] for p in had}
    return had + [dict(c, enabled=not had) for c in CANDIDATES if c["type"] not in types]


@dataclass(frozen=True)
class WhatIfPoint:
    step: int
    history_tokens: int
    """The prompt with no processors: everything before the query."""
    tokens: int
    """The prompt with the chosen processors."""

    @property
    def saved(self) -> int:
        return self.history_tokens - self.tokens


def processors_or_none(processors: list[Any]) -> list[Any]:
    """The chain's active config, or the explicit "no processors" when all are off."""
    active = ProcessorChain(processors).active_config()
    return active or NO_PROCESSORS


def what_if_prompt(trajectory: Trajectory, step: int, processors: list[Any], window: int | None = None) -> StepPrompt:
    """The step's prompt with the candidate processors (labelled `what-if`, not `configured`)."""
    candidates = processors_or_none(processors)
    prompt = step_prompt(trajectory, step, candidates, window)
    if prompt.processors_source == "configured":
        prompt.processors_source = "what-if"
    return prompt


def total_saved(points: list[WhatIfPoint]) -> int:
    """Tokens saved over the whole run: the sum over every query."""
    return sum(point.saved for point in points)


def what_if_curve(trajectory: Trajectory, processors: list[Any]) -> Iterator[WhatIfPoint]:
    chosen = processors_or_none(processors)
    for number in range(1, len(trajectory.steps) + 1):
        prompt = step_prompt(trajectory, number, chosen)
        yield WhatIfPoint(number, prompt.history_tokens, prompt.total_tokens)
