"""The answers a record's agent is being streamed, for a viewer in another process
(`swedeck record --attach`, SPEC §18): a small JSON file beside the record
(`OUT.traj.stream`), rewritten at most every `WRITE_EVERY_S` while an answer streams and
removed when it has ended (its step is then in the record itself).

The endpoint's threads only hand the bytes over (`passed`, a queue put); one thread of its own
reads the words out of them and writes the file, so nothing is parsed between two reads of a
stream the agent waits on (bench B10).
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..trajectory.files import base_name, read_bounded
from .wire import streamed_text

STREAM_SUFFIX = ".traj.stream"
WRITE_EVERY_S = 0.1


STREAM_LIMIT = 64 << 20
"""The largest answers file a viewer reads (the answers being streamed: far less)."""


def stream_path(record: Path) -> Path:
    """The answers file of a record (its live `.traj.jsonl`, its final `.traj.json`, or their base)."""
    base = base_name(record)
    return base.with_name(base.name + STREAM_SUFFIX)


def streaming_answer(record: Path) -> str | None:
    """The words of the answer being streamed to the record's agent now (the newest one); None
    when none is."""
    try:  # a regular file, bounded: a FIFO or a link to /dev/zero in its place must not hold the view
        document = json.loads(read_bounded(stream_path(record), STREAM_LIMIT).decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None
    answers = document.get("answers") if isinstance(document, dict) else None
    if not isinstance(answers, list) or not answers:
        return None
    newest = max((item for item in answers if isinstance(item, dict)), key=lambda item: item.get("exchange", 0),
                 default=None)
    return str(newest.get("text", "")) if newest is not None else None


class LiveAnswers:
    def __init__(self, record: Path, mask: Callable[[str], str] = lambda text: text) -> None:
        """`mask`: the record's own redaction (the file holds what the record will)."""
        self.path = stream_path(record)
        self.mask = mask
        self._queue: queue.SimpleQueue[tuple[int, str | None, bytes] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="swedeck-record-live", daemon=True)
        self._thread.start()

    def passed(self, number: int, wire: str, data: bytes) -> None:
        self._queue.put((number, wire, data))

    def ended(self, number: int) -> None:
        self._queue.put((number, None, b""))

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)
        self.path.unlink(missing_ok=True)

    def _run(self) -> None:
        texts: dict[int, str] = {}
        pending: dict[int, bytes] = {}
        wires: dict[int, str] = {}
        written = 0.0
        dirty = False
        while True:
            try:
                item = self._queue.get(timeout=WRITE_EVERY_S)
            except queue.Empty:
                item = (0, "", b"")  # a tick: write what is due
            if item is None:
                return
            number, wire, data = item
            if wire is None:
                texts.pop(number, None)
                pending.pop(number, None)
                wires.pop(number, None)
                dirty = True
            elif data:
                pending[number] = pending.get(number, b"") + data
                wires[number] = wire
            if wire is not None and time.monotonic() - written < WRITE_EVERY_S:
                continue  # read in batches: at most one pass over the streams' new bytes a tick
            for key, lines in list(pending.items()):
                whole, _, rest = lines.rpartition(b"\n")  # a line cut between two reads waits for its end
                pending[key] = rest
                words = "".join(streamed_text(wires[key], whole))  # type: ignore[arg-type]
                if words:
                    texts[key] = texts.get(key, "") + words
                    dirty = True
            if dirty:
                self._write(texts)
                dirty = False
            written = time.monotonic()

    def _write(self, texts: dict[int, str]) -> None:
        try:
            if not texts:
                self.path.unlink(missing_ok=True)
                return
            document: dict[str, Any] = {"answers": [{"exchange": number, "text": self.mask(text)}
                                                    for number, text in texts.items()]}
            temporary = self.path.with_name(self.path.name + ".tmp")
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # the person's alone
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                out.write(json.dumps(document))
            os.replace(temporary, self.path)
        except OSError:  # a viewer's convenience: the record itself is never at stake
            pass
