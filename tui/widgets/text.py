"""Literal text: what models, commands and files say is shown as is (SPEC §10.3, §13 S1).

Textual parses `str` as markup in many places; wrapping text in `Content` first means
`[red]` or `[@click=app.quit]` is drawn as those characters and does nothing. Terminal
control characters would reach the person's terminal as they are (an OSC 52 sequence in a
model's answer writes the clipboard, OSC 0 the title): `visible` draws each as its symbol
(`␛]52;…␇`), so they are seen, not obeyed and not silently dropped.
"""

from __future__ import annotations

import re
import unicodedata

from textual.content import Content

from swedeck.core.text import COLOURS, collapse_progress, visible

MAX_MARKS = 2_000
"""Search matches marked in one pane (or one line of it): a common word in a big output must
not take the UI with it."""
_BLANKISH = ("\u00a0\u1680\u2000-\u200d\u2028\u2029\u202f\u205f\u2060\u3000\u3164\u2800\u115f\u1160"
             "\uffa0\ufeff\u180e")
"""Characters that draw nothing visible (no-break and wide spaces, the Hangul and Braille
blanks, zero-width ones): a line of them looks empty, a run of them looks like nothing."""
_BLANKISH_CHARACTER = re.compile(f"[{_BLANKISH}]")
_BLANKISH_RUN = re.compile(f"[{_BLANKISH}]+")


def whole_command(command: str) -> str:
    """A command to approve, shown so nothing in it can hide: runs of lines that look empty
    (blank, or only characters that draw nothing: they would push a payload out of view above
    a harmless last line) as one line that counts them, any run of characters that draws nothing
    as one counted mark (`⟨150 × U+3164⟩`), and every invisible character marked (`visible`)."""
    def blank_run(match: re.Match[str]) -> str:
        run = match.group()
        kinds = ", ".join(sorted({f"U+{ord(character):04X}" for character in run}))
        return f"⟨{len(run)} × {kinds}⟩" if len(run) > 1 else f"⟨{kinds}⟩"

    lines = command.rstrip("\n").split("\n")
    shown: list[str] = []
    index = 0
    while index < len(lines):
        end = index
        while end < len(lines) and _looks_empty(lines[end]):
            end += 1
        if end - index >= 2:  # a run of empty-looking lines: one line that counts them
            shown.append(f"⟨{end - index} empty-looking lines⟩")
            index = end
            continue
        shown.append(_hidden_runs(_BLANKISH_RUN.sub(blank_run, lines[index])))
        index += 1
    return visible("\n".join(shown))


def _looks_empty(line: str) -> bool:
    return all(character in " \t" or _BLANKISH_CHARACTER.match(character) or _hidden(character) for character in line)


_HIDDEN_CATEGORIES = frozenset({"Cf", "Mn", "Me", "Cn", "Co", "Cs", "Zl", "Zp"})
"""Format characters, combining marks (drawn on the character before them, or on nothing),
unassigned, private-use and surrogate code points, line and paragraph separators."""
_DEFAULT_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
                      (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
                      (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFFB), (0x1BCA0, 0x1BCA3),
                      (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
"""Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt), and the
interlinear annotation characters: a renderer draws nothing for them."""


def _hidden(character: str) -> bool:
    code = ord(character)
    if code < 0x80:
        return False
    return unicodedata.category(character) in _HIDDEN_CATEGORIES or any(
        low <= code <= high for low, high in _DEFAULT_IGNORABLE)


def _hidden_runs(text: str) -> str:
    """Every run of characters a terminal draws as nothing (or on top of another), as one mark:
    `⟨U+00AD⟩`, `⟨3 × U+200B, U+FE0F⟩`. For a command to approve only: elsewhere combining marks
    are text (accents, Indic vowel signs)."""
    if text.isascii():
        return text
    out: list[str] = []
    run: list[str] = []
    for character in [*text, ""]:
        if character and _hidden(character):
            run.append(character)
            continue
        if run:
            kinds = ", ".join(sorted({f"U+{ord(item):04X}" for item in run}))
            out.append(f"⟨{len(run)} × {kinds}⟩" if len(run) > 1 else f"⟨{kinds}⟩")
            run = []
        out.append(character)
    return "".join(out)


def literal(text: str, style: str = "") -> Content:
    text = visible(text)
    return Content.styled(text, style) if style else Content(text)


def clean_output(text: str) -> str:
    """Command output for the screen: colours (CSI sequences) dropped, `\\r` progress lines
    collapsed, any other control character shown as its symbol."""
    return visible(collapse_progress(COLOURS.sub("", text)))

