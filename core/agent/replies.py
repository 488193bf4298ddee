"""The messages the agent adds in answer to a model's response (SPEC §6.2, §6.3).

Every tool call gets its result before the next query (providers refuse a prompt with an
unanswered call): a command that ran gets its observation, one that will not run (rejected,
interrupted, after a submission, a format error) gets the reason. Texts come from the
agent's templates (`agent.*_template`), so a config can word them for its model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config import AgentConfig
from ..environments.base import ExecutionResult
from ..messages import Action, Message, MessageType, Role, make_message
from .templates import render


def unanswered(actions: list[Action], step: int, text: str, message_type: MessageType) -> list[Message]:
    """Answers for `actions` that will not run: one per tool call, or one user message for
    fenced commands (which have no ids to answer)."""
    replies = [make_message("tool", text, message_type, tool_call_id=action.tool_call_id, step=step)
               for action in actions if action.tool_call_id]
    if actions and not replies:
        replies.append(make_message("user", text, message_type, step=step))
    return replies


def dangling(history: list[Message], text: Callable[[], str]) -> list[Message]:
    """Answers for the tool calls in `history` that never got a result; `text()` is rendered
    only when there is one (its template variables cost a round trip to the shell)."""
    answered = {message.tool_call_id for message in history if message.role == "tool"}
    open_calls = [(call.id, message.extra.step) for message in history for call in message.tool_calls or ()
                  if call.id not in answered]
    if not open_calls:
        return []
    said = text()
    return [make_message("tool", said, MessageType.OBSERVATION, tool_call_id=call_id, step=step)
            for call_id, step in open_calls]


def not_run(config: AgentConfig, variables: dict[str, Any], reason: str) -> str:
    return render("not_run_template", config.not_run_template, {**variables, "reason": reason})


def rejected(config: AgentConfig, variables: dict[str, Any], comment: str) -> str:
    return render("rejected_template", config.rejected_template, {**variables, "comment": comment})


def observation(config: AgentConfig, variables: dict[str, Any], action: Action, command: str,
                result: ExecutionResult, step: int, turn: int, mode: str) -> Message:
    text = render("observation_template", config.observation_template,
                  {**variables, **result.template_vars(), "command": command})
    role: Role = "tool" if action.tool_call_id else "user"
    return make_message(role, text, MessageType.OBSERVATION, tool_call_id=action.tool_call_id, step=step, turn=turn,
                        mode=mode, command=command, **result.message_extra())


def format_error(config: AgentConfig, variables: dict[str, Any], response: Message, error: str,
                 step: int) -> list[Message]:
    """The error, once per tool call of the malformed response (or once, as the user)."""
    text = render("format_error_template", config.format_error_template, {**variables, "error": error})
    if response.tool_calls:
        return [make_message("tool", text, MessageType.FORMAT_ERROR, tool_call_id=call.id, step=step)
                for call in response.tool_calls]
    return [make_message("user", text, MessageType.FORMAT_ERROR, step=step)]


def submission(output: str) -> str:
    """What a submitting command printed after the marker line."""
    return "".join(output.lstrip().splitlines(keepends=True)[1:])
