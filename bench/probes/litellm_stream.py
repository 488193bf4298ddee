"""B1's reference: the rate at which litellm alone consumes the bench server's stream.

    python -m bench.probes.litellm_stream API_BASE TOKENS [--as-swedeck]

Imports litellm and warms it up with one short request first, so the figure is the stream,
not the import. Prints tokens (content deltas) per second from the first to the last delta.
With `--as-swedeck`, litellm is imported and consumed the way swedeck's model layer does it
(its loader's settings, objects frozen after the import, kept chunks trimmed as they pass),
so the UI's figure can be compared with the best this loop reaches without a UI.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time


def consume(litellm, api_base: str, trim=None) -> tuple[int, float, float]:
    start = time.perf_counter()
    first = last = None
    tokens = 0
    stream = litellm.completion(model="openai/bench-model", api_base=api_base, api_key="sk-bench", stream=True,
                                messages=[{"role": "user", "content": "go"}])
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            tokens += 1
            last = time.perf_counter()
            first = first or last
        if trim is not None:
            trim(stream)
    return tokens, last - first, last - start


if __name__ == "__main__":
    trim = None
    if "--as-swedeck" in sys.argv:
        from swedeck.core.models.http_call import trim_kept_chunks as trim
        from swedeck.core.models.litellm_loader import litellm as load

        litellm = load()
    else:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        import litellm

        litellm.suppress_debug_info = True
        logging.getLogger("LiteLLM").setLevel(logging.ERROR)
    api_base = sys.argv[1]
    consume(litellm, api_base, trim)  # warm-up (request 1 of the script is a short one)
    tokens, streaming, total = consume(litellm, api_base, trim)
    print(json.dumps({"tokens": tokens, "stream_s": streaming, "request_s": total,
                      "tokens_per_s": tokens / streaming}))
