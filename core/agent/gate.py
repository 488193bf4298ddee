"""Whether a proposed command runs, and as what (SPEC §6.5): on its own (yolo mode, the
whitelist, what the person allowed with `a`), or after the person approves, edits or
rejects it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .. import events as ev
from .. import shell_split
from ..messages import Action, MessageType
from ..rules.programs import changes_state
from . import replies
from .approvals import Approvals
from .exits import Rejected
from .resolution import Resolver, changed, unusual
from .seams import Asks

if TYPE_CHECKING:
    from ..rules.model import RuleSet, Verdict


@dataclass(frozen=True)
class Ruling:
    """What the gate decided of a command, and who decided it: the gate acts on `by`, never on
    the words of `reason` (which are for the person and the record)."""

    decision: Literal["allow", "ask", "deny"]
    reason: str = ""
    by: Literal["rules", "whitelist", "approval", "prefix", "mode", "person", ""] = ""
    """`rules`: `agent.rules`; `approval`: the exact command the person allowed; `prefix`: a
    prefix they allowed with `a`; `mode`: yolo; `person`: they were asked."""


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
        """The rules' verdict on `command`, decided once for `denied` and `ruling` both."""
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

    def ruling(self, mode: ev.Mode, command: str) -> Ruling:
        """Whether `command` runs: denied by the rules (in every mode), run without asking (and who
        allowed it), or the person's to decide."""
        denied = self.denied(command)
        if denied is not None:
            return Ruling("deny", denied, "rules")
        if mode != "confirm":
            return Ruling("allow", mode, "mode")
        if any(pattern.search(command) for pattern in self._whitelist):
            return Ruling("allow", "whitelisted", "whitelist")
        verdict = self._verdict(command)
        if verdict is not None and verdict.decision == "allow":
            ruling = Ruling("allow", "allowed by the rules: " + "; ".join(part.why for part in verdict.parts), "rules")
        else:
            allowed = self.approvals.allowed_by(command)
            if allowed is None:
                return Ruling("ask")
            ruling = Ruling("allow", allowed, "approval" if command in self.approvals.exact else "prefix")
        changer = _state_changed_before(command) if ruling.by != "approval" else None
        if changer is not None:  # what the rules saw is not what the later parts will run
            return Ruling("ask", f"`{changer}` can change what the commands after it run (a folder, a variable, a "
                                 "function): a rule allows it part by part, the person decides the whole")
        return ruling

    def decide(self, agent: Asks, action: Action, action_id: str, step: int, unrun: list[Action]) -> tuple[str, str]:
        """The command to run and how it was approved (recorded on its observation); a
        rejection answers `unrun` (this action and those after it) with the person's words."""
        command = action.command
        ruling = self.ruling(agent.mode, command)
        if ruling.decision == "deny":  # the rules' deny: rejected without asking, the rule said to the model
            agent.emit(ev.ActionProposed(action_id=action_id, step=step, command=command, needs_confirmation=False))
            agent.emit(ev.ActionDecided(action_id=action_id, decision="rejected", command=command, reason=ruling.reason))
            text = replies.rejected(agent.config.agent, agent.template_vars(), ruling.reason)
            raise Rejected(*replies.unanswered(unrun, step, text, MessageType.USER_MESSAGE))
        reason = ruling.reason if ruling.decision == "allow" else None
        if ruling.by in ("prefix", "rules") and self._resolve is not None:
            names = self.approvals.programs(command)
            now = self._resolve(names)
            why = changed(self.approvals.recorded(command), now) if ruling.by == "prefix" else unusual(now, names)
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


def _state_changed_before(command: str) -> str | None:
    """The first part of `command` that can change the state a later part runs in, or None."""
    parts = shell_split.split(command).top
    for part in parts[:-1]:
        if changes_state(part.words):
            return part.text
    return None
