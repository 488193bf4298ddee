"""A scripted ACP agent: a small process speaking the protocol (JSON-RPC 2.0 lines on stdio),
for the faults the real adapters do not show on demand.

    python acp_agent.py SCRIPT.json

The script is `{"turns": [[action, ...], ...], "log": PATH, "load_session": bool, "history":
[update, ...]}` (`history`: what `session/load` replays before it answers); each
`session/prompt` plays the next turn, then answers `end_turn` (or `cancelled` when a
`session/cancel` came). Every message received is appended to `log` as a JSON line. Actions:

- `{"update": {...}}`: a `session/update` with that update;
- `{"raw": TEXT}`: TEXT as a line, as it is (a malformed message);
- `{"ask": {"toolCall": {...}, "options": [...]}}`: `session/request_permission`, waiting for
  the answer, which is said back as an `agent_message_chunk` (`permission: OUTCOME`);
- `{"terminal": {"toolCallId": ID, "command": C, "args": [...], "kill_when": TEXT?}}`: a tool call
  showing a terminal the client runs (`terminal/create`, `wait_for_terminal_exit` or `kill`,
  `terminal/output`, `terminal/release`), ended with the output it got;
- `{"write": {"path": P, "content": C}}` / `{"read": {"path": P}}`: the client's `fs/*`;
- `{"wait_cancel": true}`: wait until the client sends `session/cancel`;
- `{"die": CODE}`: exit at once, mid-prompt;
- `{"spawn": [ARGV]}`: start a process in a session of its own and leave it running;
- `{"wait_file": PATH}`: wait (at most 60 s) until PATH exists and holds something;
- `{"big": N, "toolCallId": ID}`: a tool call whose output is N bytes.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from typing import Any

SESSION = "scripted-session-1"


class Agent:
    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.turns = list(script.get("turns", []))
        self.log = open(script["log"], "a", encoding="utf-8") if script.get("log") else None
        self.out_lock = threading.Lock()
        self.requests: queue.Queue[dict[str, Any]] = queue.Queue()
        self.responses: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.cancelled = threading.Event()
        self.next_id = 1000

    def send(self, message: dict[str, Any] | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        with self.out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def notify(self, update: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION, "update": update}})

    def say(self, text: str) -> None:
        self.notify({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        answer: queue.Queue[dict[str, Any]] = queue.Queue()
        self.responses[self.next_id] = answer
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": {"sessionId": SESSION, **params}})
        return answer.get()

    def read(self) -> None:
        for line in sys.stdin:
            if not line.strip():
                continue
            message = json.loads(line)
            if self.log is not None:
                self.log.write(json.dumps(message) + "\n")
                self.log.flush()
            if "method" not in message:
                self.responses.pop(message["id"]).put(message)
            elif message["method"] == "session/cancel":
                self.cancelled.set()
            elif "id" in message:
                self.requests.put(message)
        self.requests.put({"method": "eof"})

    def serve(self) -> None:
        threading.Thread(target=self.read, daemon=True).start()
        while True:
            message = self.requests.get()
            method = message["method"]
            if method == "eof":
                return
            if method == "initialize":
                result: dict[str, Any] = {
                    "protocolVersion": 1, "authMethods": [],
                    "agentCapabilities": {"loadSession": bool(self.script.get("load_session"))},
                    "agentInfo": {"name": "scripted-acp-agent", "version": "1"}}
            elif method == "session/new":
                result = {"sessionId": SESSION}
            elif method == "session/load":  # the session's history, replayed as updates before the answer
                for update in self.script.get("history", []):
                    self.notify(update)
                result = {}
            elif method == "session/prompt":
                self.cancelled.clear()
                threading.Thread(target=self.prompt, args=(message["id"],), daemon=True).start()
                continue
            else:
                self.send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": method}})
                continue
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def prompt(self, request_id: int) -> None:
        turn = self.turns.pop(0) if self.turns else [{"update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "nothing left to do"}}}]
        for action in turn:
            self.act(action)
        stop = "cancelled" if self.cancelled.is_set() else "end_turn"
        self.send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": stop}})

    def act(self, action: dict[str, Any]) -> None:
        if "update" in action:
            self.notify(action["update"])
        elif "raw" in action:
            self.send(action["raw"])
        elif "ask" in action:
            answer = self.request("session/request_permission", action["ask"])
            outcome = answer.get("result", {}).get("outcome", {})
            self.say(f"permission: {outcome.get('optionId') or outcome.get('outcome')}")
        elif "terminal" in action:
            self.terminal(action["terminal"])
        elif "write" in action:
            self.request("fs/write_text_file", action["write"])
        elif "read" in action:
            answer = self.request("fs/read_text_file", action["read"])
            self.say(f"read: {json.dumps(answer.get('result') or answer.get('error'))}")
        elif "wait_cancel" in action:
            self.cancelled.wait(60)
        elif "wait_file" in action:  # until a process it started has written there (bounded)
            from pathlib import Path

            deadline = time.monotonic() + 60
            while not (Path(action["wait_file"]).exists() and Path(action["wait_file"]).read_text()):
                if time.monotonic() > deadline:
                    break
                time.sleep(0.02)
        elif "spawn" in action:  # a process of its own session, left behind (a daemon it starts)
            import subprocess

            subprocess.Popen(action["spawn"], start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elif "die" in action:
            sys.stdout.flush()
            import os

            os._exit(action["die"])
        elif "big" in action:
            call = action["toolCallId"]
            self.notify({"sessionUpdate": "tool_call", "toolCallId": call, "title": "big output", "status": "in_progress"})
            text = ("0123456789abcdef" * (action["big"] // 16 + 1))[: action["big"]]
            self.notify({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed",
                         "content": [{"type": "content", "content": {"type": "text", "text": text}}]})

    def terminal(self, spec: dict[str, Any]) -> None:
        call = spec["toolCallId"]
        params = {"command": spec["command"], **({"args": spec["args"]} if "args" in spec else {}),
                  **({"cwd": spec["cwd"]} if "cwd" in spec else {}),
                  **({"env": spec["env"]} if "env" in spec else {}),
                  **({"outputByteLimit": spec["limit"]} if "limit" in spec else {})}
        created = self.request("terminal/create", params)
        if "error" in created:
            self.say(f"terminal refused: {created['error'].get('message')}")
            return
        terminal = created["result"]["terminalId"]
        self.notify({"sessionUpdate": "tool_call", "toolCallId": call, "title": spec.get("title", spec["command"]),
                     "kind": "execute", "status": "in_progress",
                     "content": [{"type": "terminal", "terminalId": terminal}]})
        if "kill_when" in spec:  # once the terminal has printed this, the agent kills it
            while spec["kill_when"] not in self.request("terminal/output", {"terminalId": terminal})["result"]["output"]:
                time.sleep(0.02)
            self.request("terminal/kill", {"terminalId": terminal})
        exited = self.request("terminal/wait_for_exit", {"terminalId": terminal})["result"]
        output = self.request("terminal/output", {"terminalId": terminal})["result"]
        self.request("terminal/release", {"terminalId": terminal})
        self.notify({"sessionUpdate": "tool_call_update", "toolCallId": call,
                     "status": "completed" if exited.get("exitCode") == 0 else "failed",
                     "content": [{"type": "terminal", "terminalId": terminal}]})
        self.say(f"terminal: exit {exited.get('exitCode')} signal {exited.get('signal')} "
                 f"truncated {output['truncated']} output {output['output']!r}")


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as file:
        Agent(json.load(file)).serve()
