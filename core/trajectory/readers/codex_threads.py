"""Codex's thread history (`$CODEX_HOME/thread_history_1.sqlite`, Codex 0.171): the threads as
Codex's own app shows them, kept beside the rollouts (and, after a migration that lost a
rollout file, the only copy of a thread's conversation). Opened read-only with the standard
library's `sqlite3`; each thread is a run of the file (`PATH#N`, oldest first).

Its `thread_items` are the app's items, not the model's messages: the person's messages
(`userMessage`), the model's (`agentMessage`), the commands it ran (`commandExecution`, with
their exit code and output), and others, counted. So the steps are the model's answers, each
with the commands that ran after it; what the model was sent (the system prompt, the tools,
the developer messages, the usage) is not there: `reconstructed`, and `unknown` for those.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...messages import MessageType
from ..coerce import mapping
from ..model import Fidelity, Trajectory, TrajectoryFormat, TrajectoryInfo
from . import chat
from .source import Source

FORMAT: TrajectoryFormat = "codex-threads"
MAGIC = b"SQLite format 3\x00"
MAX_ITEMS = 1_000_000
"""More items than this in one thread is not read (a database built to exhaust the reader)."""


def accepts(source: Source) -> bool:
    if source.folder or not bytes(source.data[:16]) == MAGIC:
        return False
    try:
        with _open(source.path) as database:
            return database.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'thread_items'"
                                    ).fetchone() is not None
    except sqlite3.Error:
        return False


def sniff(name: str, head: bytes, text: str) -> bool:
    return name.startswith("thread_history") and name.endswith(".sqlite") and head.startswith(MAGIC)


def _open(path: Path) -> sqlite3.Connection:
    """The database read-only (never a write, never a journal of ours, whatever Codex is doing)."""
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)


def read(source: Source) -> Trajectory:
    with _open(source.path) as database:
        threads = [row[0] for row in database.execute(
            "SELECT thread_id FROM thread_items GROUP BY thread_id ORDER BY MIN(created_at_ms), thread_id")]
        if not 1 <= source.unit <= len(threads):
            raise ValueError(f"#{source.unit}: the history holds {len(threads)} threads" if threads
                             else "the history holds no thread")
        thread = threads[source.unit - 1]
        rows = database.execute("SELECT item_type, item_json FROM thread_items WHERE thread_id = ? "
                                "ORDER BY rollout_ordinal, created_at_ms LIMIT ?", (thread, MAX_ITEMS + 1)).fetchall()
        rollout = _rollout_of(source.path, thread)
    if len(rows) > MAX_ITEMS:
        raise ValueError(f"thread {thread}: more than {MAX_ITEMS:,} items")
    tally = chat.Tally()
    entries: list[chat.Entry] = []
    task = False
    for kind, text in rows:
        try:
            item = mapping(json.loads(text))
        except ValueError:
            tally.skip(f"{kind} (damaged)")
            continue
        if kind == "userMessage":
            said = chat.text_of([part for part in item.get("content") or [] if isinstance(part, Mapping)])
            entries.append(chat.Entry("user", said, MessageType.USER_MESSAGE if task else MessageType.TASK))
            task = True
        elif kind == "agentMessage":
            entries.append(chat.assistant(str(item.get("text") or "")))
        elif kind == "commandExecution":
            _command(entries, item)
        else:
            tally.skip(kind, "an item of Codex's app that is not a message or a command")
    info = TrajectoryInfo(session={"id": thread, **({"rollout": str(rollout)} if rollout else {})})
    fidelity = Fidelity(prompt="reconstructed", parts={"system prompt": "unknown", "tools": "unknown",
                                                       "messages": "reconstructed"}, units=len(threads), unit=source.unit)
    fidelity.notes.append("Codex's thread history: the conversation as its app shows it (the person's and the model's "
                          "messages, the commands run); not what the model was sent, and no usage")
    if rollout is not None:
        fidelity.notes.append(f"the thread's rollout: {rollout}" + ("" if rollout.exists() else
                              " (no longer there: this history is the only copy)"))
    tally.said(fidelity)
    return chat.trajectory(source, FORMAT, entries, info, fidelity)


def _command(entries: list[chat.Entry], item: Mapping[str, Any]) -> None:
    """A command the model had run: an action of its latest answer, and its output."""
    actions = [mapping(action).get("command") for action in item.get("commandActions") or []]
    command = " && ".join(str(action) for action in actions if action) or str(item.get("command") or "")
    if not entries or entries[-1].role != "assistant" and entries[-1].kind != MessageType.OBSERVATION:
        entries.append(chat.assistant(""))  # a command with no answer before it: an answer of no words
    answer = next(entry for entry in reversed(entries) if entry.role == "assistant")
    call_id = str(item.get("id") or f"command_{len(entries)}")
    tool_call, action = chat.call(call_id, "exec_command", {"cmd": command})
    answer.kind = MessageType.ACTION
    answer.tool_calls = [*(answer.tool_calls or []), tool_call]
    answer.extra["actions"] = (*answer.extra.get("actions", ()), action)
    extra: dict[str, Any] = {}
    if isinstance(item.get("exitCode"), int):
        extra["returncode"] = item["exitCode"]
    output = str(item.get("aggregatedOutput") or "")
    entries.append(chat.Entry("tool", output, MessageType.OBSERVATION, {**extra, "raw_output": output},
                              tool_call_id=call_id))


def _rollout_of(path: Path, thread: str) -> Path | None:
    """The thread's rollout file, as Codex's state database beside the history names it."""
    state = next(iter(sorted(path.parent.glob("state_*.sqlite"))), None)
    if state is None:
        return None
    try:
        with _open(state) as database:
            row = database.execute("SELECT rollout_path FROM threads WHERE id = ?", (thread,)).fetchone()
    except sqlite3.Error:
        return None
    return Path(row[0]) if row and row[0] else None


def projection(rollout: Path, thread: str) -> tuple[int, int] | None:
    """How far Codex's thread history says the thread's rollout reached (its next byte offset and
    ordinal), from the history beside the rollout's sessions folder; None where there is none."""
    parents = rollout.parents
    if len(parents) < 5 or parents[3].name not in ("sessions", "archived_sessions"):
        return None
    history = parents[4] / "thread_history_1.sqlite"
    if not history.is_file():
        return None
    try:
        with _open(history) as database:
            row = database.execute("SELECT next_rollout_byte_offset, next_rollout_ordinal FROM "
                                   "thread_history_projection_state WHERE thread_id = ?", (thread,)).fetchone()
    except sqlite3.Error:
        return None
    return (int(row[0]), int(row[1])) if row else None
