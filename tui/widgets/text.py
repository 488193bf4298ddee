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

from swedeck.core.text import COLOURS, collapse_progress

_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with every control character but tab and newline drawn as a symbol."""
    return _INVISIBLE.sub(_picture, text) if _INVISIBLE.search(text) else text


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode's control pictures: ␛ for ESC, ␇ for BEL
    return "␡" if code == 0x7F else f"\\x{code:02x}"


def literal(text: str, style: str = "") -> Content:
    text = visible(text)
    return Content.styled(text, style) if style else Content(text)


def clean_output(text: str) -> str:
    """Command output for the screen: colours (CSI sequences) dropped, `\\r` progress lines
    collapsed, any other control character shown as its symbol."""
    return visible(collapse_progress(COLOURS.sub("", text)))

