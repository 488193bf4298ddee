"""`p` in the diff view: the two runs' final patches side by side, the lines the other lacks
set apart (a patch is shown as the run recorded it, byte for byte, controls drawn as marks)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen

from swedeck.core.diff.lines import changed_lines

from ..kit.view_screen import css_beside
from ..widgets.text_view import TextView


class PatchScreen(ModalScreen[None]):
    CSS_PATH = css_beside(__file__)
    BINDINGS = [Binding("escape,q,p", "dismiss", "Close")]

    def __init__(self, a: str | None, b: str | None) -> None:
        super().__init__()
        self.patches = {"a": a, "b": b}

    def compose(self) -> ComposeResult:
        with Horizontal(id="patch-box"):
            for key in ("a", "b"):
                with Vertical(classes="patch-side", id=f"patch-side-{key}"):
                    yield TextView(id=f"patch-{key}")

    def on_mount(self) -> None:
        a, b = (self.patches[key] or "" for key in ("a", "b"))
        only_a, only_b = changed_lines(a, b)
        for key, text, changed in (("a", a, only_a), ("b", b, only_b)):
            patch = self.patches[key]
            side = self.query_one(f"#patch-side-{key}")
            side.border_title = (f"{key.upper()} · no submission" if patch is None else
                                 f"{key.upper()} · patch · {len(patch):,} chars · {len(changed)} lines the other lacks")
            self.query_one(f"#patch-{key}", TextView).update(text or "(empty)", "", changed)
