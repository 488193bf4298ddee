"""B1 streaming (SPEC §12): a 20,000-token response from a local OpenAI-compatible server
(`bench.stream_server`, its own process) through litellm.

Measured: the rate at which litellm alone consumes the stream (the reference for the 0.8x
goal). The UI figures (displayed tokens/s, longest event-loop stall) are not measured yet:
they need a probe that drives the live app headless with a heartbeat timer.
"""

from __future__ import annotations

from pathlib import Path

from .probe import probe
from .result import Result, at_least, at_most
from .server_process import StreamServer

UI_PENDING = "not measured yet: the live-UI probe (headless app, 5 ms heartbeat) is still to be written"


def run(quick: bool, workdir: Path) -> Result:
    tokens = 2000 if quick else 20_000
    script = [{"tokens": 50, "command": "echo warm"}, {"tokens": tokens, "command": "echo done"}]
    with StreamServer(workdir, script) as server:
        alone = probe("litellm_stream", server.api_base, str(tokens), timeout=180)
    figures = {
        "tokens": alone["tokens"],
        "litellm_alone_tokens_per_s": round(alone["tokens_per_s"]),
        "litellm_alone_stream_ms": round(alone["stream_s"] * 1000, 1),
        "ui_tokens_per_s": None,
        "ui_longest_stall_ms": None,
        "ui_over_litellm": None,
    }
    return Result("B1", "streaming", figures, notes={"ui": UI_PENDING},
                  goal={"ui_tokens_per_s": at_least(5000), "ui_longest_stall_ms": at_most(50),
                        "ui_over_litellm": at_least(0.8)})
