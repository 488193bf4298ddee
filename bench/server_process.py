"""Start and stop `bench.stream_server` in its own process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .probe import ROOT


class StreamServer:
    def __init__(self, workdir: Path, responses: list[dict]):
        self.script = workdir / "stream-script.json"
        self.script.write_text(json.dumps(responses))
        self.process: subprocess.Popen | None = None
        self.port = 0

    def __enter__(self) -> StreamServer:
        self.process = subprocess.Popen([sys.executable, "-m", "bench.stream_server", str(self.script)],
                                        cwd=ROOT, stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline())
        return self

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __exit__(self, *exc: object) -> None:
        if self.process:
            self.process.kill()
            self.process.wait()
