"""A bash command line read as bash reads it, far enough to know its simple commands (SPEC §6.5, §20).

`split(line)` gives every simple command of a line: those it runs at the top (split on `;`,
`&`, `&&`, `||`, `|`, `|&` and newlines) and, apart, those nested in it: in a subshell or a
group (`( … )`, `{ …; }`), a command or process substitution (`$( … )`, backticks, `<( … )`)
or a `bash -c` string is not read here (`wrapped` in `core/rules/programs.py` is). Quotes are
read as bash reads them: a newline, `;`, `(` or `#` inside quotes is a character of a word, a
backslash escapes the next character, `\\` + newline joins lines, `#` at a word's start begins
a comment, and a here-document's body is its command's input, not commands. What it cannot
read (an unterminated quote or substitution, a `)` that closes nothing) is `error`: callers ask.

The words are unquoted as bash would pass them (without expansion); `text` is the simple
command as written. This module imports nothing of swedeck's: the approvals, the rules and the
dry run all read commands through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", ";;", ";&", ";;&"})
RESERVED_FIRST = frozenset({"if", "then", "else", "elif", "fi", "while", "until", "do", "done", "!", "case", "esac",
                            "for", "select", "function", "in", "{", "}", "time", "coproc"})
"""Reserved words a simple command can start with (the program follows them, or none does)."""


@dataclass(frozen=True)
class Part:
    """One simple command: its words (unquoted, assignments first) and its text as written."""

    text: str
    words: tuple[str, ...]
    nested: bool = False
    """Inside a subshell, a group, or a substitution: run, but not at the line's top."""


@dataclass
class Split:
    parts: list[Part] = field(default_factory=list)
    """Every simple command, the nested ones too, in the order they are written."""
    grouped: bool = False
    """The line has a subshell, a group, a function definition or an arithmetic command."""
    substitutes: bool = False
    """The line has a command or process substitution (its commands are nested parts)."""
    error: str | None = None
    """Why the line cannot be read (then `parts` is what was read before)."""

    @property
    def top(self) -> list[Part]:
        return [part for part in self.parts if not part.nested]


class _Unreadable(Exception):
    pass


class _Reader:
    def __init__(self, source: str, out: Split, nested: bool, closer: str | None = None) -> None:
        self.s = source
        self.i = 0
        self.out = out
        self.nested = nested
        self.closer = closer
        """`)` for a subshell or substitution read inline: reading stops at it."""
        self.words: list[str] = []
        self.word: list[str] | None = None
        self.part_start: int | None = None
        self.word_end = 0
        """Where the last word ended (a part's text ends there: no comment, no separator)."""
        self.heredocs: list[tuple[str, bool]] = []
        self.pending_heredoc: bool | None = None
        """After `<<` or `<<-`: the next word is a here-document's delimiter (True: strip tabs)."""
        self.depth: list[str] = []

    # --- words and parts -------------------------------------------------------------------

    def _add(self, text: str) -> None:
        if self.word is None:
            self.word = []
        self.word.append(text)

    def _end_word(self) -> None:
        if self.word is None:
            return
        word = "".join(self.word)
        self.word = None
        self.word_end = self.i
        if self.pending_heredoc is not None:
            self.heredocs.append((word, self.pending_heredoc))
            self.pending_heredoc = None
        self.words.append(word)

    def _end_part(self, end: int) -> None:
        self._end_word()
        if self.words:
            start = self.part_start if self.part_start is not None else end
            text = self.s[start:max(start, min(end, self.word_end))].strip()
            self.out.parts.append(Part(text, tuple(self.words), self.nested or bool(self.depth)))
        self.words = []
        self.part_start = None

    def _at_command_start(self) -> bool:
        return self.word is None and not self.words

    # --- reading -----------------------------------------------------------------------------

    def read(self) -> int:
        """Reads to the end (or to this reader's `closer`); returns where it stopped."""
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if self.part_start is None and c not in " \t\r\n" and not s.startswith("\\\n", self.i):
                self.part_start = self.i
            if c in " \t\r":
                self._end_word()
                self.i += 1
            elif c == "\n":
                self._end_part(self.i)
                self.i += 1
                self._heredoc_bodies()
            elif c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                if self.i + 1 >= len(s):
                    self._add("\\")
                    self.i += 1
                    continue
                self._add(s[self.i + 1])
                self.i += 2
            elif c == "'":
                self._add(self._single_quoted())
            elif c == '"':
                self._add(self._double_quoted())
            elif c == "`":
                self._add(self._backticks())
            elif c == "$":
                self._add(self._dollar())
            elif c == "#" and self.word is None:
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end
            elif c in ";&|":
                self._operator()
            elif c in "<>":
                self._redirection()
            elif c == "(":
                self._open_paren()
            elif c == ")":
                if self.depth and self.depth[-1] == "(":
                    self._end_part(self.i)
                    self.depth.pop()
                    self.i += 1
                elif self.closer == ")" and not self.depth:
                    self._end_part(self.i)
                    return self.i
                else:
                    raise _Unreadable("a ) that closes nothing")
            elif c in "{}" and self._reserved_brace(c):
                self.out.grouped = True
                self._end_part(self.i)
                if c == "{":
                    self.depth.append("{")
                elif self.depth and self.depth[-1] == "{":
                    self.depth.pop()
                else:
                    raise _Unreadable("a } that closes nothing")
                self.i += 1
            else:
                self._add(c)
                self.i += 1
        if self.closer is not None:
            raise _Unreadable(f"an unterminated {'$(' if self.closer == ')' else self.closer}")
        if self.depth:
            raise _Unreadable(f"an unclosed {self.depth[-1]}")
        self._end_part(len(s))
        return self.i

    def _reserved_brace(self, c: str) -> bool:
        """`{` and `}` are reserved words only as whole words where a command starts (`{ a; }`)."""
        after = self.s[self.i + 1:self.i + 2]
        if c == "{":
            return self._at_command_start() and (after == "" or after in " \t\n")
        return self._at_command_start() and (after == "" or after in " \t\n;&|)")

    def _operator(self) -> None:
        s = self.s
        for op in (";;&", "&&", "||", "|&", ";;", ";&", "&>>", "&>", ";", "&", "|"):
            if s.startswith(op, self.i):
                break
        if op.startswith("&>"):  # a redirection of both streams
            self._end_word()
            self._add(op)
            self.i += len(op)
            self._end_word()
            return
        self._end_part(self.i)
        self.i += len(op)

    def _redirection(self) -> None:
        s = self.s
        if s.startswith(("<(", ">("), self.i):  # process substitution: its commands are nested parts
            start = self.i
            self.i += 2
            self._nested_until_paren()
            self._add(s[start:self.i])
            self.out.substitutes = True
            return
        for op in ("<<<", "<<-", "<<", ">>", ">&", "<&", "<>", ">|", "<", ">"):
            if s.startswith(op, self.i):
                break
        # a file descriptor's number written before it is part of the operator (`2>`)
        if self.word is not None and "".join(self.word).isdigit():
            self.word.append(op)
            self.i += len(op)
            self._end_word()
        else:
            self._end_word()
            self._add(op)
            self.i += len(op)
            self._end_word()
        if op in ("<<", "<<-"):
            self.pending_heredoc = op == "<<-"

    def _open_paren(self) -> None:
        s = self.s
        word = "".join(self.word) if self.word is not None else None
        if word is not None and word.endswith("="):  # an array assignment `a=(1 2)`
            start = self.i
            self.i += 1
            self._skip_balanced()
            self._add(s[start:self.i])
            return
        if word is not None and self.words or word is None and not self._at_command_start():
            raise _Unreadable("a ( where bash takes none")
        if word is not None:  # `name()`: a function definition
            self.out.grouped = True
            self._end_part(self.i)
            self.i += 1
            if s.startswith(")", self.i):
                self.i += 1
            return
        if s.startswith("((", self.i):  # an arithmetic command: it evaluates what it names
            start = self.i
            self.i += 2
            self._skip_balanced(2)
            self.out.grouped = True
            self._add(s[start:self.i])
            self._end_part(self.i)
            return
        self.out.grouped = True
        self._end_part(self.i)
        self.depth.append("(")
        self.i += 1

    def _skip_balanced(self, opened: int = 1) -> None:
        """Past the `)` that closes `opened` open parentheses, quotes respected."""
        s = self.s
        depth = opened
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "'":
                self._single_quoted()
                continue
            if c == '"':
                self._double_quoted()
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return
            self.i += 1
        raise _Unreadable("an unterminated (")

    def _nested_until_paren(self) -> None:
        """A substitution's commands (after its `(`), read as nested parts, past its `)`."""
        inner = _Reader(self.s, self.out, nested=True, closer=")")
        inner.i = self.i
        end = inner.read()
        self.i = end + 1

    def _single_quoted(self) -> str:
        """A single-quoted string's characters, as they are; past its closing quote."""
        end = self.s.find("'", self.i + 1)
        if end < 0:
            raise _Unreadable("an unterminated single quote")
        value = self.s[self.i + 1:end]
        self.i = end + 1
        return value

    def _double_quoted(self) -> str:
        s = self.s
        self.i += 1
        value: list[str] = []
        while self.i < len(s):
            c = s[self.i]
            if c == '"':
                self.i += 1
                return "".join(value)
            if c == "\\" and self.i + 1 < len(s):
                following = s[self.i + 1]
                if following == "\n":
                    self.i += 2
                    continue
                value.append(following if following in '$`"\\' else "\\" + following)
                self.i += 2
            elif c == "$":
                value.append(self._dollar())
            elif c == "`":
                value.append(self._backticks())
            else:
                value.append(c)
                self.i += 1
        raise _Unreadable("an unterminated double quote")

    def _backticks(self) -> str:
        s = self.s
        start = self.i
        self.i += 1
        inner: list[str] = []
        while self.i < len(s) and s[self.i] != "`":
            if s[self.i] == "\\" and self.i + 1 < len(s):
                inner.append(s[self.i + 1] if s[self.i + 1] in "$`\\" else s[self.i:self.i + 2])
                self.i += 2
                continue
            inner.append(s[self.i])
            self.i += 1
        if self.i >= len(s):
            raise _Unreadable("an unterminated backtick")
        self.i += 1
        self.out.substitutes = True
        nested = _read("".join(inner), self.out, nested=True)
        if nested is not None:
            raise _Unreadable(nested)
        return s[start:self.i]

    def _dollar(self) -> str:
        s = self.s
        start = self.i
        following = s[self.i + 1:self.i + 2]
        if following == "'":  # ANSI-C quoting: escapes end nothing but `\'`
            self.i += 2
            while self.i < len(s) and s[self.i] != "'":
                self.i += 2 if s[self.i] == "\\" else 1
            if self.i >= len(s):
                raise _Unreadable("an unterminated $' quote")
            self.i += 1
            return s[start:self.i]
        if following == '"':
            self.i += 1
            return "$" + self._double_quoted()
        if s.startswith("$((", self.i):
            self.i += 3
            self._skip_balanced(2)
            return s[start:self.i]
        if following == "(":
            self.i += 2
            self.out.substitutes = True
            self._nested_until_paren()
            return s[start:self.i]
        if following == "{":  # a parameter expansion: the substitutions inside it run too
            self.i += 2
            depth = 1
            while self.i < len(s):
                c = s[self.i]
                if c == "\\":
                    self.i += 2
                    continue
                if c == "$":
                    self._dollar()
                    continue
                if c == "`":
                    self._backticks()
                    continue
                if c == '"':
                    self._double_quoted()
                    continue
                if c == "'":
                    self._single_quoted()
                    continue
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        self.i += 1
                        return s[start:self.i]
                self.i += 1
            raise _Unreadable("an unterminated ${")
        self.i += 1
        return "$"

    def _heredoc_bodies(self) -> None:
        """The bodies of the here-documents the line just ended opened: input, not commands."""
        s = self.s
        for delimiter, strip_tabs in self.heredocs:
            while self.i < len(s):
                end = s.find("\n", self.i)
                line = s[self.i:len(s) if end < 0 else end]
                self.i = len(s) if end < 0 else end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
        self.heredocs = []


def _read(source: str, out: Split, nested: bool) -> str | None:
    reader = _Reader(source, out, nested)
    try:
        reader.read()
    except _Unreadable as error:
        return str(error)
    return None


def split(line: str) -> Split:
    """Every simple command of `line` (see the module's words)."""
    out = Split()
    out.error = _read(line, out, nested=False)
    return out


def split_command(command: str) -> list[Part] | None:
    """The simple commands of `command` (`split`), or None when it cannot be split safely
    (unbalanced quotes, a subshell, a group, a function)."""
    found = split(command)
    if found.error is not None or found.grouped:
        return None
    return found.top
