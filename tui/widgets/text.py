"""Literal text: what models, commands and files say is shown as is (SPEC §10.3).

Textual parses `str` as markup in many places; wrapping text in `Content` first means
`[red]` or `[@click=app.quit]` is drawn as those characters and does nothing.
"""

from __future__ import annotations

import re

from textual.content import Content

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def literal(text: str, style: str = "") -> Content:
    return Content.styled(text, style) if style else Content(text)


def clean_output(text: str) -> str:
    """Command output for the screen: no escape sequences, `\\r` progress lines collapsed."""
    text = _ANSI.sub("", text)
    if "\r" in text:
        text = "\n".join(line.rsplit("\r", 1)[-1] if not line.endswith("\r") else line.rstrip("\r").rsplit("\r", 1)[-1]
                         for line in text.replace("\r\n", "\n").split("\n"))
    return _CONTROL.sub("", text)


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
