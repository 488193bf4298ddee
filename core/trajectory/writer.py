"""The trajectory writer (SPEC §9.1, §9.2, §9.4).

While a session runs, every message is one line of `<name>.traj.jsonl`, written and fsynced
as it is added, so `tail -f` follows the run and a crash loses nothing. At the end,
`<name>.traj.json` is written atomically and the `.jsonl` deleted (unless `keep_jsonl`).
Every record passes through the session's Redactor first: secrets never reach the disk. The
submission (the `final` message, `info.submission`) is the exception to masking by shape: it
is kept byte for byte but for the person's own secret values (`Redactor.exact`).
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import SwedeckError
from ..messages import Message, MessageType, ModelStats
from ..redact import Redactor, each_text
from . import files
from .coerce import mapping
from .errors import TrajectoryError
from .model import MetaEvent
from .readers.swedeck_json import FINAL_FORMAT
from .readers.swedeck_jsonl import HEADER_FORMAT

_STATS = ModelStats.__struct_fields__


class TrajectoryWriter:
    def __init__(self, output: str | Path | None, session_meta: Mapping[str, Any], redactor: Redactor | None = None,
                 *, keep_jsonl: bool = False, _append: bool = False, messages: Iterable[Message] = (),
                 meta_events: Iterable[MetaEvent] = (), resumed: Mapping[str, Any] | None = None):
        self._redactor = redactor or Redactor()
        self._session = self._redactor.record(dict(session_meta))
        self.keep_jsonl = keep_jsonl
        base = files.resolve_base(output, str(session_meta.get("id", "")))
        self.path = files.live_path(base)
        self.final_path = files.final_path(base)
        self._records: list[dict[str, Any]] = [self._message_record(m) for m in messages]
        # What an earlier process recorded stays in the final file (a resumed session's
        # processor configs map its first steps' hashes; SPEC §11.2)
        self._meta: list[dict[str, Any]] = [
            {"role": "meta", "event": event.event, **event.data, "message_count": event.message_count}
            for event in meta_events]
        self._lock = threading.Lock()
        self._finished: Path | None = None
        try:
            self._fd: int | None = files.open_private(self.path, truncate=False)
            try:  # one writer per file: a second session with the same -o must not mix into it
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(self._fd)
                self._fd = None
                raise SwedeckError(f"{self.path} is being written by another swedeck session: "
                                   "give this one another output (-o)") from None
            files.remove_orphan_temps(self.final_path)  # a kill during an earlier finish left one
            if _append:
                files.cut_torn_tail(self.path)
            else:
                os.ftruncate(self._fd, 0)
                self._write({"role": "meta", "format": HEADER_FORMAT, "session": self._session})
                self._write_seeded()
            if resumed is not None:
                record = self._redactor.record({"role": "meta", "event": "resume", "time": time.time(),
                                                "session": self._session, **resumed})
                self._meta.append({**record, "message_count": len(self._records)})
                self._write(record)
        except OSError as error:
            raise TrajectoryError(self.path, f"cannot write: {error.strerror or error}") from None

    @property
    def redactor(self) -> Redactor:
        """What this file masks (the stream beside a record masks the same)."""
        return self._redactor

    @classmethod
    def resume(cls, path: str | Path, session_meta: Mapping[str, Any], redactor: Redactor | None = None, *,
               keep_jsonl: bool = False, messages: Iterable[Message] = (), meta_events: Iterable[MetaEvent] = (),
               resumed: Mapping[str, Any] | None = None) -> TrajectoryWriter:
        """Continue a session: a crashed `.traj.jsonl` is appended to in place; any other
        trajectory (a finished `.traj.json`, another tool's file) seeds a new `.jsonl` beside it
        with `messages` and `meta_events`, under a name no file has yet, so no file is ever
        overwritten. `resumed` goes into the `resume` event (the totals before this process)."""
        path = Path(path)
        resumed = {"from": str(path), **(resumed or {})}
        if path.name.endswith(files.LIVE_SUFFIX):
            return cls(path, session_meta, redactor, keep_jsonl=keep_jsonl, _append=True, messages=messages,
                       meta_events=meta_events, resumed=resumed)
        # Session ids start with the date (`20261123-201205-3fa2c1`): the unique tail names it
        tail = str(session_meta.get("id", "")).rsplit("-", 1)[-1][:8] or time.strftime("%H%M%S")
        fresh = files.unused_base(files.base_name(path).with_name(f"{files.base_name(path).name}.resumed-{tail}"))
        return cls(fresh, session_meta, redactor, keep_jsonl=keep_jsonl, messages=messages, meta_events=meta_events,
                   resumed=resumed)

    def _write_seeded(self) -> None:
        """The seeded messages, with the earlier process's meta events where they happened."""
        events = sorted(self._meta, key=lambda event: event["message_count"])
        position = 0
        for index, record in enumerate([*self._records, None]):
            while position < len(events) and events[position]["message_count"] <= index:
                self._write({key: value for key, value in events[position].items() if key != "message_count"})
                position += 1
            if record is not None:
                self._write(record)

    # --- while running -------------------------------------------------------------------

    def add_message(self, message: Message) -> None:
        record = self._message_record(message)
        with self._lock:
            self._records.append(record)
            self._write(record)

    def add_meta(self, event: str, **data: Any) -> None:
        """A mode switch, processor toggle (with `hash` and `processors`), limit change, ..."""
        record = self._kept(self._redactor.record({"role": "meta", "event": event, "time": time.time(), **data}), data)
        with self._lock:
            self._meta.append({**record, "message_count": len(self._records)})
            self._write(record)

    def add_exchange(self, event: str, data: Mapping[str, Any]) -> None:
        """What passed between an agent and its provider (`swedeck record`): kept as it was, but
        for secret values and token shapes in its text. Not masked by key name: a request's
        `prompt_cache_key` or a tool's `max_tokens` schema is the request's own content, and the
        credential headers were never taken (`record.endpoint.CREDENTIALS`)."""
        record = each_text({"role": "meta", "event": event, "time": time.time(), **data}, self._redactor.text)
        with self._lock:
            self._meta.append({**record, "message_count": len(self._records)})
            self._write(record)

    def _message_record(self, message: Message) -> dict[str, Any]:
        record: dict[str, Any] = self._redactor.record(message.to_record())
        if message.message_type == MessageType.FINAL and isinstance(message.content, str):
            record["content"] = self._redactor.exact(message.content)
        return record

    def _kept(self, record: dict[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
        """The submission as the run produced it: a patch keeps its URLs and token-shaped
        strings byte for byte; only the person's own secret values are masked (SPEC §9.4)."""
        if isinstance(given.get("submission"), str):
            record["submission"] = self._redactor.exact(given["submission"])
        return record

    @property
    def message_count(self) -> int:
        return len(self._records)

    # --- the end ---------------------------------------------------------------------------

    def finish(self, info: Mapping[str, Any] | None = None, **fields: Any) -> Path:
        """Write the final `.traj.json` atomically and return its path (again on a second call)."""
        with self._lock:
            if self._finished is not None:
                return self._finished
            given = {**(info or {}), **fields}
            info = self._kept(self._redactor.record(given), given)
            stats = mapping(info.get("model_stats"))
            final_info = {
                **info,
                "exit_status": info.get("exit_status"),
                "submission": info.get("submission"),
                "model_stats": {**stats, **{key: stats.get(key, 0) for key in _STATS}},
                "config": self._session.get("config", {}),
                "swedeck_version": self._session.get("swedeck_version"),
                "session": {key: value for key, value in self._session.items() if key != "config"},
            }
            end = {"role": "meta", "event": "end", "time": time.time(),
                   **{key: final_info[key] for key in ("exit_status", "submission", "model_stats")}}
            if self._fd is not None:  # after close() the .jsonl is left as it was
                self._write(end)
            document = {"trajectory_format": FINAL_FORMAT, "info": final_info, "messages": self._records,
                        "meta_events": self._meta}
            try:
                files.write_atomically(self.final_path, document)
            except OSError as error:
                raise TrajectoryError(self.final_path, f"cannot write: {error.strerror or error}") from None
            self._close()
            if not self.keep_jsonl:
                self.path.unlink(missing_ok=True)
            self._finished = self.final_path
            return self.final_path

    def close(self) -> None:
        """Stop writing without a final file (the `.jsonl` stays as the record)."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _write(self, record: Mapping[str, Any]) -> None:
        if self._fd is None:
            raise TrajectoryError(self.path, "the trajectory is already closed")
        files.append_durably(self._fd, files.json_line(record))
