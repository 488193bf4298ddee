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
    _document: Any = field(default=_UNSET, repr=False)

    @cached_property
    def first_line(self) -> Any:
        """The first line as JSON, or None when it is not a JSON value on its own.

        A `.traj.json` is often one line: then the first line is the document, parsed once."""
        end = self.text.find("\n")
        if end == -1 or _NON_SPACE.search(self.text, end) is None:
            try:
                return self.document
            except ValueError:
                return None
        try:
            return loads(self.text[:end])
        except ValueError:
            return None

    @property
    def document(self) -> Any:
        """The whole file as one JSON value (raises ValueError when it is not)."""
        if self._document is _UNSET:
            self._document = loads(self.text)
        return self._document
