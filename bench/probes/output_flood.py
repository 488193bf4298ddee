"""B6's core path: a command printing BYTES through swedeck's local environment, with an
output callback like the UI's, in a fresh process so the memory growth is its own.

    python -m bench.probes.output_flood BYTES
"""

from __future__ import annotations

import json
import sys
import time

from .memory import peak_rss_mb, rss_mb


def main(size: int) -> dict:
    from swedeck.core.config import EnvironmentConfig
    from swedeck.core.environments import get_environment

    line = "a" * 99
    command = f"yes {line} | head -c {size}"
    env = get_environment(EnvironmentConfig(environment_class="local", timeout=300), "bench-b6")
    env.start()
    streamed = 0

    def on_output(chunk: str) -> None:
        nonlocal streamed
        streamed += len(chunk)

    before = rss_mb()
    start = time.perf_counter()
    result = env.execute(command, timeout=300, on_output=on_output)
    duration = time.perf_counter() - start
    env.close()
    output = result.output
    return {"command": command, "duration_s": duration, "streamed_chars": streamed,
            "output_chars": result.output_chars, "model_chars": len(output), "truncated": result.truncated,
            "head_and_tail_kept": output.startswith(line) and output.rstrip().endswith(line),
            "rss_before_mb": before, "peak_rss_mb": peak_rss_mb(), "growth_mb": round(peak_rss_mb() - before, 1)}


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]))))
