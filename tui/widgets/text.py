"""Literal text: what models, commands and files say is shown as is (SPEC §10.3, §13 S1).

Textual parses `str` as markup in many places; wrapping text in `Content` first means
`[red]` or `[@click=app.quit]` is drawn as those characters and does nothing. Terminal
control characters would reach the person's terminal as they are (an OSC 52 sequence in a
model's answer writes the clipboard, OSC 0 the title): `visible` draws each as its symbol
(`␛]52;…␇`), so they are seen, not obeyed and not silently dropped.
"""

from __future__ import annotations

import re

from textual.content import Content

from swedeck.core.text import COLOURS, collapse_progress, visible

MAX_MARKS = 2_000
"""Search matches marked in one pane (or one line of it): a common word in a big output must
not take the UI with it."""
_BLANK_RUN = re.compile(r"(?:\n[ \t]*){3,}")


def whole_command(command: str) -> str:
    """A command to approve, shown so nothing in it can hide: runs of empty lines (which
    would push a payload out of view above a harmless last line) as one line that counts
    them, and every invisible character marked (`visible`)."""
    def blank_lines(match: re.Match[str]) -> str:
        return f"\n⟨{match.group().count(chr(10)) - 1} empty lines⟩\n"

    return visible(_BLANK_RUN.sub(blank_lines, command.rstrip("\n")))


def literal(text: str, style: str = "") -> Content:
    text = visible(text)
    return Content.styled(text, style) if style else Content(text)


def clean_output(text: str) -> str:
    """Command output for the screen: colours (CSI sequences) dropped, `\\r` progress lines
    collapsed, any other control character shown as its symbol."""
    return visible(collapse_progress(COLOURS.sub("", text)))

