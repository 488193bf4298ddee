"""What the replay view shows for a step, as text: the model's words, the commands' output,
the meter's figures, search matches marked. Pure functions of a `StepView`, no widgets."""

from __future__ import annotations

from textual.content import Content, Span

from swedeck.core.context_window import resolve_context_window
from swedeck.core.events import ContextStatus
from swedeck.core.replay.document import StepView
from swedeck.core.trajectory.output import answer_label, answer_text, command_output

from ..widgets.text import MAX_MARKS, visible


def highlighted(text: str, query: str) -> Content:
    """Literal text with the first `MAX_MARKS` matches of the search marked (never parsed as
    markup, controls visible), in one pass."""
    text = visible(text)
    if not query:
        return Content(text)
    lower, needle = text.casefold(), query.casefold()
    if len(lower) != len(text) or not needle:
        return Content(text)
    spans = []
    start = lower.find(needle)
    while start != -1 and len(spans) < MAX_MARKS:
        spans.append(Span(start, start + len(needle), "reverse bold"))
        start = lower.find(needle, start + len(needle))
    return Content(text, spans)


def model_text(view: StepView) -> str:
    """What the model said: its reasoning and its words. Its tool calls are the step's
    command blocks (`view.actions`), shown once, below."""
    parts = []
    if view.assistant.extra.reasoning:
        parts.append(f"(reasoning) {view.assistant.extra.reasoning}")
    parts.append(view.assistant.text)
    return "\n".join(part for part in parts if part)


def output_text(view: StepView) -> str:
    """What each command printed, with its exit code (the model's view of it is `t`)."""
    chunks = []
    for message in view.observations:
        output = command_output(message)
        status = f"exit {output.returncode}" if output.returncode is not None else answer_label(message)
        if message.extra.duration_s is not None:
            status += f" · {message.extra.duration_s:.2f} s"
        chunks.append(f"── {status} ──\n{answer_text(message)}")
    return "\n".join(chunks) or "(no output)"





def model_window(model_name: str | None) -> int | None:
    """The window of the recorded model from swedeck's map (never litellm: replay stays light)."""
    if not model_name:
        return None
    try:
        return resolve_context_window(model_name).window
    except Exception:  # noqa: BLE001 - an unreadable user map must not stop a replay; the meter says "unknown"
        return None


def meter_status(view: StepView, estimate: int | None, window: int | None) -> tuple[ContextStatus, list[str]]:
    """The step's figures for the meter: recorded when the file has the provider's count,
    else estimated (from the history before the query); the cost as a note."""
    if view.prompt_tokens is not None:
        tokens, estimated = view.prompt_tokens, view.estimated
    else:
        tokens, estimated = estimate, True
    status = ContextStatus(window=view.window or window, prompt_tokens=tokens, cached_tokens=view.cached_tokens,
                           estimated=estimated)
    notes = ["recorded"] if tokens is not None and not estimated else []
    if view.provenance is not None:
        notes.append(f"prompt {view.provenance}")
    if view.compaction is not None:
        notes.append(view.compaction)
    if view.cost is not None:
        notes.append(f"cost ${view.cost:.4f}")
    return status, notes
