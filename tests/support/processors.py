"""Small histories for the history-processor tests (SPEC §7)."""

from __future__ import annotations

import json
from typing import Any

from swedeck.core.messages import Action, FunctionCall, Message, MessageExtra, MessageType, Role, ToolCall


def msg(role: Role, content: str | None, kind: MessageType, **extra: Any) -> Message:
    fields = {key: extra.pop(key) for key in ("tool_calls", "tool_call_id") if key in extra}
    return Message(role=role, content=content, extra=MessageExtra.from_record({"message_type": kind, **extra}), **fields)


def system(text: str = "You are a helpful agent.") -> Message:
    return msg("system", text, MessageType.SYSTEM)


def task(text: str = "Fix the bug.") -> Message:
    return msg("user", text, MessageType.TASK)


def action(command: str = "ls", call_id: str | None = None, function: str = "bash") -> Message:
    if call_id is None:
        return msg("assistant", f"```bash\n{command}\n```", MessageType.ACTION, actions=(Action(command=command),))
    call = ToolCall(id=call_id, function=FunctionCall(name=function, arguments=json.dumps({"command": command})))
    return msg("assistant", "", MessageType.ACTION, tool_calls=(call,),
               actions=(Action(command=command, tool_call_id=call_id),))


def observation(text: str = "out", call_id: str | None = None, tags: tuple[str, ...] = ()) -> Message:
    role: Role = "tool" if call_id else "user"
    return msg(role, text, MessageType.OBSERVATION, tool_call_id=call_id, tags=tags)


def steps(count: int, lines: int = 3) -> list[Message]:
    """system, task, then `count` (action, observation) pairs with `lines`-line outputs."""
    history = [system(), task()]
    for i in range(count):
        history += [action(f"cmd{i}"), observation("\n".join(f"line {k} of {i}" for k in range(lines)))]
    return history


def contents(messages: list[Message]) -> list[Any]:
    return [m.content for m in messages]
