"""B1 streaming (SPEC §12): a 20,000-token response from a local OpenAI-compatible server
(`bench.stream_server`, its own process) through litellm.

Measured: the rate at which litellm alone consumes the stream, as a plain script uses it
and as swedeck's model layer does (the faster is the reference for the 0.8x goal), and the same stream through `swedeck run` headless (`probes/ui_stream.py`): tokens
per second from the first delta the core emits to the UI handling the end of the query,
and the longest gap of a 5 ms heartbeat timer in the app meanwhile.
"""

from __future__ import annotations

from pathlib import Path

from .probe import probe
from .result import Result, at_least, at_most
from .server_process import StreamServer

RUN = ["run", "-m", "openai/bench-model", "--mode", "confirm", "-t", "bench", "-c", "model.cost_tracking=ignore_errors"]


def run(quick: bool, workdir: Path) -> Result:
    tokens = 2000 if quick else 20_000
    script = [{"tokens": 50, "command": "echo warm"}, {"tokens": tokens, "command": "echo done"}]
    with StreamServer(workdir, script) as server:
        alone = probe("litellm_stream", server.api_base, str(tokens), timeout=180)
    with StreamServer(workdir, script) as server:
        tuned = probe("litellm_stream", server.api_base, str(tokens), "--as-swedeck", timeout=180)
    with StreamServer(workdir, script[1:]) as server:
        ui = probe("ui_stream", "160", "48", *RUN, timeout=180,
                   env={"OPENAI_API_KEY": "sk-bench", "OPENAI_API_BASE": server.api_base})
    ui_rate = ui["deltas"] / ui["display_s"]
    reference = max(alone["tokens_per_s"], tuned["tokens_per_s"])
    figures = {
        "tokens": alone["tokens"],
        "litellm_alone_tokens_per_s": round(alone["tokens_per_s"]),
        "litellm_alone_stream_ms": round(alone["stream_s"] * 1000, 1),
        "litellm_as_swedeck_tokens_per_s": round(tuned["tokens_per_s"]),
        "ui_tokens_per_s": round(ui_rate),
        "ui_longest_stall_ms": round(ui["longest_stall_s"] * 1000, 1),
        "ui_over_litellm": round(ui_rate / reference, 2),
        "ui_core_stream_ms": round(ui["core_s"] * 1000, 1),
    }
    notes = {"ui": "swedeck run headless at 160x48 (frames rendered, not written to a terminal); "
                   "`ui_core_stream_ms`: first to last delta as the core emitted them",
             "reference": "`ui_over_litellm` divides by the faster of litellm alone as a plain script "
                          "uses it and litellm alone as swedeck's model layer uses it (no UI)"}
    return Result("B1", "streaming", figures, notes=notes,
                  goal={"ui_tokens_per_s": at_least(5000), "ui_longest_stall_ms": at_most(50),
                        "ui_over_litellm": at_least(0.8)})
