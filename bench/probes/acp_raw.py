"""B17's bare client: an ACP adapter started and opened with nothing of swedeck's, timed.

    python -m bench.probes.acp_raw ADAPTER CWD

Spawns ADAPTER (its environment as given), sends `initialize` and `session/new` as one JSON-RPC
line each, and prints `{"initialize": S, "session/new": S}`: seconds since the spawn began.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time


def main() -> None:
    adapter, cwd = sys.argv[1], sys.argv[2]
    began = time.monotonic()
    process = subprocess.Popen([adapter], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               cwd=cwd, start_new_session=True)
    assert process.stdin is not None and process.stdout is not None
    times: dict[str, float] = {}

    def ask(number: int, method: str, params: dict) -> None:
        process.stdin.write((json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}) + "\n")
                            .encode())
        process.stdin.flush()
        while True:
            line = process.stdout.readline()
            if not line:
                raise SystemExit(f"the adapter ended before it answered {method}")
            message = json.loads(line)
            if message.get("id") == number and "method" not in message:
                times[method] = round(time.monotonic() - began, 3)
                return

    ask(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}})
    ask(2, "session/new", {"cwd": cwd, "mcpServers": []})
    process.kill()
    process.wait()
    print(json.dumps(times))


if __name__ == "__main__":
    main()
