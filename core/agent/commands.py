"""Running a step's commands (SPEC §6.2, §6.5): each action passes the gate, runs in the
environment, and is answered by its observation; a submission or an interrupt ends the step
and answers the actions that did not run. Human mode runs the person's command the same way.
"""

from __future__ import annotations

from dataclasses import replace

from .. import events as ev
from ..environments.base import ExecutionResult
from ..errors import SwedeckError
from ..exit_status import ExitStatus
from ..messages import Action, Message, MessageType, make_message
from ..redact import mask_shapes
from . import replies
from .exits import Interrupted, SessionEnd, Submitted
from .seams import Runs

SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def run_actions(agent: Runs, actions: list[Action], step: int) -> None:
    for position, action in enumerate(actions):
        action_id = f"{step}.{position}"
        try:
            command, approval = agent.gate.decide(agent, action, action_id, step, unrun=actions[position:])
        except Interrupted:
            raise Interrupted(*_not_run(agent, actions[position:], step, "the user interrupted.")) from None
        result = execute(agent, command, action_id)
        observation = _observation(agent, action, command, result, step).with_extra(approval=approval)
        rest = actions[position + 1:]
        if result.returncode == 0 and result.output.lstrip().startswith(SUBMIT_MARKER):
            submission = replies.submission(result.output)
            warning = masked_warning(result.secrets_masked)
            # A record of the submission, not a model query: `user`, as mini-swe-agent's final
            # output is, so no viewer counts it as a step (SPEC §9.3).
            final = make_message("user", submission, MessageType.FINAL, step=step, turn=agent.turn,
                                 **({"warning": warning} if warning else {}))
            raise Submitted(submission, observation, *_not_run(agent, rest, step, "the task was submitted."), final,
                            warning=warning)
        agent.transcript.add(observation)
        if result.interrupted:
            raise Interrupted(*_not_run(agent, rest, step, "the user interrupted."))


def masked_warning(count: int) -> str:
    """What a submission says when the environment masked secrets in it (SPEC §9.4): it is then
    not byte for byte what the command printed, and a patch may not apply."""
    if not count:
        return ""
    what = "a secret value" if count == 1 else f"{count} secret values"
    return (f"the submission held {what} of yours (from the environment or the config), written as "
            "*** : it is not exactly what the command printed, and a patch may not apply")


def _not_run(agent: Runs, actions: list[Action], step: int, reason: str) -> list[Message]:
    if not actions:  # nothing to answer: no template to render (its variables ask the shell for its cwd)
        return []
    text = replies.not_run(agent.config.agent, agent.template_vars(), reason)
    return replies.unanswered(actions, step, text, MessageType.OBSERVATION)


def execute(agent: Runs, command: str, action_id: str) -> ExecutionResult:
    agent.control.check_interrupt()
    agent.control.set_state(ev.AgentState.RUNNING, command)
    agent.emit(ev.CommandStarted(action_id=action_id, command=command))
    try:
        result = agent.env.execute(command, on_output=lambda text: agent.emit(ev.CommandOutput(action_id, text)))
    except SwedeckError as exc:
        raise SessionEnd(ExitStatus.ENVIRONMENT_ERROR, str(exc)) from None
    if result.interrupted:
        agent.control.clear_interrupt()
    shown = replace(result, output=mask_shapes(result.output))  # token shapes masked, as in the trajectory
    agent.emit(ev.CommandFinished(action_id=action_id, command=command, result=shown))
    agent.control.check_quit()
    return result


def _observation(agent: Runs, action: Action, command: str, result: ExecutionResult, step: int) -> Message:
    return replies.observation(agent.config.agent, agent.template_vars(), action, command, result, step, agent.turn,
                               agent.mode)


def human_step(agent: Runs) -> None:
    """Human mode: the person's command runs as it is, and its output is the observation."""
    agent.control.set_state(ev.AgentState.AWAITING_INPUT, "human mode")
    command = agent.person.ask_text("human_command", "Command to run (human mode):")
    if not command or agent.mode != "human":
        return
    agent.transcript.add(make_message("user", command, MessageType.USER_MESSAGE, turn=agent.turn, mode="human",
                                     command=command))
    action_id = f"human.{len(agent.history)}"
    agent.emit(ev.ActionProposed(action_id=action_id, step=agent.step, command=command, needs_confirmation=False))
    result = execute(agent, command, action_id)
    agent.transcript.add(_observation(agent, Action(command=command), command, result, agent.step))
    agent.control.clear_interrupt()
    agent.update_context()
