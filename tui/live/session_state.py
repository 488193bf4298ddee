"""What the live session screen shows, as Textual vars: the state, without a widget.

Each var has one owner, this class, and changes in one place: `apply` takes the agent's
events, and the few methods below take the person's answers. Widgets never read it;
they `data_bind` to it (the header to `info`, the meter to `context` and
`processor_labels`, the input line to `line_purpose`, the panes to `stacked`, the
processors panel to `processors_open`, the plan panel to `plan`), and the vars declared `bindings=True` refresh the
footer's keys when they change.

Textual binds a widget only to the node that composes it, so the session screen is a
`SessionState` (its base class) rather than holding one; this class itself has no
widgets, no layout and no drawing, and runs without an app (tests/test_session_state.py).
"""

from __future__ import annotations

from typing import Any, Literal

from textual.dom import DOMNode
from textual.reactive import var

from swedeck.core import events as ev
from swedeck.core.compaction_notes import compaction_note
from swedeck.core.cost import money
from swedeck.core.events import ContextStatus
from swedeck.core.messages import MessageType, task_text

from ..widgets.header_bar import HeaderInfo

LinePurpose = Literal["task", "follow_up", "human_command", "after_interrupt", "reject", "edit"]
"""What Enter on the input line does: answer the agent's request of that kind, or (reject,
edit) answer the pending confirmation with a comment or an edited command."""


class SessionState(DOMNode):
    info: var[HeaderInfo] = var(HeaderInfo)
    """The header's figures: task, model, environment, mode, step, cost, state."""
    state: var[ev.AgentState] = var(ev.AgentState.STARTING)
    """What the agent is doing; quitting while it runs asks first."""
    confirmation: var[ev.ConfirmationRequested | None] = var(None, bindings=True, always_update=True)
    """The command the person answers with y / n / e / a. Requests compare equal without
    their futures, so every set counts: a second, equal request is a new one to answer."""
    input_request: var[ev.InputRequested | None] = var(None, always_update=True)
    """The agent's open question that the input line answers (every set counts, as above)."""
    line_purpose: var[LinePurpose | None] = var(None, bindings=True, always_update=True)
    """What Enter on the input line does (None: the line is off). Every set readies the line
    afresh, so a second question of the same kind starts from an empty line."""
    context: var[ContextStatus | None] = var(None)
    """The meter's figures: the agent's last report, or the prediction after a processor change."""
    processor_labels: var[list[str]] = var(list)
    """The enabled processors, as the meter names them."""
    meter_notes: var[list[str]] = var(list)
    """What the meter names beside its figures: the last compaction (or its undo), until the next answer."""
    stacked: var[bool] = var(False)
    """The transcript sits above the command output instead of beside it."""
    processors_open: var[bool] = var(False)
    """The processors panel is shown."""
    plan: var[tuple[ev.PlanEntry, ...]] = var(tuple)
    """The agent's plan (an ACP agent's), shown above the meter while it has entries."""
    ended: var[bool] = var(False, bindings=True)
    """The session's thread has returned (or failed): nothing more will be asked."""

    _note_answers = 0
    """Answers left before the meter's compaction note goes."""
    _compaction_note = ""
    _cost_note = ""
    """The meter's notes: the last compaction's (until two answers later), the last call's dollars."""

    def apply(self, event: object) -> None:
        """The effect of a drained item (an event, or one command's merged output) on the state;
        those that only add to the transcript have none."""
        rule = RULES.get(type(event))
        if rule is not None:
            rule(self, event)

    def header(self, **changes: Any) -> None:
        self.info = self.info.but(**changes)

    # --- the agent's events ----------------------------------------------------------------

    def _rule_started(self, event: ev.SessionStarted) -> None:
        self.header(model=event.model_name, environment=event.environment,
                    host=event.environment.startswith("local"), mode=event.mode)
        if event.restored_messages and event.task:  # a resumed or forked trajectory: its task
            self.header(title=event.task)

    def _rule_state(self, event: ev.StateChanged) -> None:
        self.state = event.state
        self.header(state=event.state.value)

    def _rule_processors(self, event: ev.ProcessorsChanged) -> None:
        self.processor_labels = list(event.labels)

    def _rule_mode(self, event: ev.ModeChanged) -> None:
        self.header(mode=event.mode)
        request = self.input_request
        if request is not None and request.kind == "human_command" and event.mode != "human":
            self.input_request = None  # the agent asks the model instead now
            self.line_purpose = None

    def _rule_progress(self, event: ev.ProgressUpdated) -> None:
        self.header(step=event.step, step_limit=event.step_limit, cost=event.cost, cost_limit=event.cost_limit)

    def _rule_context(self, event: ev.ContextUpdated) -> None:
        self.context = event.status

    def _rule_compacted(self, event: ev.Compacted) -> None:
        self._compaction_note = compaction_note(event)
        self._note_answers = 2  # the answer it shaped, and the one after: its figures are the meter's
        self._notes()

    def _rule_answered(self, event: ev.QueryFinished) -> None:
        self._note_answers -= 1
        if self._note_answers <= 0:
            self._compaction_note = ""
        if event.cost:  # what this answer cost (issue 65), beside the header's total
            self._cost_note = f"{money(event.cost)} last call"
        self._notes()

    def _notes(self) -> None:
        notes = [note for note in (self._compaction_note, self._cost_note) if note]
        if notes != self.meter_notes:
            self.meter_notes = notes

    def _rule_retrying(self, event: ev.QueryRetrying) -> None:
        self.header(state=f"retry {event.attempt}/{event.attempts} in {event.wait_s:.0f} s")

    def _rule_decided(self, event: ev.ActionDecided) -> None:
        if self.confirmation is not None and self.confirmation.action_id == event.action_id:
            self.clear_confirmation()

    def _rule_message(self, event: ev.MessageAdded) -> None:
        if event.message.message_type == MessageType.TASK:
            self.header(title=task_text(event.message))

    def _rule_confirmation(self, event: ev.ConfirmationRequested) -> None:
        self.confirmation = event

    def _rule_input(self, event: ev.InputRequested) -> None:
        self.input_request = event
        self.line_purpose = event.kind

    # --- the person's answers --------------------------------------------------------------

    def answer_on_line(self, purpose: Literal["reject", "edit"]) -> bool:
        """The person answers the pending confirmation on the line; False if none is pending."""
        if self.confirmation is None:
            return False
        self.line_purpose = purpose
        return True

    def leave_line(self) -> None:
        """Back out of a comment or an edit: the confirmation stays pending."""
        if self.line_purpose in ("reject", "edit"):
            self.line_purpose = None

    def clear_confirmation(self) -> None:
        self.confirmation = None
        self.leave_line()

    def take_input_request(self) -> ev.InputRequested | None:
        """The open question, now answered: the line goes off."""
        request, self.input_request = self.input_request, None
        if request is not None:
            self.line_purpose = None
        return request

    def _rule_plan(self, event: ev.PlanUpdated) -> None:
        self.plan = event.entries

    def finish(self) -> None:
        self.ended = True
        self.input_request = None
        self.line_purpose = None
        self.header(state="done")


RULES: dict[type, Any] = {
    ev.SessionStarted: SessionState._rule_started,
    ev.StateChanged: SessionState._rule_state,
    ev.ModeChanged: SessionState._rule_mode,
    ev.ProcessorsChanged: SessionState._rule_processors,
    ev.ProgressUpdated: SessionState._rule_progress,
    ev.ContextUpdated: SessionState._rule_context,
    ev.QueryRetrying: SessionState._rule_retrying,
    ev.Compacted: SessionState._rule_compacted,
    ev.QueryFinished: SessionState._rule_answered,
    ev.ActionDecided: SessionState._rule_decided,
    ev.MessageAdded: SessionState._rule_message,
    ev.ConfirmationRequested: SessionState._rule_confirmation,
    ev.InputRequested: SessionState._rule_input,
    ev.PlanUpdated: SessionState._rule_plan,
}
"""Which events change the state, and how: one line per event type."""
