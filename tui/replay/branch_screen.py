"""`b` in replay (SPEC §9.3): the branches kept beside the open run (a subagent's trajectory,
a Claude Code sidechain or rewound line), from the core's fidelity summary. Enter opens one
in place, as a replay of its own over this one; `q` there comes back."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from swedeck.core.trajectory.model import Branch

from ..kit.view_screen import css_beside
from ..widgets.text import literal


class BranchScreen(ModalScreen[Branch | None]):
    CSS_PATH = css_beside(__file__)
    BINDINGS = [Binding("escape,q,b", "dismiss", "Close")]

    def __init__(self, branches: list[Branch]) -> None:
        super().__init__()
        self.branches = branches

    def compose(self) -> ComposeResult:
        with Vertical(id="branch-box") as box:
            box.border_title = "branches"
            yield OptionList(*[Option(literal(f"{branch.label} · {branch.target}"), id=str(index))
                               for index, branch in enumerate(self.branches)], id="branch-list")
            yield Label("Enter opens it (q there comes back) · Esc closes", id="branch-hint")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.branches[event.option_index])
