"""B10's client, run as `swedeck record`'s child: the same streamed request, alternately to the
upstream directly and through the recording endpoint (`SWEDECK_RECORD_URL`), each timed from
sending to its first and its last byte, over one kept connection each way (as an SDK keeps
them; an https upstream is trusted through SSL_CERT_FILE).

    python -m bench.probes.record_client UPSTREAM_URL REQUESTS
"""

from __future__ import annotations

import http.client
import json
import os
import sys
import time
from urllib.parse import urlsplit

BODY = json.dumps({"model": "bench-model", "stream": True, "messages": [
    {"role": "system", "content": "You are a helpful agent."}, {"role": "user", "content": "Fix the bug " * 200}]}).encode()


_KEPT: dict[str, http.client.HTTPConnection] = {}
"""One connection per base, kept as an SDK keeps it (an https upstream's handshake once)."""


def timed(base: str) -> tuple[float, float, int]:
    url = urlsplit(base)
    connection = _KEPT.get(base)
    if connection is None:
        kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        connection = _KEPT[base] = kind(url.netloc, timeout=60)
    started = time.perf_counter()
    connection.request("POST", url.path + "/v1/chat/completions", body=BODY,
                       headers={"content-type": "application/json", "authorization": "Bearer sk-bench"})
    response = connection.getresponse()
    first = None
    events = 0
    while True:
        data = response.read1(65536)
        if not data:
            break
        if first is None:
            first = time.perf_counter() - started
        events += data.count(b"data: ")
    last = time.perf_counter() - started
    response.close()
    return first or last, last, events


def main() -> None:
    upstream, requests = sys.argv[1], int(sys.argv[2])
    endpoint = os.environ["SWEDECK_RECORD_URL"]
    direct, through = [], []
    timed(upstream)  # the connections made (a TLS handshake each), as an agent's first request makes them
    timed(endpoint)
    for number in range(requests):  # alternating, so the machine's drift falls on both alike
        for base, times in ((upstream, direct), (endpoint, through))[:: 1 if number % 2 else -1]:
            times.append(timed(base))
    print(json.dumps({"direct": direct, "endpoint": through}))


if __name__ == "__main__":
    main()
