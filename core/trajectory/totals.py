"""What every process of a run cost together (SPEC §9.5: a resumed session's totals).

A session that crashed and was resumed (perhaps more than once) has queries from several
processes in one file. Each `end` event (a kept `.jsonl`) and each `resume` event records
the totals up to it; the queries after the last of them are summed from their messages'
recorded cost and usage. A final `.traj.json` holds the totals of all its processes in
`info.model_stats`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..messages import Message, ModelStats
from .model import Trajectory
from .normalize import is_step
from .readers.common import model_stats

TOTALS_KEY = "model_stats_before"
"""On a `resume` event: the run's totals before the resumed process began."""


def run_totals(trajectory: Trajectory) -> ModelStats:
    """The cost, calls and tokens of every query the file records, over all its processes."""
    if trajectory.format != "swedeck-jsonl":
        return _copy(trajectory.info.model_stats)
    base, since = ModelStats(), 0
    for event in trajectory.meta_events:
        recorded = event.data.get("model_stats") if event.event == "end" else event.data.get(TOTALS_KEY)
        if event.event in ("end", "resume") and isinstance(recorded, Mapping):
            base, since = model_stats(recorded), event.message_count
    return plus(base, queried(trajectory.messages[since:]))


def queried(messages: Sequence[Message]) -> ModelStats:
    """The totals of the model queries among `messages`, from what each recorded."""
    stats = ModelStats()
    for message in messages:
        if is_step(message) and (message.extra.usage is not None or message.extra.cost is not None):
            stats.add(message.extra.cost or 0.0, message.extra.usage)
    return stats


def plus(one: ModelStats, other: ModelStats) -> ModelStats:
    return ModelStats(instance_cost=one.instance_cost + other.instance_cost, api_calls=one.api_calls + other.api_calls,
                      prompt_tokens=one.prompt_tokens + other.prompt_tokens,
                      completion_tokens=one.completion_tokens + other.completion_tokens)


def _copy(stats: ModelStats) -> ModelStats:
    return plus(stats, ModelStats())
