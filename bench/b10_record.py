"""B10 record (SPEC §18, issue 46): what `swedeck record`'s endpoint adds to each request.

`swedeck record --upstream URL -- python -m bench.probes.record_client` (the real command, the
endpoint in its own process) runs a client that sends the same streamed Chat Completions
request (a 500-token answer, about 530 SSE events, from `bench.stream_server` in a process of
its own) alternately to the server directly and through the endpoint, REQUESTS times each.
Figures: the first byte's and the last byte's time, p50 and p95, each way; the added time
(through minus direct) at p50 and p95; and the added time per SSE event (the last byte's
p50 difference over the events). Both ways keep their connections (the endpoint keeps the
agent's and pools the upstream's), and it runs twice: over plain HTTP, and over TLS to an
upstream with a throwaway certificate (`tls_` figures). Goals, both: p95 added at most 5 ms a
request, 1 ms a chunk.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from .result import Result, at_most

REQUESTS = 100


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _certificate(workdir: Path) -> tuple[Path, Path]:
    """A throwaway certificate for 127.0.0.1 (openssl), trusted by the endpoint and the client
    through SSL_CERT_FILE."""
    cert, key = workdir / "upstream.pem", workdir / "upstream.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def _measure(requests: int, workdir: Path, tls: tuple[Path, Path] | None) -> dict[str, float]:
    script = workdir / "script.json"
    script.write_text(json.dumps([{"tokens": 500, "command": "ls"}]))
    server = subprocess.Popen([sys.executable, "-m", "bench.stream_server", str(script), "--keep-alive",
                               *(["--tls", str(tls[0]), str(tls[1])] if tls else [])], stdout=subprocess.PIPE,
                              text=True)
    env = {**os.environ, **({"SSL_CERT_FILE": str(tls[0])} if tls else {})}
    record = workdir / ("bench-record-tls" if tls else "bench-record")
    try:
        assert server.stdout is not None
        upstream = f"{'https' if tls else 'http'}://127.0.0.1:{server.stdout.readline().strip()}"
        done = subprocess.run([sys.executable, "-m", "swedeck", "record", "-o", str(record),
                               "--upstream", upstream, "--headless", "--", sys.executable, "-m",
                               "bench.probes.record_client", upstream, str(requests)],
                              capture_output=True, text=True, timeout=600, cwd=Path(__file__).parent.parent, env=env)
    finally:
        server.kill()
        server.wait()
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    times = json.loads(done.stdout.strip().splitlines()[-1])
    direct, through = times["direct"], times["endpoint"]
    events = statistics.median(item[2] for item in through)
    figures: dict[str, float] = {"requests": requests, "sse_events": events}
    for name, rows in (("direct", direct), ("endpoint", through)):
        for index, moment in ((0, "first"), (1, "last")):
            values = [row[index] * 1000 for row in rows]
            figures[f"{name}_{moment}_byte_p50_ms"] = round(_p(values, 0.5), 3)
            figures[f"{name}_{moment}_byte_p95_ms"] = round(_p(values, 0.95), 3)
    for moment in ("first", "last"):
        for q in ("p50", "p95"):
            figures[f"added_{moment}_byte_{q}_ms"] = round(figures[f"endpoint_{moment}_byte_{q}_ms"]
                                                           - figures[f"direct_{moment}_byte_{q}_ms"], 3)
    figures["added_per_chunk_ms"] = round(figures["added_last_byte_p50_ms"] / max(events, 1), 4)
    figures["recorded_exchanges"] = sum(1 for _ in Path(f"{record}.traj.json").read_text()
                                        .split('"event": "exchange"')) - 1
    return figures


def run(quick: bool, workdir: Path) -> Result:
    requests = 20 if quick else REQUESTS
    figures = _measure(requests, workdir, None)
    figures.update({f"tls_{name}": value for name, value in _measure(requests, workdir, _certificate(workdir)).items()})
    return Result("B10", "record endpoint", figures, notes={
        "how": "swedeck record's endpoint in its own process; the client its child, alternating direct and "
               "through-endpoint requests over one kept connection each; the server bench.stream_server in a third "
               "process, over plain HTTP, then over TLS (tls_: a throwaway certificate)"},
        goal={"added_last_byte_p95_ms": at_most(5), "added_per_chunk_ms": at_most(1),
              "tls_added_last_byte_p95_ms": at_most(5), "tls_added_per_chunk_ms": at_most(1)})
