"""A view's one-line header, bound to its state's computed `header` (diff, watch); the text
(paths, names) is shown literally."""

from __future__ import annotations

from typing import Any

from textual.reactive import reactive
from textual.widgets import Static

from .text import literal


class HeaderLine(Static):
    text: reactive[str] = reactive("")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, **kwargs)

    def watch_text(self, text: str) -> None:
        self.update(literal(text))
