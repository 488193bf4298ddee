"""Generated inputs: histories and trajectories that look like real agent runs.

Sizes follow what agents produce: a short thought and one command per step, and command
output of very uneven length (mostly a few hundred bytes, sometimes a whole file). A fixed
seed keeps every run of a benchmark on the same content.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swedeck.core.messages import Action, FunctionCall, Message, MessageExtra, MessageType, ToolCall

SEED = 1729
COMMANDS = ("ls -la src/", "grep -rn 'def parse' src/", "cat src/parser.py", "python -m pytest -q tests/",
            "sed -n 1,80p src/config.py", "git diff", "find . -name '*.py' | head -50", "python repro.py")
_WORDS = ("self", "value", "return", "if", "None", "for", "item", "in", "items", "def", "parse", "config",
          "raise", "ValueError", "token", "=", "+", "len", "(", ")", "[", "]", "path", "line", "result")


def _line_pool(rng: random.Random, count: int = 4096) -> list[str]:
    return [" " * (4 * rng.randint(0, 3)) + " ".join(rng.choices(_WORDS, k=rng.randint(2, 14)))
            for _ in range(count)]


class Generator:
    def __init__(self, mean_output_chars: int, seed: int = SEED):
        self.rng = random.Random(seed)
        self.mean_output_chars = mean_output_chars
        self.lines = _line_pool(self.rng)

    def _text(self, chars: int) -> str:
        out, size = [], 0
        start = self.rng.randrange(len(self.lines))
        while size < chars:
            line = self.lines[(start + len(out)) % len(self.lines)]
            out.append(line)
            size += len(line) + 1
        return "\n".join(out)

    def _output_chars(self) -> int:
        # Exponential: many short outputs, a few long ones, the mean as asked.
        return max(20, int(self.rng.expovariate(1 / self.mean_output_chars)))

    def messages(self, steps: int, tool_calls: bool = True) -> Iterator[Message]:
        """system, task, then `steps` (action, observation) pairs."""
        now = time.time()
        yield _message("system", "You are a careful software engineer. " + self._text(1500), MessageType.SYSTEM)
        yield _message("user", "Fix the failing parser test.\n" + self._text(800), MessageType.TASK)
        for step in range(1, steps + 1):
            command = self.rng.choice(COMMANDS)
            thought = "THOUGHT: " + self._text(self.rng.randint(100, 600)).replace("\n", " ")
            call_id = f"call_{step:06d}" if tool_calls else None
            action = Action(command=command, tool_call_id=call_id)
            if tool_calls:
                calls = (ToolCall(id=call_id, function=FunctionCall(name="bash", arguments=json.dumps({"command": command}))),)
                yield _message("assistant", thought, MessageType.ACTION, step=step, actions=(action,),
                               tool_calls=calls, timestamp=now + step)
            else:
                yield _message("assistant", f"{thought}\n\n```bash\n{command}\n```", MessageType.ACTION,
                               step=step, actions=(action,), timestamp=now + step)
            output = self._text(self._output_chars())
            yield _message("tool" if tool_calls else "user", f"<returncode>0</returncode>\n<output>\n{output}\n</output>",
                           MessageType.OBSERVATION, step=step, tool_call_id=call_id, returncode=0,
                           timestamp=now + step + 0.5)


def _message(role: str, content: str, kind: MessageType, tool_calls=None, tool_call_id=None, **extra) -> Message:
    return Message(role=role, content=content, tool_calls=tool_calls, tool_call_id=tool_call_id,
                   extra=MessageExtra(message_type=kind, **extra))


def history(messages: int, mean_output_chars: int = 2000) -> list[Message]:
    """About `messages` messages (system, task, then action/observation pairs)."""
    return list(Generator(mean_output_chars).messages(max(1, (messages - 2) // 2)))


def write_jsonl(path: Path, steps: int, mean_output_chars: int, compact_every: int | None = None) -> Path:
    """A swedeck live file (SPEC §9.1): the header line, then one message per line. With
    `compact_every`, the session compacted as `summarize` does every that many steps (`compacted`)."""
    header = {"role": "meta", "format": "swedeck-traj/1",
              "session": {"id": "bench", "model": "bench/model", "environment": "local", "swedeck_version": "bench"}}
    messages = Generator(mean_output_chars).messages(steps)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(header) + "\n")
        for message in messages if compact_every is None else compacted(messages, compact_every):
            handle.write(json.dumps(message.to_record()) + "\n")
    return path


def compacted(messages: Iterator[Message], every: int) -> Iterator[Message]:
    """The messages with a compaction after every `every` steps, as swedeck's `summarize` records
    one (its own `plan`: all it replaces, after the task, but the last `keep_last` steps), so
    that a long session's prompt stays the size a model's window holds, as a real one's does."""
    from swedeck.core.agent.compaction import plan
    from swedeck.core.processors.summarize import Summarize

    keep_last = Summarize().keep_last
    history: list[Message] = []
    for message in messages:
        history.append(message)
        yield message
        step = message.extra.step
        if message.extra.message_type == MessageType.OBSERVATION and step and step % every == 0:
            chosen = plan(history, keep_last)
            if chosen is None:
                continue
            summary = f"Summary of steps up to {step - keep_last}: the parser test still fails; src/parser.py reads."
            marker = _message("user", summary, MessageType.COMPACTION, summary=summary, replaces=tuple(chosen.replaces),
                              tokens_before=100 * len(chosen.replaces), tokens_after=2_000)
            history.append(marker)
            yield marker


def jsonl_to_mini(source: Path, target: Path) -> Path:
    """The same messages as a mini-swe-agent `.traj.json` (a dict with `messages`)."""
    with open(source, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    messages = [record for record in records if record.get("role") != "meta"]
    target.write_text(json.dumps({"info": {"exit_status": "Submitted"}, "messages": messages,
                                  "trajectory_format": "mini-swe-agent-1.1"}), encoding="utf-8")
    return target


def write_mini_v2(path: Path, steps: int, mean_output_chars: int) -> Path:
    """A mini-swe-agent v2 `.traj.json`: tool calls, the provider's response (with usage) on
    each assistant message, the output both wrapped (content) and raw (`extra.raw_output`)."""
    messages: list[dict] = []
    prompt_tokens = 0
    for message in Generator(mean_output_chars).messages(steps):
        record = {"role": message.role, "content": message.content}
        if message.role == "assistant":
            calls = [call.to_record() for call in message.tool_calls or ()]
            prompt_tokens += 400
            record |= {"tool_calls": calls, "function_call": None, "provider_specific_fields": {},
                       "extra": {"actions": [{"command": a.command, "tool_call_id": a.tool_call_id}
                                             for a in message.extra.actions],
                                 "cost": 0.0004, "timestamp": message.extra.timestamp,
                                 "response": {"id": "resp", "created": 1775810700, "model": "bench-model",
                                              "object": "chat.completion", "system_fingerprint": None,
                                              "choices": [{"finish_reason": "tool_calls", "index": 0,
                                                           "message": {"role": "assistant", "content": message.content,
                                                                       "tool_calls": calls}}],
                                              "usage": {"completion_tokens": 60, "prompt_tokens": prompt_tokens,
                                                        "total_tokens": prompt_tokens + 60,
                                                        "prompt_tokens_details": {"cached_tokens": prompt_tokens - 400}}}}}
        elif message.role == "tool":
            output = message.text.removeprefix("<returncode>0</returncode>\n<output>\n").removesuffix("\n</output>")
            record |= {"tool_call_id": message.tool_call_id,
                       "extra": {"raw_output": output, "returncode": 0, "timestamp": message.extra.timestamp,
                                 "exception_info": ""}}
        messages.append(record)
    messages.append({"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": ""}})
    path.write_text(json.dumps({"info": {"model_stats": {"instance_cost": 0.0004 * steps, "api_calls": steps},
                                         "exit_status": "Submitted", "submission": ""},
                                "messages": messages, "trajectory_format": "mini-swe-agent-1.1"}), encoding="utf-8")
    return path


def write_swedeck_json(path: Path, steps: int, mean_output_chars: int) -> Path:
    """swedeck's final `.traj.json` (SPEC §9.2)."""
    messages = [message.to_record() for message in Generator(mean_output_chars).messages(steps)]
    path.write_text(json.dumps({"trajectory_format": "swedeck-1", "info": {"exit_status": "Submitted"},
                                "messages": messages, "meta_events": []}), encoding="utf-8")
    return path


def write_sweagent(path: Path, steps: int, mean_output_chars: int) -> Path:
    """A SWE-agent `.traj` (function calling, `message_type`): `history` and `trajectory`."""
    history: list[dict] = []
    records: list[dict] = []
    for message in Generator(mean_output_chars).messages(steps):
        kind = {"system": "system_prompt", "assistant": "action"}.get(message.role, "observation")
        entry = {"role": message.role, "content": message.content, "agent": "main", "message_type": kind}
        if message.role == "assistant":
            action = message.extra.actions[0].command
            entry |= {"thought": message.content, "action": action,
                      "tool_calls": [call.to_record() for call in message.tool_calls or ()]}
            records.append({"action": action, "response": message.content, "thought": message.content,
                            "execution_time": 0.1, "state": {"open_file": "n/a", "working_dir": "/testbed"}})
        elif message.role == "tool":
            entry["tool_call_ids"] = [message.tool_call_id]
            records[-1]["observation"] = message.text
        history.append(entry)
    path.write_text(json.dumps({"environment": "swe_main", "history": history, "trajectory": records,
                                "info": {"exit_status": "submitted", "model_stats": {"api_calls": steps}}}),
                    encoding="utf-8")
    return path


# --- other agents' records (issue 27): the same content in each format ---------------------


def _pairs(steps: int, mean_output_chars: int) -> Iterator[tuple[int, str, str, str]]:
    """(step, thought, command, output) for each step of the shared generator's run."""
    thought = command = ""
    for message in Generator(mean_output_chars).messages(steps):
        if message.role == "assistant":
            thought, command = message.text, message.extra.actions[0].command
        elif message.role == "tool":
            output = message.text.removeprefix("<returncode>0</returncode>\n<output>\n").removesuffix("\n</output>")
            yield message.extra.step, thought, command, output


TASK = "Fix the failing parser test."
STAMP = "2026-11-20T10:00:00Z"


def write_atif(path: Path, steps: int, mean_output_chars: int) -> Path:
    """An ATIF v1.6 trajectory (Harbor): one agent step per model call with its observation."""
    records: list[dict] = [{"step_id": 1, "source": "system", "message": "You are a careful software engineer."},
                           {"step_id": 2, "source": "user", "message": TASK}]
    for step, thought, command, output in _pairs(steps, mean_output_chars):
        call = f"call_{step:06d}"
        records.append({"step_id": step + 2, "source": "agent", "message": thought,
                        "tool_calls": [{"tool_call_id": call, "function_name": "bash", "arguments": {"command": command}}],
                        "observation": {"results": [{"source_call_id": call, "content": output}]},
                        "metrics": {"prompt_tokens": 400 * step, "completion_tokens": 60, "cached_tokens": 400 * (step - 1)}})
    path.write_text(json.dumps({"schema_version": "ATIF-v1.6", "session_id": "bench",
                                "agent": {"name": "bench", "version": "1", "model_name": "bench/model"},
                                "steps": records}), encoding="utf-8")
    return path


def write_claude_code(path: Path, steps: int, mean_output_chars: int) -> Path:
    """A Claude Code session: a uuid chain of user and assistant records, one content block a line."""
    base = {"isSidechain": False, "userType": "external", "cwd": "/work", "sessionId": "bench", "version": "2.0.14",
            "timestamp": STAMP}
    parent = None
    with open(path, "w", encoding="utf-8") as handle:
        def put(kind: str, uuid: str, message: dict) -> None:
            nonlocal parent
            handle.write(json.dumps({"parentUuid": parent, **base, "type": kind, "uuid": uuid, "message": message}) + "\n")
            parent = uuid
        put("user", "u0", {"role": "user", "content": TASK})
        for step, thought, command, output in _pairs(steps, mean_output_chars):
            usage = {"input_tokens": 4, "cache_creation_input_tokens": 400, "cache_read_input_tokens": 400 * step,
                     "output_tokens": 60}
            message = {"id": f"msg_{step}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                       "stop_reason": None, "usage": usage}
            call = f"toolu_{step:06d}"
            put("assistant", f"a{step}", {**message, "content": [{"type": "text", "text": thought}]})
            put("assistant", f"b{step}", {**message, "content": [{"type": "tool_use", "id": call, "name": "Bash",
                                                                   "input": {"command": command}}]})
            put("user", f"r{step}", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call,
                                                                   "content": output, "is_error": False}]})
    return path


def write_claude_code_with_subagents(path: Path, subagents: int, steps_each: int, mean_output_chars: int,
                                     main_steps: int | None = None) -> Path:
    """A Claude Code 2.1 session shaped like the ones that break the agents (issue 65, Claude
    Code #23373: 404 subagents in 102.7 MB): a main line whose every other step is an `Agent`
    call, its result naming the subagent it started (`toolUseResult.agentId`), and each
    subagent's run in `<session>/subagents/agent-<id>.jsonl` (sidechain records, `agentId`)."""
    main_steps = main_steps or 2 * subagents
    folder = path.with_suffix("") / "subagents"
    folder.mkdir(parents=True, exist_ok=True)
    base = {"userType": "external", "cwd": "/work", "sessionId": "bench", "version": "2.1.332"}
    pairs = list(_pairs(max(steps_each, 1), mean_output_chars))

    def stamp(seconds: int) -> str:
        return f"2026-11-20T{10 + seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"

    def usage(step: int) -> dict:
        return {"input_tokens": 4, "cache_creation_input_tokens": 400, "cache_read_input_tokens": 400 * step,
                "output_tokens": 60}

    def run(handle: Any, sidechain: bool, steps: int, agent: str | None, started: int,
            start_subagent: Any = None) -> None:
        parent = None

        def put(kind: str, uuid: str, message: dict, at: int, **extra: Any) -> None:
            nonlocal parent
            record = {"parentUuid": parent, "isSidechain": sidechain, **base, "type": kind, "uuid": uuid,
                      "timestamp": stamp(at), "message": message, **extra}
            if agent is not None:
                record["agentId"] = agent
            handle.write(json.dumps(record) + "\n")
            parent = uuid
        prefix = agent or "m"
        put("user", f"{prefix}-u0", {"role": "user", "content": TASK}, started)
        for step in range(1, steps + 1):
            _, thought, command, output = pairs[(step - 1) % len(pairs)]
            call = f"toolu_{prefix}_{step:05d}"
            spawned = start_subagent(step) if start_subagent is not None else None
            tool = ({"type": "tool_use", "id": call, "name": "Agent", "input": {
                "description": f"look into part {spawned}", "prompt": TASK, "subagent_type": "general-purpose"}}
                if spawned is not None else {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}})
            put("assistant", f"{prefix}-a{step}", {"id": f"msg_{prefix}_{step}", "type": "message", "role": "assistant",
                                                   "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
                                                   "usage": usage(step), "content": [{"type": "text", "text": thought},
                                                                                     tool]}, started + 2 * step)
            result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "is_error": False,
                                                   "content": f"the subagent {spawned} is done" if spawned is not None
                                                   else output}]}
            extra = {"toolUseResult": {"agentId": spawned, "status": "completed"}} if spawned is not None else {}
            put("user", f"{prefix}-r{step}", result, started + 2 * step + 1, **extra)
        put("assistant", f"{prefix}-end", {"id": f"msg_{prefix}_end", "type": "message", "role": "assistant",
                                           "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                                           "usage": usage(steps + 1), "content": [{"type": "text", "text": "Done."}]},
            started + 2 * steps + 2)

    made = [0]

    def start_subagent(step: int) -> str | None:
        if step % 2 or made[0] >= subagents:
            return None
        agent = f"a{made[0]:04x}{'0' * 12}"
        made[0] += 1
        with open(folder / f"agent-{agent}.jsonl", "w", encoding="utf-8") as handle:
            run(handle, True, steps_each, agent, 2 * step)
        return agent
    with open(path, "w", encoding="utf-8") as handle:
        run(handle, False, max(main_steps, 2 * subagents), None, 0, start_subagent)
    return path


def write_claude_code_requests(path: Path, steps: int, mean_output_chars: int) -> Path:
    """A Claude Code 2.1 session with its own request records, as 2.1.332 writes them: an
    `api-request-shape` (system prompt, tools), and per call an `api-request-blob` (the new user
    message, by its hash) and an `api-request` continuing the one before it (`base`, `keep`,
    `tail`: the hashes of the messages after those kept), then the transcript's records, the
    assistant naming its request (`requestRef`)."""
    import hashlib

    def digest(message: dict) -> str:
        return hashlib.sha256(json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                              .encode()).hexdigest()

    base = {"isSidechain": False, "userType": "external", "cwd": "/work", "sessionId": "bench", "version": "2.1.332",
            "timestamp": STAMP}
    parent = None
    with open(path, "w", encoding="utf-8") as handle:
        def put(record: dict) -> None:
            handle.write(json.dumps(record) + "\n")

        def chained(kind: str, uuid: str, message: dict, **extra: Any) -> None:
            nonlocal parent
            put({"parentUuid": parent, **base, "type": kind, "uuid": uuid, "message": message, **extra})
            parent = uuid
        shape = {"system": [{"type": "text", "text": "You are a Claude agent."}, {"type": "text", "text": TASK * 20}],
                 "tools": [{"name": "Bash", "description": "Run a command.", "input_schema": {"type": "object"}}]}
        put({"type": "api-request-shape", "sessionId": "bench", "shapeHash": "shape", "timestamp": STAMP,
             "version": "2.1.332", "shape": shape})
        task = {"role": "user", "content": [{"type": "text", "text": TASK}]}
        chained("user", "u0", {"role": "user", "content": TASK})
        previous, kept, pending = None, 0, [task]
        for step, thought, command, output in _pairs(steps, mean_output_chars):
            tail = []
            for message in pending:
                if message is task or message.get("blob"):
                    message = {key: value for key, value in message.items() if key != "blob"}
                    put({"type": "api-request-blob", "sessionId": "bench", "hash": digest(message), "message": message})
                tail.append(digest(message))
            request = f"req{step}"
            put({"type": "api-request", "sessionId": "bench", "id": request, "timestamp": STAMP, "version": "2.1.332",
                 "querySource": "sdk", "shapeHash": "shape", "params": {"model": "claude-sonnet-4-5", "max_tokens": 8192},
                 **({"base": previous} if previous else {}), "keep": kept, "tail": tail})
            usage = {"input_tokens": 4, "cache_creation_input_tokens": 400, "cache_read_input_tokens": 400 * step,
                     "output_tokens": 60}
            call = f"toolu_{step:06d}"
            answer = {"id": f"msg_{step}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                      "stop_reason": "tool_use", "usage": usage,
                      "content": [{"type": "text", "text": thought},
                                  {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}]}
            chained("assistant", f"a{step}", answer, requestRef=request)
            result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": output,
                                                   "is_error": False}]}
            chained("user", f"r{step}", result)
            previous, kept = request, kept + len(pending)
            pending = [{"role": "assistant", "content": answer["content"]}, result]
    return path


def write_claude_code_with_sidechains(path: Path, steps: int, mean_output_chars: int, sidechains: int = 400,
                                      main_share: float = 0.3) -> Path:
    """A Claude Code session whose subagents ran inside it (issue 49's input): the main line's
    steps, and `sidechains` Task runs (`isSidechain`, each its own chain from a root) that hold
    the rest of the steps, interleaved with the main line as Claude Code writes them."""
    base = {"userType": "external", "cwd": "/work", "sessionId": "bench", "version": "2.0.14", "timestamp": STAMP}
    pairs = list(_pairs(steps, mean_output_chars))
    main_steps = max(1, int(len(pairs) * main_share))
    per_chain = max(1, (len(pairs) - main_steps) // max(sidechains, 1))
    with open(path, "w", encoding="utf-8") as handle:
        def put(kind: str, uuid: str, parent: str | None, sidechain: bool, message: dict) -> None:
            handle.write(json.dumps({"parentUuid": parent, "isSidechain": sidechain, **base, "type": kind,
                                     "uuid": uuid, "message": message}) + "\n")

        def step_records(prefix: str, parent: str | None, sidechain: bool, step: int, thought: str, command: str,
                         output: str) -> str:
            usage = {"input_tokens": 4, "cache_creation_input_tokens": 400, "cache_read_input_tokens": 400 * step,
                     "output_tokens": 60}
            message = {"id": f"msg_{prefix}{step}", "type": "message", "role": "assistant",
                       "model": "claude-sonnet-4-5", "stop_reason": None, "usage": usage}
            call = f"toolu_{prefix}{step:06d}"
            put("assistant", f"{prefix}a{step}", parent, sidechain, {**message, "content": [{"type": "text", "text": thought}]})
            put("assistant", f"{prefix}b{step}", f"{prefix}a{step}", sidechain, {**message, "content": [
                {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}]})
            put("user", f"{prefix}r{step}", f"{prefix}b{step}", sidechain, {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": output, "is_error": False}]})
            return f"{prefix}r{step}"

        put("user", "u0", None, False, {"role": "user", "content": TASK})
        main, rest = pairs[:main_steps], iter(pairs[main_steps:])
        last = "u0"
        chain = 0
        for index, (step, thought, command, output) in enumerate(main):
            last = step_records("", last, False, step, thought, command, output)
            while chain < sidechains and (chain + 1) * len(main) <= (index + 1) * sidechains:  # evenly between
                prefix = f"s{chain}-"
                parent: str | None = None
                put("user", f"{prefix}u", None, True, {"role": "user", "content": f"subtask {chain}"})
                parent = f"{prefix}u"
                for _ in range(per_chain):
                    taken = next(rest, None)
                    if taken is None:
                        break
                    parent = step_records(prefix, parent, True, *taken)
                chain += 1
    return path


def write_codex(path: Path, steps: int, mean_output_chars: int, paginated: bool = False) -> Path:
    """A Codex CLI rollout: session_meta, then response items and token counts per model call.
    `paginated`: as Codex 0.171 writes a paginated thread (`history_mode`, each record's `ordinal`)."""
    ordinal = 0

    def line(kind: str, payload: dict) -> str:
        nonlocal ordinal
        record = {"timestamp": STAMP, **({"ordinal": ordinal} if paginated else {}), "type": kind, "payload": payload}
        ordinal += 1
        return json.dumps(record) + "\n"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(line("session_meta", {"id": "bench", "timestamp": STAMP, "cwd": "/work", "originator": "codex_cli_rs",
                                           "cli_version": "0.171.0" if paginated else "0.46.0", "instructions": None,
                                           **({"history_mode": "paginated"} if paginated else {})}))
        handle.write(line("turn_context", {"cwd": "/work", "model": "gpt-5-codex", "approval_policy": "never"}))
        handle.write(line("response_item", {"type": "message", "role": "user",
                                            "content": [{"type": "input_text", "text": TASK}]}))
        for step, thought, command, output in _pairs(steps, mean_output_chars):
            call = f"call_{step:06d}"
            handle.write(line("response_item", {"type": "message", "role": "assistant",
                                                "content": [{"type": "output_text", "text": thought}]}))
            handle.write(line("response_item", {"type": "function_call", "name": "shell", "call_id": call,
                                                "arguments": json.dumps({"command": ["bash", "-lc", command]})}))
            usage = {"input_tokens": 400 * step, "cached_input_tokens": 400 * (step - 1), "output_tokens": 60,
                     "reasoning_output_tokens": 0, "total_tokens": 400 * step + 60}
            handle.write(line("event_msg", {"type": "token_count", "info": {"total_token_usage": usage,
                                                                            "last_token_usage": usage,
                                                                            "model_context_window": 272000}}))
            handle.write(line("response_item", {"type": "function_call_output", "call_id": call,
                                                "output": json.dumps({"output": output, "metadata": {"exit_code": 0}})}))
    return path


def write_openhands(path: Path, steps: int, mean_output_chars: int) -> Path:
    """An OpenHands v0 event list: a `run` action and its observation per step."""
    events: list[dict] = [{"id": 0, "timestamp": STAMP, "source": "agent", "action": "system", "message": "system",
                           "args": {"content": "You are OpenHands agent.", "agent_class": "CodeActAgent"}},
                          {"id": 1, "timestamp": STAMP, "source": "user", "action": "message", "message": TASK,
                           "args": {"content": TASK}}]
    for step, thought, command, output in _pairs(steps, mean_output_chars):
        call = f"tc{step}"
        metadata = {"function_name": "execute_bash", "tool_call_id": call, "model_response": {
            "id": f"chatcmpl-{step}", "model": "bench-model",
            "choices": [{"message": {"role": "assistant", "content": thought, "tool_calls": [
                {"id": call, "type": "function", "function": {"name": "execute_bash",
                                                              "arguments": json.dumps({"command": command})}}]}}],
            "usage": {"prompt_tokens": 400 * step, "completion_tokens": 60}}, "total_calls_in_response": 1}
        action_id = len(events)
        events.append({"id": action_id, "timestamp": STAMP, "source": "agent", "message": f"Running command: {command}",
                       "action": "run", "tool_call_metadata": metadata,
                       "args": {"command": command, "thought": thought, "is_input": False}})
        events.append({"id": action_id + 1, "timestamp": STAMP, "source": "agent", "cause": action_id,
                       "message": f"Command `{command}` executed with exit code 0.", "observation": "run",
                       "tool_call_metadata": {k: v for k, v in metadata.items() if k != "model_response"},
                       "content": output, "extras": {"command": command, "metadata": {"exit_code": 0}}})
    path.write_text(json.dumps(events), encoding="utf-8")
    return path


def _inspect_log(steps: int, mean_output_chars: int) -> dict:
    """An Inspect eval log with one sample: its messages once, each model call's input as a range of them."""
    messages: list[dict] = [{"id": "m0", "role": "system", "content": "You are a careful software engineer."},
                            {"id": "m1", "role": "user", "source": "input", "content": TASK}]
    events: list[dict] = [{"event": "sample_init", "sample": {"input": TASK, "id": "bench-1"}, "state": {}}]
    tools = [{"name": "bash", "description": "Run a command.",
              "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}]
    for step, thought, command, output in _pairs(steps, mean_output_chars):
        call = f"call_{step:06d}"
        reply = {"id": f"a{step}", "role": "assistant", "source": "generate", "content": thought,
                 "tool_calls": [{"id": call, "function": "bash", "arguments": {"cmd": command}, "type": "function"}]}
        events.append({"event": "model", "model": "openai/bench", "input": [], "input_refs": [[0, len(messages)]],
                       "tools": tools, "tool_choice": "auto", "config": {},
                       "output": {"model": "bench", "choices": [{"message": reply, "stop_reason": "tool_calls"}],
                                  "usage": {"input_tokens": 400 * step, "output_tokens": 60,
                                            "total_tokens": 400 * step + 60}}})
        events.append({"event": "tool", "id": call, "function": "bash", "arguments": {"cmd": command}, "result": output})
        messages += [reply, {"id": f"t{step}", "role": "tool", "tool_call_id": call, "function": "bash", "content": output}]
    sample = {"id": "bench-1", "epoch": 1, "input": TASK, "target": "", "messages": messages, "events": events,
              "events_data": {"messages": messages}, "attachments": {}, "scores": {}}
    return {"version": 2, "status": "success",
            "eval": {"eval_id": "E", "run_id": "R", "created": STAMP, "task": "bench", "task_id": "T",
                     "dataset": {"name": "bench"}, "model": "openai/bench", "config": {}},
            "plan": {}, "results": {}, "stats": {}, "samples": [sample]}


def write_inspect_json(path: Path, steps: int, mean_output_chars: int) -> Path:
    """An Inspect `.json` eval log."""
    path.write_text(json.dumps(_inspect_log(steps, mean_output_chars)), encoding="utf-8")
    return path


def write_inspect_eval(path: Path, steps: int, mean_output_chars: int) -> Path:
    """An Inspect `.eval` log: a zip with the header and each sample as its own member."""
    import zipfile
    log = _inspect_log(steps, mean_output_chars)
    sample = log.pop("samples")[0]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(log))
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": log["eval"], "plan": {}}))
        archive.writestr("samples/bench-1_epoch_1.json", json.dumps(sample))
    return path


def write_tiny_steps(path: Path, steps: int) -> Path:
    """A swedeck live file of `steps` steps as small as a step can be (issue 61: 2.5 million of
    them, about 300 MB): a command and its one-character output each."""
    header = {"role": "meta", "format": "swedeck-traj/1", "session": {"id": "tiny", "model": "m", "environment": "local"}}
    answer = json.dumps({"role": "assistant", "content": "```bash\nls\n```"}, separators=(",", ":"))
    output = json.dumps({"role": "user", "content": "<returncode>0</returncode><output>x</output>"}, separators=(",", ":"))
    pair = f"{answer}\n{output}\n" * 1000
    with open(path, "w", encoding="utf-8") as handle:
        for line in (header, {"role": "system", "content": "sys"}, {"role": "user", "content": "task"}):
            handle.write(json.dumps(line) + "\n")
        for _ in range(steps // 1000):
            handle.write(pair)
        handle.write(f"{answer}\n{output}\n" * (steps % 1000))
    return path


def write_inspect_members(path: Path, members: int) -> Path:
    """An Inspect `.eval` of `members` stored sample members (issue 61: 900,000): the first
    and last three each a sample of three steps, the others empty objects."""
    import zipfile
    log = _inspect_log(3, 20)
    sample = log.pop("samples")[0]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("header.json", json.dumps(log))
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": log["eval"], "plan": {}}))
        for number in range(members):
            whole = number < 3 or number >= members - 3
            archive.writestr(f"samples/s{number}_epoch_1.json",
                             json.dumps({**sample, "id": f"s{number}"}) if whole else "{}")
    return path
