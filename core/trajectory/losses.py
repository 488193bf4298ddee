"""What each compaction lost (SPEC §17, issue 48), in every format swedeck reads: of what the
replaced part touched (its ledger: paths, commands, failing tests, errors, the person's words),
how much is still in what the model saw next, word for word.

The replaced part is what the model saw just before the compaction and not just after it
(`compaction.sendable` on each side: swedeck's `replaces`, another format's `forgotten`, or
everything before the marker but the first system message). An item survives when its words
are in what the model saw after it: in the summary, a kept message, or swedeck's ledger.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..messages import Message
from ..tokens import count_messages
from .compaction import is_compaction, label, sendable, undone
from .ledger import ledger_of

KINDS = ("paths", "commands", "failing tests", "errors", "the person's words")
_UNBOUNDED = 10 ** 9


def compaction_losses(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """For each compaction in effect: where it is, its figures, and per kind [in the replaced
    part, still seen after it]."""
    taken_back = undone(messages)
    return [loss_at(messages, position) for position, marker in enumerate(messages)
            if is_compaction(marker) and marker.extra.undoes is None and position not in taken_back]


def loss_at(messages: Sequence[Message], position: int) -> dict[str, Any]:
    """The loss report of the compaction at `position` (only the messages up to it are read)."""
    upto = list(messages[: position + 1])  # one list of them: a lazy list builds a message again once
    marker = upto[position]                 # out of its cache, a new object, and they are told apart by identity
    before = sendable(upto[:position])
    after = sendable(upto)
    still = {id(message) for message in after}
    replaced = [message for message in before if id(message) not in still]
    found = ledger_of(replaced, _UNBOUNDED)
    seen = "\n".join(message.text for message in after)
    items = {"paths": found.files, "commands": [_command(item) for item in found.commands],
             "failing tests": found.failing_tests, "errors": [_error(item) for item in found.errors],
             "the person's words": found.words}
    return {
        "position": position, "label": label(marker), "replaced_messages": len(replaced),
        "tokens_before": marker.extra.tokens_before or (count_messages(before) if before else 0),
        "tokens_after": marker.extra.tokens_after or (count_messages(after) if after else 0),
        "kinds": {kind: [len(values), sum(1 for value in values if value and value in seen)]
                  for kind, values in items.items()},
    }


SHORT = {"paths": "paths", "commands": "commands", "failing tests": "tests", "errors": "errors",
         "the person's words": "person's words"}


def kept_text(report: dict[str, Any]) -> str:
    """`kept: paths 12/12 · commands 28/30 · tests 3/3` (the kinds the replaced part had), or ""."""
    kinds = [f"{SHORT.get(kind, kind)} {kept}/{total}" for kind, (total, kept) in report["kinds"].items() if total]
    return "kept: " + " · ".join(kinds) if kinds else ""


def losses_line(report: dict[str, Any]) -> str:
    """`compaction at message 40 (compacted: 9,000 -> 1,200): paths 12/12 kept, commands 28/30, …`"""
    kinds = ", ".join(f"{kind} {kept}/{total}" for kind, (total, kept) in report["kinds"].items() if total)
    return f"compaction at message {report['position']} ({report['label']}): " + (
        f"{kinds} still seen after it" if kinds else "its replaced part touched nothing the ledger names")


def _command(entry: str) -> str:
    """`cat x` (exit 0) -> cat x: what must still be seen is the command itself."""
    return entry[1: entry.rfind("`")] if entry.startswith("`") else entry


def _error(entry: str) -> str:
    """`cmd`: the error line -> the error line."""
    return entry.split("`: ", 1)[1] if "`: " in entry else entry
