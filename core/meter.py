"""The context meter's figures as text (SPEC §10.1, §5): used / window, % left, cached,
next ≈ N, and for a recorded step how its figures are known. One owner for the live meter,
the replay's (`tui/widgets/context_meter.py` draws them) and the exported page's."""

from __future__ import annotations

from collections.abc import Sequence

from .context_status import ContextStatus
from .context_window import resolve_context_window
from .cost import StepCost
from .replay.document import StepView

WARN_BELOW = 50.0
DANGER_BELOW = 20.0
BAR_WIDTH = 16


def meter_level(status: ContextStatus | None) -> str:
    left = status.left_percent if status else None
    if left is None:
        return "unknown"
    if left < DANGER_BELOW:
        return "danger"
    if left < WARN_BELOW:
        return "warn"
    return "ok"


def describe(status: ContextStatus | None, processors: list[str] | None, notes: Sequence[str] = ()) -> str:
    """The meter's line; `processors` None leaves them out (replay), `notes` come last."""
    status = status or ContextStatus(window=None, prompt_tokens=None)
    used = "–" if status.prompt_tokens is None else f"{status.prompt_tokens:,}"
    if status.estimated and status.prompt_tokens is not None:
        used += " (estimated)"  # the provider sent no usage: swedeck's own count
    if status.window:
        parts = [f"context {used} / {status.window:,}"]
        left = status.left_percent
        if left is not None:
            parts.append(f"{left:.0f}% left")
    else:
        parts = [f"context {used} / unknown window"]
    if status.cached_tokens:
        parts.append(f"cached {status.cached_tokens:,}")
    if status.next_estimate is not None:
        # anchored: the provider's last figure plus the local difference; else a local count only
        parts.append(f"next ≈ {status.next_estimate:,}" + ("" if status.next_anchored else " (local count)"))
    if status.compact_at is not None:  # the trigger's own figure, against the `next` above
        left = status.to_compaction
        parts.append(f"compacts at {status.compact_at:,}" + (f" ({left:,} to go)" if left else " (next query)"
                                                             if left == 0 else ""))
    if status.compactions:
        parts.append(f"{status.compactions} compaction{'s' if status.compactions != 1 else ''}")
    if processors is not None:
        parts.append("processors: " + (", ".join(processors) if processors else "none"))
    if status.advice:
        parts.append(status.advice)
    return " · ".join([*parts, *notes])


def bar(status: ContextStatus | None) -> str:
    if not status or not status.window:
        return "░" * BAR_WIDTH
    used = 1.0 if (status.prompt_tokens or 0) >= status.window else (status.prompt_tokens or 0) / status.window
    filled = round(used * BAR_WIDTH)
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def model_window(model_name: str | None) -> int | None:
    """The window of the recorded model from swedeck's map (never litellm: replay stays light)."""
    if not model_name:
        return None
    try:
        return resolve_context_window(model_name).window
    except Exception:  # noqa: BLE001 - an unreadable user map must not stop a replay; the meter says "unknown"
        return None


def step_meter(view: StepView, estimate: int | None, window: int | None,
               priced: StepCost | None = None) -> tuple[ContextStatus, list[str]]:
    """The step's figures for the meter: recorded when the file has the provider's count,
    else estimated (from the history before the query); the cost as a note: the file's own
    figure, else `priced` from its usage (`cost.RunningCost`)."""
    tokens: int | None = view.prompt_tokens
    estimated = view.estimated
    if tokens is None:
        tokens, estimated = estimate, True
    status = ContextStatus(window=view.window or window, prompt_tokens=tokens, cached_tokens=view.cached_tokens,
                           estimated=estimated)
    notes = ["recorded"] if tokens is not None and not estimated else []
    if view.provenance is not None:
        notes.append(f"prompt {view.provenance}")
    if view.compaction is not None:
        notes.append(view.compaction)
        if view.compaction_detail:
            notes.append(view.compaction_detail)
    if view.cost is not None:
        notes.append(f"cost ${view.cost:.4f}")
    elif priced is not None and priced.note():
        notes.append(priced.note())
    return status, notes
