"""Textual's rendered lines without a reference to themselves (issue 49, bench B16).

A `Strip` (one rendered line) keeps seven small caches of what was derived from it. Three of
its methods store the strip itself in its own cache when there is nothing to derive:
`adjust_cell_length` to the length it has, `divide` at its own end and `crop_extend` of the
whole of it. Nearly every line drawn goes through one of them, so nearly every line dies in a
reference cycle, which only a collection of the cycle's generation frees: with its caches,
twenty-odd objects a line.

In a live session that is what a long transcript's periodic thaw mostly freed (`gc_tuning`
`LongLived`): 240,000 of the 246,000 objects freed after 150 steps were lines and their
caches, against 22 widgets, and the thaw took a second. In the replay it is most of what
each full collection walks. Without the self-reference a line is freed the moment the last
widget or cache lets it go, frozen or not.

Each replacement returns what Textual's method returns, the same object, without storing
it: the check it skips the cache for is a comparison of two integers. This reaches into
`textual.strip.Strip` (docs/private-apis.md); `tests/test_private_apis.py` checks that
Textual still stores the strip in itself and that the replacements return what it does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.style import Style
from textual.strip import Strip

_adjust_cell_length = Strip.adjust_cell_length
_divide = Strip.divide
_crop_extend = Strip.crop_extend


def adjust_cell_length(self: Strip, cell_length: int, style: Style | None = None) -> Strip:
    if self.cell_length == cell_length:
        return self
    return _adjust_cell_length(self, cell_length, style)


def divide(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
    cuts = [cut for cut in cuts if cut <= self.cell_length]
    if cuts == [self.cell_length]:
        return [self]
    return _divide(self, cuts)


def crop_extend(self: Strip, start: int, end: int, style: Style | None) -> Strip:
    if start <= 0 and end == self.cell_length:
        return self
    return _crop_extend(self, start, end, style)


def without_self_references() -> None:
    """Replace the three methods (when a swedeck app starts: `ViewApp`; again is the same)."""
    Strip.adjust_cell_length = adjust_cell_length  # type: ignore[method-assign]
    Strip.divide = divide  # type: ignore[method-assign]
    Strip.crop_extend = crop_extend  # type: ignore[method-assign]
