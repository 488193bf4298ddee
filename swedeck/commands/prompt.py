"""`swedeck prompt PATH --step N [-c ...] [--json | --wire]`: exactly what the model gets at step N;
`--wire`: the request's body as the agent sent it (a record's, or rebuilt from Claude Code's own
request records), its notes on stderr."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from swedeck.core.config import load_config
from swedeck.core.errors import UsageError
from swedeck.core.messages import content_text
from swedeck.core.prompt_view import StepPrompt, step_prompt
from swedeck.core.text import inert_json, strip_control
from swedeck.core.tokens import count_tools
from swedeck.core.trajectory.loader import load_trajectory, named_path
from swedeck.core.trajectory.wire_request import WireRequest, wire_request


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    trajectory = load_trajectory(named_path(args.path))
    prompt = step_prompt(trajectory, args.step, list(config.agent.history_processors), config.model.context_window,
                         trust_file=args.trust_trajectory)
    request = wire_request(trajectory, prompt.step)
    if args.wire:
        if request is None:
            raise UsageError(f"{args.path}: step {prompt.step}'s request as sent is not in this file "
                             f"({trajectory.format} keeps the messages, not the request; swedeck prompt without "
                             "--wire shows them); a record of swedeck record keeps it")
        print(f"# step {prompt.step}: {request.source}", file=sys.stderr)
        for note in request.notes:
            print(f"# {note}", file=sys.stderr)
        print(inert_json(request.body, indent=1))
        return 0
    print(_json(prompt, request) if args.json else _text(prompt, str(trajectory.path), trajectory.format, request))
    return 0


def _json(prompt: StepPrompt, request: WireRequest | None) -> str:
    tools = request.tools if request is not None else None
    tools_tokens = count_tools(tools) if tools else 0
    return inert_json({
        "step": prompt.step,
        "processors": prompt.processors,
        "processors_source": prompt.processors_source,
        "provenance": prompt.provenance,
        "window": prompt.window,
        "total_tokens": prompt.total_tokens + tools_tokens,
        "messages_tokens": prompt.total_tokens,
        "tools_tokens": tools_tokens,
        "tools": tools if tools is not None else "unknown",
        "request": request.source if request is not None else None,
        "history_tokens": prompt.history_tokens,
        "errors": prompt.errors,
        "messages": [
            {**line.message.to_api(), "tokens": line.tokens, "history_index": line.source_index,
             "changed": line.changed, "message_type": line.message.message_type.value}
            for line in prompt.lines
        ],
    }, indent=1)


def _text(prompt: StepPrompt, path: str, format: str, request: WireRequest | None) -> str:
    names = ", ".join(_describe(p) for p in prompt.processors) or "none"
    tools = request.tools if request is not None else None
    said = (f"tools: {len(tools)} ({', '.join(_tool_name(tool) for tool in tools)[:300]}), "
            f"{count_tools(tools)} tokens" if tools else "tools: none recorded")
    out = [f"Prompt of step {prompt.step} of {path} ({format}; {prompt.provenance})",
           f"processors ({prompt.processors_source}): {names}", said,
           *([f"the request as sent: swedeck prompt {path} --step {prompt.step} --wire"] if request else []), ""]
    for position, line in enumerate(prompt.lines):
        message = line.message
        index = "-" if line.source_index is None else str(line.source_index)
        mark = "  [changed by processors]" if line.changed else ""
        out.append(f"--- [{position}] history #{index} {message.role} ({message.message_type.value}), "
                   f"{line.tokens} tokens{mark}")
        text = content_text(message.content)
        if text:
            out.append(strip_control(text))
        for call in message.tool_calls or ():
            out.append(f"[tool call {call.id}] {call.function.name}({strip_control(call.function.arguments)})")
    saved = prompt.history_tokens - prompt.total_tokens
    window = f" of a {prompt.window}-token window ({100 * prompt.total_tokens / prompt.window:.1f}%)" if prompt.window else ""
    out += ["", f"total: {prompt.total_tokens} tokens{window}; without processors {prompt.history_tokens} "
                f"(saved {saved})"]
    for error in prompt.errors:
        out.append(f"processor error: {error}")
    return "\n".join(out)


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        function = tool.get("function")
        return str(tool.get("name") or (function.get("name") if isinstance(function, dict) else None) or "?")
    return "?"


def _describe(processor: dict[str, Any]) -> str:
    params = ", ".join(f"{k}={v}" for k, v in processor.items() if k not in ("type", "enabled"))
    return f"{processor['type']}({params})"
