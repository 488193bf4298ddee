"""What a step shows, as text: the model's words and what its commands printed. Pure
functions of a `StepView`; the replay panes and the exported page both show these."""

from __future__ import annotations

from ..messages import Message, last_task
from ..trajectory.output import answer_label, answer_text, command_output, tool_error
from .document import StepView


def opening(view: StepView, messages_before: list[Message]) -> str:
    """What the run was asked, shown at the top of step 1 as the peers' viewers show it
    (mini-swe-agent's inspector and SWE-agent's show the task first); "" for a later step."""
    if view.number != 1:
        return ""
    task = last_task(messages_before)
    return f"task: {task}\n\n" if task else ""


def model_text(view: StepView) -> str:
    """What the model said: its reasoning and its words. Its tool calls are the step's
    command blocks (`view.actions`), shown once, below."""
    parts = []
    if view.assistant.extra.reasoning:
        parts.append(f"(reasoning) {view.assistant.extra.reasoning}")
    parts.append(view.assistant.text)
    return "\n".join(part for part in parts if part)


def command_lines(view: StepView) -> str:
    """The step's commands, one `$ command` line each, as the replay and the diff show them."""
    return "\n".join(f"$ {action.command}" for action in view.actions) or "(no command)"


def output_text(view: StepView) -> str:
    """What each command printed, with its exit code (the model's view of it is `t`)."""
    chunks = []
    for message in view.observations:
        output = command_output(message)
        status = f"exit {output.returncode}" if output.returncode is not None else answer_label(message)
        if output.returncode is not None and tool_error(message) is not None:
            status += f" · {answer_label(message)}"
        if message.extra.duration_s is not None:
            status += f" · {message.extra.duration_s:.2f} s"
        chunks.append(f"── {status} ──\n{answer_text(message)}")
    return "\n".join(chunks) or "(no output)"
