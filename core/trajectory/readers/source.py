"""What a reader gets: the file's text, its first line and (parsed once, on demand) its JSON."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..parse import loads

_UNSET = object()
_NON_SPACE = re.compile(r"\S")


@dataclass
class Source:
    path: Path
    text: str
    data: bytes = b""
    """The raw bytes of a binary file (an Inspect `.eval` zip); empty for text files."""
    folder: bool = False
    """`path` is a folder (a Harbor trial, an OpenHands v1 event folder)."""
    unit: int = 1
    """Which run of a file that holds several (`PATH#N`: an Inspect log's sample N)."""
    branch: str | None = None
    """A branch inside the file (`PATH#NAME`: a Claude Code leaf's uuid, an embedded ATIF subagent's id)."""
    _document: Any = field(default=_UNSET, repr=False)
    _lines: list[tuple[int, Any]] | None = field(default=None, repr=False)

    def json_lines(self, limit: int | None = None) -> list[tuple[int, Any]]:
        """(line number, parsed value) of each non-blank line; a damaged line's value is the
        `ValueError` saying why, so readers of JSONL formats skip it with a warning. The
        whole file's lines are parsed once (a reader's `accepts` and its `read` share them)."""
        if self._lines is not None:
            return self._lines if limit is None else self._lines[:limit]
        out: list[tuple[int, Any]] = []
        text, start, number = self.text, 0, 0
        while start <= len(text) and (limit is None or len(out) < limit):
            end = text.find("\n", start) if start else self._first_end
            end = len(text) if end == -1 else end
            line, start, number = text[start:end], end + 1, number + 1
            if not line or line.isspace():
                continue
            try:
                whole = len(line) == len(text) or _NON_SPACE.search(text, start) is None and not out
                out.append((number, self.document if whole else loads(line)))  # one line: parsed once
            except ValueError as error:
                out.append((number, error))
        if limit is None:
            self._lines = out
        return out

    @cached_property
    def first_line(self) -> Any:
        """The first line as JSON, or None when it is not a JSON value on its own.

        A `.traj.json` is often one line: then the first line is the document, parsed once."""
        end = self._first_end
        if end == -1 or _NON_SPACE.search(self.text, end) is None:
            try:
                return self.document
            except ValueError:
                return None
        try:
            return loads(self.text[:end])
        except ValueError:
            return None

    @cached_property
    def _first_end(self) -> int:
        """Where the first line ends (-1: the text is one line); found once, as a one-line
        document of 24 MB is searched to its end."""
        return self.text.find("\n")

    @property
    def document(self) -> Any:
        """The whole file as one JSON value (raises ValueError when it is not)."""
        if self._document is _UNSET:
            self._document = loads(self.text)
        return self._document
