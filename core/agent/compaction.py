"""Compaction by summary (SPEC §17): the `summarize` processor's work, done by the agent.

`plan` picks what a summary replaces: the history as the model now sees it (earlier
compactions applied), after the system prompt and the first task, up to the last
`keep_last` steps, cut only where a step starts so a tool call is never parted from its
result (and never past the current turn's task). `compact` asks the model (or the one the
processor names) for the summary with the processor's prompt, shows it first in confirm mode
(accept, edit, or keep the full history), and records it: a `compaction` message with the
summary, the messages it `replaces`, the model, the summary call's usage and cost, and the
meter's prediction of the next prompt before and after. Every prompt build applies it
(`trajectory.compaction.compacted`), so `swedeck prompt`, the inspectors, what-if, fork and
`--resume` rebuild the requests that were sent. `undo` records that it is taken back: the
next prompt is again the one before it, byte for byte.

A summary call that fails (an API error, a cut stream, a cancel) leaves the history as it
was and says so (`CompactionFailed`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from .. import events as ev
from ..messages import Message, MessageType, make_message
from ..models.base import ModelError, QueryCancelled, TextAnswer
from ..processors.summarize import SUMMARY_TEMPLATE, Summarize
from ..trajectory.compaction import is_compaction, sendable, undone
from ..trajectory.ledger import ledger_of
from ..trajectory.losses import kept_text, loss_at
from .changes import NO_CHANGE, Change
from .context import FIT_SHARE
from .seams import Compacts
from .templates import render

RETRY_AFTER_STEPS = 2
"""After a failed automatic compaction, the threshold is not acted on again for this many steps."""
UNDONE = 1 << 62
"""After an undo, or a summary the person declined, the threshold is not acted on until they
compact (ctrl+k) or change the processors."""


@dataclass(frozen=True)
class Plan:
    replaces: list[int]
    """Positions in the history of the messages the summary replaces (as the model saw them)."""
    messages: list[Message]


def settings(processors: list[Any]) -> Summarize | None:
    """The enabled `summarize` processor, if any."""
    return next((p for p in processors if isinstance(p, Summarize) and p.enabled), None)


def plan(history: list[Message], keep_last: int) -> Plan | None:
    """What a summary would replace now; None when there is too little to summarize."""
    position = {id(message): index for index, message in enumerate(history)}
    view = sendable(history)
    tasks = [i for i, message in enumerate(view) if message.message_type == MessageType.TASK]
    start = tasks[0] + 1 if tasks else next((i + 1 for i, m in enumerate(view) if m.role == "system"), 0)
    answers = [i for i in range(start, len(view)) if view[i].role == "assistant"]
    if len(answers) <= keep_last:
        return None
    cut = answers[-keep_last] if keep_last else len(view)
    current_task = tasks[-1] if tasks else -1
    if start <= current_task < cut:
        cut = current_task  # the turn's own task stays word for word
    chosen = view[start:cut]
    if len(chosen) < 2:
        return None
    return Plan([position[id(message)] for message in chosen], chosen)


def conversation_text(messages: list[Message]) -> str:
    """The messages as the summary request shows them: role, then text, then any command."""
    parts = []
    for message in messages:
        lines = [f"[{message.role}]", message.text]
        for call in message.tool_calls or ():
            lines.append(f"(tool call {call.function.name}: {call.function.arguments})")
        parts.append("\n".join(line for line in lines if line))
    return "\n\n".join(parts)


def request(processor: Summarize, chosen: Plan, task: str) -> list[Message]:
    text = render("summarize.prompt", processor.prompt,
                  {"task": task, "conversation": conversation_text(chosen.messages), "count": len(chosen.messages)})
    return [make_message("user", text, MessageType.USER_MESSAGE)]


def with_trigger(status: ev.ContextStatus, processors: list[Any], window: int | None,
                 history: list[Message]) -> ev.ContextStatus:
    """The meter's figures with the trigger's: the one number both read is `next_estimate`."""
    processor = settings(processors)
    taken_back = undone(history)
    count = sum(1 for position, message in enumerate(history) if is_compaction(message)
                and message.extra.undoes is None and position not in taken_back)
    at = int(processor.at * window) if processor is not None and window else None
    if at == status.compact_at and count == status.compactions:
        return status
    return msgspec.structs.replace(status, compact_at=at, compactions=count)


def due(agent: Compacts) -> bool:
    """The next prompt has reached the `summarize` processor's share of the window."""
    if settings(agent.prompts.processors) is None or not agent.window or agent.step < agent.compaction_quiet_until:
        return False
    status = agent.context_status()  # the meter's own figures: what it shows is what fires
    return status.to_compaction == 0


def fits(agent: Compacts) -> bool:
    """A context-window error: a compaction is predicted to fit `FIT_SHARE` of the window, with a
    summary as long as the processor allows (`agent.compaction.on_context_exceeded`)."""
    if not agent.config.agent.compaction.on_context_exceeded or not agent.window:
        return False
    processor = settings(agent.prompts.processors) or Summarize()
    chosen = plan(agent.history, processor.keep_last)
    if chosen is None:
        return False
    gone = set(chosen.replaces)
    placeholder = make_message("user", "summary " * processor.max_tokens, MessageType.USER_MESSAGE)
    rest = [message for index, message in enumerate(agent.history) if index not in gone]
    predicted, _ = agent.context.predict(agent.prompts.build([*rest, placeholder]).messages)
    return predicted <= FIT_SHARE * agent.window


def compact(agent: Compacts, reason: str, processor: Summarize | None = None, review: bool = False) -> Change:
    """Summarize and record; `compacted` when a compaction was recorded (else when the
    threshold may act again). `review`: show the summary first whatever the mode (a
    context-window error in an interactive session: an offer)."""
    processor = processor or settings(agent.prompts.processors) or Summarize()
    chosen = plan(agent.history, processor.keep_last)
    if chosen is None:
        return _failed(agent, f"nothing to compact: the history has no more than the last {processor.keep_last} "
                              "steps after its task")
    before = agent.context_status().next_estimate
    agent.emit(ev.CompactionStarted(reason=reason, messages=len(chosen.replaces)))
    agent.control.set_state(ev.AgentState.THINKING, "compacting")
    model = agent.model if processor.model is None else agent.summary_model(processor.model)
    try:
        answer: TextAnswer = model.complete(request(processor, chosen, agent.transcript.task),
                                            max_tokens=processor.max_tokens)
    except QueryCancelled:
        return _failed(agent, "the summary was cancelled; the history is unchanged", retry_later=True)
    except ModelError as error:
        return _failed(agent, f"the summary failed ({error}); the history is unchanged", retry_later=True)
    summary = answer.text.strip()
    if not summary:
        return _failed(agent, "the model wrote an empty summary; the history is unchanged", retry_later=True)
    marker = _marker(agent, chosen, summary, answer, model.model_name, reason, before, processor)
    after = marker.extra.tokens_after
    if agent.interactive and (review or agent.mode == "confirm" and agent.config.agent.compaction.confirm):
        reviewed = agent.person.ask(ev.CompactionReview, "compaction", summary=summary, messages=len(chosen.replaces),
                                    tokens_before=before, tokens_after=after, ledger=marker.extra.ledger or "")
        if reviewed is None or not reviewed.strip():
            agent.transcript.meta("compaction_declined", messages=len(chosen.replaces), summary=summary)
            _failed(agent, "kept the full history: the summary was not used (ctrl+k compacts when you want)")
            return Change(quiet_until=UNDONE)  # the person said no: the threshold waits for them
        if reviewed.strip() != summary:
            marker = _marker(agent, chosen, reviewed.strip(), answer, model.model_name, reason, before, processor,
                             edited=True)
    agent.transcript.add(marker)
    kept = kept_text(loss_at(agent.history, len(agent.history) - 1))  # what it replaced that is still seen
    agent.emit(ev.Compacted(position=len(agent.history) - 1, tokens_before=before, tokens_after=marker.extra.tokens_after,
                            messages=len(chosen.replaces), model=model.model_name, cost=answer.cost, kept=kept))
    agent.progress()
    agent.update_context()
    return Change(compacted=True)


def _marker(agent: Compacts, chosen: Plan, summary: str, answer: TextAnswer, model_name: str, reason: str,
            before: int | None, processor: Summarize, edited: bool = False) -> Message:
    content = render("summarize", SUMMARY_TEMPLATE, {"summary": summary, "count": len(chosen.replaces)})
    found = ledger_of(chosen.messages, processor.ledger_max_tokens) if processor.ledger else None
    ledger = found.text() if found is not None and not found.empty() else None
    if ledger:
        content += "\n\n" + ledger  # the model gets it with the summary, word for word
    usage = answer.usage.to_record() if answer.usage is not None else None
    draft = make_message("user", content, MessageType.COMPACTION, summary=summary, replaces=chosen.replaces,
                         model=model_name, reason=reason, tokens_before=before, summary_usage=usage,
                         summary_cost=answer.cost, edited=edited, step=agent.step, ledger=ledger)
    after = agent.context.predict(agent.prompts.build([*agent.history, draft]).messages)[0]
    return draft.with_extra(tokens_after=after)


def active(history: list[Message]) -> int | None:
    """The position of the last compaction in effect (not taken back), if any."""
    taken_back = undone(history)
    for index in range(len(history) - 1, -1, -1):
        if is_compaction(history[index]) and history[index].extra.replaces is not None and index not in taken_back:
            return index
    return None


def undo(agent: Compacts) -> Change:
    """Take back the last compaction in effect: the next prompt is the one before it."""
    target = active(agent.history)
    if target is None:
        return _failed(agent, "no compaction to undo")
    before = agent.context_status().next_estimate
    agent.transcript.add(make_message("user", "(the compaction above was undone)", MessageType.COMPACTION,
                                      undoes=target, step=agent.step))
    after = agent.context_status().next_estimate
    replaced = agent.history[target].extra.replaces or ()
    agent.emit(ev.Compacted(position=len(agent.history) - 1, tokens_before=before, tokens_after=after,
                            messages=len(replaced), undone=True))
    agent.update_context()
    return Change(compacted=True, quiet_until=UNDONE)  # the person said no: the threshold waits for them


def _failed(agent: Compacts, why: str, retry_later: bool = False) -> Change:
    """Say why no compaction was recorded; after a failed summary the threshold waits a few steps."""
    agent.emit(ev.CompactionFailed(error=why))
    agent.emit(ev.Notice(text=why, level="warning"))
    return Change(quiet_until=agent.step + RETRY_AFTER_STEPS) if retry_later else NO_CHANGE
