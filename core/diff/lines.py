"""Which lines of two texts the other does not have (the diff view sets them apart)."""

from __future__ import annotations

import difflib


def changed_lines(left: str, right: str) -> tuple[frozenset[int], frozenset[int]]:
    """0-based numbers of the lines of `left` not in `right`, and of `right` not in `left`,
    as `diff` pairs them."""
    a, b = left.split("\n"), right.split("\n")
    only_a: set[int] = set()
    only_b: set[int] = set()
    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            only_a.update(range(a0, a1))
            only_b.update(range(b0, b1))
    return frozenset(only_a), frozenset(only_b)
