"""What the end of a step means (SPEC §6.4): in an interactive session the person is asked
(a follow-up task, continue past a limit, switch on a processor that makes the prompt fit,
a message after an interrupt); in a headless one the session ends with the matching status.
"""

from __future__ import annotations

import msgspec

from .. import events as ev
from ..exit_status import ExitStatus
from ..messages import MessageType, make_message
from ..trajectory.compaction import sendable
from . import compaction, limits
from .changes import NO_CHANGE, Change
from .context import ContextFit, smallest_fit
from .exits import SessionEnd
from .seams import Ends


def next_turn_or_end(agent: Ends) -> Change:
    """After a submission: a follow-up task (with `confirm_exit`), or the end."""
    if not (agent.interactive and agent.config.agent.confirm_exit):
        raise SessionEnd(ExitStatus.SUBMITTED, submission=agent.submission)
    replay_done = getattr(agent.model, "remaining", None) == 0  # a replayed run (the demo) has no more answers
    if replay_done:
        agent.emit(ev.Notice(text="This replay has no more answers: a follow-up task would not be run "
                                  "(swedeck demo --model NAME runs one with a real model)."))
    agent.control.set_state(ev.AgentState.AWAITING_INPUT, "submitted")
    task = agent.person.ask_text("follow_up", "The agent submitted. Give a follow-up task, or leave empty to end.")
    if not task or replay_done:
        if task:
            agent.emit(ev.Notice(text="the replayed trajectory has no more answers: the follow-up was not run",
                                 level="warning"))
        raise SessionEnd(ExitStatus.SUBMITTED, submission=agent.submission)
    return Change(task=task)


def after_interrupt(agent: Ends) -> None:
    agent.control.clear_interrupt()
    agent.transcript.add(make_message("user", "The user interrupted you.", MessageType.INTERRUPT, mode=agent.mode))
    if not agent.interactive:
        raise SessionEnd(ExitStatus.INTERRUPTED, "interrupted")
    agent.control.set_state(ev.AgentState.AWAITING_INPUT, "interrupted")
    text = agent.person.ask_text("after_interrupt", "Interrupted. Message to the agent (empty to continue):")
    if text:
        agent.transcript.add(make_message("user", text, MessageType.USER_MESSAGE, mode=agent.mode))


def context_exceeded(agent: Ends, detail: str) -> Change:
    """Compact when a summary is predicted to fit (`agent.compaction.on_context_exceeded`), else
    offer (or, with `on_context_exceeded: fit`, apply) the smallest processor change that fits
    the window; never the same refused prompt again."""
    policy = agent.config.agent.on_context_exceeded
    retried = agent.fit_applied
    tried = NO_CHANGE  # a compaction that failed: the threshold's wait it asks for still holds
    if not retried and policy != "stop" and (agent.interactive or policy == "fit") and compaction.fits(agent):
        agent.emit(ev.Notice(text=f"The prompt did not fit the context window ({detail}): compacting the history.",
                             level="warning"))
        tried = compaction.compact(agent, "context_exceeded", review=agent.interactive and policy == "ask")
        if tried.compacted:
            return tried.then(Change(fit_applied=True))
    fit = None if retried else smallest_fit(sendable(agent.history),
                                             agent.prompts.processors, agent.context)
    if fit is not None:
        detail += f" — it fits with {fit.change}: next ≈ {fit.expected_tokens:,} / {fit.window:,} tokens"
        agent.emit(ev.ContextUpdated(msgspec.structs.replace(agent.context_status(), advice=f"fits with {fit.change} "
                                             f"≈ {fit.expected_tokens:,}")))
    elif retried:
        detail += " — still too long after the processors were changed"
    if fit is not None and policy == "fit":
        agent.emit(ev.Notice(text=f"The prompt did not fit the context window: switched on {fit.change} "
                                  f"(next ≈ {fit.expected_tokens:,} / {fit.window:,} tokens) and retrying.",
                             level="warning"))
        return tried.then(Change(fit_applied=True, processors=fit.processors))
    if policy == "stop":
        raise SessionEnd(ExitStatus.CONTEXT_WINDOW_EXCEEDED, detail)
    return tried.then(pause_or_end(agent, "context_exceeded", detail, ExitStatus.CONTEXT_WINDOW_EXCEEDED, fit=fit))


def pause_or_end(agent: Ends, reason: str, detail: str, status: ExitStatus, fit: ContextFit | None = None) -> Change:
    """Headless: end with `status`. Interactive: pause and do what the person decides."""
    if not agent.interactive:
        raise SessionEnd(status, detail)
    agent.control.set_state(ev.AgentState.PAUSED, detail)
    decision = agent.person.ask(ev.PauseRequested, "pause", reason=reason, detail=detail, fit=fit)
    if decision is None or decision.kind == "quit":
        raise SessionEnd(status, detail)
    if decision.kind == "raise_limits":
        config = agent.config.agent
        limits.lift(config, decision)
        agent.transcript.meta("limit_change", step_limit=config.step_limit, cost_limit=config.cost_limit,
                              wall_time_limit_s=config.wall_time_limit_s)
        return Change(progress=True)
    if decision.kind == "enable_processor" and decision.processors is not None:
        return Change(fit_applied=True, processors=decision.processors)
    return NO_CHANGE
