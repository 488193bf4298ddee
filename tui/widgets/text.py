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
_BLANKISH = ("\u00a0\u1680\u2000-\u200d\u2028\u2029\u202f\u205f\u2060\u3000\u3164\u2800\u115f\u1160"
             "\uffa0\ufeff\u180e")
"""Characters that draw nothing visible (no-break and wide spaces, the Hangul and Braille
blanks, zero-width ones): a line of them looks empty, a run of them looks like nothing."""
_BLANK_RUN = re.compile(f"(?:\\n[ \\t{_BLANKISH}]*){{3,}}")
_BLANKISH_RUN = re.compile(f"[{_BLANKISH}]+")


def whole_command(command: str) -> str:
    """A command to approve, shown so nothing in it can hide: runs of lines that look empty
    (which would push a payload out of view above a harmless last line) as one line that counts
    them, any run of characters that draws nothing as one counted mark (`⟨150 × U+3164⟩`), and
    every invisible character marked (`visible`)."""
    def blank_lines(match: re.Match[str]) -> str:
        return f"\n⟨{match.group().count(chr(10)) - 1} empty-looking lines⟩\n"

    def blank_run(match: re.Match[str]) -> str:
        run = match.group()
        kinds = ", ".join(sorted({f"U+{ord(character):04X}" for character in run}))
        return f"⟨{len(run)} × {kinds}⟩" if len(run) > 1 else f"⟨{kinds}⟩"

    return visible(_BLANKISH_RUN.sub(blank_run, _BLANK_RUN.sub(blank_lines, command.rstrip("\n"))))


def literal(text: str, style: str = "") -> Content:
    text = visible(text)
    return Content.styled(text, style) if style else Content(text)


def clean_output(text: str) -> str:
    """Command output for the screen: colours (CSI sequences) dropped, `\\r` progress lines
    collapsed, any other control character shown as its symbol."""
    return visible(collapse_progress(COLOURS.sub("", text)))

