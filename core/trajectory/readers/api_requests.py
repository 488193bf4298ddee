"""The requests an agent sends its provider, read as swedeck's messages: Anthropic Messages,
OpenAI Chat Completions and OpenAI Responses bodies (`prompt_entries`). Shared by the readers of
`swedeck record`'s records (a step's prompt is its request) and of Claude Code's own
`api-request` records, and by the recorder (`record/`), which imports it from here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from ...messages import Message, MessageType
from ..coerce import mapping, optional_str
from ..model import Branch, Fidelity, MetaEvent
from . import chat

Wire = Literal["anthropic", "chat", "responses", "raw"]
EXCHANGE = "exchange"
"""The meta event of one request and its answer in a record (`record.recorder`)."""


# --- requests ----------------------------------------------------------------------------


def prompt_entries(wire: Wire, body: Mapping[str, Any]) -> list[chat.Entry]:
    """The request's messages as swedeck's (system, the person's words, answers, tool results)."""
    if wire == "anthropic":
        return _anthropic_prompt(body)
    if wire == "chat":
        return _chat_prompt(body)
    if wire == "responses":
        return _responses_prompt(body)
    return []


def tools_of(wire: Wire, body: Mapping[str, Any]) -> list[str]:
    """The names of the tools the request offers the model."""
    names = []
    for tool in body.get("tools") or []:
        tool = mapping(tool)
        name = tool.get("name") or mapping(tool.get("function")).get("name") or tool.get("type")
        if name:
            names.append(str(name))
    return names


def _anthropic_prompt(body: Mapping[str, Any]) -> list[chat.Entry]:
    entries = []
    system = body.get("system")
    if system:
        entries.append(chat.Entry("system", chat.text_of(system), MessageType.SYSTEM))
    for message in body.get("messages") or []:
        message = mapping(message)
        content = message.get("content")
        if message.get("role") == "assistant":
            entries.append(_anthropic_answer_entry(content if isinstance(content, list) else [content]))
            continue
        if message.get("role") == "system":  # a system turn in the conversation (Claude Code's environment)
            entries.append(chat.Entry("system", chat.text_of(content), MessageType.SYSTEM))
            continue
        blocks = content if isinstance(content, list) else [content]
        texts = []
        for block in blocks:
            block = {"type": "text", "text": block} if isinstance(block, str) else mapping(block)
            if block.get("type") == "tool_result":
                text = chat.text_of(block.get("content"))
                extra: dict[str, Any] = {"raw_output": text}
                if block.get("is_error"):
                    extra["tool_error"] = {"type": None, "message": text}
                entries.append(chat.Entry("tool", text, MessageType.OBSERVATION, extra,
                                          tool_call_id=optional_str(block.get("tool_use_id"))))
            elif block.get("type") == "text":
                texts.append(str(block.get("text") or ""))
            else:
                texts.append(f"[{block.get('type')}]")
        if texts:
            entries.append(_person("\n".join(texts), entries))
    return entries


def _anthropic_answer_entry(blocks: list[Any], **extra: Any) -> chat.Entry:
    texts, thinking, calls = [], [], []
    for block in blocks:
        block = {"type": "text", "text": block} if isinstance(block, str) else mapping(block)
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind in ("thinking", "redacted_thinking"):
            thinking.append(str(block.get("thinking") or "[redacted thinking]"))
        elif kind in ("tool_use", "server_tool_use"):
            calls.append(chat.call(str(block.get("id") or ""), str(block.get("name") or ""), block.get("input") or {}))
    return chat.assistant("\n".join(texts), calls, reasoning="\n".join(thinking) or None, **extra)


def _chat_prompt(body: Mapping[str, Any]) -> list[chat.Entry]:
    entries = []
    for message in body.get("messages") or []:
        message = mapping(message)
        role = str(message.get("role") or "user")
        content = message.get("content")
        if role in ("system", "developer"):
            entries.append(chat.Entry("system", chat.text_of(content), MessageType.SYSTEM))
        elif role == "assistant":
            calls = [chat.call(str(call.get("id") or ""), str(mapping(call.get("function")).get("name") or ""),
                               mapping(call.get("function")).get("arguments") or "")
                     for call in map(mapping, message.get("tool_calls") or [])]
            entries.append(chat.assistant(chat.text_of(content), calls,
                                          reasoning=optional_str(message.get("reasoning_content"))))
        elif role == "tool":
            text = chat.text_of(content)
            entries.append(chat.Entry("tool", text, MessageType.OBSERVATION, {"raw_output": text},
                                      tool_call_id=optional_str(message.get("tool_call_id"))))
        else:
            entries.append(_person(chat.text_of(content), entries))
    return entries


def _responses_prompt(body: Mapping[str, Any]) -> list[chat.Entry]:
    entries = []
    if body.get("instructions"):
        entries.append(chat.Entry("system", chat.text_of(body.get("instructions")), MessageType.SYSTEM))
    items = body.get("input")
    if isinstance(items, str):
        return [*entries, _person(items, entries)]
    said: list[str] = []  # an answer's words and calls, until what follows it closes it
    calls: list[Any] = []

    def close_answer() -> None:
        if said or calls:
            entries.append(chat.assistant("\n".join(said), list(calls)))
            said.clear()
            calls.clear()
    for item in items if isinstance(items, list) else []:
        item = mapping(item)
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            role = str(item.get("role") or "user")
            text = chat.text_of(item.get("content"))
            if role == "assistant":
                if calls:  # words after calls: a new answer
                    close_answer()
                said.append(text)
                continue
            close_answer()
            if role in ("system", "developer"):
                entries.append(chat.Entry("system", text, MessageType.SYSTEM))
            else:
                entries.append(_person(text, entries))
        elif kind == "agent_message":  # another agent's words (Codex: a sub-agent's task from its parent)
            close_answer()
            entries.append(_person(agent_words(item), entries))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            arguments = item.get("arguments", item.get("input", item.get("action")))
            calls.append(chat.call(str(item.get("call_id") or item.get("id") or ""), str(item.get("name") or kind),
                                   arguments if arguments is not None else ""))
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            close_answer()
            text = chat.text_of(item.get("output"))
            entries.append(chat.Entry("tool", text, MessageType.OBSERVATION, {"raw_output": text},
                                      tool_call_id=optional_str(item.get("call_id"))))
    close_answer()
    return entries


def agent_words(item: Mapping[str, Any]) -> str:
    """A Codex `agent_message` as the model was given it: its text parts, and its
    `encrypted_content` as written (Codex passes it through: ciphertext from a real model, words
    from a scripted one)."""
    parts = []
    for part in item.get("content") or []:
        part = mapping(part)
        if part.get("type") == "encrypted_content":
            parts.append(f"[encrypted] {part.get('encrypted_content') or ''}".rstrip())
        else:
            parts.append(chat.text_of(part.get("text")))
    return "".join(parts)


def _person(text: str, entries: list[chat.Entry]) -> chat.Entry:
    """The person's (or the agent's harness's) words: the first is the task."""
    first = not any(entry.kind == MessageType.TASK for entry in entries)
    return chat.Entry("user", text, MessageType.TASK if first else MessageType.USER_MESSAGE)



def recorded_prompts(events: Sequence[MetaEvent]) -> dict[int, list[Message]]:
    """Each main step's prompt in a record: the request itself, from its `exchange` events."""
    prompts: dict[int, list[Message]] = {}
    for event in events:
        if event.event != EXCHANGE or not isinstance(event.data.get("step"), int):
            continue
        request = event.data.get("request")
        wire = event.data.get("wire")
        if isinstance(request, Mapping) and wire in ("anthropic", "chat", "responses"):
            prompts[event.data["step"]] = [entry.build() for entry in prompt_entries(wire, request)]
    return prompts


def answer_entry(answer: Mapping[str, Any], usage: Mapping[str, Any] | None) -> chat.Entry:
    """A recorded answer (`exchange.answer`, `exchange.usage`) as the step's message."""
    calls = [chat.call(str(call.get("id") or ""), str(call.get("name") or ""), call.get("arguments") or "")
             for call in map(mapping, answer.get("calls") or [])]
    usage = usage or {}
    return chat.assistant(str(answer.get("text") or ""), calls, reasoning=optional_str(answer.get("thinking")) or None,
                          usage=chat.usage(usage.get("prompt"), usage.get("output"), usage.get("cached", 0),
                                           usage.get("cache_creation", 0), usage.get("reasoning", 0)),
                          finish_reason=optional_str(answer.get("stop")), model=optional_str(answer.get("model")))


def side_calls(events: Sequence[MetaEvent]) -> list[MetaEvent]:
    """A record's calls beside its main conversation (a title, a summary, a subagent, another
    model) that had an answer: each opens as a branch (`PATH#side-N`, N its exchange number)."""
    promoted = {event.data.get("number") for event in events if event.event == EXCHANGE and event.data.get("promoted")}
    return [event for event in events if event.event == EXCHANGE and str(event.data.get("line", "")).endswith(" side")
            and event.data.get("status") == 200 and isinstance(event.data.get("request"), Mapping)
            and event.data.get("number") not in promoted]


SUBAGENT_RUN = "subagent run "
"""How a record labels a subagent's run among its branches (`PATH#subagent-ID` opens it)."""


def subagent_calls(events: Sequence[MetaEvent]) -> dict[str, list[MetaEvent]]:
    """A record's subagent runs (`line: subagent`, as the recorder placed them), each its
    answered calls in order, by id in the order they started."""
    runs: dict[str, list[MetaEvent]] = {}
    for event in events:
        data = event.data
        if event.event == EXCHANGE and data.get("line") == "subagent" and isinstance(data.get("subagent"), str):
            calls = runs.setdefault(data["subagent"], [])
            if data.get("status") == 200 and isinstance(data.get("request"), Mapping):
                calls.append(event)
    return {name: calls for name, calls in runs.items() if calls}


def asked_words(arguments: Iterable[Any]) -> set[str]:
    """What tool calls asked their tools to say (each call's arguments, JSON text or parsed): an
    `Agent`/`Task` call's `prompt` whatever its length, any other argument of more than 20
    characters. A subagent's run opens with them."""
    found: set[str] = set()
    for given in arguments:
        try:
            parsed = json.loads(given) if isinstance(given, str) else given
        except ValueError:
            continue
        if isinstance(parsed, Mapping):
            found |= {value.strip() for key, value in parsed.items() if isinstance(value, str)
                      and (len(value.strip()) > 20 or (key == "prompt" and value.strip()))}
    return found


def opening_words(entries: Sequence[chat.Entry]) -> str:
    """What the person (or the agent's harness, or the agent that asked for it) says in a request
    before its first answer: a thread's opening (Codex puts its own context before a sub-agent's task)."""
    words = []
    for entry in entries:
        if entry.role == "assistant":
            break
        if entry.role == "user":
            words.append(chat.text_of(entry.content).strip())
    return "\n".join(words)


def subagent_parents(events: Sequence[MetaEvent]) -> dict[str, int]:
    """Subagent id -> the main-line step whose answer asked for it: as the recorder said, else
    (the answer came before the main line was known) the step whose answer's calls asked for the
    words the subagent's first request opens with."""
    parents: dict[str, int] = {}
    firsts: dict[str, MetaEvent] = {}
    for event in events:
        data = event.data
        if event.event != EXCHANGE or data.get("line") != "subagent" or not isinstance(data.get("subagent"), str):
            continue
        if isinstance(data.get("parent_step"), int):
            parents[data["subagent"]] = data["parent_step"]
        if isinstance(data.get("request"), Mapping):
            firsts.setdefault(data["subagent"], event)
    missing = [name for name in firsts if name not in parents]
    if missing:
        answers = [(event.data["step"], asked_words(mapping(call).get("arguments")
                                                    for call in mapping(event.data.get("answer")).get("calls") or []))
                   for event in events if event.event == EXCHANGE and isinstance(event.data.get("step"), int)]
        for name in missing:
            data = firsts[name].data
            wire = data.get("wire")
            opening = opening_words(prompt_entries(wire, data["request"])) if wire in ("anthropic", "chat", "responses") \
                else ""
            found = next((step for step, asked in answers if any(words in opening for words in asked)), None)
            if found is not None:
                parents[name] = found
    return parents


def record_fidelity(events: Sequence[MetaEvent], path: str) -> Fidelity | None:
    """A record's fidelity: every step's request recorded; its side calls and subagent runs as branches."""
    if not any(event.event == EXCHANGE for event in events):
        return None
    sides = side_calls(events)
    subagents = subagent_calls(events)
    fidelity = Fidelity(prompt="recorded", parts={"system prompt": "recorded", "tools": "recorded",
                                                  "messages": "recorded"}, branches=len(sides) + len(subagents))
    fidelity.openable = [Branch(f"side call {event.data.get('number')}: {event.data.get('model') or 'a model'}",
                                f"{path}#side-{event.data.get('number')}") for event in sides]
    fidelity.openable += [Branch(f"{SUBAGENT_RUN}{name}", f"{path}#subagent-{name}") for name in subagents]
    fidelity.notes.append("recorded by swedeck record: each step's prompt is the request the agent sent")
    if sides:
        fidelity.notes.append(f"{len(sides)} calls beside the main conversation (b opens them)")
    if subagents:
        fidelity.notes.append(f"{len(subagents)} subagent runs (s lists them, b opens them)")
    return fidelity


def subagent_entries(events: Sequence[MetaEvent], branch: str) -> tuple[list[chat.Entry], dict[int, list[Message]]]:
    """The subagent run `branch` (`subagent-ID`): its last request's messages, then its answer,
    each answer with the usage and model its own call recorded; each step's prompt its request."""
    name = branch.removeprefix("subagent-")
    calls = subagent_calls(events).get(name)
    if not calls:
        raise ValueError(f"#{branch}: no subagent run of that id in this record")
    last = calls[-1].data
    wire = last.get("wire")
    entries = prompt_entries(wire, last["request"]) if wire in ("anthropic", "chat", "responses") else []
    entries.append(answer_entry(mapping(last.get("answer")), mapping(last.get("usage"))))
    answers = [entry for entry in entries if entry.is_step]
    for entry, call in zip(answers, calls, strict=False):  # each answer as its own call recorded it
        usage = answer_entry(mapping(call.data.get("answer")), mapping(call.data.get("usage"))).extra
        entry.extra.update({key: usage[key] for key in ("usage", "model") if key in usage})
    prompts = {number: [entry.build() for entry in prompt_entries(call.data["wire"], call.data["request"])]
               for number, call in enumerate(calls[:len(answers)], start=1) if call.data.get("wire") == wire}
    return entries, prompts


def side_call_entries(events: Sequence[MetaEvent], branch: str) -> list[chat.Entry]:
    """The side call `branch` (`side-N`) as a run of one step: its request, then its answer."""
    for event in side_calls(events):
        if branch == f"side-{event.data.get('number')}":
            wire = event.data.get("wire")
            request = event.data["request"]
            entries = prompt_entries(wire, request) if wire in ("anthropic", "chat", "responses") else []
            return [*entries, answer_entry(mapping(event.data.get("answer")), mapping(event.data.get("usage")))]
    raise ValueError(f"#{branch}: no side call of that number in this record")
