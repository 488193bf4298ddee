"""`summarize`: compaction by a summary the model writes (SPEC §17; `agent/compaction.py`).

Unlike the other processors it cannot work on a prompt alone: a summary is a model's answer,
so it is made once, by the agent, and recorded in the history (a `compaction` message with
the summary, the messages it replaces, the model and the token figures). Every prompt build
applies the recorded compactions first (`trajectory.compaction.compacted`), so this
processor's own call changes nothing: it holds when to compact and how.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..messages import Message
from .base import Processor, label

DEFAULT_PROMPT = """\
You are summarizing part of a coding agent's session so that the agent can go on without it.
Write a concise summary of the conversation below: what was found, what was changed (files,
functions, commands), what failed and why, and what was about to be done next. Keep exact
file paths, names, error messages and numbers. Do not run commands; answer with the summary only.

The task:
{{ task }}

The conversation to summarize ({{ count }} messages):
{{ conversation }}
"""

SUMMARY_TEMPLATE = """\
The earlier part of this session ({{ count }} messages) was compacted into this summary:

{{ summary }}"""


class Summarize(Processor):
    """When the next prompt reaches `at` of the context window (or on request), the model
    (or `model`) summarizes the history before the last `keep_last` steps; the prompt then
    becomes system + task + summary + those steps. A step's tool calls and their results are
    never split. Recorded, so every rebuild of a prompt is the one that was sent."""

    type: Literal["summarize"] = "summarize"
    at: float = Field(default=0.8, gt=0, le=1)
    """Compact when the next prompt reaches this share of the context window."""
    keep_last: int = Field(default=2, ge=0)
    """Steps (a model answer and its command output) kept word for word."""
    model: str | None = None
    """The litellm model that writes the summary (none: the agent's own)."""
    prompt: str = DEFAULT_PROMPT
    """The summary request (Jinja: `task`, `conversation`, `count`)."""
    max_tokens: int = Field(default=2000, gt=0)
    """The longest summary asked for."""
    ledger: bool = True
    """Keep, after the summary and word for word, what the replaced part touched: files, commands
    and their exit status, failing tests, errors, the person's words (`trajectory/ledger.py`)."""
    ledger_max_tokens: int = Field(default=1000, gt=0)
    """The longest ledger; past it the oldest entries go (commands and words before paths and tests)."""

    def label(self) -> str:
        """`summarize(at=0.8, keep_last=2)`: the prompt is too long to name."""
        return label(self.type, {"at": self.at, "keep_last": self.keep_last, "model": self.model})

    def __call__(self, history: list[Message]) -> list[Message]:
        return list(history)  # the recorded compactions are applied before any processor runs
