"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): one
`{"timestamp", "type", "payload"}` per line.

`session_meta` opens the file (id, cwd, CLI version, and the base instructions where it
stores them). `response_item`s are the conversation as the model API carries it: `message`
(user, developer, assistant), `reasoning` (its summary), `function_call` /
`function_call_output`, `custom_tool_call` (`apply_patch`) / its output, `local_shell_call`.
One model call is the run of assistant-side items (message, reasoning, calls) between two
inputs: one step. The `event_msg` of type `token_count` that follows a call carries its
usage (`last_token_usage`: input tokens with the cached ones among them, output tokens) and
the context window; every other `event_msg` repeats what the items already say for the
terminal UI, and is counted, not shown. `turn_context` gives the model of the turns after
it; `compacted` is a compaction marker (its `message`, the summary). A shell call's output
is a JSON string `{"output", "metadata": {"exit_code"}}`: the output is shown, the exit
code kept. Codex's built-in system prompt and tool list are not in the file (`unknown`),
unless `session_meta` stores the base instructions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...messages import ContextInfo, MessageType
from ..coerce import mapping, optional_str
from ..model import Fidelity, Trajectory, TrajectoryFormat, TrajectoryInfo
from ..parse import loads
from . import chat
from .source import Source, sniff_lines

FORMAT: TrajectoryFormat = "codex"
_ITEM_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def accepts(source: Source) -> bool:
    if source.folder or source.data:
        return False
    first = next((record for _, record in source.json_lines(limit=3) if isinstance(record, Mapping)), None)
    return first is not None and first.get("type") in _ITEM_TYPES and isinstance(first.get("payload"), Mapping)


class _Reader:
    def __init__(self) -> None:
        self.entries: list[chat.Entry] = []
        self.tally = chat.Tally()
        self.info = TrajectoryInfo()
        self.response: list[Mapping[str, Any]] = []
        self.model: str | None = None
        self.system = False

    def flush(self) -> None:
        if not self.response:
            return
        texts, reasoning, calls = [], [], []
        for item in self.response:
            kind = item.get("type")
            if kind == "message":
                texts.append(chat.text_of(item.get("content")))
            elif kind == "reasoning":
                reasoning.append(chat.text_of(item.get("summary")) or chat.text_of(item.get("content")))
            elif kind == "function_call":
                calls.append(chat.call(str(item.get("call_id") or ""), str(item.get("name") or ""), item.get("arguments") or {}))
            elif kind == "custom_tool_call":
                calls.append(chat.call(str(item.get("call_id") or ""), str(item.get("name") or ""),
                                       {"input": item.get("input") or ""}))
            elif kind == "local_shell_call":
                action = mapping(item.get("action"))
                calls.append(chat.call(str(item.get("call_id") or item.get("id") or ""), "local_shell",
                                       {"command": action.get("command") or []}))
        self.entries.append(chat.assistant("\n".join(texts), calls, reasoning="\n".join(r for r in reasoning if r) or None,
                                           model=self.model))
        self.response = []

    def item(self, payload: Mapping[str, Any]) -> None:
        kind = payload.get("type")
        role = payload.get("role")
        if kind == "reasoning" or kind in _CALLS or (kind == "message" and role == "assistant"):
            self.response.append(payload)
            return
        self.flush()
        if kind == "message":
            text = chat.text_of(payload.get("content"))
            if role in ("developer", "system"):
                self.entries.append(chat.Entry("system", text, MessageType.SYSTEM if not self.system
                                               else MessageType.USER_MESSAGE, {"codex_role": role}))
                self.system = True
            else:
                first = not any(entry.kind == MessageType.TASK for entry in self.entries)
                self.entries.append(chat.Entry("user", text, MessageType.TASK if first else MessageType.USER_MESSAGE))
        elif kind in _OUTPUTS:
            self.entries.append(_output(payload))
        else:
            self.tally.skip(f"response_item/{kind}")

    def token_count(self, payload: Mapping[str, Any]) -> None:
        details = mapping(payload.get("info"))
        last = mapping(details.get("last_token_usage"))
        self.flush()
        target = next((entry for entry in reversed(self.entries) if entry.is_step), None)
        if target is None or not last or "usage" in target.extra:
            self.tally.skip("event_msg/token_count")
            return
        usage = chat.usage(last.get("input_tokens"), last.get("output_tokens"), last.get("cached_input_tokens"))
        if usage is not None:
            target.extra["usage"] = usage
            window = details.get("model_context_window")
            if isinstance(window, int) and window > 0:
                target.extra["context"] = ContextInfo(window=window, prompt_tokens=usage.prompt_tokens,
                                                      left_percent=round(100 * (1 - usage.prompt_tokens / window), 1))


def _output(payload: Mapping[str, Any]) -> chat.Entry:
    output = payload.get("output")
    extra: dict[str, Any] = {}
    if isinstance(output, str) and output.startswith("{"):
        try:
            parsed = loads(output)
        except ValueError:
            parsed = None
        if isinstance(parsed, Mapping) and "output" in parsed:
            metadata = mapping(parsed.get("metadata"))
            if isinstance(metadata.get("exit_code"), int):
                extra["returncode"] = metadata["exit_code"]
            if isinstance(metadata.get("duration_seconds"), int | float):
                extra["duration_s"] = float(metadata["duration_seconds"])
            output = parsed.get("output")
    text = chat.text_of(output)
    extra["raw_output"] = text
    return chat.Entry("tool", text, MessageType.OBSERVATION, extra, tool_call_id=optional_str(payload.get("call_id")))


def sniff(name: str, head: bytes, text: str) -> bool:
    """A `.jsonl` whose first whole lines this reader accepts (a folder's listing)."""
    return sniff_lines(accepts, name, text)


def read(source: Source) -> Trajectory:
    reader = _Reader()
    info = reader.info
    fidelity = Fidelity(prompt="reconstructed",
                        parts={"system prompt": "unknown", "tools": "unknown", "messages": "reconstructed"})
    for number, record in source.iter_json_lines():  # the records are not kept: what is made of them is
        if isinstance(record, ValueError):
            chat.skip_damaged(number, record, info, reader.tally)
            continue
        record = mapping(record)
        kind, payload = record.get("type"), mapping(record.get("payload"))
        if kind == "response_item":
            reader.item(payload)
        elif kind == "event_msg" and payload.get("type") == "token_count":
            reader.token_count(payload)
        elif kind == "event_msg":
            reader.tally.skip(f"event_msg/{payload.get('type')}")
        elif kind == "session_meta":
            meta = mapping(payload.get("meta")) or payload
            info.session = {key: meta.get(key) for key in ("id", "cwd", "cli_version", "originator", "model_provider")
                            if meta.get(key)}
            base = meta.get("base_instructions")
            text = chat.text_of(base) if base else ""
            if text:
                reader.entries.insert(0, chat.Entry("system", text, MessageType.SYSTEM, {"codex_role": "instructions"}))
                reader.system = True
                fidelity.parts["system prompt"] = "recorded"
        elif kind == "turn_context":
            reader.flush()
            reader.model = optional_str(payload.get("model")) or reader.model
            info.model_name = info.model_name or reader.model
        elif kind == "compacted":
            reader.flush()
            replaced = payload.get("replacement_history")
            summary = chat.text_of(payload.get("message"))
            if not summary and isinstance(replaced, list):
                summary = "\n\n".join(chat.text_of(mapping(item).get("content")) for item in replaced)
            reader.entries.append(chat.compaction(summary, source="codex compacted"))
        else:
            reader.tally.skip(kind)
    reader.flush()
    entries = reader.entries
    fidelity.skipped = reader.tally.as_dict()
    return chat.trajectory(source, FORMAT, entries, info, fidelity)
