"""What a compaction says to the person, in words (SPEC §17): the live transcript's notes and the
headless progress lines read the same sentences from here."""

from __future__ import annotations

from pathlib import Path

from . import events as ev


def model_label(name: str) -> str:
    """A model as the person reads its name: a replayed file by its name (`replay: demo.traj.json`),
    not its whole (installed) path; any other model as configured."""
    if name.startswith("replay:"):
        return "replay: " + Path(name.removeprefix("replay:")).name
    return name


_WHY = {"threshold": "the context reached the summarize threshold", "request": "asked",
        "context_exceeded": "the prompt did not fit the window"}


def started_text(event: ev.CompactionStarted) -> str:
    return f"compacting: summarizing {event.messages} messages ({_WHY.get(event.reason, event.reason)})…"


def compaction_note(event: ev.Compacted) -> str:
    """`compacted 182,400 -> 14,900 tokens` (or `compaction undone: 14,900 -> 182,400 tokens`)."""
    sizes = (f"{event.tokens_before:,} -> {event.tokens_after:,} tokens"
             if event.tokens_before is not None and event.tokens_after is not None else "")
    return f"compaction undone: {sizes}" if event.undone else f"compacted {sizes}"


def compacted_text(event: ev.Compacted) -> str:
    """The whole sentence: the figures, how many messages, by which model, at what cost."""
    if event.undone:
        return f"{compaction_note(event)} · the next prompt is the one before the compaction"
    cost = f", ${event.cost:.4f}" if event.cost else ""
    kept = f" · {event.kept}" if event.kept else ""
    return f"{compaction_note(event)} · {event.messages} messages summarized by {model_label(event.model)}{cost}{kept}"
