"""An agent's own session file joined with the record of the same run (SPEC §18).

`swedeck record` notes, for each agent session id it saw in the requests (Claude Code's
`X-Claude-Code-Session-Id` and `metadata.user_id`, Codex's `session_id` header and
`prompt_cache_key`), where the record is: one line per record in `records.jsonl` in swedeck's
data folder. Reading a Claude Code or Codex file, `join` looks its session id up there and,
where the record is found, gives each of the file's steps whose answer is one of the record's
main steps (the same tool call ids, else the same words) the recorded request as its prompt.
The fidelity panel says which record, and how many steps matched.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import paths
from ..messages import Message
from .model import Trajectory
from .wire_request import agreement, wire_request

SESSION_HEADERS = ("x-claude-code-session-id", "session_id", "session-id", "conversation_id", "x-session-id")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def index_path() -> Path:
    return paths.user_data_dir() / "records.jsonl"


def agent_sessions(headers: Mapping[str, str], body: Any) -> set[str]:
    """The agent's session ids a request names."""
    found = {value for key, value in headers.items() if key.lower() in SESSION_HEADERS and _UUID.fullmatch(value)}
    if isinstance(body, Mapping):
        key = body.get("prompt_cache_key")
        if isinstance(key, str) and _UUID.fullmatch(key):
            found.add(key)
        metadata = body.get("metadata")
        user = metadata.get("user_id") if isinstance(metadata, Mapping) else None
        if isinstance(user, str) and "session_id" in user:  # Claude Code: a JSON text naming the session
            found.update(_UUID.findall(user.split("session_id", 1)[1])[:1])
    return found


def note_record(path: Path, sessions: Iterable[str]) -> None:
    """Add the record to the index (a line per record; a later line wins for a session)."""
    sessions = sorted(set(sessions))
    if not sessions:
        return
    index = index_path()
    index.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(index, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # the person's alone
    os.fchmod(descriptor, 0o600)  # an index made before this held its mode
    with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"record": str(path.resolve()), "sessions": sessions}) + "\n")


def find_record(session: str) -> Path | None:
    """The last record that saw this agent session, if it is still there."""
    index = index_path()
    try:
        lines = index.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and session in (entry.get("sessions") or []):
            path = Path(str(entry.get("record")))
            return path if path.exists() else None
    return None


def record_of(trajectory: Trajectory) -> Path | None:
    """The record `swedeck record` made of the run in a Claude Code or Codex file, if any."""
    session = trajectory.info.session.get("sessionId") or trajectory.info.session.get("id")
    return find_record(session) if isinstance(session, str) and session else None


def join(trajectory: Trajectory, load: Callable[[Path], Trajectory]) -> None:
    """Give a Claude Code or Codex file's steps the recorded requests of the same run, where
    `swedeck record` recorded it (in place: `recorded_prompts`, the steps' provenance, a note).
    `load` reads the record (the loader passes itself)."""
    path = record_of(trajectory)
    if path is None:
        return
    try:
        record = load(path)
    except Exception:  # noqa: BLE001 - a record that no longer reads joins nothing; the file still opens
        return
    by_answer: dict[str, int] = {}
    for step in record.steps:
        by_answer.setdefault(_answer_key(record.messages[step.message_index]), step.index)
    prompts = dict(trajectory.recorded_prompts)
    matched = 0
    for step in trajectory.steps:
        number = by_answer.get(_answer_key(trajectory.messages[step.message_index]))
        if number is not None and number in record.recorded_prompts and _same_request(
                _said_before(trajectory.messages, step.message_index), record.recorded_prompts[number]):
            prompts[step.index] = record.recorded_prompts[number]
            matched += 1
            _compare(trajectory, step.index, record, number)
    if not matched:
        return
    trajectory.recorded_prompts = prompts
    if trajectory.fidelity is not None:
        trajectory.fidelity.notes.append(f"joined with the record {path}: {matched} of {len(trajectory.steps)} "
                                         "steps' requests recorded by swedeck record")
        if matched == len(trajectory.steps):
            trajectory.fidelity.prompt = "recorded"
            trajectory.fidelity.parts.update({"system prompt": "recorded", "tools": "recorded",
                                              "messages": "recorded"})


def _compare(trajectory: Trajectory, step: int, record: Trajectory, number: int) -> None:
    """Where the file rebuilds the step's request from the agent's own records, how that agrees
    with the request the record holds (`Trajectory.wire_agreement`)."""
    rebuilt = trajectory.rebuilt_requests.get(step)
    sent = wire_request(record, number)
    if rebuilt is not None and sent is not None and isinstance(sent.body, Mapping):
        trajectory.wire_agreement[step] = agreement(rebuilt, sent.body)


def _said_before(messages: Sequence[Message], index: int) -> Message | None:
    """The message before message `index` that is not the agent's own context (Claude Code's
    attachments, Codex's environment context): what the person or a tool said last."""
    for position in range(index - 1, -1, -1):
        unknown = messages[position].extra.unknown
        if not unknown.get("agent_context") and not unknown.get("is_meta"):
            return messages[position]
    return None


def _same_request(before: Message | None, request: Sequence[Message]) -> bool:
    """Whether the recorded request is the one the file's step answered: what it added since its
    last answer holds what the file's message before the step says (a foreign file that names a
    recorded session and repeats an answer's words is not given the person's request)."""
    if before is None or not request:
        return False
    said = before.text.strip()
    answered = max((index for index, message in enumerate(request) if message.role == "assistant"), default=-1)
    news = [message.text.strip() for message in request[answered + 1:]]  # what the request added since its last answer
    return bool(said) and any(text and (said in text or text in said) for text in news)


def _answer_key(message: Message) -> str:
    calls = [call.id for call in message.tool_calls or ()]
    return "calls:" + ",".join(calls) if calls else "text:" + message.text.strip()
