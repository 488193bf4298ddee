"""Text from models, commands and files, made fit to show or to send back (SPEC §8, §13 S1).

One owner for the terminal escape grammar and for shortening: the model's view of a
command's output (`environments.output.clean`), headless progress, `replay --print`,
`swedeck prompt` and the UI's panes all go through these functions.

- `strip_escapes` drops CSI, OSC and two-byte escape sequences and keeps everything else:
  what the model reads of a coloured `ls`.
- `strip_control` also drops every other control character but tab and newline: printed
  text that must not move the reader's cursor, retitle the terminal or write its clipboard.
- `collapse_progress` keeps the final state of each `\\r`-redrawn progress line.
- `one_line` and `excerpt` shorten for a line of progress or a block in a listing.

The UI does not strip: it draws control characters as their symbols (`tui.widgets.text`),
so that what a file or a command tried to do is seen, not obeyed and not hidden.
"""

from __future__ import annotations

import json
import re

_CSI = r"\x1b\[[0-?]*[ -/]*[@-~]"  # colours, cursor moves
_OSC = r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # titles, hyperlinks, clipboard writes
_TWO_BYTE = r"\x1b[@-Z\\-_]"

COLOURS = re.compile(_CSI)
"""CSI sequences only: what the UI drops from command output (the rest it shows as symbols)."""
ESCAPES = re.compile(f"{_CSI}|{_OSC}|{_TWO_BYTE}")
"""Complete escape sequences of every kind."""
CONTROL = re.compile(f"{_CSI}|{_OSC}|{_TWO_BYTE}|[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]")
"""Escape sequences and every control character but tab and newline (a lone CR too), DEL
and the 8-bit C1 controls (CSI U+009B, OSC U+009D, ...). An unterminated sequence loses its
ESC and so is harmless text."""
_JSON_RAW_CONTROLS = re.compile("[\\x7f-\\x9f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_INCOMPLETE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*)?\Z")


def inert_json(record: object, **options: object) -> str:
    """JSON for a terminal: as `json.dumps(ensure_ascii=False)`, with DEL, the 8-bit C1 controls
    and the invisible and direction-changing characters (`visible` marks the same in text)
    written as `\\u` escapes too (JSON escapes only C0), so no value can reach the reader's
    terminal as a control (U+009B is a CSI to many terminals) or reorder what it shows (U+202E);
    the JSON means the same."""
    text = json.dumps(record, ensure_ascii=False, **options)  # type: ignore[arg-type]
    return _JSON_RAW_CONTROLS.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def strip_escapes(text: str) -> str:
    return ESCAPES.sub("", text)


def strip_control(text: str) -> str:
    return CONTROL.sub("", text.replace("\r\n", "\n"))


def printable(text: str) -> str:
    """A file's text for a terminal (`replay --print`): escape sequences dropped, and any other
    control, bidi or zero-width character drawn as a mark (`visible`), as the UI shows them."""
    return visible(strip_control(text))


def collapse_progress(text: str) -> str:
    """`\\r\\n` as `\\n`; a line a progress bar redrew with `\\r` shows its last non-empty state."""
    text = text.replace("\r\n", "\n")
    if "\r" not in text:
        return text
    return "\n".join(_last_segment(line) for line in text.split("\n"))


def _last_segment(line: str) -> str:
    segments = [segment for segment in line.split("\r") if segment]
    return segments[-1] if segments else ""


def split_incomplete_escape(text: str) -> tuple[str, str]:
    """(`text` up to an escape sequence cut at its end, that cut sequence): a stream holds the
    cut part back until the next chunk completes it, so no half sequence is ever shown."""
    match = _INCOMPLETE.search(text, max(0, len(text) - 256))
    if match is None:
        return text, ""
    return text[: match.start()], text[match.start():]


def one_line(text: str, limit: int) -> str:
    """Whitespace runs as one space, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def excerpt(text: str, lines: int, width: int) -> list[str]:
    """The first and last `lines // 2` lines of `text` (each cut to `width`) with a count of
    those left out between them: the start says what ran, the end how it ended."""
    rows = [row if len(row) <= width else row[: width - 1] + "…" for row in text.strip("\n").splitlines()]
    if len(rows) <= lines:
        return rows
    head = lines - lines // 2
    tail = lines // 2
    return [*rows[:head], f"… ({len(rows) - head - tail} more lines)", *rows[len(rows) - tail:]]


_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                        "\u2066-\u2069\ufeff\ud800-\udfff]")
"""Control characters, and the characters that change what is seen without being seen:
bidi overrides and isolates (a `Trojan Source` command reads one way and runs another), the
direction marks, the zero-width ones, and lone surrogates (another tool's JSON may hold one:
it has no glyph, and no terminal or file takes it as UTF-8)."""


def visible(text: str) -> str:
    """`text` with every control character but tab and newline drawn as a symbol, and every
    invisible or direction-changing character as a mark (`⟨U+202E⟩`)."""
    return _INVISIBLE.sub(_picture, text) if _INVISIBLE.search(text) else text


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode's control pictures: ␛ for ESC, ␇ for BEL
    if code == 0x7F:
        return "␡"
    return f"\\x{code:02x}" if code <= 0x9F else f"⟨U+{code:04X}⟩"
