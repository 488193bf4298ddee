"""Whether a proposed command runs, and as what (SPEC §6.5): on its own (yolo mode, the
whitelist, what the person allowed with `a`), or after the person approves, edits or
rejects it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .. import events as ev
from ..messages import Action, MessageType
from . import replies
from .approvals import Approvals
from .exits import Rejected
from .resolution import Resolver, changed
from .seams import Asks

if TYPE_CHECKING:
    from ..rules.model import RuleSet, Verdict


class Gate:
    def __init__(self, whitelist: list[str], resolve: Resolver | None = None, rules: RuleSet | None = None):
        self.approvals = Approvals()
        self._whitelist = [re.compile(pattern) for pattern in whitelist]
        self._resolve = resolve
        """Asks the session's shell what names resolve to (`resolution`); None: not checked."""
        self.rules = rules
        """`agent.rules`: another agent's approval rules (`core/rules`), or None."""
        self._last: tuple[str, Verdict] | None = None

    def _verdict(self, command: str) -> Verdict | None:
        """The rules' verdict on `command`, decided once for `denied` and `auto_reason` both."""
        if self.rules is None:
            return None
        if self._last is None or self._last[0] != command:
            self._last = (command, self.rules.decide(command))
        return self._last[1]

    def denied(self, command: str) -> str | None:
        """Why `agent.rules` reject `command` (in every mode), or None."""
        verdict = self._verdict(command)
        if verdict is None or verdict.decision != "deny":
            return None
        return "denied by the rules: " + "; ".join(part.why for part in verdict.parts if part.decision == "deny")

    def auto_reason(self, mode: ev.Mode, command: str) -> str | None:
        """Why `command` runs without asking, or None when the person decides."""
        if mode != "confirm":
            return mode
        if any(pattern.search(command) for pattern in self._whitelist):
            return "whitelisted"
        verdict = self._verdict(command)
        if verdict is not None and verdict.decision == "allow":
            return "allowed by the rules: " + "; ".join(part.why for part in verdict.parts)
        return self.approvals.allowed_by(command)

    def decide(self, agent: Asks, action: Action, action_id: str, step: int, unrun: list[Action]) -> tuple[str, str]:
        """The command to run and how it was approved (recorded on its observation); a
        rejection answers `unrun` (this action and those after it) with the person's words."""
        command = action.command
        denied = self.denied(command)
        if denied is not None:  # the rules' deny: rejected without asking, the rule said to the model
            agent.emit(ev.ActionProposed(action_id=action_id, step=step, command=command, needs_confirmation=False))
            agent.emit(ev.ActionDecided(action_id=action_id, decision="rejected", command=command, reason=denied))
            text = replies.rejected(agent.config.agent, agent.template_vars(), denied)
            raise Rejected(*replies.unanswered(unrun, step, text, MessageType.USER_MESSAGE))
        reason = self.auto_reason(agent.mode, command)
        if reason is not None and reason.startswith("always allowed:") and command not in self.approvals.exact \
                and self._resolve is not None:
            why = changed(self.approvals.recorded(command), self._resolve(self.approvals.programs(command)))
            if why:  # the rule's program is not the one it was made for: the person decides
                agent.emit(ev.Notice(text=f"not run by its rule: {why}", level="warning"))
                reason = None
        agent.emit(ev.ActionProposed(action_id=action_id, step=step, command=command,
                                     needs_confirmation=reason is None))
        if reason is not None:
            agent.emit(ev.ActionDecided(action_id=action_id, decision="auto", command=command, reason=reason))
            return command, f"auto: {reason}"
        agent.control.set_state(ev.AgentState.AWAITING_CONFIRMATION)
        decision = agent.person.ask(ev.ConfirmationRequested, "confirmation", action_id=action_id, command=command)
        if decision.kind == "reject":
            agent.emit(ev.ActionDecided(action_id=action_id, decision="rejected", command=command))
            text = replies.rejected(agent.config.agent, agent.template_vars(), decision.comment or "(no comment)")
            raise Rejected(*replies.unanswered(unrun, step, text, MessageType.USER_MESSAGE))
        if decision.kind == "edit" and decision.command.strip():
            agent.emit(ev.ActionDecided(action_id=action_id, decision="edited", command=decision.command,
                                        reason=f"edited from: {command}"))
            return decision.command, "edited"
        reason = ""
        if decision.kind == "always_allow":
            resolved = self._resolve(self.approvals.programs(command)) if self._resolve is not None else None
            reason = f"and from now on: {self.approvals.allow(command, resolved)}"
        agent.emit(ev.ActionDecided(action_id=action_id, decision="approved", command=command, reason=reason))
        return command, "approved"
