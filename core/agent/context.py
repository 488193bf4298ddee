"""The context figures of a running session (SPEC §5): what the provider measured for the
last query, and the prediction for the next one anchored to it.

A local tokenizer miscounts a provider's prompt by its template, its tools and its own
tokenizer: after a turn that measured 20,000 tokens a local count of the next prompt may
say 356. So the prediction is the last measured figure plus the local difference between
the next prompt and the prompt that was measured (both after the active processors): what
was added since, minus what the processors remove, each counted the same way, so the
tokenizer's bias cancels and a processor toggle shows at once. Before anything was
measured, or when the provider sent no usage, the prediction is the local count alone and
says so (`ContextStatus.next_anchored`).

The difference carries the tokenizer's bias on what changed, which is small for a step and
large for a compaction (a prompt of 180,000 tokens becoming 15,000). So when the next prompt
differs from the measured one by more than `BIG_CHANGE` of it, the prediction comes from the
line through the recent (local count, measured) pairs instead: the provider's own scale and
its fixed overhead (tools, template), both learnt from this session.

When the provider refuses a prompt as too long, `smallest_fit` finds the smallest change
to the processors whose predicted prompt fits, to offer it (or, with
`agent.on_context_exceeded: fit`, to apply it) before the query is sent again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..events import ContextStatus
from ..messages import Message, Usage
from ..tokens import count_messages


class ContextTracker:
    def __init__(self, window: int | None, window_source: str = "unknown"):
        self.window = window
        self.window_source = window_source
        self.prompt_tokens: int | None = None
        """The last query's prompt tokens, as the provider measured them (or estimated)."""
        self.estimated = False
        """The last figure is swedeck's count: the provider sent no usage."""
        self.cached_tokens = 0
        self._sent_local: int | None = None
        """The local count of the prompt the provider measured: the anchor's other end."""
        self._pairs: list[tuple[int, int]] = []
        """(local count, measured) of the last `PAIRS` measured prompts."""

    def record(self, usage: Usage | None, sent: list[Message]) -> None:
        """A query was answered: `sent` is the prompt (after processors) it measured."""
        if usage is None or not usage.prompt_tokens:
            return
        self.prompt_tokens = usage.prompt_tokens
        self.estimated = usage.estimated
        self.cached_tokens = usage.cached_tokens
        self._sent_local = None if usage.estimated else count_messages(sent)
        if self._sent_local is not None:
            self._pairs = [*self._pairs, (self._sent_local, usage.prompt_tokens)][-PAIRS:]

    def predict(self, next_prompt: list[Message]) -> tuple[int, bool]:
        """The next prompt's tokens, and whether the figure is anchored to a measured one."""
        local = count_messages(next_prompt)
        if self.prompt_tokens is None or self._sent_local is None:
            return local, False
        if abs(local - self._sent_local) > BIG_CHANGE * self._sent_local:
            line = _fit(self._pairs)
            if line is not None:
                scale, overhead = line
                return max(0, round(scale * local + overhead)), True
        return max(0, self.prompt_tokens + local - self._sent_local), True

    def status(self, next_prompt: list[Message] | None = None) -> ContextStatus:
        predicted, anchored = self.predict(next_prompt) if next_prompt is not None else (None, False)
        return ContextStatus(window=self.window, prompt_tokens=self.prompt_tokens, cached_tokens=self.cached_tokens,
                             next_estimate=predicted, window_source=self.window_source,
                             estimated=self.estimated, next_anchored=anchored)


PAIRS = 8
BIG_CHANGE = 0.25


def _fit(pairs: list[tuple[int, int]]) -> tuple[float, float] | None:
    """Least squares of measured on local count: (scale, overhead); None without two counts
    at least a tenth apart, or with a scale no tokenizer has."""
    if len(pairs) < 2:
        return None
    xs, ys = [float(x) for x, _ in pairs], [float(y) for _, y in pairs]
    if max(xs) < 1.1 * min(xs):
        return None
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    scale = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
    if not 0.5 <= scale <= 2.0:
        return None
    return scale, mean_y - scale * mean_x


@dataclass(frozen=True)
class ContextFit:
    """The smallest change to the processors that brings the next prompt under the window."""

    processors: list[dict[str, Any]]
    """The whole new processor config (the current one with the change)."""
    change: str
    """What changes, for a person: `last_n_observations(n=5)`."""
    expected_tokens: int
    window: int


FIT_SHARE = 0.9
"""A fitting prompt leaves a tenth of the window for the answer."""

def smallest_fit(history: list[Message], current: list[Any], tracker: ContextTracker) -> ContextFit | None:
    """The change to `current` whose prompt keeps the most while it fits `FIT_SHARE` of the
    window, by the tracker's anchored prediction; None when the window is unknown or
    nothing fits."""
    from ..processors import PROCESSORS
    from ..processors.base import label
    from ..processors.chain import ProcessorChain

    if not tracker.window:
        return None
    limit = int(tracker.window * FIT_SHARE)
    base = [p.model_dump(mode="json") if hasattr(p, "model_dump") else dict(p) for p in current]
    best: ContextFit | None = None
    candidates = [{"type": name, **option} for name, cls in PROCESSORS.items() for option in cls.shrink_options]
    for candidate in candidates:
        processors = [p for p in base if p["type"] != candidate["type"]] + [candidate]
        expected, _ = tracker.predict(ProcessorChain(processors).apply(history).messages)
        if expected <= limit and (best is None or expected > best.expected_tokens):
            best = ContextFit(processors, label(candidate["type"], candidate), expected, tracker.window)
    return best
