"""What a command printed, as the output pane shows it (SPEC §11.1), apart from what the model
was sent (the observation, which the prompt inspector shows as it is).

swedeck and mini-swe-agent v2 record the output itself (`extra.raw_output`); older files
have only the observation: mini-swe-agent's `<returncode>N</returncode><output>…</output>`
wrapper is taken apart, anything else (SWE-agent's observation) is the output as it is.
"""

from __future__ import annotations

import re

import msgspec

from ..messages import Message, MessageType, task_text

_WRAPPED = re.compile(r"\A\s*<returncode>(-?\d+)</returncode>\s*<output>\n?(.*?)</output>\s*\Z", re.DOTALL)


class CommandOutput(msgspec.Struct, frozen=True):
    """A command's output as it ran (before any template wrapped it) and its exit code."""

    text: str
    returncode: int | None


def command_output(message: Message) -> CommandOutput:
    extra = message.extra
    if extra.raw_output is not None and extra.raw_output != message.text:
        return CommandOutput(extra.raw_output, extra.returncode)
    wrapped = _WRAPPED.match(message.text)
    if wrapped:
        code = extra.returncode if extra.returncode is not None else int(wrapped.group(1))
        return CommandOutput(wrapped.group(2), code)
    enveloped = _envelope(message.text)
    if enveloped is not None:
        return enveloped
    return CommandOutput(message.text, extra.returncode)


_ENVELOPE = re.compile(r'\A\{\s*"returncode":\s*-?\d+,\s*"output":')


def _envelope(text: str) -> CommandOutput | None:
    """mini-swe-agent 2.4's observation as a request carries it (a record's tool message): JSON
    `{"returncode": N, "output": "…"}` (and what went wrong, where something did), taken apart
    as its own file's `raw_output` is."""
    if not _ENVELOPE.match(text):
        return None
    import json

    try:
        value = json.loads(text)
    except ValueError:
        return None
    output, code = value.get("output"), value.get("returncode")
    if not isinstance(output, str) or not isinstance(code, int):
        return None
    return CommandOutput(output, code)


def tool_error(message: Message) -> dict[str, str | None] | None:
    """The tool's own word that its call failed, as the file recorded it: `{"type", "message"}`
    (Inspect's `ToolCallError`; Claude Code's `is_error`, type None); None when it did not say so."""
    recorded = message.extra.unknown.get("tool_error")
    if isinstance(recorded, dict):
        kind, said = recorded.get("type"), recorded.get("message")
        return {"type": kind if isinstance(kind, str) else None, "message": said if isinstance(said, str) else None}
    if isinstance(recorded, str):  # files read before the type was kept
        return {"type": None, "message": recorded}
    return None


def answer_label(message: Message) -> str:
    """What a message that answers a query is, in words: `submitted`, `format error`, `the
    person said`, `interrupted by the person`, `follow-up task`, `run ended: Submitted`,
    `tool error (permission)`."""
    kind = message.message_type
    if kind == MessageType.EXIT:
        return f"run ended: {message.extra.unknown.get('exit_status') or 'exit'}"
    error = tool_error(message)
    if error is not None:
        return "tool error" + (f" ({error['type']})" if error["type"] else "")
    if message.extra.unknown.get("is_meta"):
        return "Claude Code's note (isMeta: not the person's words)"
    context = message.extra.unknown.get("agent_context")
    if isinstance(context, str) and context:  # what the agent wrote into the conversation itself
        return f"{context} (not the person's words)"
    return str(_LABELS.get(kind, kind.value.replace("_", " ")))


def answer_text(message: Message) -> str:
    """What it says: a command's output, a follow-up task's own words (not the template around
    them), or the message as it is."""
    if message.message_type == MessageType.TASK:
        return task_text(message)
    return command_output(message).text


_LABELS = {MessageType.FINAL: "submitted", MessageType.FORMAT_ERROR: "format error",
           MessageType.USER_MESSAGE: "the person said", MessageType.INTERRUPT: "interrupted by the person",
           MessageType.TASK: "follow-up task"}
